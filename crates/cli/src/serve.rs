//! `plumb serve`: the HTTP API of plumb-server over a store, and a pool of local workers taking
//! the API's tasks from the same job queue, until Ctrl-C or SIGTERM. Refuses what would make the
//! service unsafe to run: no sandbox, or a listen address beyond loopback with no token to guard
//! it.

use std::net::SocketAddr;
use std::sync::Arc;

use plumb_protocol::SandboxKind;
use plumb_server::{AppState, Capabilities, Intake, Limits, ModelOffer, ServerSettings};
use plumb_store::{QueueSettings, redact, run_worker, worker_id};
use tokio_util::sync::CancellationToken;

use crate::args::ServeArgs;
use crate::screen::{one_line, say};
use crate::serve_home::LocalHome;
use crate::task_engine::EngineRunner;
use crate::worker::{host_name, stop_on_signals};
use crate::{Failure, setup, store_url};

/// The longest ticket taken.
const MAX_TICKET_BYTES: usize = 64 * 1024;
/// The largest archive taken.
const MAX_UPLOAD_BYTES: usize = 64 << 20;
/// Attempts a task gets when workers die under it.
const MAX_ATTEMPTS: i64 = 3;

pub(crate) async fn run(args: ServeArgs, overrides: &[String]) -> Result<i32, Failure> {
    let config = setup::load_config(None, overrides.to_vec(), Vec::new())?.config;
    if config.sandbox == SandboxKind::None {
        return Err(Failure::bad_input(
            "plumb serve runs every task in a sandbox: the setting sandbox = \"none\" is refused \
             here; use bwrap or gvisor (`plumb doctor` says which works on this machine)",
        ));
    }
    let addr: SocketAddr = args.listen.parse().map_err(|_| {
        Failure::bad_input(format!(
            "--listen {}: give an address and port, e.g. 127.0.0.1:8417",
            one_line(&args.listen)
        ))
    })?;
    let models = offered_models(&config.model, &args.offer_models)?;
    let secret_key = args.worker.secret_key()?;
    let (store, url) = store_url::open(args.db.as_deref()).await?;
    let tokens = store
        .list_tokens()
        .await
        .map_err(|error| Failure::infra(error.to_string()))?;
    let live_tokens = tokens
        .iter()
        .filter(|token| token.revoked_ms.is_none())
        .count();
    if !addr.ip().is_loopback() && live_tokens == 0 {
        return Err(Failure::bad_input(format!(
            "--listen {addr} reaches beyond this machine and there is no token to guard it: make \
             one first with `plumb token create --tenant NAME` (same --db)"
        )));
    }
    let queue_name = args
        .queue
        .clone()
        .unwrap_or_else(|| QueueSettings::default().name);
    let settings = ServerSettings {
        queue: queue_name.clone(),
        max_attempts: MAX_ATTEMPTS,
        capabilities: Capabilities {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            default_model: models[0].id.clone(),
            models,
            sandbox: config.sandbox.as_str().to_owned(),
            limits: Limits {
                max_rounds: config.limits.max_rounds,
                max_ticket_bytes: MAX_TICKET_BYTES,
                max_upload_bytes: MAX_UPLOAD_BYTES,
            },
            intake: Intake {
                git: true,
                uploads: true,
                server_paths: args.allow_server_paths,
            },
        },
        event_poll: std::time::Duration::from_millis(250),
    };
    let queue_settings = QueueSettings {
        name: queue_name.clone(),
        ..QueueSettings::default()
    };
    let queue = store
        .job_queue(&queue_settings)
        .await
        .map_err(|error| Failure::infra(format!("the job queue: {error}")))?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|error| Failure::bad_input(format!("--listen {addr}: {error}")))?;
    let shutdown = CancellationToken::new();
    stop_on_signals(shutdown.clone());

    let workers = args.workers.unwrap_or_else(default_workers);
    let runner = Arc::new(EngineRunner {
        overrides: overrides.to_vec(),
        url_policy: args.worker.url_policy(),
        secret_key: secret_key.clone(),
    });
    let mut pool = Vec::with_capacity(workers);
    for _ in 0..workers {
        let mut worker = args.worker.worker_settings(worker_id(&host_name()));
        worker.queue = queue_settings.clone();
        pool.push(tokio::spawn(run_worker(
            store.clone(),
            worker,
            runner.clone(),
            shutdown.clone(),
        )));
    }
    say!(
        "plumb serve: http://{addr}/api (store {}, {}; queue {}; {workers} local worker(s); {live_tokens} live token(s))",
        store.backend(),
        one_line(&redact(&url)),
        one_line(&queue_name),
    );
    if live_tokens == 0 {
        say!("plumb serve: no tokens yet: `plumb token create --tenant NAME` makes one");
    }
    let home = Arc::new(LocalHome {
        overrides: overrides.to_vec(),
    });
    let state = AppState::new(store.clone(), queue, settings, shutdown.clone())
        .with_home(home)
        .with_secret_key(secret_key);
    let served = plumb_server::serve(listener, plumb_server::router(state), shutdown.clone()).await;
    // The API stopped (a signal, or the listener failed): the workers give their tasks back.
    shutdown.cancel();
    for worker in pool {
        if let Ok(Err(error)) = worker.await {
            say!("plumb serve: a worker stopped with an error: {error}");
        }
    }
    store.close().await;
    served.map_err(|error| Failure::infra(format!("the HTTP server stopped: {error}")))?;
    say!("plumb serve: stopped");
    Ok(0)
}

/// One local worker per two cores, at least one: a run's sandboxed tests and the model share
/// the machine.
fn default_workers() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    (cores / 2).max(1)
}

/// The settings' model first (the default), then each `--offer-model`, each a spec plumb reads.
fn offered_models(default: &str, more: &[String]) -> Result<Vec<ModelOffer>, Failure> {
    let mut offers: Vec<ModelOffer> = Vec::new();
    for spec in std::iter::once(default).chain(more.iter().map(String::as_str)) {
        plumb_model::ModelSpec::parse(spec).map_err(|error| {
            Failure::bad_input(format!("--offer-model {}: {error}", one_line(spec)))
        })?;
        if offers.iter().any(|offer| offer.id == spec) {
            continue;
        }
        let description = match plumb_model::catalog::lookup(spec) {
            Some(info) => format!("{} ({} tokens of context)", info.spec, info.context_window),
            None => spec.to_owned(),
        };
        offers.push(ModelOffer {
            id: spec.to_owned(),
            description,
        });
    }
    Ok(offers)
}
