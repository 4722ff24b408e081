//! `plumb mcp`: plumb as a tool other agents call, over the Model Context Protocol (stdio, or
//! streamable HTTP on loopback with `--listen`). The protocol side is `plumb-mcp`; this module
//! gives it a [`Backend`]: `local.rs` runs the engine on this machine as `plumb fix` does,
//! `remote.rs` hands the tasks to a `plumb serve` (`--server URL`) through `api.rs`. Neither
//! approves, applies or undoes anything.
//!
//! The caller is untrusted, as a repository's settings are: its `repo` must lie inside
//! `mcp.allowed_roots` (`roots.rs`, checked with the ticket and `mcp.max_tasks` in `gate.rs`); its `max_rounds` and `budget` only tighten the user's limits;
//! it cannot name the sandbox (the schema has no such field, and unknown fields are refused).

mod api;
mod gate;
mod local;
mod remote;
mod roots;
mod runs;
mod upload;

use std::sync::Arc;

use plumb_mcp::Backend;
use tokio_util::sync::CancellationToken;

use crate::args::McpArgs;
use crate::screen::say;
use crate::{Failure, setup};
use gate::Gate;
use local::LocalBackend;
use remote::RemoteBackend;
use roots::Roots;

/// `plumb mcp [--listen ADDR] [--server URL [--token T]]`.
pub(crate) async fn run(args: McpArgs, overrides: &[String]) -> Result<i32, Failure> {
    let loaded = setup::load_config(None, overrides.to_vec(), Vec::new())?;
    let roots = Roots::resolve(&loaded.config.mcp.allowed_roots)?;
    let max_tasks = loaded.config.mcp.max_tasks.max(1) as usize;
    let shown = roots.text();
    let gate = Gate::new(roots, max_tasks);
    let (backend, runs_on): (Arc<dyn Backend>, String) = match &args.server {
        Some(server) => {
            let token = match &args.token {
                Some(token) => token.clone(),
                None => std::env::var("PLUMB_TOKEN").map_err(|_| {
                    Failure::bad_input(
                        "--server needs an API token: pass --token T or set PLUMB_TOKEN (make one with plumb token create on the server)",
                    )
                })?,
            };
            let remote = RemoteBackend::new(server, &token, gate)?;
            (Arc::new(remote), format!("tasks run on {server}"))
        }
        None => {
            let runs_dir = setup::runs_dir(&loaded.config)?;
            let local = LocalBackend::new(overrides.to_vec(), gate, runs_dir);
            (Arc::new(local), "tasks run here".to_owned())
        }
    };
    // Ctrl-C and SIGTERM stop serving; runs still going are then cancelled and rolled back.
    let stop = CancellationToken::new();
    crate::worker::stop_on_signals(stop.clone());
    let served = match args.listen {
        None => {
            say!("plumb mcp: serving on stdio; repositories under {shown}; {runs_on}");
            tokio::select! {
                served = plumb_mcp::serve_stdio(backend.clone()) => served,
                () = stop.cancelled() => Ok(()),
            }
        }
        Some(listen) => {
            let address: std::net::SocketAddr = listen.parse().map_err(|_| {
                Failure::bad_input(format!(
                    "--listen {listen} is not an address; give IP:PORT, e.g. 127.0.0.1:8418"
                ))
            })?;
            plumb_mcp::check_loopback(address).map_err(Failure::bad_input)?;
            let listener = tokio::net::TcpListener::bind(address)
                .await
                .map_err(|err| {
                    Failure::bad_input(format!(
                        "--listen {address}: cannot listen there ({err}); pick a free port"
                    ))
                })?;
            let bound = listener
                .local_addr()
                .map_err(|err| Failure::infra(format!("the listener has no address: {err}")))?;
            say!(
                "plumb mcp: serving http://{bound}{}; repositories under {shown}; {runs_on}",
                plumb_mcp::HTTP_PATH,
            );
            plumb_mcp::serve_http(backend.clone(), listener, stop).await
        }
    };
    // The client is gone: runs it started end cancelled and rolled back, not cut off.
    backend.close().await;
    served.map_err(Failure::infra)?;
    Ok(0)
}

/// A backend's map of the runs it follows; a panic elsewhere while it was held leaves it usable.
fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
