//! plumb-store: durable tasks for `plumb serve`, `plumb worker` and an eval on the queue — tasks,
//! their attempts, their events and their artefacts, in SQLite (one file under plumb's state
//! folder, the default) or PostgreSQL (a fleet of workers on several machines).
//!
//! The guarantees the service is built on live here, in the SQL, not in the callers:
//! - A task moves only along [`TaskState::may_become`], each move a compare-and-set in one
//!   transaction with its `state` event.
//! - Events are numbered per task from 1, in one transaction with the counter, and never rewritten
//!   (a trigger refuses an update).
//! - Everything a worker writes names its [`Claim`] (task and attempt) and is refused once that
//!   attempt is not the task's current one: a worker taken for dead that finishes late changes
//!   nothing.
//! - A task held by a worker whose heartbeat is fresh is not taken by another (a long run is not an
//!   orphan); one whose heartbeat is older than the lease is retried on a fresh attempt up to the
//!   task's limit, then failed with the reason.
//! - A tenant sees only its own tasks and uploads; another tenant's id reads as unknown.
//! - An API token is kept as its secret's SHA-256 only; a tenant's model key only sealed under
//!   the operator's secret key, which the database never holds.
//! - A tenant's tasks running at once stay within its limit: the claim counts them under a lock
//!   of the tenant's row.

mod artefacts;
mod attempts;
mod error;
mod evals;
mod events;
mod jobs;
mod pool;
mod queue;
mod records;
mod retry;
mod rows;
mod secrets;
mod state;
mod stop;
mod tasks;
mod tenants;
mod tokens;
mod uploads;
mod worker;

use std::path::Path;

pub use error::{Result, StoreError};
pub use evals::EvalReportRecord;
pub use pool::redact;
pub use queue::{JobQueue, QueueSettings, RunTask};
pub use records::{
    Artefact, ArtefactName, AttemptEnd, AttemptRecord, Claim, EventRecord, NewTask, PageCursor,
    RunFigures, Signals, TaskFilter, TaskPage, TaskRecord,
};
pub use retry::retry_transient;
pub use secrets::{MODEL_KEY_PROVIDERS, ModelKey, SecretKey, check_model_key, check_provider};
pub use state::TaskState;
pub use stop::{Stop, StopCause};
pub use tasks::Decision;
pub use tenants::{ModelKeyRecord, TenantLimits};
pub use tokens::{TOKEN_PREFIX, TokenRecord, check_tenant};
pub use uploads::UploadRecord;
pub use worker::{RunContext, TaskRunner, WorkerSettings, run_worker, worker_id};

/// The store: a pool of connections to one database, its schema up to date.
#[derive(Debug, Clone)]
pub struct Store {
    pool: pool::Pool,
}

impl Store {
    /// Opens `sqlite:PATH` (created if missing) or `postgres://USER[:PASSWORD]@HOST[:PORT]/DB`, and
    /// brings its schema up to date.
    pub async fn open(url: &str) -> Result<Store> {
        Ok(Store {
            pool: pool::Pool::open(url).await?,
        })
    }

    /// Opens (or creates) the SQLite file at `path`.
    pub async fn open_sqlite(path: &Path) -> Result<Store> {
        Ok(Store {
            pool: pool::Pool::open_sqlite(path).await?,
        })
    }

    /// `sqlite` or `postgres`.
    pub fn backend(&self) -> &'static str {
        self.pool.backend()
    }

    /// Closes every connection (calls after this fail).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
}

/// A new task id: the creation time, this process's count (so ids made in the same millisecond
/// sort in the order they were made) and 48 random bits (so two processes never make the same).
pub(crate) fn new_task_id(now_ms: i64) -> String {
    static MADE: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
    let count = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let random = fastrand::u64(..) & 0xffff_ffff_ffff;
    format!("t{now_ms:011x}{count:04x}{random:012x}")
}
