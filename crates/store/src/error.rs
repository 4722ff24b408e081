//! What a store call can answer besides its result, typed so an API maps each to its status
//! (404, 409, …) without reading a message.

use crate::state::TaskState;

/// A store call's failure.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No task with that id for that tenant (another tenant's task reads the same, so ids do not leak).
    #[error("no task {0}")]
    NotFound(String),
    /// The task is in a state that does not allow the move.
    #[error("task {task} is {state}: it cannot become {wanted}")]
    WrongState {
        task: String,
        state: TaskState,
        wanted: TaskState,
    },
    /// The approval named a diff other than the one stored.
    #[error(
        "task {task}'s diff has SHA-256 {stored}, not {given}: approve the diff you were shown"
    )]
    ShaMismatch {
        task: String,
        stored: String,
        given: String,
    },
    /// A worker wrote for an attempt that is no longer the task's current one (it was taken for dead
    /// and retried, or the task ended): what it wrote is discarded.
    #[error("attempt {attempt} of task {task} is no longer current")]
    StaleAttempt { task: String, attempt: i64 },
    /// Another worker's attempt on the task is alive (its heartbeat is recent).
    #[error("task {task} is held by worker {worker}, whose last heartbeat is {age_ms} ms old")]
    Held {
        task: String,
        worker: String,
        age_ms: i64,
    },
    /// The tenant already has as many tasks running as its limit allows: the task waits.
    #[error("tenant {tenant} has {running} tasks running, its limit")]
    TenantBusy { tenant: String, running: i64 },
    /// The store's URL or file cannot be used.
    #[error("database {url}: {message}")]
    BadUrl { url: String, message: String },
    /// The schema could not be brought up to date.
    #[error("migrating the database: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The database itself failed (unreachable, full, a constraint).
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// A value a caller gave cannot be used; the message names it and what to change.
    #[error("{0}")]
    Invalid(String),
    /// No upload with that id for that tenant.
    #[error("no upload {0}")]
    UploadNotFound(String),
    /// No eval report with that id for that tenant.
    #[error("no eval report {0}: GET /api/evals lists the ones this tenant has")]
    EvalReportNotFound(String),
    /// The operating system refused something the store needs (randomness).
    #[error("{0}")]
    System(String),
    /// The job queue failed.
    #[error("job queue: {0}")]
    Queue(String),
    /// A stored value this build does not understand (a newer build wrote it, or it was edited).
    #[error("stored task {task} holds {what}")]
    Corrupt { task: String, what: String },
}

/// A store call's result.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
