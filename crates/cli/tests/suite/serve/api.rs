//! `plumb serve` end to end: a token made with `plumb token create`, a task started over HTTP on
//! the bundled BILL-412 example (scripted model, default sandbox), run by the server's own worker
//! to awaiting approval, the server restarted, a stale SHA and another tenant refused with nothing
//! applied, the right SHA approved and the change applied to the folder, the event stream
//! complete, a rollback putting the folder back, the change fetched from its git bundle. An upload
//! and a git URL under the intake policy.
//! And the settings it refuses.

use std::time::{Duration, Instant};

use plumb_test_support::{git, tree_digest};
use serde_json::json;

use super::{Serve, call, fetch_bundle, free_port, runtime, settled, tar_bytes, upload};
use crate::suite::common::{Fixture, plumb};

#[test]
fn a_task_started_over_http_runs_to_approval_survives_a_restart_and_is_approved_by_its_sha() {
    let fixture = Fixture::billing();
    let before = tree_digest(fixture.repo_path());
    let db = format!("sqlite:{}", fixture.home.path().join("plumb.db").display());
    let made = plumb(
        fixture.home.path(),
        &["token", "create", "--tenant", "acme", "--db", &db],
    );
    assert_eq!(made.status.code(), Some(0), "{made:?}");
    let token = String::from_utf8(made.stdout).unwrap().trim().to_owned();
    assert!(token.starts_with("plumb_"), "{token}");
    let listed = plumb(fixture.home.path(), &["token", "list", "--db", &db]);
    let listing = String::from_utf8_lossy(&listed.stdout).to_string();
    assert!(
        listing.contains("acme") && listing.contains("live"),
        "{listing}"
    );
    assert!(!listing.contains(&token), "a listing never shows a secret");

    let port = free_port();
    let serve = Serve::start(&fixture, &db, port);
    let rt = runtime();
    let ticket = std::fs::read_to_string(fixture.ticket()).unwrap();
    let path = fixture.repo_path().display().to_string();
    let body = json!({"repo": {"kind": "path", "path": path}, "ticket": ticket});
    let (status, task) = rt.block_on(call(
        reqwest::Method::POST,
        &format!("{}/api/tasks", serve.base),
        &token,
        Some(body),
    ));
    assert_eq!(status, 201, "{task}");
    let id = task["id"].as_str().unwrap().to_owned();
    let task_url = format!("{}/api/tasks/{id}", serve.base);
    let deadline = Instant::now() + Duration::from_secs(300);
    let task = loop {
        let (_, task) = rt.block_on(call(reqwest::Method::GET, &task_url, &token, None));
        let state = task["state"].as_str().unwrap().to_owned();
        if state == "awaiting_approval" || ["failed", "cancelled"].contains(&state.as_str()) {
            break task;
        }
        assert!(
            Instant::now() < deadline,
            "the task is still {state} after 300 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(task["state"], "awaiting_approval", "{task}");

    // A person's decision waits in the store, not in the server: restart it first.
    let (code, err) = serve.stop();
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("plumb serve: stopped"), "{err}");
    let serve = Serve::start(&fixture, &db, port);
    let (status, diff) = rt.block_on(call(
        reqwest::Method::GET,
        &format!("{task_url}/diff"),
        &token,
        None,
    ));
    assert_eq!(status, 200, "{diff}");
    let sha = diff["sha256"].as_str().unwrap().to_owned();
    assert_eq!(task["diff_sha256"], sha.as_str());
    assert!(diff["patch"].as_str().unwrap().contains("compute_gst"));

    // The change as a git bundle: one commit on plumb/<id> whose parent is the folder's HEAD, and
    // which the diff takes back to that HEAD.
    let clones = tempfile::tempdir().unwrap();
    let clone = clones.path().join("clone");
    let source = fixture.repo_path().display().to_string();
    git(clones.path(), &["clone", "-q", &source, "clone"]);
    fetch_bundle(&rt, &task_url, &token, &clone);
    let branch = format!("plumb/{id}");
    assert_eq!(
        git(&clone, &["rev-parse", &format!("{branch}^")]),
        git(&clone, &["rev-parse", "HEAD"])
    );
    git(&clone, &["checkout", "-q", &branch]);
    let patch = clones.path().join("task.patch");
    std::fs::write(&patch, diff["patch"].as_str().unwrap()).unwrap();
    git(
        &clone,
        &["apply", "--check", "-R", &patch.display().to_string()],
    );
    let approve = format!("{task_url}/approve");
    let (status, refused) = rt.block_on(call(
        reqwest::Method::POST,
        &approve,
        &token,
        Some(json!({"sha256": "f".repeat(64)})),
    ));
    assert_eq!(
        (status, refused["error"].as_str()),
        (409, Some("sha_mismatch"))
    );
    assert_eq!(tree_digest(fixture.repo_path()), before, "nothing applied");
    let other = super::token(&fixture, &db, "globex");
    let (status, _) = rt.block_on(call(
        reqwest::Method::POST,
        &approve,
        &other,
        Some(json!({"sha256": sha})),
    ));
    assert_eq!(status, 404, "another tenant's task reads as unknown");
    let (status, approved) = rt.block_on(call(
        reqwest::Method::POST,
        &approve,
        &token,
        Some(json!({"sha256": sha})),
    ));
    assert_eq!(
        (status, approved["state"].as_str()),
        (200, Some("approved"))
    );

    // The whole stream, replayed after the restart: numbered 1..n, the run's events between the
    // states, up to the approval (an approved task may still be rolled back, so it stays open).
    let text = rt.block_on(async {
        use futures_util::StreamExt as _;
        let response = reqwest::Client::new()
            .get(format!("{task_url}/events"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        let mut body = response.bytes_stream();
        let mut text = String::new();
        while !text.contains("\"state\":\"approved\"") {
            let chunk = tokio::time::timeout(Duration::from_secs(20), body.next())
                .await
                .expect("the approval's event within 20 s")
                .expect("the stream stays open")
                .unwrap();
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
        text
    });
    let ids: Vec<i64> = text
        .lines()
        .filter_map(|line| line.strip_prefix("id: "))
        .map(|id| id.parse().unwrap())
        .collect();
    assert_eq!(
        ids,
        (1..=i64::try_from(ids.len()).unwrap()).collect::<Vec<_>>()
    );
    for kind in [
        "run_started",
        "model_request",
        "check",
        "run_finished",
        "state",
    ] {
        assert!(
            text.contains(&format!("event: {kind}\n")),
            "no {kind} event"
        );
    }
    // A folder on the server's machine: approval brought the change home, as `plumb apply` does;
    // rollback puts every file back.
    assert!(
        text.contains("applied to"),
        "the approval says where the change went"
    );
    let after = tree_digest(fixture.repo_path());
    assert_ne!(after, before, "the approved change is in the repository");
    let (status, rolled) = rt.block_on(call(
        reqwest::Method::POST,
        &format!("{task_url}/rollback"),
        &token,
        None,
    ));
    assert_eq!(
        (status, rolled["state"].as_str()),
        (200, Some("rolled_back")),
        "{rolled}"
    );
    let (code, err) = serve.stop();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        tree_digest(fixture.repo_path()),
        before,
        "the rollback put the repository back"
    );
}

#[test]
fn serve_refuses_no_sandbox_and_an_unguarded_public_address() {
    let home = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", home.path().join("plumb.db").display());
    let output = plumb(
        home.path(),
        &["-c", "sandbox=none", "serve", "--db", &db, "--workers", "0"],
    );
    let err = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("sandbox") && err.contains("bwrap"), "{err}");

    let output = plumb(
        home.path(),
        &[
            "serve",
            "--db",
            &db,
            "--workers",
            "0",
            "--listen",
            "0.0.0.0:0",
        ],
    );
    let err = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("plumb token create"), "{err}");

    let output = plumb(
        home.path(),
        &["token", "create", "--tenant", "Bad Name", "--db", &db],
    );
    let err = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("--tenant"), "{err}");
}

