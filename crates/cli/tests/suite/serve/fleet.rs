//! `plumb serve` taking tasks over HTTP with no local workers, and `plumb worker` processes
//! running them from a PostgreSQL server of the test's own: a worker killed with SIGKILL while it
//! holds a task (another worker retries it on a fresh workspace), and the PostgreSQL server
//! stopped for seconds under a running worker (the run goes on, no event is lost, and the worker takes the
//! next task). In both the repository is untouched.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use plumb_test_support::{billing_example, tree_digest};

use super::pg::Postgres;
use super::{
    Serve, event_list, free_port, post_bill_412, read_events_until, runtime, settled, task_runs,
    token,
};
use crate::suite::common::{Fixture, plumb_command};

/// `plumb worker` on `db` with the bundled BILL-412 script as its model and a lease of `lease`
/// seconds, its stderr appended to `worker.log` in plumb's home.
fn start_worker(fixture: &Fixture, db: &str, lease: &str) -> Child {
    let script = billing_example().join("bill-412.script.jsonl");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(worker_log(fixture.home.path()))
        .unwrap();
    plumb_command(fixture.home.path())
        .args(["-c", &format!("model=script:{}", script.display())])
        .args(["worker", "--db", db, "--lease", lease])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap()
}

fn worker_log(home: &Path) -> std::path::PathBuf {
    home.join("worker.log")
}

/// SIGTERM to a worker; it must stop cleanly.
fn stop_worker(mut worker: Child, home: &Path) {
    let term = std::process::Command::new("kill")
        .args(["-TERM", &worker.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let status = worker.wait().unwrap();
    let log = std::fs::read_to_string(worker_log(home)).unwrap_or_default();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(log.contains("plumb worker: stopped"), "{log}");
}

#[test]
fn a_worker_killed_holding_a_task_on_postgres_leaves_it_to_another_worker() {
    let fixture = Fixture::billing();
    let before = tree_digest(fixture.repo_path());
    let pg = Postgres::start();
    let db = pg.url();
    let token = token(&fixture, &db, "acme");
    let serve = Serve::start_with(&fixture, &db, free_port(), &["--workers", "0"]);
    let rt = runtime();
    // A short lease, so the second worker takes the dead one's task within seconds.
    let first = start_worker(&fixture, &db, "3");
    let task_url = post_bill_412(&rt, &serve, &fixture, &token, None);

    let seen = read_events_until(&rt, &task_url, &token, "event: run_started\n");
    assert!(!seen.contains("awaiting_approval"), "{seen}");
    let mut first = first;
    first.kill().unwrap();
    first.wait().unwrap();
    let dead = task_runs(fixture.home.path());
    assert_eq!(dead.len(), 1, "the killed attempt's run folder: {dead:?}");

    // A second worker (a fresh id) takes the task once the dead one's lease runs out.
    let second = start_worker(&fixture, &db, "3");
    let task = settled(&rt, &task_url, &token);
    assert_eq!(
        (task["state"].as_str(), task["attempt"].as_i64()),
        (Some("awaiting_approval"), Some(2)),
        "{task}"
    );
    let runs = task_runs(fixture.home.path());
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_ne!(runs[0], dead[0], "the dead attempt's folder is gone");
    let text = read_events_until(&rt, &task_url, &token, "\"state\":\"awaiting_approval\"");
    assert_eq!(event_list(&text).1, [1, 2], "one run per attempt");

    stop_worker(second, fixture.home.path());
    let (code, err) = serve.stop();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(tree_digest(fixture.repo_path()), before);
}

#[test]
fn postgres_stopped_and_started_under_a_running_worker_loses_no_event_and_the_worker_goes_on() {
    let fixture = Fixture::billing();
    let before = tree_digest(fixture.repo_path());
    let pg = Postgres::start();
    let db = pg.url();
    let token = token(&fixture, &db, "acme");
    let serve = Serve::start_with(&fixture, &db, free_port(), &["--workers", "0"]);
    let rt = runtime();
    // A lease longer than the outage: the attempt stays the worker's while the database is away.
    let worker = start_worker(&fixture, &db, "30");
    let task_url = post_bill_412(&rt, &serve, &fixture, &token, None);

    read_events_until(&rt, &task_url, &token, "event: run_started\n");
    // Away for longer than the run takes to produce its next events.
    pg.stop();
    std::thread::sleep(Duration::from_secs(4));
    pg.start_again();
    let task = settled(&rt, &task_url, &token);
    assert_eq!(
        (task["state"].as_str(), task["attempt"].as_i64()),
        (Some("awaiting_approval"), Some(1)),
        "{task}"
    );
    let text = read_events_until(&rt, &task_url, &token, "\"state\":\"awaiting_approval\"");
    let (events, started) = event_list(&text);
    assert_eq!(started, [1]);
    // Every event of the run is stored: the same kinds, in the same order, as its journal.
    let stored: Vec<String> = events
        .iter()
        .filter(|event| event["kind"] != "state")
        .map(|event| event["kind"].as_str().unwrap().to_owned())
        .collect();
    let runs = task_runs(fixture.home.path());
    assert_eq!(runs.len(), 1, "{runs:?}");
    let journal = std::fs::read_to_string(runs[0].join("journal.jsonl")).unwrap();
    let journaled: Vec<String> = journal
        .lines()
        .map(|line| {
            let line: serde_json::Value = serde_json::from_str(line).unwrap();
            line["event"]["type"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(stored, journaled);
    assert_eq!(journaled.last().map(String::as_str), Some("run_finished"));

    // The same worker takes the next task: it outlived the database's restart.
    let next_url = post_bill_412(&rt, &serve, &fixture, &token, None);
    let next = settled(&rt, &next_url, &token);
    assert_eq!(
        (next["state"].as_str(), next["attempt"].as_i64()),
        (Some("awaiting_approval"), Some(1)),
        "{next}"
    );
    stop_worker(worker, fixture.home.path());
    let (code, err) = serve.stop();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(tree_digest(fixture.repo_path()), before);
}
