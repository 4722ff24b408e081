//! A worker: takes "run task T" jobs from the queue one at a time, claims the task in the store,
//! runs it with a [`TaskRunner`] while a heartbeat keeps the attempt alive (and brings a person's
//! cancel to the run), and writes how it ended. Every worker process has an id of its own, so a
//! restarted worker never waits for its previous life to be taken for dead; beside the queue it
//! sweeps the store for tasks whose worker died and puts them back on the queue.

use std::sync::Arc;
use std::time::Duration;

use apalis::prelude::{BoxDynError, Data, WorkerBuilder, WorkerBuilderExt as _};
use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::Store;
use crate::error::{Result, StoreError};
use crate::queue::{Backend, JobQueue, QueueSettings, RunTask};
use crate::records::{AttemptEnd, Claim, TaskRecord};
use crate::retry::retry_transient;
use crate::state::TaskState;
use crate::stop::{Stop, StopCause};

/// What runs a claimed task: the engine in `plumb serve` and `plumb worker`, a stand-in in tests.
pub trait TaskRunner: Send + Sync + 'static {
    /// Runs the task and says how the attempt ended. Ends soon after `run.stop` fires, rolled
    /// back, with the state `cancelled` (the worker gives the task back instead when it fired
    /// because the worker is stopping).
    fn run(&self, run: RunContext) -> BoxFuture<'static, AttemptEnd>;
}

/// A claimed task, handed to the runner.
#[derive(Debug, Clone)]
pub struct RunContext {
    pub task: TaskRecord,
    pub claim: Claim,
    /// For the run's events and artefacts (each names the claim).
    pub store: Store,
    /// Fires when a person asks to cancel, the worker is stopping, or the attempt is no longer
    /// current (another worker took the task for dead): whichever it is, the run stops, and
    /// `stop.cause()` says which.
    pub stop: Stop,
    /// How long the attempt outlives its last heartbeat: the most a write of the run should wait
    /// for a database that is away (after that the attempt is taken for dead anyway).
    pub lease: Duration,
}

/// How a worker works.
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// This process's id: fresh for every process (`worker_id`).
    pub id: String,
    pub queue: QueueSettings,
    /// How often the attempt's heartbeat is written (and a cancel read).
    pub heartbeat: Duration,
    /// An attempt whose heartbeat is older than this is taken for dead.
    pub lease: Duration,
    /// How often the store is swept for tasks whose worker died.
    pub sweep: Duration,
}

impl WorkerSettings {
    /// Defaults for `id`: heartbeat every 5 s, dead after 60 s, swept every 15 s.
    pub fn new(id: String) -> WorkerSettings {
        WorkerSettings {
            id,
            queue: QueueSettings::default(),
            heartbeat: Duration::from_secs(5),
            lease: Duration::from_secs(60),
            sweep: Duration::from_secs(15),
        }
    }
}

/// A fresh worker id: the host, the process and random bits.
pub fn worker_id(host: &str) -> String {
    format!("{host}-{}-{:08x}", std::process::id(), fastrand::u32(..))
}

/// How long a worker waits before it puts back a task whose tenant is at its limit.
const TENANT_BUSY_PAUSE: Duration = Duration::from_secs(2);

struct Worker {
    store: Store,
    queue: JobQueue,
    settings: WorkerSettings,
    runner: Arc<dyn TaskRunner>,
    /// The worker is stopping: a run in progress is cancelled and its task given back.
    shutdown: CancellationToken,
}

/// Runs a worker until `shutdown` fires: jobs one at a time, the sweep beside them.
pub async fn run_worker(
    store: Store,
    settings: WorkerSettings,
    runner: Arc<dyn TaskRunner>,
    shutdown: CancellationToken,
) -> Result<()> {
    let queue = store.job_queue(&settings.queue).await?;
    let shutdown = shutdown.child_token();
    // The sweep stops with this future, also when it is dropped rather than shut down.
    let _stop_sweep = shutdown.clone().drop_guard();
    let sweeper = tokio::spawn(sweep(
        store.clone(),
        queue.clone(),
        settings.clone(),
        shutdown.clone(),
    ));
    let worker = Arc::new(Worker {
        store,
        queue: queue.clone(),
        settings: settings.clone(),
        runner,
        shutdown: shutdown.clone(),
    });
    let stop = shutdown.clone();
    let signal = async move {
        stop.cancelled().await;
        Ok::<(), std::io::Error>(())
    };
    // One job at a time: the concurrency limit also keeps the worker from taking a job it would
    // hold without running (the queue hands out a batch of one).
    let ran = match queue.backend {
        Backend::Sqlite(storage) => {
            WorkerBuilder::new(settings.id.as_str())
                .backend(storage)
                .data(worker)
                .concurrency(1)
                .build(handle_job)
                .run_until(signal)
                .await
        }
        Backend::Postgres(storage) => {
            WorkerBuilder::new(settings.id.as_str())
                .backend(storage)
                .data(worker)
                .concurrency(1)
                .build(handle_job)
                .run_until(signal)
                .await
        }
    };
    shutdown.cancel();
    let _ = sweeper.await;
    ran.map_err(|error| StoreError::Queue(error.to_string()))
}

