//! The committed OpenAPI document is the one the code generates, so every API change shows in
//! review; `PLUMB_UPDATE_OPENAPI=1` rewrites it.

use super::harness::start;

const COMMITTED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");

#[test]
fn the_committed_openapi_document_is_the_generated_one() {
    let generated = plumb_server::openapi_document();
    if std::env::var_os("PLUMB_UPDATE_OPENAPI").is_some() {
        std::fs::write(COMMITTED, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(COMMITTED).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/openapi.json is not the API's document: run \
         `PLUMB_UPDATE_OPENAPI=1 cargo nextest run -p plumb-server openapi` and commit it"
    );
    let document: serde_json::Value = serde_json::from_str(&generated).unwrap();
    assert!(document["openapi"].as_str().unwrap().starts_with("3.1"));
    let paths = document["paths"].as_object().unwrap();
    for path in [
        "/api/tasks",
        "/api/tasks/{id}/events",
        "/api/tasks/{id}/approve",
        "/api/uploads",
    ] {
        assert!(paths.contains_key(path), "{path} is documented");
    }
}

#[tokio::test]
async fn the_server_serves_the_same_document() {
    let server = start(false).await;
    let served = server
        .client
        .get(server.url("/api/openapi.json"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(served, plumb_server::openapi_document());
}
