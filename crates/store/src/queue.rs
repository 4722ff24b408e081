//! The job queue: apalis's SQLite and PostgreSQL backends, in the store's own database. A job is
//! only "run task T"; what a task is and where it stands is the store's. apalis delivers a job at
//! least once (a worker it takes for dead has its jobs handed to another), and the store's claim
//! makes a second delivery harmless: a live attempt is never taken, a finished task not run again.

use std::time::Duration;

use apalis::prelude::TaskSink as _;
use apalis_postgres::PostgresStorage;
use apalis_sqlite::SqliteStorage;
use serde::{Deserialize, Serialize};

use crate::Store;
use crate::error::{Result, StoreError};

/// The one kind of job: run the task with this id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunTask {
    pub task_id: String,
}

/// Where jobs go and how workers are taken for dead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueSettings {
    /// The queue's name: workers take jobs from the queue of that name only.
    pub name: String,
    /// How often a worker tells the queue it lives; after two missed ones its jobs go to others.
    pub heartbeat: Duration,
}

impl Default for QueueSettings {
    fn default() -> QueueSettings {
        QueueSettings {
            name: "plumb-tasks".to_owned(),
            heartbeat: Duration::from_secs(10),
        }
    }
}

/// The queue, and the store that notes each push (see `jobs.rs`).
#[derive(Clone, Debug)]
pub struct JobQueue {
    pub(crate) backend: Backend,
    store: Store,
}

/// apalis's storage on one of the two backends.
#[derive(Clone)]
pub(crate) enum Backend {
    Sqlite(SqliteStorage<RunTask>),
    Postgres(PostgresStorage<RunTask>),
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Backend::Sqlite(_) => f.write_str("Backend::Sqlite"),
            Backend::Postgres(_) => f.write_str("Backend::Postgres"),
        }
    }
}

fn queue_error(error: impl std::fmt::Display) -> StoreError {
    StoreError::Queue(error.to_string())
}

impl Store {
    /// The job queue in this store's database, its tables created or brought up to date.
    pub async fn job_queue(&self, settings: &QueueSettings) -> Result<JobQueue> {
        if let Some(options) = self.pool.sqlite_options() {
            // Connections of its own, with the store's settings (WAL, every commit synced): the
            // library's own setup would turn syncing off on the connection it is given.
            let pool = sqlx::sqlite::SqlitePoolOptions::new()
                .max_connections(4)
                .connect_with(options)
                .await?;
            SqliteStorage::<()>::migrations().run(&pool).await?;
            let config = apalis_sqlite::Config::default()
                .queue(&settings.name)
                .batch_size(1)
                .heartbeat_interval(settings.heartbeat);
            return Ok(JobQueue {
                backend: Backend::Sqlite(SqliteStorage::new(&pool).with_config(config)),
                store: self.clone(),
            });
        }
        let pool = self
            .pool
            .postgres_pool()
            .ok_or_else(|| queue_error("no pool"))?;
        PostgresStorage::<()>::migrations().run(&pool).await?;
        let config = apalis_postgres::Config::default()
            .queue(&settings.name)
            .batch_size(1)
            .heartbeat_interval(settings.heartbeat);
        Ok(JobQueue {
            backend: Backend::Postgres(PostgresStorage::new(&pool).with_config(config)),
            store: self.clone(),
        })
    }
}

impl JobQueue {
    /// Puts "run task `task_id`" on the queue, and notes the push in the task's record.
    pub async fn push(&mut self, task_id: &str) -> Result<()> {
        let job = RunTask {
            task_id: task_id.to_owned(),
        };
        match &mut self.backend {
            Backend::Sqlite(storage) => storage.push(job).await.map_err(queue_error)?,
            Backend::Postgres(storage) => storage.push(job).await.map_err(queue_error)?,
        }
        // Unnoted, the push only costs the sweep one harmless second job for the task.
        let _ = self.store.mark_pushed(task_id).await;
        Ok(())
    }
}
