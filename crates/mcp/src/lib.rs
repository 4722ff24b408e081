//! plumb-mcp: plumb as a tool other agents call, over the Model Context Protocol.
//!
//! - [`types`]: the tools' arguments and results; their JSON schemas are generated from them.
//! - [`backend`]: the [`Backend`] trait that does the tools' work (the `plumb` binary runs the
//!   engine behind it) and its failures.
//! - [`server`]: [`PlumbMcp`], the tools declared with the official Rust SDK (`rmcp`).
//! - [`serve_stdio`] and [`serve_http`]: the two transports — stdio, as MCP clients launch a
//!   server, and streamable HTTP on a loopback address.
//!
//! No tool approves, applies or undoes a change: a verified diff is handed back with its SHA-256
//! and the `plumb apply` command a person runs.

pub mod backend;
pub mod server;
pub mod types;

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::ServiceExt as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

pub use backend::{Backend, ProgressNote, ToolFailure};
pub use server::PlumbMcp;

/// The path the streamable HTTP endpoint answers on.
pub const HTTP_PATH: &str = "/mcp";

/// Serves MCP on stdin and stdout until the client closes them. Nothing else may write to stdout
/// meanwhile: it carries the protocol.
pub async fn serve_stdio(backend: Arc<dyn Backend>) -> Result<(), String> {
    let running = PlumbMcp::new(backend)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|error| format!("the MCP client's opening handshake failed: {error}"))?;
    running
        .waiting()
        .await
        .map(|_| ())
        .map_err(|error| format!("the MCP connection ended with an error: {error}"))
}

/// Serves MCP's streamable HTTP transport at `http://ADDR/mcp` on a bound loopback listener
/// until `stop` is cancelled. Only loopback: the endpoint has no authentication of its own, and
/// it runs commands on this machine (in the sandbox), so it is for clients on the same machine.
pub async fn serve_http(
    backend: Arc<dyn Backend>,
    listener: tokio::net::TcpListener,
    stop: CancellationToken,
) -> Result<(), String> {
    let address = listener
        .local_addr()
        .map_err(|error| format!("the MCP listener has no address: {error}"))?;
    check_loopback(address)?;
    let port = address.port();
    // The Host header must name this server (DNS rebinding: a web page that resolves its own
    // name to 127.0.0.1 must not reach it).
    let hosts = [
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
        "[::1]".to_owned(),
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
    ];
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_cancellation_token(stop.child_token());
    let service = StreamableHttpService::new(
        move || Ok(PlumbMcp::new(backend.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().nest_service(HTTP_PATH, service);
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { stop.cancelled_owned().await })
        .await
        .map_err(|error| format!("the MCP HTTP server stopped: {error}"))
}

/// Refuses an address other machines could reach.
pub fn check_loopback(address: SocketAddr) -> Result<(), String> {
    if address.ip().is_loopback() {
        Ok(())
    } else {
        Err(format!(
            "--listen {address} is reachable from other machines, and plumb mcp's HTTP endpoint has no authentication of its own; listen on a loopback address such as 127.0.0.1:{port} (clients on other machines go through plumb serve, which has tokens)",
            port = address.port()
        ))
    }
}
