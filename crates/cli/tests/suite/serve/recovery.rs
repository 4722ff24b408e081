//! `plumb serve` killed with SIGKILL while its worker runs a task, then started again: the task
//! is retried once on a fresh workspace and ends waiting for approval, the dead attempt's run
//! folder is removed, every event is kept once and in order, and the repository is untouched.
//! And a person's cancel reaching a running attempt through the store.

use std::time::{Duration, Instant};

use plumb_test_support::tree_digest;

use super::{
    Serve, call, event_list, free_port, post_bill_412, read_events_until, runtime, settled,
    task_runs, token,
};
use crate::suite::common::Fixture;

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
    let task_url = post_bill_412(&rt, &serve, &fixture, &token, None);

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
    assert_eq!(event_list(&text).1, [1, 2], "one run per attempt");
    let (code, err) = serve.stop();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        tree_digest(fixture.repo_path()),
        before,
        "the repository changed"
    );
}

#[test]
fn a_cancel_reaches_the_running_attempt_which_ends_rolled_back_saying_who_cancelled_it() {
    let fixture = Fixture::billing();
    let before = tree_digest(fixture.repo_path());
    let script = fixture.slow_script();
    let model = format!("model=script:{}", script.display());
    let db = format!("sqlite:{}", fixture.home.path().join("plumb.db").display());
    let token = token(&fixture, &db, "acme");
    let serve = Serve::start_settings(
        &fixture,
        &db,
        free_port(),
        &[&model, "run.allowed_commands=[[\"sleep\"]]"],
    );
    let rt = runtime();
    let task_url = post_bill_412(&rt, &serve, &fixture, &token, None);
    // The `sleep` has started (its arguments are in the tool_started event).
    read_events_until(&rt, &task_url, &token, "\"sleep\"");

    let asked = Instant::now();
    let (status, body) = rt.block_on(call(
        reqwest::Method::POST,
        &format!("{task_url}/cancel"),
        &token,
        None,
    ));
    assert_eq!(status, 200, "{body}");
    let task = settled(&rt, &task_url, &token);
    let took = asked.elapsed();

    assert_eq!(task["state"], "cancelled", "{task}");
    let reason = task["reason"].as_str().unwrap_or_default();
    assert!(reason.ends_with("(by a person)"), "{reason}");
    assert!(took < Duration::from_secs(20), "the cancel took {took:?}");
    let runs = task_runs(fixture.home.path());
    assert_eq!(runs.len(), 1, "{runs:?}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(runs[0].join("report.json")).unwrap()).unwrap();
    assert_eq!(report["outcome"], "cancelled", "{report}");
    let (code, err) = serve.stop();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(tree_digest(fixture.repo_path()), before);
}