#[test]
fn an_uploaded_archive_runs_to_approval_and_hostile_sources_are_refused_by_name() {
    let fixture = Fixture::billing();
    let db = format!("sqlite:{}", fixture.home.path().join("plumb.db").display());
    let made = plumb(
        fixture.home.path(),
        &["token", "create", "--tenant", "acme", "--db", &db],
    );
    assert_eq!(made.status.code(), Some(0), "{made:?}");
    let token = String::from_utf8(made.stdout).unwrap().trim().to_owned();
    let serve = Serve::start(&fixture, &db, free_port());
    let rt = runtime();
    let scratch = tempfile::tempdir().unwrap();

    // Not an archive; an archive with an absolute path: refused at the door, the entry named.
    let (status, refused) = rt.block_on(upload(&serve.base, &token, b"hello".to_vec()));
    assert_eq!(
        (status, refused["error"].as_str()),
        (400, Some("bad_request"))
    );
    let outside = scratch.path().join("outside.txt");
    std::fs::write(&outside, "x").unwrap();
    let hostile = tar_bytes(scratch.path(), &["-P", &outside.display().to_string()]);
    let (status, refused) = rt.block_on(upload(&serve.base, &token, hostile));
    assert_eq!(status, 400, "{refused}");
    let message = refused["message"].as_str().unwrap();
    assert!(message.contains("outside.txt"), "{message}");

    // The example as a tar.gz of its folder (history left out): unpacked by the worker, fixed.
    let parent = fixture.repo_path().parent().unwrap().display().to_string();
    let name = fixture.repo_path().file_name().unwrap().to_str().unwrap();
    let archive = tar_bytes(scratch.path(), &["--exclude=.git", "-C", &parent, name]);
    let (status, kept) = rt.block_on(upload(&serve.base, &token, archive));
    assert_eq!(status, 201, "{kept}");
    let upload_id = kept["id"].as_str().unwrap();
    let ticket = std::fs::read_to_string(fixture.ticket()).unwrap();
    let body = json!({"repo": {"kind": "upload", "id": upload_id}, "ticket": ticket});
    let tasks = format!("{}/api/tasks", serve.base);
    let (status, task) = rt.block_on(call(reqwest::Method::POST, &tasks, &token, Some(body)));
    assert_eq!(status, 201, "{task}");
    let task_url = format!("{tasks}/{}", task["id"].as_str().unwrap());
    let task = settled(&rt, &task_url, &token);
    assert_eq!(task["state"], "awaiting_approval", "{task}");
    let (_, diff) = rt.block_on(call(
        reqwest::Method::GET,
        &format!("{task_url}/diff"),
        &token,
        None,
    ));
    assert!(
        diff["patch"].as_str().unwrap().contains("compute_gst"),
        "{diff}"
    );
    // An archive has no history: its bundle carries the tree the run started from as the parent.
    let fresh = scratch.path().join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    git(&fresh, &["init", "-q"]);
    fetch_bundle(&rt, &task_url, &token, &fresh);
    let branch = format!("plumb/{}", task_url.rsplit('/').next().unwrap());
    let changed = git(&fresh, &["diff", &format!("{branch}^"), &branch]);
    assert!(changed.contains("compute_gst"), "{changed}");

    // A git URL: its form checked now; where it leads checked by the worker, which refuses a
    // loopback address and says so in the task's reason.
    let body = json!({"repo": {"kind": "git", "url": "http://example.com/x.git"}, "ticket": "t"});
    let (status, refused) = rt.block_on(call(reqwest::Method::POST, &tasks, &token, Some(body)));
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused["message"].as_str().unwrap().contains("repo.url"),
        "{refused}"
    );
    let body = json!({"repo": {"kind": "git", "url": "https://127.0.0.1/x.git"}, "ticket": "t"});
    let (status, task) = rt.block_on(call(reqwest::Method::POST, &tasks, &token, Some(body)));
    assert_eq!(status, 201, "{task}");
    let task = settled(
        &rt,
        &format!("{tasks}/{}", task["id"].as_str().unwrap()),
        &token,
    );
    assert_eq!(task["state"], "failed", "{task}");
    let reason = task["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("127.0.0.1") && reason.contains("loopback"),
        "{task}"
    );
    let (code, err) = serve.stop();
    assert_eq!(code, Some(0), "{err}");
}
