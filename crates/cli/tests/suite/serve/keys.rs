//! A tenant's own model key (BYOK) and its limits, through `plumb serve` as a process: the key
//! set over the API goes to the provider (a local mock of OpenAI's API) in the Authorization
//! header and nowhere else — not in an event, the report, the journal, the database file or the
//! server's log — and once forgotten the operator's key is used again; a tenant limited to one
//! task at once has its second task wait for the first although two workers are free.

use plumb_test_support::mock_http::MockServer;
use reqwest::Method;
use serde_json::json;

use super::{
    Serve, call, event_list, free_port, post_bill_412, read_events_until, runtime, settled,
    task_runs, token,
};
use crate::suite::common::Fixture;
use crate::suite::providers::openai_responses;

const TENANT_KEY: &str = "sk-tenant-acme-5e1b7c2d9f";
const OPERATOR_KEY: &str = "sk-operator-0a4e8d3c61";
const SECRET: &str = "3c1f9e0b7a5d2c4e6f8a0b1c3d5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e";

#[test]
fn a_tenant_s_key_goes_only_in_the_provider_s_header_and_forgotten_the_operator_s_is_used() {
    let fixture = Fixture::billing();
    let db_file = fixture.home.path().join("plumb.db");
    let db = format!("sqlite:{}", db_file.display());
    let token = token(&fixture, &db, "acme");
    // Two runs of BILL-412: the first on the tenant's key, the second on the operator's.
    let mut responses = openai_responses();
    responses.extend(openai_responses());
    let mock = MockServer::start(responses);
    let base_url = format!("providers.openai.base_url={}/v1", mock.url());
    let extra = [
        "--offer-model",
        "openai:gpt-4.1",
        "-c",
        &base_url,
        "-c",
        "review.enabled=false",
    ];
    let env = [
        ("PLUMB_SECRET_KEY", SECRET),
        ("OPENAI_API_KEY", OPERATOR_KEY),
    ];
    let serve = Serve::start_env(&fixture, &db, free_port(), &extra, &env);
    let rt = runtime();
    let key_url = format!("{}/api/tenant/keys/openai", serve.base);
    let (status, kept) = rt.block_on(call(
        Method::PUT,
        &key_url,
        &token,
        Some(json!({"key": TENANT_KEY})),
    ));
    assert_eq!(status, 200, "{kept}");

    let task_url = post_bill_412(&rt, &serve, &fixture, &token, Some("openai:gpt-4.1"));
    let task = settled(&rt, &task_url, &token);
    assert_eq!(task["state"], "awaiting_approval", "{task}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 8);
    let tenant_bearer = format!("Bearer {TENANT_KEY}");
    for request in &requests {
        assert_eq!(
            request.header("authorization"),
            Some(tenant_bearer.as_str())
        );
        assert!(!request.body_text().contains(TENANT_KEY));
    }
    let events = read_events_until(&rt, &task_url, &token, "\"state\":\"awaiting_approval\"");
    event_list(&events);
    assert!(!events.contains(TENANT_KEY), "the key is in an event");
    let (_, report) = rt.block_on(call(
        Method::GET,
        &format!("{task_url}/report"),
        &token,
        None,
    ));
    assert!(
        !report.to_string().contains(TENANT_KEY),
        "the key is in the report"
    );
    let runs = task_runs(fixture.home.path());
    let journal = std::fs::read_to_string(runs[0].join("journal.jsonl")).unwrap();
    assert!(!journal.contains(TENANT_KEY), "the key is in the journal");

    // Forgotten: the next task runs on the operator's key.
    let (status, _) = rt.block_on(async {
        let response = reqwest::Client::new()
            .delete(&key_url)
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), ())
    });
    assert_eq!(status, 204);
    let next_url = post_bill_412(&rt, &serve, &fixture, &token, Some("openai:gpt-4.1"));
    let next = settled(&rt, &next_url, &token);
    assert_eq!(next["state"], "awaiting_approval", "{next}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 16);
    let operator_bearer = format!("Bearer {OPERATOR_KEY}");
    for request in &requests[8..] {
        assert_eq!(
            request.header("authorization"),
            Some(operator_bearer.as_str())
        );
    }

    let (code, err) = serve.stop();
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains(TENANT_KEY), "the key is in the server's log");
    for file in ["plumb.db", "plumb.db-wal"] {
        let bytes = std::fs::read(fixture.home.path().join(file)).unwrap_or_default();
        assert!(
            !bytes
                .windows(TENANT_KEY.len())
                .any(|window| window == TENANT_KEY.as_bytes()),
            "the key is in the clear in {file}"
        );
    }
}

