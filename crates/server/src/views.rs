//! The API's bodies as clients read them: a task, a page of tasks, a diff, an upload, a decision.
//! Records from the store are shown through these, so the stored shape can change without
//! changing the API, and the OpenAPI document describes exactly what is sent.

use plumb_store::{TaskRecord, TaskState, UploadRecord};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::spec::TaskRequest;

/// Where a task is: queued → preparing → running ⇄ checking ⇄ reviewing → awaiting_approval →
/// approved | rejected | failed | cancelled | rolled_back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StateName {
    Queued,
    Preparing,
    Running,
    Checking,
    Reviewing,
    AwaitingApproval,
    Approved,
    Rejected,
    Failed,
    Cancelled,
    RolledBack,
    Scored,
}

impl From<TaskState> for StateName {
    fn from(state: TaskState) -> StateName {
        match state {
            TaskState::Queued => StateName::Queued,
            TaskState::Preparing => StateName::Preparing,
            TaskState::Running => StateName::Running,
            TaskState::Checking => StateName::Checking,
            TaskState::Reviewing => StateName::Reviewing,
            TaskState::AwaitingApproval => StateName::AwaitingApproval,
            TaskState::Approved => StateName::Approved,
            TaskState::Rejected => StateName::Rejected,
            TaskState::Failed => StateName::Failed,
            TaskState::Cancelled => StateName::Cancelled,
            TaskState::RolledBack => StateName::RolledBack,
            TaskState::Scored => StateName::Scored,
        }
    }
}

impl From<StateName> for TaskState {
    fn from(state: StateName) -> TaskState {
        match state {
            StateName::Queued => TaskState::Queued,
            StateName::Preparing => TaskState::Preparing,
            StateName::Running => TaskState::Running,
            StateName::Checking => TaskState::Checking,
            StateName::Reviewing => TaskState::Reviewing,
            StateName::AwaitingApproval => TaskState::AwaitingApproval,
            StateName::Approved => TaskState::Approved,
            StateName::Rejected => TaskState::Rejected,
            StateName::Failed => TaskState::Failed,
            StateName::Cancelled => TaskState::Cancelled,
            StateName::RolledBack => TaskState::RolledBack,
            StateName::Scored => TaskState::Scored,
        }
    }
}

/// A task.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct TaskView {
    pub id: String,
    pub state: StateName,
    /// The ticket's first line.
    pub title: String,
    /// The request as the server accepted it (model named, limits clamped).
    pub request: Option<TaskRequest>,
    /// The current attempt (0 before a worker took it); workers that die leave it retried.
    pub attempt: i64,
    pub max_attempts: i64,
    /// A cancel was asked for and the worker has not ended the run yet.
    pub cancel_requested: bool,
    /// How the run ended (`success`, `tests_failed`, `budget_exhausted`, …).
    pub outcome: Option<String>,
    /// Why it ended as it did.
    pub reason: Option<String>,
    /// The SHA-256 of the diff a person approves.
    pub diff_sha256: Option<String>,
    /// Rounds the last finished run took; absent before a run finished.
    pub rounds: Option<i64>,
    /// Input and output tokens the last finished run used.
    pub tokens: Option<i64>,
    /// What the last finished run cost, estimated in dollars.
    pub cost_usd: Option<f64>,
    pub created_ms: i64,
    pub updated_ms: i64,
}

impl From<TaskRecord> for TaskView {
    fn from(task: TaskRecord) -> TaskView {
        TaskView {
            request: serde_json::from_value(task.spec).ok(),
            id: task.id,
            state: task.state.into(),
            title: task.title,
            attempt: task.attempt,
            max_attempts: task.max_attempts,
            cancel_requested: task.cancel_requested_ms.is_some(),
            outcome: task.outcome,
            reason: task.reason,
            diff_sha256: task.diff_sha256,
            rounds: task.figures.map(|figures| figures.rounds),
            tokens: task.figures.map(|figures| figures.tokens),
            cost_usd: task.figures.map(|figures| figures.usd),
            created_ms: task.created_ms,
            updated_ms: task.updated_ms,
        }
    }
}

/// A page of tasks, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct TaskList {
    pub tasks: Vec<TaskView>,
    /// Pass as `before` for the next page; absent on the last.
    pub next: Option<String>,
}

/// One file of a diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct FileChange {
    pub path: String,
    pub added: u32,
    pub removed: u32,
}

/// A task's diff: what a person reads before approving its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct DiffView {
    /// The SHA-256 of `patch`'s bytes: send it to approve.
    pub sha256: String,
    /// The unified diff, as `git apply` takes it.
    pub patch: String,
    pub files: Vec<FileChange>,
}

/// An uploaded archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct UploadView {
    /// Name it in a task request as `{"repo": {"kind": "upload", "id": …}}`.
    pub id: String,
    pub sha256: String,
    pub size: i64,
}

impl From<UploadRecord> for UploadView {
    fn from(upload: UploadRecord) -> UploadView {
        UploadView {
            id: upload.id,
            sha256: upload.sha256,
            size: upload.size,
        }
    }
}

/// The body of an approval: the SHA-256 of the diff the person was shown.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApproveBody {
    pub sha256: String,
    /// For a repository that is a folder on this server: commit the change on this new branch
    /// instead of applying it to the working tree (git's rules for a branch name).
    #[serde(default)]
    pub branch: Option<String>,
}

/// One stored event, as the event stream's `data`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct EventView {
    /// 1, 2, 3, … per task; also the stream's event id.
    pub seq: i64,
    /// The attempt that wrote it (0 for the server's own, such as a state change).
    pub attempt: i64,
    pub at_ms: i64,
    /// `state`, `cancel_requested`, or one of the run's event types (`model_request`, `tool_call`,
    /// `check`, `reviewed`, …).
    pub kind: String,
    pub body: serde_json::Value,
}

/// One message of the event stream (`text/event-stream`), as its fields arrive.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct EventFrame {
    /// The event's sequence number (what `Last-Event-ID` sends back).
    pub id: String,
    /// The event's kind (an [`EventView`]'s `kind`).
    pub event: String,
    /// An [`EventView`] as JSON.
    #[schema(content_media_type = "application/json")]
    pub data: String,
}

/// Counts each file's added and removed lines in a unified diff.
pub fn file_changes(patch: &str) -> Vec<FileChange> {
    let mut files: Vec<FileChange> = Vec::new();
    // `---`/`+++` are headers only before a file's first hunk; inside one they are lines.
    let mut in_hunk = false;
    for line in patch.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let path = rest
                .rsplit_once(" b/")
                .map_or(rest, |(_, path)| path)
                .to_owned();
            files.push(FileChange {
                path,
                added: 0,
                removed: 0,
            });
            in_hunk = false;
        } else if line.starts_with("@@") {
            in_hunk = true;
        } else if in_hunk && let Some(file) = files.last_mut() {
            if line.starts_with('+') {
                file.added += 1;
            } else if line.starts_with('-') {
                file.removed += 1;
            }
        }
    }
    files
}
