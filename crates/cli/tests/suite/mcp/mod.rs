//! `plumb mcp` driven by a real MCP client: the reference Python SDK (`mcp` from PyPI, installed
//! by scripts/setup-test-deps.sh --tests into its own folder) runs `tests/mcp/client.py`, over
//! stdio and over streamable HTTP; these tests check what it saw and what became of the caller's
//! repository and of `plumb apply`. `remote.rs`: the same tools through a `plumb serve`;
//! `host.rs`: the HTTP endpoint's Host check.

mod host;
mod remote;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use plumb_test_support::tree_digest;
use serde_json::{Value, json};

use super::common::{Fixture, plumb};

/// Where the test setup installs the Python SDK (PLUMB_MCP_SDK overrides it).
const SDK_DIR: &str = "/opt/plumb-test-tools/mcp-2.3.0";

fn sdk_dir() -> PathBuf {
    let dir = std::env::var_os("PLUMB_MCP_SDK")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(SDK_DIR));
    assert!(
        dir.join("mcp").is_dir(),
        "the MCP Python SDK is not in {}; install it with scripts/setup-test-deps.sh --tests (or point PLUMB_MCP_SDK at a folder holding `mcp`)",
        dir.display()
    );
    dir
}

fn sha256_hex(text: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py")
}

