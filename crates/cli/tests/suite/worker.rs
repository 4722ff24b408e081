//! `plumb worker` on a store: a queued task runs with plumb's engine (the bundled BILL-412 script,
//! the default sandbox) and ends awaiting approval, its events and patch in the store, the
//! repository untouched; SIGTERM stops the worker.

use std::process::Stdio;
use std::time::{Duration, Instant};

use plumb_store::{ArtefactName, NewTask, QueueSettings, Store, TaskState};
use plumb_test_support::{billing_example, tree_digest};
use sha2::{Digest as _, Sha256};

use super::common::{Fixture, plumb_command};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_worker_runs_a_queued_task_to_awaiting_approval_with_its_events_and_patch() {
    let fixture = Fixture::billing();
    let before = tree_digest(fixture.repo_path());
    let url = format!("sqlite:{}", fixture.home.path().join("plumb.db").display());
    let script = billing_example().join("bill-412.script.jsonl");
    let ticket = std::fs::read_to_string(fixture.ticket()).unwrap();
    let rt = runtime();
    let (store, id) = rt.block_on(async {
        let store = Store::open(&url).await.unwrap();
        let spec = serde_json::json!({
            "repo": {"kind": "path", "path": fixture.repo_path()},
            "ticket": ticket,
            "model": format!("script:{}", script.display()),
        });
        let new = NewTask {
            tenant: "acme".into(),
            queue: QueueSettings::default().name,
            title: "BILL-412".into(),
            spec,
            max_attempts: 2,
        };
        let task = store.create_task(&new).await.unwrap();
        let mut queue = store.job_queue(&QueueSettings::default()).await.unwrap();
        queue.push(&task.id).await.unwrap();
        (store, task.id)
    });

    let worker = plumb_command(fixture.home.path())
        .args(["worker", "--db", &url])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    let task = loop {
        let task = rt.block_on(store.task("acme", &id)).unwrap();
        if task.state == TaskState::AwaitingApproval || task.state.is_final() {
            break task;
        }
        assert!(
            Instant::now() < deadline,
            "the task is still {} after 300 s",
            task.state
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let term = std::process::Command::new("kill")
        .args(["-TERM", &worker.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let output = worker.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(output.status.code(), Some(0), "{err}");
    assert!(err.contains("plumb worker: stopped"), "{err}");

    assert_eq!(
        task.state,
        TaskState::AwaitingApproval,
        "{:?} {err}",
        task.reason
    );
    assert_eq!(
        (task.attempt, task.outcome.as_deref()),
        (1, Some("success"))
    );
    let patch = rt
        .block_on(store.artefact("acme", &id, ArtefactName::Patch))
        .unwrap()
        .unwrap();
    let sha: String = Sha256::digest(&patch.content)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(task.diff_sha256.as_deref(), Some(sha.as_str()));
    assert!(String::from_utf8_lossy(&patch.content).contains("+    tax = compute_gst(net, rate)"));

    let events = rt.block_on(store.events("acme", &id, 0, 1000)).unwrap();
    let seqs: Vec<i64> = events.iter().map(|event| event.seq).collect();
    assert_eq!(
        seqs,
        (1..=i64::try_from(events.len()).unwrap()).collect::<Vec<_>>()
    );
    let kinds: Vec<&str> = events.iter().map(|event| event.kind.as_str()).collect();
    for kind in [
        "run_started",
        "model_request",
        "model_reply",
        "tool_finished",
        "check",
        "run_finished",
    ] {
        assert!(kinds.contains(&kind), "no {kind} event: {kinds:?}");
    }
    let states: Vec<&str> = events
        .iter()
        .filter(|event| event.kind == "state")
        .filter_map(|event| event.body["state"].as_str())
        .collect();
    assert_eq!(states.first(), Some(&"queued"));
    assert_eq!(states.last(), Some(&"awaiting_approval"));
    assert!(
        states.contains(&"running") && states.contains(&"checking"),
        "{states:?}"
    );
    assert!(
        rt.block_on(store.artefact("acme", &id, ArtefactName::Report))
            .unwrap()
            .is_some()
    );
    assert!(
        rt.block_on(store.artefact("acme", &id, ArtefactName::Journal))
            .unwrap()
            .is_some()
    );
    assert_eq!(
        tree_digest(fixture.repo_path()),
        before,
        "the repository changed"
    );
}

#[test]
fn a_worker_refuses_a_database_it_cannot_use_saying_what_to_give() {
    let home = tempfile::tempdir().unwrap();
    let output = plumb_command(home.path())
        .args(["worker", "--db", "mysql://db/plumb"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("--db") && err.contains("sqlite:PATH"), "{err}");
}
