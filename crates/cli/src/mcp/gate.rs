//! What every `coding_task` passes before any work starts, whichever backend runs it: a `repo`
//! inside the allowed roots, a ticket with words in it, and a free slot of `mcp.max_tasks`.

use std::path::PathBuf;
use std::sync::Arc;

use plumb_mcp::ToolFailure;
use plumb_mcp::types::CodingTaskArgs;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::roots::Roots;

pub(crate) struct Gate {
    pub roots: Roots,
    slots: Arc<Semaphore>,
    max_tasks: usize,
}

impl Gate {
    pub(crate) fn new(roots: Roots, max_tasks: usize) -> Gate {
        Gate {
            roots,
            slots: Arc::new(Semaphore::new(max_tasks)),
            max_tasks,
        }
    }

    /// The repository folder and the slot the task holds until it ends; refused with what to
    /// change otherwise.
    pub(crate) fn admit(
        &self,
        args: &CodingTaskArgs,
    ) -> Result<(PathBuf, OwnedSemaphorePermit), ToolFailure> {
        let repo = self.roots.check_repo(&args.repo)?;
        if args.ticket.trim().is_empty() {
            return Err(ToolFailure::BadInput(
                "ticket is empty; say what should change".into(),
            ));
        }
        let permit = self.slots.clone().try_acquire_owned().map_err(|_| {
            ToolFailure::BadInput(format!(
                "plumb mcp already has {} task(s) going, its limit (mcp.max_tasks); wait for one to end or cancel it with coding_task_cancel",
                self.max_tasks
            ))
        })?;
        Ok((repo, permit))
    }
}
