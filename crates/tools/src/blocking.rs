//! File work off the async runtime. The tools read and write the workspace with blocking calls;
//! run on a runtime thread, a call that blocks (a slow disk, a file system that hangs) would stall
//! the run's task, and with it the wall-clock limit that is to end it. Run on tokio's blocking
//! pool instead, the task only awaits, so the loop's deadline can still fire and end the run; the
//! stuck thread is abandoned, not waited for.

use crate::ToolError;

/// Runs `work` on the blocking pool and waits for it.
pub(crate) async fn off_runtime<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| ToolError::Infra(format!("a file operation stopped unexpectedly: {err}")))
}
