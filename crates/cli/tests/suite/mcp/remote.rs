//! `plumb mcp --server URL`: the same tools, the tasks run by a `plumb serve` (SQLite store, one
//! worker). The caller's repository is uploaded, never written; the diff handed back is the one
//! whose SHA-256 the server's approval accepts; a client's cancel ends the server's run rolled back.

use plumb_test_support::tree_digest;
use serde_json::{Value, json};

use super::{check_cancelled, check_verified_bill_412, client, env_of, roots_setting, with_server};
use crate::suite::common::Fixture;
use crate::suite::serve::{Serve, call, free_port, runtime, task_runs, token};

/// `plumb mcp --server BASE` over stdio, the token in its environment.
fn remote_server(fixture: &Fixture, base: &str, token: &str) -> Value {
    let mut env = env_of(fixture);
    env["PLUMB_TOKEN"] = json!(token);
    json!({"stdio": {
        "command": env!("CARGO_BIN_EXE_plumb"),
        "args": ["-c", roots_setting(fixture), "mcp", "--server", base],
        "env": env,
        "cwd": fixture.home.path(),
    }})
}

fn sqlite(fixture: &Fixture) -> String {
    format!("sqlite:{}", fixture.home.path().join("plumb.db").display())
}

#[test]
fn coding_task_through_plumb_serve_returns_the_diff_the_servers_approval_accepts() {
    let fixture = Fixture::billing();
    let before = tree_digest(fixture.repo_path());
    let db = sqlite(&fixture);
    let token = token(&fixture, &db, "acme");
    let serve = Serve::start(&fixture, &db, free_port());
    let server = remote_server(&fixture, &serve.base, &token);
    let repo = fixture.repo_path().display().to_string();
    let arguments = json!({
        "repo": repo,
        "ticket": std::fs::read_to_string(fixture.ticket()).unwrap(),
    });

    let answer = client(
        "call",
        &with_server(
            server.clone(),
            json!({"name": "coding_task", "arguments": arguments}),
        ),
    );

    let base = serve.base.clone();
    let (task, sha) = check_verified_bill_412(&answer, |task, sha| {
        format!(
            "curl -fsS -o /dev/null -H \"Authorization: Bearer $PLUMB_TOKEN\" -H 'Content-Type: application/json' -d '{{\"sha256\":\"{sha}\"}}' {base}/api/tasks/{task}/approve && curl -fsS -H \"Authorization: Bearer $PLUMB_TOKEN\" {base}/api/tasks/{task}/patch | git -C {repo} apply"
        )
    });
    assert!(task.starts_with('t'), "not a server task id: {task}");
    assert_eq!(
        tree_digest(fixture.repo_path()),
        before,
        "coding_task wrote the caller's repository"
    );
    let status = client(
        "call",
        &with_server(
            server.clone(),
            json!({"name": "coding_task_status", "arguments": {"run": task}}),
        ),
    );
    let listed = client(
        "call",
        &with_server(
            server.clone(),
            json!({"name": "runs_list", "arguments": {}}),
        ),
    );
    assert_eq!(
        (
            &status["structuredContent"]["state"],
            &status["structuredContent"]["outcome"],
            &status["structuredContent"]["patch_sha256"],
            &listed["structuredContent"]["runs"][0]["run_id"],
        ),
        (
            &json!("finished"),
            &json!("success"),
            &json!(sha),
            &json!(task),
        ),
        "{status:#}\n{listed:#}"
    );

    // What the server cannot take is refused before anything is uploaded or started.
    let outside = tempfile::tempdir().unwrap();
    for (arguments, expected) in [
        (
            json!({"repo": repo, "ticket": "t", "budget": {"seconds": 60}}),
            "budget.usd",
        ),
        (
            json!({"repo": outside.path(), "ticket": "t"}),
            "outside the folders",
        ),
    ] {
        let answer = client(
            "call",
            &with_server(
                server.clone(),
                json!({"name": "coding_task", "arguments": arguments}),
            ),
        );
        assert_eq!(answer["isError"], json!(true), "{answer:#}");
        let text = answer["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains(expected), "{text}");
    }
    let rt = runtime();
    let tasks = format!("{}/api/tasks", serve.base);
    let (_, list) = rt.block_on(call(reqwest::Method::GET, &tasks, &token, None));
    assert_eq!(list["tasks"].as_array().map(Vec::len), Some(1), "{list}");

    // The person's step: the server's approval takes the SHA-256 the tool handed back.
    let (status, approved) = rt.block_on(call(
        reqwest::Method::POST,
        &format!("{tasks}/{task}/approve"),
        &token,
        Some(json!({"sha256": sha})),
    ));
    assert_eq!(
        (status, &approved["state"]),
        (200, &json!("approved")),
        "{approved}"
    );
    assert_eq!(tree_digest(fixture.repo_path()), before);
}

#[test]
fn a_client_cancel_ends_the_servers_run_rolled_back() {
    let fixture = Fixture::billing();
    let before = tree_digest(fixture.repo_path());
    let db = sqlite(&fixture);
    let token = token(&fixture, &db, "acme");
    let model = format!("model=script:{}", fixture.slow_script().display());
    let serve = Serve::start_settings(
        &fixture,
        &db,
        free_port(),
        &[&model, "run.allowed_commands=[[\"sleep\"]]"],
    );
    let arguments = json!({
        "repo": fixture.repo_path(),
        "ticket": "Write notes, then wait.",
    });

    let answer = client(
        "cancel_by_notification",
        &with_server(
            remote_server(&fixture, &serve.base, &token),
            json!({"arguments": arguments}),
        ),
    );

    let runs = task_runs(fixture.home.path());
    assert_eq!(runs.len(), 1, "{runs:?}");
    check_cancelled(&answer, &runs[0]);
    let rt = runtime();
    let task = answer["run"].as_str().unwrap();
    let (_, view) = rt.block_on(call(
        reqwest::Method::GET,
        &format!("{}/api/tasks/{task}", serve.base),
        &token,
        None,
    ));
    assert_eq!(view["state"], json!("cancelled"), "{view}");
    assert_eq!(tree_digest(fixture.repo_path()), before);
}
