//! What the store keeps, as plain values: a task as submitted and as stored, an attempt, an event,
//! an artefact.

use serde::{Deserialize, Serialize};

use crate::state::TaskState;

/// A task to queue. `spec` is the request as the front end accepted it (repository source, ticket,
/// model, limits); the store keeps it as JSON and never reads inside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewTask {
    pub tenant: String,
    /// The job queue its runs go through (`QueueSettings::name`).
    pub queue: String,
    /// The ticket's first line, for lists.
    pub title: String,
    pub spec: serde_json::Value,
    /// How many attempts a task gets when workers die under it; at least 1.
    pub max_attempts: i64,
}

/// A stored task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub id: String,
    pub tenant: String,
    pub queue: String,
    pub state: TaskState,
    pub title: String,
    pub spec: serde_json::Value,
    /// The current attempt's number; 0 before a worker first took the task.
    pub attempt: i64,
    pub max_attempts: i64,
    /// When a person asked to cancel it, while a worker still held it.
    pub cancel_requested_ms: Option<i64>,
    /// The run's outcome as the engine named it (`success`, `tests_failed`, …), once it ended.
    pub outcome: Option<String>,
    /// Why it ended as it did, in a sentence.
    pub reason: Option<String>,
    /// The SHA-256 of the diff awaiting approval (or approved).
    pub diff_sha256: Option<String>,
    /// What the last finished run spent; none before one finished.
    pub figures: Option<RunFigures>,
    pub created_ms: i64,
    pub updated_ms: i64,
}

/// What a run spent, as the task list shows it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RunFigures {
    pub rounds: i64,
    /// Input and output tokens together.
    pub tokens: i64,
    /// Estimated dollars.
    pub usd: f64,
}

impl RunFigures {
    /// The figures stored in a task's columns; none while any is unset.
    pub(crate) fn from_columns(
        rounds: Option<i64>,
        tokens: Option<i64>,
        usd: Option<f64>,
    ) -> Option<RunFigures> {
        Some(RunFigures {
            rounds: rounds?,
            tokens: tokens?,
            usd: usd?,
        })
    }
}

/// One worker's go at a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    pub task_id: String,
    pub number: i64,
    pub worker: String,
    pub started_ms: i64,
    pub heartbeat_ms: i64,
    pub finished_ms: Option<i64>,
    pub outcome: Option<String>,
    pub reason: Option<String>,
}

/// An event of a task, numbered from 1 in the order it was written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    pub task_id: String,
    pub seq: i64,
    pub attempt: i64,
    pub at_ms: i64,
    pub kind: String,
    pub body: serde_json::Value,
}

/// The files a run leaves that the store keeps per attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArtefactName {
    Patch,
    Report,
    Journal,
    Review,
    /// A `git bundle` of the change as one commit on `plumb/<task>`.
    Bundle,
}

impl ArtefactName {
    pub fn as_str(self) -> &'static str {
        match self {
            ArtefactName::Patch => "patch",
            ArtefactName::Report => "report",
            ArtefactName::Journal => "journal",
            ArtefactName::Review => "review",
            ArtefactName::Bundle => "bundle",
        }
    }
}

/// A stored artefact: its bytes and their SHA-256 (hex).
#[derive(Debug, Clone, PartialEq)]
pub struct Artefact {
    pub attempt: i64,
    pub sha256: String,
    pub content: Vec<u8>,
}

/// A worker's hold on one attempt of a task. Everything a worker writes names it, and is refused
/// once the attempt is no longer the task's current one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub task_id: String,
    pub attempt: i64,
    pub worker: String,
}

/// What a heartbeat brings back to the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signals {
    /// A person asked to cancel: end the run rolled back.
    pub cancel_requested: bool,
}

/// How an attempt ends, as its worker reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptEnd {
    /// `AwaitingApproval` with a diff, or a final state.
    pub state: TaskState,
    pub outcome: String,
    pub reason: Option<String>,
    pub diff_sha256: Option<String>,
}

/// A page of a tenant's tasks, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskPage {
    pub tasks: Vec<TaskRecord>,
    /// Pass as `before` to get the next page; none on the last.
    pub next: Option<PageCursor>,
}

/// Where a page of tasks starts: after the task created at `created_ms` with `id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageCursor {
    pub created_ms: i64,
    pub id: String,
}

/// Which of a tenant's tasks to list.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TaskFilter {
    pub state: Option<TaskState>,
    pub before: Option<PageCursor>,
    /// At most this many (1–500; 0 reads as 50).
    pub limit: i64,
}
