//! The `Tool` trait: what every model-facing tool is. Apart from the registry, so a tool and the
//! registry that lists it do not import each other.

use async_trait::async_trait;
use plumb_context::templates::{TemplateError, tool_description};
use plumb_verify::TestCommand;
use serde_json::Value;

use crate::{ToolContext, ToolError, ToolOutput};

/// What the tools' descriptions say about the project: its test command, whose runner and test
/// ids the test tools name (a Rust crate's model is shown `cargo test` and `tests::adds`, not
/// pytest's examples). Without one the descriptions name no runner.
#[derive(Debug, Clone, Copy, Default)]
pub struct Project<'a> {
    pub test_command: Option<&'a TestCommand>,
}

/// One model-facing tool.
#[async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;
    /// What the model reads about the tool: the template `tools/<name>.md` of plumb-context's
    /// prompts, filled with [`Tool::description_values`].
    fn description(&self, project: &Project<'_>) -> Result<String, TemplateError> {
        tool_description(self.name(), self.description_values(project))
    }
    /// The values the description's template is filled with (none by default).
    fn description_values(&self, _project: &Project<'_>) -> Value {
        Value::Null
    }
    /// The JSON schema of the arguments.
    fn parameters(&self, project: &Project<'_>) -> Value;
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