#[test]
fn a_tenant_limited_to_one_task_at_once_waits_although_workers_are_free() {
    let fixture = Fixture::billing();
    let db = format!("sqlite:{}", fixture.home.path().join("plumb.db").display());
    let token = token(&fixture, &db, "acme");
    let set = crate::suite::common::plumb(
        fixture.home.path(),
        &[
            "tenant",
            "limits",
            "--tenant",
            "acme",
            "--max-running",
            "1",
            "--db",
            &db,
        ],
    );
    assert_eq!(set.status.code(), Some(0), "{set:?}");
    let serve = Serve::start_with(&fixture, &db, free_port(), &["--workers", "2"]);
    let rt = runtime();
    let first = post_bill_412(&rt, &serve, &fixture, &token, None);
    let second = post_bill_412(&rt, &serve, &fixture, &token, None);
    let mut spans = Vec::new();
    for url in [&first, &second] {
        let task = settled(&rt, url, &token);
        assert_eq!(task["state"], "awaiting_approval", "{task}");
        let text = read_events_until(&rt, url, &token, "\"state\":\"awaiting_approval\"");
        let (events, _) = event_list(&text);
        let at = |state: &str| {
            events
                .iter()
                .find(|event| event["kind"] == "state" && event["body"]["state"] == state)
                .map(|event| event["at_ms"].as_i64().unwrap())
                .unwrap()
        };
        spans.push((at("preparing"), at("awaiting_approval")));
    }
    spans.sort_unstable();
    assert!(
        spans[0].1 <= spans[1].0,
        "the tenant's two tasks ran at the same time: {spans:?}"
    );
    let (code, err) = serve.stop();
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn an_operator_keeps_a_tenant_s_key_from_stdin_and_shows_limits_without_it() {
    use std::io::Write as _;
    let fixture = Fixture::billing();
    let db = format!("sqlite:{}", fixture.home.path().join("plumb.db").display());
    let key = |env: &[(&str, &str)]| {
        let mut command = crate::suite::common::plumb_command(fixture.home.path());
        command
            .args([
                "tenant",
                "key",
                "--tenant",
                "acme",
                "--provider",
                "anthropic",
            ])
            .args(["--db", &db])
            .env_remove("PLUMB_SECRET_KEY")
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = command.spawn().unwrap();
        writeln!(child.stdin.take().unwrap(), "{TENANT_KEY}").unwrap();
        child.wait_with_output().unwrap()
    };
    let refused = key(&[]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("PLUMB_SECRET_KEY"));
    let kept = key(&[("PLUMB_SECRET_KEY", SECRET)]);
    assert_eq!(kept.status.code(), Some(0), "{kept:?}");

    let limits = crate::suite::common::plumb(
        fixture.home.path(),
        &[
            "tenant",
            "limits",
            "--tenant",
            "acme",
            "--max-rounds",
            "7",
            "--db",
            &db,
        ],
    );
    assert_eq!(limits.status.code(), Some(0), "{limits:?}");
    let shown = crate::suite::common::plumb(
        fixture.home.path(),
        &["tenant", "show", "--tenant", "acme", "--db", &db],
    );
    let text = String::from_utf8_lossy(&shown.stdout).to_string();
    assert!(
        text.contains("max_rounds\t7") && text.contains("keys\tanthropic"),
        "{text}"
    );
    assert!(!text.contains(TENANT_KEY));
}
