//! The `Tool` trait: what every model-facing tool is. Apart from the registry, so a tool and the
//! registry that lists it do not import each other.

use async_trait::async_trait;
use serde_json::Value;

use crate::{ToolContext, ToolError, ToolOutput};

/// One model-facing tool.
#[async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    /// The JSON schema of the arguments.
    fn parameters(&self) -> Value;
    /// How many lines of this tool's output the model may see (shortening keeps head and tail).
    fn output_line_limit(&self, ctx: &ToolContext<'_>) -> usize {
        ctx.config.limits.tool_output_lines
    }
    /// True for tools that run commands, which may change files without saying so; every other
    /// tool reports its changes in [`ToolOutput::changed`]. The loop checkpoints at a round's end
    /// only when something may have changed since the last checkpoint.
    fn runs_commands(&self) -> bool {
        false
    }
    async fn call(&self, ctx: &ToolContext<'_>, args: &Value) -> Result<ToolOutput, ToolError>;
}
