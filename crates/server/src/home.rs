//! Bringing an approved change home, for a task whose repository is a folder on the server's own
//! machine (`repo.kind = path`): approval applies the change as `plumb apply` does, to the working
//! tree or as a commit on a new branch, and rollback undoes it as `plumb undo` does. The server is
//! engine-free, so the front end that owns the run folders (the CLI's `plumb serve`) supplies how
//! ([`BringHome`]). A task from a git URL or an upload has no home here: its change is fetched
//! as a patch.
//!
//! Order, so that a failure leaves the user's files and the store agreeing: the decision is
//! checked (state, SHA-256) first, then the change is applied, then the decision is stored; if
//! storing it fails (the task changed meanwhile), the change is undone again.

use futures_util::future::BoxFuture;
use plumb_store::{ArtefactName, Decision, TaskRecord, TaskState};

use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::spec::{RepoSource, TaskRequest};

/// Why a change could not be brought home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HomeRefusal {
    /// True when the user's repository or the run is in the way (a file changed since the run,
    /// the branch exists, the run's folder is on another machine): a 409. False for the server's
    /// own failure: a 500.
    pub conflict: bool,
    pub message: String,
}

/// How a front end applies and undoes a run's change in a repository on this machine.
pub trait BringHome: Send + Sync {
    /// Applies the change of the run `report` describes (the run's `report.json`), approved by
    /// `sha256`, to its repository, or commits it on the new branch `branch`; what was done, as a
    /// sentence.
    fn apply(
        &self,
        report: serde_json::Value,
        sha256: String,
        branch: Option<String>,
    ) -> BoxFuture<'static, Result<String, HomeRefusal>>;

    /// Undoes what [`BringHome::apply`] did for that run; what was done, as a sentence.
    fn undo(&self, report: serde_json::Value) -> BoxFuture<'static, Result<String, HomeRefusal>>;
}

impl From<HomeRefusal> for ApiError {
    fn from(refusal: HomeRefusal) -> ApiError {
        if refusal.conflict {
            ApiError::new(
                axum::http::StatusCode::CONFLICT,
                "not_applied",
                refusal.message,
            )
        } else {
            ApiError::internal(refusal.message)
        }
    }
}

/// True when the task's repository is a folder on this machine.
fn is_server_path(task: &TaskRecord) -> bool {
    serde_json::from_value::<TaskRequest>(task.spec.clone())
        .is_ok_and(|request| matches!(request.repo, RepoSource::Path { .. }))
}

/// The run's report, as the worker stored it.
async fn report(state: &AppState, tenant: &str, id: &str) -> ApiResult<serde_json::Value> {
    let artefact = state
        .store()
        .artefact(tenant, id, ArtefactName::Report)
        .await?
        .ok_or_else(|| {
            ApiError::new(
                axum::http::StatusCode::CONFLICT,
                "not_applied",
                "the task has no stored report, so its run cannot be found to apply",
            )
        })?;
    serde_json::from_slice(&artefact.content)
        .map_err(|err| ApiError::internal(format!("the task's stored report is not JSON: {err}")))
}

/// Approves the task and, for a repository on this machine, brings its change home.
pub(crate) async fn approve(
    state: &AppState,
    tenant: &str,
    id: &str,
    sha256: String,
    branch: Option<String>,
) -> ApiResult<TaskRecord> {
    if let Some(name) = &branch {
        plumb_workspace::check_branch_name(name).map_err(|rule| {
            ApiError::bad_request(format!(
                "branch {name:?} is not a branch name git takes: {rule}"
            ))
        })?;
    }
    let decision = Decision::Approve {
        sha256: sha256.clone(),
    };
    let task = state.store().task(tenant, id).await?;
    let home = match state.home() {
        Some(home) if is_server_path(&task) => home,
        _ => {
            if branch.is_some() {
                return Err(ApiError::bad_request(
                    "branch is only for a task whose repository is a folder on this server: \
                     leave it out, and fetch the change as a patch",
                ));
            }
            return Ok(state.store().decide(tenant, id, &decision).await?);
        }
    };
    let ready = task.state == TaskState::AwaitingApproval
        && task.diff_sha256.as_deref() == Some(sha256.as_str());
    if !ready {
        // The store names what is wrong (the state, or the SHA-256) with its typed error; nothing
        // was applied.
        return Ok(state.store().decide(tenant, id, &decision).await?);
    }
    let report = report(state, tenant, id).await?;
    let applied = home.apply(report.clone(), sha256, branch).await?;
    match state
        .store()
        .decide_noting(tenant, id, &decision, Some(&applied))
        .await
    {
        Ok(task) => Ok(task),
        Err(err) => {
            // The task changed between the check and the decision: put the files back.
            let _ = home.undo(report).await;
            Err(err.into())
        }
    }
}

/// Rolls the task back; an approved change brought home on this machine is undone first.
pub(crate) async fn roll_back(state: &AppState, tenant: &str, id: &str) -> ApiResult<TaskRecord> {
    let task = state.store().task(tenant, id).await?;
    let mut note = None;
    if let Some(home) = state.home()
        && task.state == TaskState::Approved
        && is_server_path(&task)
    {
        let report = report(state, tenant, id).await?;
        note = Some(home.undo(report).await?);
    }
    Ok(state
        .store()
        .decide_noting(tenant, id, &Decision::RollBack, note.as_deref())
        .await?)
}
