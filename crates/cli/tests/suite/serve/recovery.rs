//! `plumb serve` killed with SIGKILL while its worker runs a task, then started again: the task
//! is retried once on a fresh workspace and ends waiting for approval, the dead attempt's run
//! folder is removed, every event is kept once and in order, and the repository is untouched.

use std::path::{Path, PathBuf};
use std::time::Duration;

use plumb_test_support::tree_digest;
use serde_json::json;

use super::{Serve, call, free_port, runtime, settled, token};
use crate::suite::common::Fixture;

/// The run folders of service runs (those holding the worker's task file).
fn task_runs(home: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(home.join("runs")) else {
        return Vec::new();
    };
    let mut runs: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.join("task.json").is_file())
        .collect();
    runs.sort();
    runs
}

/// The task's event stream from its start, read until `marker` shows (within 120 s).
fn read_events_until(
    rt: &tokio::runtime::Runtime,
    task_url: &str,
    token: &str,
    marker: &str,
) -> String {
    rt.block_on(async {
        use futures_util::StreamExt as _;
        let response = reqwest::Client::new()
            .get(format!("{task_url}/events"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let mut body = response.bytes_stream();
        let mut text = String::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        while !text.contains(marker) {
            let chunk = tokio::time::timeout_at(deadline, body.next())
                .await
                .unwrap_or_else(|_| panic!("no {marker:?} within 120 s: {text}"))
                .expect("the stream stays open")
                .unwrap();
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
        text
    })
}

#[test]
fn a_server_killed_mid_run_is_restarted_and_the_task_retried_once_on_a_fresh_workspace() {
    let fixture = Fixture::billing();
    let before = tree_digest(fixture.repo_path());
    let db = format!("sqlite:{}", fixture.home.path().join("plumb.db").display());
    let token = token(&fixture, &db, "acme");
    let port = free_port();
    // A short lease, so the restarted server takes the dead attempt for dead within seconds.
    let lease = ["--lease", "3"];
    let serve = Serve::start_with(&fixture, &db, port, &lease);
    let rt = runtime();
    let ticket = std::fs::read_to_string(fixture.ticket()).unwrap();
    let path = fixture.repo_path().display().to_string();
    let body = json!({"repo": {"kind": "path", "path": path}, "ticket": ticket});
    let tasks = format!("{}/api/tasks", serve.base);
    let (status, task) = rt.block_on(call(reqwest::Method::POST, &tasks, &token, Some(body)));
    assert_eq!(status, 201, "{task}");
    let task_url = format!("{tasks}/{}", task["id"].as_str().unwrap());

    // Wait for the run itself: its workspace is made and its first event stored.
    let seen = read_events_until(&rt, &task_url, &token, "event: run_started\n");
    assert!(!seen.contains("awaiting_approval"), "{seen}");
    serve.kill();
    let dead = task_runs(fixture.home.path());
    assert_eq!(dead.len(), 1, "the killed attempt's run folder: {dead:?}");
    assert!(!dead[0].join("report.json").exists());

    let serve = Serve::start_with(&fixture, &db, port, &lease);
    let task = settled(&rt, &task_url, &token);
    assert_eq!(
        (task["state"].as_str(), task["attempt"].as_i64()),
        (Some("awaiting_approval"), Some(2)),
        "{task}"
    );
    let runs = task_runs(fixture.home.path());
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_ne!(runs[0], dead[0], "the dead attempt's folder is gone");
    assert!(runs[0].join("report.json").is_file());

    // Every event once, numbered 1..n: the dead attempt's, then the retry's.
    let text = read_events_until(&rt, &task_url, &token, "\"state\":\"awaiting_approval\"");
    let events: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect();
    let seqs: Vec<i64> = events.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert_eq!(
        seqs,
        (1..=i64::try_from(seqs.len()).unwrap()).collect::<Vec<_>>()
    );
    let started: Vec<i64> = events
        .iter()
        .filter(|e| e["kind"] == "run_started")
        .map(|e| e["attempt"].as_i64().unwrap())
        .collect();
    assert_eq!(started, [1, 2], "one run per attempt");
    let (code, err) = serve.stop();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        tree_digest(fixture.repo_path()),
        before,
        "the repository changed"
    );
}
