//! How `plumb serve` brings an approved change home for a task whose repository is a folder on
//! its machine: the run's folder, found by the run id in the stored report, goes through the same
//! apply and undo as `plumb apply` and `plumb undo` (the SHA-256 checked again against the run's
//! own report, the run's lock held, all or nothing).

use futures_util::future::BoxFuture;
use plumb_server::{BringHome, HomeRefusal};

use crate::{Failure, home};

/// Applies and undoes in the run folders of this machine, with the server's settings.
pub(crate) struct LocalHome {
    pub overrides: Vec<String>,
}

/// The run id a stored report names.
fn run_id(report: &serde_json::Value) -> Result<String, HomeRefusal> {
    report
        .get("run_id")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| HomeRefusal {
            conflict: false,
            message: "the task's stored report names no run".to_owned(),
        })
}

fn refusal(failure: Failure) -> HomeRefusal {
    HomeRefusal {
        // Exit code 2 is input to fix (a file changed since the run, a branch that exists, a run
        // folder that is not here); anything else is this machine's own failure.
        conflict: failure.code == 2,
        message: failure.message,
    }
}

/// Runs `work` on a blocking thread: applying reads and writes files.
async fn blocking(
    work: impl FnOnce() -> Result<String, Failure> + Send + 'static,
) -> Result<String, HomeRefusal> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| HomeRefusal {
            conflict: false,
            message: format!("bringing the change home stopped: {err}"),
        })?
        .map_err(refusal)
}

impl BringHome for LocalHome {
    fn apply(
        &self,
        report: serde_json::Value,
        sha256: String,
        branch: Option<String>,
    ) -> BoxFuture<'static, Result<String, HomeRefusal>> {
        let overrides = self.overrides.clone();
        Box::pin(async move {
            let run = run_id(&report)?;
            blocking(move || home::apply_run(&run, &sha256, branch.as_deref(), &overrides)).await
        })
    }

    fn undo(&self, report: serde_json::Value) -> BoxFuture<'static, Result<String, HomeRefusal>> {
        let overrides = self.overrides.clone();
        Box::pin(async move {
            let run = run_id(&report)?;
            blocking(move || home::undo_run(&run, &overrides)).await
        })
    }
}
