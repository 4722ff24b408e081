//! The signed-in tenant: its limits (an operator's, read here; a task asking for more rounds is
//! lowered to them) and the model keys it brings — kept only where the server has a secret key,
//! never answered back, another tenant's never seen.

use reqwest::Method;
use serde_json::json;

use super::harness::{assert_error, start, start_with};

fn secret() -> plumb_store::SecretKey {
    plumb_store::SecretKey::parse(&"7".repeat(64), "test").unwrap()
}

#[tokio::test]
async fn a_tenant_keeps_a_key_it_never_reads_back_and_another_never_sees() {
    let server = start_with(false, Some(secret())).await;
    let acme = server.token("acme").await;
    let globex = server.token("globex").await;
    let key = "sk-acme-0123456789";
    let (status, kept) = server
        .send(
            Method::PUT,
            &acme,
            "/api/tenant/keys/openai",
            Some(&json!({"key": key})),
        )
        .await;
    assert_eq!(status, 200, "{kept}");
    assert_eq!(kept["provider"], "openai");
    assert!(!kept.to_string().contains(key));

    let (status, tenant) = server.get(&acme, "/api/tenant").await;
    assert_eq!(status, 200);
    assert_eq!(tenant["tenant"], "acme");
    assert_eq!(tenant["keys_enabled"], true);
    assert_eq!(tenant["keys"][0]["provider"], "openai");
    assert!(!tenant.to_string().contains(key));
    let (_, other) = server.get(&globex, "/api/tenant").await;
    assert_eq!(other["keys"], json!([]));
    let opened = server
        .store
        .model_key("acme", "openai", &secret())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(opened.expose(), key);

    let bad = server
        .send(
            Method::PUT,
            &acme,
            "/api/tenant/keys/openai",
            Some(&json!({"key": "two words"})),
        )
        .await;
    assert_error(&bad, 400, "bad_request", "visible ASCII");
    let (status, _) = server
        .send(
            Method::PUT,
            &acme,
            "/api/tenant/keys/ollama",
            Some(&json!({"key": key})),
        )
        .await;
    assert_eq!(status, 400);
    let (status, _) = server
        .send(Method::DELETE, &globex, "/api/tenant/keys/openai", None)
        .await;
    assert_eq!(status, 404, "another tenant's key is not there to forget");
    let (status, _) = server
        .send(Method::DELETE, &acme, "/api/tenant/keys/openai", None)
        .await;
    assert_eq!(status, 204);
    let (_, tenant) = server.get(&acme, "/api/tenant").await;
    assert_eq!(tenant["keys"], json!([]));
}

#[tokio::test]
async fn a_server_without_a_secret_key_keeps_no_keys() {
    let server = start(false).await;
    let acme = server.token("acme").await;
    let refused = server
        .send(
            Method::PUT,
            &acme,
            "/api/tenant/keys/anthropic",
            Some(&json!({"key": "sk-x"})),
        )
        .await;
    assert_error(&refused, 409, "keys_disabled", "PLUMB_SECRET_KEY");
    let (_, tenant) = server.get(&acme, "/api/tenant").await;
    assert_eq!(tenant["keys_enabled"], false);
    assert_eq!(server.get("", "/api/tenant").await.0, 401);
}

#[tokio::test]
async fn a_task_asking_for_more_rounds_than_its_tenant_may_is_lowered() {
    let server = start(false).await;
    let acme = server.token("acme").await;
    let limits = plumb_store::TenantLimits {
        max_running: Some(1),
        max_rounds: Some(5),
        max_usd: Some(0.5),
    };
    server
        .store
        .set_tenant_limits("acme", &limits)
        .await
        .unwrap();
    let (_, tenant) = server.get(&acme, "/api/tenant").await;
    assert_eq!(
        tenant["limits"],
        json!({"max_running": 1, "max_rounds": 5, "max_usd": 0.5})
    );
    for (asked, stored) in [(json!(9), 5), (json!(3), 3), (serde_json::Value::Null, 5)] {
        let mut body = json!({
            "repo": {"kind": "git", "url": "https://example.com/acme/billing.git"},
            "ticket": "Totals are off by a cent",
        });
        if !asked.is_null() {
            body["max_rounds"] = asked;
        }
        let (status, task) = server.post(&acme, "/api/tasks", &body).await;
        assert_eq!(status, 201, "{task}");
        let id = task["id"].as_str().unwrap();
        let record = server.store.task("acme", id).await.unwrap();
        assert_eq!(record.spec["max_rounds"], stored, "{}", record.spec);
    }
}