/// Runs one scenario of client.py; its JSON answer.
pub(super) fn client(scenario: &str, spec: &Value) -> Value {
    let output = Command::new("python3")
        .arg(client_script())
        .arg(scenario)
        .arg(spec.to_string())
        .env("PYTHONPATH", sdk_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "client.py {scenario} failed\nstdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|err| panic!("{err}: {stdout}"))
}

/// `plumb mcp` over stdio, as the client launches it: the fixture's private home, the fixture's
/// repository and home as the allowed roots, `settings` as `-c` overrides.
fn stdio_server(fixture: &Fixture, settings: &[&str]) -> Value {
    let mut args = vec!["-c".to_owned(), roots_setting(fixture)];
    for setting in settings {
        args.push("-c".into());
        args.push((*setting).into());
    }
    args.push("mcp".into());
    json!({"stdio": {
        "command": env!("CARGO_BIN_EXE_plumb"),
        "args": args,
        "env": env_of(fixture),
        "cwd": fixture.home.path(),
    }})
}

pub(super) fn roots_setting(fixture: &Fixture) -> String {
    format!(
        "mcp.allowed_roots=[{:?}, {:?}]",
        fixture.repo_path().display().to_string(),
        fixture.home.path().display().to_string()
    )
}

pub(super) fn env_of(fixture: &Fixture) -> Value {
    json!({
        "PLUMB_HOME": fixture.home.path(),
        "XDG_CONFIG_HOME": fixture.home.path().join("config"),
        "PATH": std::env::var("PATH").unwrap_or_default(),
    })
}

/// `plumb mcp --listen 127.0.0.1:0` as a child; stopped (SIGTERM) when dropped.
pub(super) struct HttpServer {
    child: Child,
    pub(super) url: String,
}

impl HttpServer {
    pub(super) fn start(fixture: &Fixture, settings: &[&str]) -> Self {
        let mut command = super::common::plumb_command(fixture.home.path());
        command.arg("-c").arg(roots_setting(fixture));
        for setting in settings {
            command.arg("-c").arg(setting);
        }
        let mut child = command
            .args(["mcp", "--listen", "127.0.0.1:0"])
            .current_dir(fixture.home.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut url = None;
        let mut seen = String::new();
        for _ in 0..20 {
            let mut line = String::new();
            if stderr.read_line(&mut line).unwrap() == 0 {
                break;
            }
            seen.push_str(&line);
            if let Some(rest) = line.split("serving ").nth(1) {
                url = rest.split(';').next().map(str::to_owned);
                break;
            }
        }
        let url = url.unwrap_or_else(|| panic!("no address in plumb mcp's stderr: {seen}"));
        // Keep reading, so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = stderr.read_to_string(&mut rest);
        });
        Self { child, url }
    }

    fn spec(&self) -> Value {
        json!({"url": self.url})
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

pub(super) fn bill_412_args(fixture: &Fixture) -> Value {
    json!({
        "repo": fixture.repo_path(),
        "ticket": std::fs::read_to_string(fixture.ticket()).unwrap(),
        "model": format!("script:{}", fixture.repo_path().join("bill-412.script.jsonl").display()),
    })
}

pub(super) fn with_server(server: Value, rest: Value) -> Value {
    let mut spec = rest;
    spec["server"] = server;
    spec
}

/// The progress notes' messages, checked to arrive in order: numbered upwards, rounds never
/// going back, the run's start first.
pub(super) fn progress_messages(answer: &Value) -> Vec<String> {
    let notes = answer["progress"].as_array().unwrap();
    let values: Vec<f64> = notes
        .iter()
        .map(|n| n["progress"].as_f64().unwrap())
        .collect();
    assert!(
        values.windows(2).all(|pair| pair[0] < pair[1]),
        "progress did not rise: {values:?}"
    );
    let messages: Vec<String> = notes
        .iter()
        .map(|n| n["message"].as_str().unwrap().to_owned())
        .collect();
    let rounds: Vec<u32> = messages
        .iter()
        .map(|m| {
            m.strip_prefix("round ")
                .and_then(|rest| rest.split(':').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("a note without its round: {m}"))
        })
        .collect();
    assert!(
        rounds.windows(2).all(|pair| pair[0] <= pair[1]),
        "rounds went back: {messages:#?}"
    );
    assert!(
        messages.first().is_some_and(|m| m.contains("started on")),
        "{messages:#?}"
    );
    messages
}

/// The verified BILL-412 fix as `coding_task` returns it, checked whole (`apply` makes the
/// command a person is told to run from the run id and the SHA-256); its run id and SHA-256.
pub(super) fn check_verified_bill_412(
    answer: &Value,
    apply: impl Fn(&str, &str) -> String,
) -> (String, String) {
    assert_eq!(answer["isError"], json!(false), "{answer:#}");
    assert_eq!(answer["output_errors"], json!([]), "{answer:#}");
    let result = &answer["structuredContent"];
    let patch = result["patch"].as_str().unwrap();
    let sha = result["patch_sha256"].as_str().unwrap().to_owned();
    let run = result["run_id"].as_str().unwrap().to_owned();
    let steps: Vec<(&str, &str)> = result["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["step"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        (
            result["outcome"].as_str(),
            result["verified"].as_bool(),
            result["needs_confirmation"].as_bool(),
            result["rounds"].as_u64(),
            patch.contains("+    tax = compute_gst(net, rate)"),
            sha256_hex(patch) == sha,
            result["apply_command"].as_str().map(str::to_owned),
            steps,
        ),
        (
            Some("success"),
            Some(true),
            Some(true),
            Some(8),
            true,
            true,
            Some(apply(&run, &sha)),
            vec![
                ("syntax", "passed"),
                ("tamper", "passed"),
                ("reproduce", "passed"),
                ("pass", "passed"),
                ("full_suite", "passed"),
                ("lint", "passed"),
            ],
        )
    );
    let messages = progress_messages(answer);
    for step in [
        "round 1: search_code",
        "check full_suite: passed",
        "round 8: done → verified",
    ] {
        assert!(
            messages.iter().any(|m| m.contains(step)),
            "no {step:?} in {messages:#?}"
        );
    }
    (run, sha)
}

fn local_apply(run: &str, sha: &str) -> String {
    format!("plumb apply {run} --sha {sha}")
}

#[test]
fn the_server_lists_five_tools_with_valid_schemas_and_none_can_approve_apply_or_undo() {
    let fixture = Fixture::billing();
    let answer = client(
        "tools",
        &with_server(stdio_server(&fixture, &[]), json!({})),
    );
    let tools = answer["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        [
            "coding_task",
            "coding_task_cancel",
            "coding_task_diff",
            "coding_task_status",
            "runs_list"
        ],
        "a tool was added or taken away: check it cannot approve, apply or undo, then update this list"
    );
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        assert_eq!(tool["schema_errors"], json!([]), "{name}");
        for word in ["approv", "apply", "undo", "merge", "commit", "push"] {
            assert!(!name.contains(word), "{name} sounds as if it could {word}");
        }
        // No argument could carry an approval or loosen the sandbox.
        let properties = tool["inputSchema"]["properties"].as_object().unwrap();
        for field in properties.keys() {
            for word in ["sha", "approv", "sandbox", "network"] {
                assert!(!field.contains(word), "{name} takes {field}");
            }
        }
        assert_eq!(
            tool["inputSchema"]["additionalProperties"],
            json!(false),
            "{name} must refuse fields it does not know"
        );
    }
    let hints = |name: &str| {
        let tool = tools.iter().find(|t| t["name"] == name).unwrap();
        (
            tool["annotations"]["readOnlyHint"].as_bool(),
            tool["annotations"]["idempotentHint"].as_bool(),
        )
    };
    assert_eq!(hints("coding_task"), (Some(false), Some(false)));
    assert_eq!(hints("coding_task_status"), (Some(true), Some(true)));
    assert_eq!(hints("coding_task_diff"), (Some(true), Some(true)));
    assert_eq!(hints("runs_list"), (Some(true), Some(true)));
}

