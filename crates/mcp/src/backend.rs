//! What runs the tools: a [`Backend`]. `plumb mcp` gives the server one that runs plumb's engine on
//! this machine, or one that hands the tasks to a `plumb serve` (the `plumb` binary's `mcp`
//! modules); the protocol side here knows nothing of runs, sandboxes or settings, only of the
//! answers.

use async_trait::async_trait;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::types::{
    CancelAnswer, CodingTaskArgs, RunDiff, RunStatus, RunsList, RunsListArgs, TaskResult,
};

/// Why a tool call did not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolFailure {
    /// The caller can fix it: the message says what to change (a repository outside the allowed
    /// folders, an empty ticket, an unknown run).
    BadInput(String),
    /// Something on this machine failed (the sandbox, git, the model service); the message says what.
    Infra(String),
}

impl ToolFailure {
    pub fn message(&self) -> &str {
        match self {
            ToolFailure::BadInput(message) | ToolFailure::Infra(message) => message,
        }
    }
}

/// One line of a running task's progress: the round, and what happened in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressNote {
    pub round: u32,
    pub message: String,
}

/// The tools' work. Each method answers one tool; none approves, applies or undoes a change.
#[async_trait]
pub trait Backend: Send + Sync + 'static {
    /// Runs a ticket to its end, sending a note as each step of the run happens; `cancel` ends
    /// the run rolled back (the caller's MCP cancel notification, or the connection gone).
    async fn coding_task(
        &self,
        args: CodingTaskArgs,
        progress: mpsc::UnboundedSender<ProgressNote>,
        cancel: CancellationToken,
    ) -> Result<TaskResult, ToolFailure>;

    async fn status(&self, run: &str) -> Result<RunStatus, ToolFailure>;

    async fn diff(&self, run: &str) -> Result<RunDiff, ToolFailure>;

    async fn cancel(&self, run: &str) -> Result<CancelAnswer, ToolFailure>;

    async fn runs(&self, args: RunsListArgs) -> Result<RunsList, ToolFailure>;

    /// Called once when serving ends (the client gone, or a signal): runs still going end
    /// cancelled and rolled back, not cut off. Returns once they have.
    async fn close(&self) {}
}
