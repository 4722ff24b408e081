//! `plumb worker`: takes tasks from the job queue in a store (`--db`) and runs them with plumb's
//! engine, one at a time, until Ctrl-C or SIGTERM. Usable alone, on any machine that reaches the
//! database: no server process is needed beside it. A worker that is stopped mid-run leaves the
//! task to be retried by another worker once its heartbeat is older than the lease.

use std::sync::Arc;

use plumb_store::{redact, run_worker, worker_id};
use tokio_util::sync::CancellationToken;

use crate::args::WorkerArgs;
use crate::screen::{one_line, say};
use crate::task_engine::EngineRunner;
use crate::{Failure, setup, store_url};

pub(crate) async fn run(args: WorkerArgs, overrides: &[String]) -> Result<i32, Failure> {
    // The worker's own settings are checked now, not at its first task.
    setup::load_config(None, overrides.to_vec(), Vec::new())?;
    let secret_key = args.worker.secret_key()?;
    let (store, url) = store_url::open(args.db.as_deref()).await?;
    let mut settings = args.worker.worker_settings(worker_id(&host_name()));
    if let Some(queue) = &args.queue {
        settings.queue.name.clone_from(queue);
    }
    say!(
        "plumb worker {}: taking tasks from queue {} in {} ({})",
        one_line(&settings.id),
        one_line(&settings.queue.name),
        store.backend(),
        one_line(&redact(&url))
    );
    let shutdown = CancellationToken::new();
    stop_on_signals(shutdown.clone());
    let runner = Arc::new(EngineRunner {
        overrides: overrides.to_vec(),
        url_policy: args.worker.url_policy(),
        secret_key: secret_key.clone(),
    });
    run_worker(store, settings, runner, shutdown)
        .await
        .map_err(|error| Failure::infra(format!("the worker stopped: {error}")))?;
    say!("plumb worker: stopped");
    Ok(0)
}

/// Ctrl-C and SIGTERM stop the worker (a run in progress is cancelled and rolled back).
pub(crate) fn stop_on_signals(shutdown: CancellationToken) {
    tokio::spawn(async move {
        let Ok(mut term) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        else {
            return;
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        shutdown.cancel();
    });
}

pub(crate) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "worker".to_owned())
}
