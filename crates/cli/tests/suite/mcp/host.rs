//! `plumb mcp --listen`'s endpoint answers only requests addressed to a loopback name: a web page
//! whose own name resolves to 127.0.0.1 (DNS rebinding) must not reach the tools from a browser.

use serde_json::json;

use super::HttpServer;
use crate::suite::common::Fixture;
use crate::suite::serve::runtime;

#[test]
fn the_http_endpoint_refuses_a_request_whose_host_is_not_loopback() {
    let fixture = Fixture::billing();
    let server = HttpServer::start(&fixture, &[]);
    let port = server
        .url
        .trim_end_matches("/mcp")
        .rsplit(':')
        .next()
        .unwrap()
        .to_owned();
    let initialize = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "host-check", "version": "1"},
        },
    });
    let rt = runtime();
    let status = |host: String| {
        rt.block_on(async {
            reqwest::Client::new()
                .post(&server.url)
                .header("host", host)
                .header("accept", "application/json, text/event-stream")
                .json(&initialize)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        })
    };

    assert_eq!(status(format!("127.0.0.1:{port}")), 200);
    assert_eq!(status(format!("localhost:{port}")), 200);
    let refused = status(format!("attacker.example:{port}"));
    assert!(
        (400..500).contains(&refused),
        "a foreign Host was answered with {refused}"
    );
}