#[test]
fn coding_task_over_stdio_returns_the_verified_diff_that_plumb_apply_then_accepts() {
    let fixture = Fixture::billing();
    let before = tree_digest(fixture.repo_path());
    let server = stdio_server(&fixture, &[]);

    let answer = client(
        "call",
        &with_server(
            server.clone(),
            json!({"name": "coding_task", "arguments": bill_412_args(&fixture)}),
        ),
    );

    let (run, sha) = check_verified_bill_412(&answer, local_apply);
    assert_eq!(
        tree_digest(fixture.repo_path()),
        before,
        "coding_task wrote the caller's repository"
    );
    let diff = client(
        "call",
        &with_server(
            server.clone(),
            json!({"name": "coding_task_diff", "arguments": {"run": run}}),
        ),
    );
    let status = client(
        "call",
        &with_server(
            server,
            json!({"name": "coding_task_status", "arguments": {"run": run}}),
        ),
    );
    assert_eq!(
        (
            &diff["structuredContent"]["kind"],
            &diff["structuredContent"]["patch"],
            &diff["structuredContent"]["patch_sha256"],
            &status["structuredContent"]["state"],
            &status["structuredContent"]["outcome"],
        ),
        (
            &json!("verified_patch"),
            &answer["structuredContent"]["patch"],
            &json!(sha),
            &json!("finished"),
            &json!("success"),
        )
    );
    assert_eq!(tree_digest(fixture.repo_path()), before);

    // The person's step: the SHA-256 the tool handed back is the one `plumb apply` accepts.
    let applied = plumb(fixture.home.path(), &["apply", &run, "--sha", &sha]);
    assert_eq!(
        applied.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    let fixed =
        std::fs::read_to_string(fixture.repo_path().join("billing/invoice_totals.py")).unwrap();
    assert!(
        fixed.contains("    tax = compute_gst(net, rate)"),
        "{fixed}"
    );
}

#[test]
fn coding_task_over_http_returns_the_same_verified_diff_and_lists_the_run() {
    let fixture = Fixture::billing();
    let before = tree_digest(fixture.repo_path());
    let server = HttpServer::start(&fixture, &[]);

    let answer = client(
        "call",
        &with_server(
            server.spec(),
            json!({"name": "coding_task", "arguments": bill_412_args(&fixture)}),
        ),
    );

    let (run, sha) = check_verified_bill_412(&answer, local_apply);
    let listed = client(
        "call",
        &with_server(server.spec(), json!({"name": "runs_list", "arguments": {}})),
    );
    let runs = listed["structuredContent"]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{listed:#}");
    assert_eq!(
        (&runs[0]["run_id"], &runs[0]["patch_sha256"]),
        (&json!(run), &json!(sha))
    );
    assert_eq!(tree_digest(fixture.repo_path()), before);
}

/// The slow script's run (a file written in round 1, `sleep 30` in round 2), cancelled at round 1
/// or later: it ends cancelled, its copy rolled back, long before the sleep would end.
pub(super) fn check_cancelled(answer: &Value, run_dir: &Path) {
    assert_eq!(answer["reached_round"], json!(true), "{answer:#}");
    let status = &answer["status"]["structuredContent"];
    assert_eq!(
        (&status["state"], &status["outcome"]),
        (&json!("finished"), &json!("cancelled")),
        "{answer:#}"
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("report.json")).unwrap())
            .unwrap();
    let work = PathBuf::from(report["workspace"].as_str().unwrap()).join("workspace/work");
    assert!(
        !work.join("notes.txt").exists(),
        "the cancelled run's copy was not rolled back"
    );
    assert!(
        report["timings"]["total_ms"].as_u64().unwrap() < 25_000,
        "the run waited for its command instead of ending: {}",
        report["timings"]
    );
}

fn local_run_dir(answer: &Value, fixture: &Fixture) -> PathBuf {
    let run = answer["run"].as_str().unwrap();
    fixture.home.path().join("runs").join(run)
}

#[test]
fn a_client_cancel_notification_ends_the_run_rolled_back_and_the_repo_untouched() {
    let fixture = Fixture::billing();
    let before = tree_digest(fixture.repo_path());
    let script = fixture.slow_script();
    let server = stdio_server(&fixture, &["run.allowed_commands=[[\"sleep\"]]"]);
    let arguments = json!({
        "repo": fixture.repo_path(),
        "ticket": "Write notes, then wait.",
        "model": format!("script:{}", script.display()),
    });

    let answer = client(
        "cancel_by_notification",
        &with_server(server, json!({"arguments": arguments})),
    );

    check_cancelled(&answer, &local_run_dir(&answer, &fixture));
    assert_eq!(tree_digest(fixture.repo_path()), before);
}

#[test]
fn coding_task_cancel_over_http_ends_the_run_rolled_back_and_a_second_task_meanwhile_is_refused() {
    let fixture = Fixture::billing();
    let before = tree_digest(fixture.repo_path());
    let script = fixture.slow_script();
    let server = HttpServer::start(&fixture, &["run.allowed_commands=[[\"sleep\"]]"]);
    let arguments = json!({
        "repo": fixture.repo_path(),
        "ticket": "Write notes, then wait.",
        "model": format!("script:{}", script.display()),
    });

    let answer = client(
        "cancel_by_tool",
        &with_server(
            server.spec(),
            json!({"arguments": arguments, "second": true}),
        ),
    );

    // One task at a time (mcp.max_tasks = 1): the second call, while the first runs, is refused.
    assert_eq!(answer["second"]["isError"], json!(true), "{answer:#}");
    let refusal = answer["second"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(refusal.contains("mcp.max_tasks"), "{refusal}");

    assert_eq!(
        answer["cancel"]["structuredContent"]["cancelled"],
        json!(true),
        "{answer:#}"
    );
    assert_eq!(
        answer["call"]["structuredContent"]["outcome"],
        json!("cancelled"),
        "{answer:#}"
    );
    check_cancelled(&answer, &local_run_dir(&answer, &fixture));
    assert_eq!(tree_digest(fixture.repo_path()), before);
}

#[test]
fn what_a_caller_may_not_ask_is_refused_with_what_to_change() {
    let fixture = Fixture::billing();
    let before = tree_digest(fixture.repo_path());
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("s.jsonl"), "").unwrap();
    let server = stdio_server(&fixture, &["sandbox=\"none\""]);
    let base = bill_412_args(&fixture);
    let with = |field: &str, value: Value| {
        let mut arguments = base.clone();
        arguments[field] = value;
        arguments
    };
    let cases = [
        (
            with("repo", json!(outside.path())),
            "is outside the folders this plumb mcp may take",
        ),
        (with("sandbox", json!("none")), "sandbox"),
        (
            with("model", json!("openai-compat:http://127.0.0.1:9/v1#m")),
            "names a server address of the caller's choosing",
        ),
        (
            with(
                "model",
                json!(format!(
                    "script:{}",
                    outside.path().join("s.jsonl").display()
                )),
            ),
            "the script must be a file inside the folders",
        ),
        (with("ticket", json!("  ")), "ticket is empty"),
        (with("max_rounds", json!(0)), "max_rounds"),
    ];
    for (arguments, expected) in cases {
        let answer = client(
            "call",
            &with_server(
                server.clone(),
                json!({"name": "coding_task", "arguments": arguments}),
            ),
        );
        // A refusal is a tool error (isError) or, for arguments outside the schema, a protocol error.
        let text = match answer.get("error") {
            Some(error) => error.as_str().unwrap().to_owned(),
            None => {
                assert_eq!(answer["isError"], json!(true), "{arguments}: {answer:#}");
                answer["content"][0]["text"].as_str().unwrap().to_owned()
            }
        };
        assert!(text.contains(expected), "{arguments}: {text}");
    }
    assert_eq!(tree_digest(fixture.repo_path()), before);
    assert!(
        !fixture.home.path().join("runs").exists()
            || std::fs::read_dir(fixture.home.path().join("runs"))
                .unwrap()
                .next()
                .is_none(),
        "a refused call started a run"
    );
}

#[test]
fn a_callers_max_rounds_tightens_the_users_limit() {
    let fixture = Fixture::billing();
    let server = stdio_server(&fixture, &["sandbox=\"none\""]);
    let mut arguments = bill_412_args(&fixture);
    arguments["max_rounds"] = json!(3);

    let answer = client(
        "call",
        &with_server(
            server,
            json!({"name": "coding_task", "arguments": arguments}),
        ),
    );

    let result = &answer["structuredContent"];
    assert_eq!(
        (
            &result["outcome"],
            &result["rounds"],
            &result["verified"],
            &result["patch"],
            &result["apply_command"]
        ),
        (
            &json!("round_limit"),
            &json!(3),
            &json!(false),
            &json!(""),
            &Value::Null
        ),
        "{answer:#}"
    );
}
