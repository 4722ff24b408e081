//! `plumb serve` as a process, driven over HTTP: `api.rs` the API end to end, `recovery.rs` a
//! server killed mid-run, `fleet.rs` `plumb worker`s on PostgreSQL killed and cut off,
//! `keys.rs` a tenant's own model key and limits, `browser/` the web page in headless Chromium.

mod api;
mod browser;
mod fleet;
mod keys;
pub(crate) mod pg;
mod recovery;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use plumb_test_support::billing_example;

use super::common::{Fixture, plumb_command};

pub(super) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

pub(super) fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

pub(super) struct Serve {
    child: Child,
    pub base: String,
}

impl Serve {
    pub fn start(fixture: &Fixture, db: &str, port: u16) -> Serve {
        Serve::start_with(fixture, db, port, &[])
    }

    /// [`Serve::start`] with more flags for `plumb serve`.
    pub fn start_with(fixture: &Fixture, db: &str, port: u16, extra: &[&str]) -> Serve {
        Serve::start_env(fixture, db, port, extra, &[])
    }

    /// [`Serve::start_with`] with environment variables set for the server.
    pub fn start_env(
        fixture: &Fixture,
        db: &str,
        port: u16,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Serve {
        let script = billing_example().join("bill-412.script.jsonl");
        let model = format!("model=script:{}", script.display());
        Serve::launch(fixture, db, port, &[&model], extra, env)
    }

    /// [`Serve::start`] with settings (`-c KEY=VALUE`) of its own; a `model=` among them replaces
    /// the bundled BILL-412 script.
    pub fn start_settings(fixture: &Fixture, db: &str, port: u16, settings: &[&str]) -> Serve {
        let script = billing_example().join("bill-412.script.jsonl");
        let model = format!("model=script:{}", script.display());
        let mut all = vec![model.as_str()];
        all.extend_from_slice(settings);
        Serve::launch(fixture, db, port, &all, &[], &[])
    }

    fn launch(
        fixture: &Fixture,
        db: &str,
        port: u16,
        settings: &[&str],
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Serve {
        let child = plumb_command(fixture.home.path())
            .envs(env.iter().copied())
            .args(settings.iter().flat_map(|setting| ["-c", setting]))
            .args(["serve", "--db", db, "--allow-server-paths"])
            .args(if extra.contains(&"--workers") {
                &[][..]
            } else {
                &["--workers", "1"][..]
            })
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let base = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(60);
        let rt = runtime();
        while rt
            .block_on(reqwest::get(format!("{base}/api/capabilities")))
            .is_err()
        {
            assert!(
                Instant::now() < deadline,
                "plumb serve did not answer in 60 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Serve { child, base }
    }

    /// SIGKILL: the server and its workers end at once, with no chance to give anything back.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, and the exit status and stderr.
    pub fn stop(self) -> (Option<i32>, String) {
        let term = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(term.success());
        let output = self.child.wait_with_output().unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).to_string(),
        )
    }
}

pub(super) async fn call(
    method: reqwest::Method,
    url: &str,
    token: &str,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    let mut request = reqwest::Client::new()
        .request(method, url)
        .bearer_auth(token);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

pub(super) async fn upload(base: &str, token: &str, body: Vec<u8>) -> (u16, serde_json::Value) {
    let response = reqwest::Client::new()
        .post(format!("{base}/api/uploads"))
        .bearer_auth(token)
        .header("content-type", "application/octet-stream")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// `tar` with `args`, its archive's bytes.
pub(super) fn tar_bytes(dir: &std::path::Path, args: &[&str]) -> Vec<u8> {
    let out = dir.join("out.tar.gz");
    let status = std::process::Command::new("tar")
        .arg("-czf")
        .arg(&out)
        .args(args)
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::read(out).unwrap()
}

/// Waits for the task to leave the queue and the run; returns its record.
pub(super) fn settled(
    rt: &tokio::runtime::Runtime,
    task_url: &str,
    token: &str,
) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let (status, task) = rt.block_on(call(reqwest::Method::GET, task_url, token, None));
        // 503 while the database is away (a test restarts it): ask again.
        if status == 503 {
            assert!(Instant::now() < deadline, "still 503 after 300 s: {task}");
            std::thread::sleep(Duration::from_millis(200));
            continue;
        }
        let state = task["state"].as_str().unwrap().to_owned();
        if ["awaiting_approval", "failed", "cancelled"].contains(&state.as_str()) {
            return task;
        }
        assert!(
            Instant::now() < deadline,
            "the task is still {state} after 300 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A token for `tenant` made with `plumb token create`.
pub(super) fn token(fixture: &Fixture, db: &str, tenant: &str) -> String {
    let made = crate::suite::common::plumb(
        fixture.home.path(),
        &["token", "create", "--tenant", tenant, "--db", db],
    );
    assert_eq!(made.status.code(), Some(0), "{made:?}");
    String::from_utf8(made.stdout).unwrap().trim().to_owned()
}

/// The run folders of service runs (those holding the worker's task file).
pub(super) fn task_runs(home: &Path) -> Vec<PathBuf> {
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
pub(super) fn read_events_until(
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

/// The events of an SSE text, checked to be numbered 1..n with none missing or repeated, and the
/// attempts whose runs started, in order.
pub(super) fn event_list(text: &str) -> (Vec<serde_json::Value>, Vec<i64>) {
    let events: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect();
    let seqs: Vec<i64> = events.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert_eq!(
        seqs,
        (1..=i64::try_from(seqs.len()).unwrap()).collect::<Vec<_>>(),
        "every event once, in order"
    );
    let started = events
        .iter()
        .filter(|e| e["kind"] == "run_started")
        .map(|e| e["attempt"].as_i64().unwrap())
        .collect();
    (events, started)
}

/// The task's `git bundle`, downloaded and fetched into the git repository `into` as the branch
/// `plumb/<id>`; the file it was saved as.
pub(super) fn fetch_bundle(
    rt: &tokio::runtime::Runtime,
    task_url: &str,
    token: &str,
    into: &Path,
) -> PathBuf {
    let id = task_url.rsplit('/').next().unwrap();
    let (status, kind, bytes) = rt.block_on(async {
        let response = reqwest::Client::new()
            .get(format!("{task_url}/bundle"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let kind = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned();
        (
            response.status().as_u16(),
            kind,
            response.bytes().await.unwrap(),
        )
    });
    if status != 200 {
        // The worker says in the task's events why it made none.
        let events = read_events_until(rt, task_url, token, "awaiting_approval");
        let warnings: Vec<&str> = events
            .lines()
            .filter(|line| line.contains("warning"))
            .collect();
        panic!("{status} {}: {warnings:?}", String::from_utf8_lossy(&bytes));
    }
    assert_eq!(kind, "application/x-git-bundle");
    let file = into.with_extension("bundle");
    std::fs::write(&file, &bytes).unwrap();
    let branch = format!("plumb/{id}");
    plumb_test_support::git(
        into,
        &[
            "fetch",
            "-q",
            &file.display().to_string(),
            &format!("{branch}:{branch}"),
        ],
    );
    file
}

/// Posts BILL-412 on the fixture's repository (a path on the server), with `model` (the server's
/// default when none); the task's URL.
pub(super) fn post_bill_412(
    rt: &tokio::runtime::Runtime,
    serve: &Serve,
    fixture: &Fixture,
    token: &str,
    model: Option<&str>,
) -> String {
    let ticket = std::fs::read_to_string(fixture.ticket()).unwrap();
    let path = fixture.repo_path().display().to_string();
    let mut body = serde_json::json!({"repo": {"kind": "path", "path": path}, "ticket": ticket});
    if let Some(model) = model {
        body["model"] = serde_json::json!(model);
    }
    let tasks = format!("{}/api/tasks", serve.base);
    let (status, task) = rt.block_on(call(reqwest::Method::POST, &tasks, token, Some(body)));
    assert_eq!(status, 201, "{task}");
    format!("{tasks}/{}", task["id"].as_str().unwrap())
}