async fn handle_job(job: RunTask, worker: Data<Arc<Worker>>) -> Result<(), BoxDynError> {
    worker
        .run_task(&job.task_id)
        .await
        .map_err(|error| Box::new(error) as BoxDynError)
}

impl Worker {
    async fn run_task(&self, id: &str) -> Result<()> {
        let settings = &self.settings;
        let lease = settings.lease;
        // This job is spent whatever the claim says; a task left queued without one is found by
        // the sweep (`Store::unqueued`).
        let _ = self.store.mark_taken(id).await;
        let claim = match retry_transient(lease, || self.store.claim(id, &settings.id, lease)).await
        {
            Ok(claim) => claim,
            // A second delivery of the job: the task runs elsewhere, ended, or is gone.
            Err(
                StoreError::Held { .. } | StoreError::WrongState { .. } | StoreError::NotFound(_),
            ) => {
                return Ok(());
            }
            // The tenant is at its limit of tasks running: the task goes back on the queue after
            // a pause (a few seconds, so a worker with nothing else to do does not spin on it).
            Err(StoreError::TenantBusy { .. }) => {
                tokio::select! {
                    () = self.shutdown.cancelled() => {}
                    () = tokio::time::sleep(TENANT_BUSY_PAUSE) => {}
                }
                return retry_transient(lease, || {
                    let mut queue = self.queue.clone();
                    async move { queue.push(id).await }
                })
                .await;
            }
            Err(error) => return Err(error),
        };
        let Some(task) = retry_transient(lease, || self.store.task_any_tenant(id)).await? else {
            return Ok(());
        };
        let stop = Stop::under(&self.shutdown);
        let ended = CancellationToken::new();
        // The heartbeat stops with this future, also when the queue drops it mid-run.
        let _stop_heartbeat = ended.clone().drop_guard();
        let beat = tokio::spawn(heartbeat(
            self.store.clone(),
            claim.clone(),
            settings.heartbeat,
            stop.clone(),
            ended.clone(),
        ));
        let run = RunContext {
            task,
            claim: claim.clone(),
            store: self.store.clone(),
            stop,
            lease: settings.lease,
        };
        let end = self.runner.run(run).await;
        ended.cancel();
        let _ = beat.await;
        // How the attempt ended is written even if the database is away for a moment.
        let asked_to_cancel = retry_transient(lease, || self.store.task_any_tenant(id))
            .await?
            .is_some_and(|task| task.cancel_requested_ms.is_some());
        if self.shutdown.is_cancelled() && !asked_to_cancel {
            // Stopped with the worker, not by a person: the task goes back for another worker.
            let reason = format!("worker {} stopped during the run", settings.id);
            return match retry_transient(lease, || self.store.release(&claim, &reason)).await {
                Ok(TaskState::Queued) => self.queue.clone().push(id).await,
                Ok(_) | Err(StoreError::StaleAttempt { .. }) => Ok(()),
                Err(error) => Err(error),
            };
        }
        match retry_transient(lease, || self.store.finish(&claim, &end)).await {
            // A late finisher: another attempt is current, what this one found is dropped.
            Ok(()) | Err(StoreError::StaleAttempt { .. }) => Ok(()),
            Err(StoreError::WrongState { .. }) if end.state == TaskState::Cancelled => Ok(()),
            Err(error) => Err(error),
        }
    }
}

/// The attempt's heartbeat until the run ends; fires `stop` on a person's cancel or when the
/// attempt is no longer current.
async fn heartbeat(
    store: Store,
    claim: Claim,
    every: Duration,
    stop: Stop,
    ended: CancellationToken,
) {
    loop {
        tokio::select! {
            () = ended.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        match store.heartbeat(&claim).await {
            Ok(signals) if signals.cancel_requested => stop.stop(StopCause::CancelRequested),
            Ok(_) => {}
            Err(StoreError::StaleAttempt { .. }) => {
                stop.stop(StopCause::Superseded);
                return;
            }
            // The database is away for a moment: keep trying; the lease is many beats long.
            Err(_) => {}
        }
    }
}

/// Puts back on the queue every task whose worker died, and every queued task left with no job
/// (a push that failed), until `shutdown`.
async fn sweep(
    store: Store,
    mut queue: JobQueue,
    settings: WorkerSettings,
    shutdown: CancellationToken,
) {
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(settings.sweep) => {}
        }
        let Ok(moved) = store.sweep_lost(&settings.queue.name, settings.lease).await else {
            continue;
        };
        for (id, state) in moved {
            if state == TaskState::Queued {
                let _ = queue.push(&id).await;
            }
        }
        let Ok(unqueued) = store.unqueued(&settings.queue.name, settings.lease).await else {
            continue;
        };
        for id in unqueued {
            let _ = queue.push(&id).await;
        }
    }
}
