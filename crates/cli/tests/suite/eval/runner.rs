//! The runner's contract on a small set made here: a second run into the same `--out` resumes,
//! infrastructure errors are never counted and run again only with `--retry-errors`, a bad record
//! is named by line and field while the rest runs, and Ctrl-C stops cleanly and resumes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;

use super::{eval, results};
use crate::suite::common::{plumb_command, stderr};

/// A one-commit git repository with a bug (`add` subtracts) and a task set naming it; the test
/// patch's test sleeps `sleep_secs` first. Returns the task file.
fn small_set(dir: &Path, sleep_secs: u32, extra_lines: &[String]) -> PathBuf {
    let repo = dir.join("calc");
    std::fs::create_dir_all(repo.join("tests")).unwrap();
    std::fs::write(repo.join("calc.py"), "def add(a, b):\n    return a - b\n").unwrap();
    std::fs::write(
        repo.join("tests/test_calc.py"),
        "from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n",
    )
    .unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(&repo)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "base"]);
    let base = git(&["rev-parse", "HEAD"]).trim().to_owned();
    let patch = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n";
    let test_patch = format!(
        "--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -3,3 +3,9 @@ from calc import add\n \n def test_zero():\n     assert add(0, 0) == 0\n+\n+\n+def test_add():\n+    import time\n+    time.sleep({sleep_secs})\n+    assert add(2, 3) == 5\n"
    );
    let task = json!({
        "instance_id": "calc-1",
        "repo": "calc",
        "base_commit": base,
        "problem_statement": "add() subtracts instead of adding: add(2, 3) is -1.",
        "patch": patch,
        "test_patch": test_patch,
        "FAIL_TO_PASS": ["tests/test_calc.py::test_add"],
        "PASS_TO_PASS": ["tests/test_calc.py::test_zero"],
        "test_command": "python3 -m pytest -q",
        "language": "python",
    });
    let mut lines = vec![task.to_string()];
    lines.extend(extra_lines.iter().cloned());
    let file = dir.join("tasks.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    file
}

fn result_bytes(out: &Path) -> String {
    std::fs::read_to_string(out.join("calc-1/attempt-1/result.json")).unwrap()
}

#[test]
fn a_second_run_into_the_same_out_resumes_and_a_bad_record_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let bad = json!({"instance_id": "calc-2", "repo": "calc"}).to_string();
    let tasks = small_set(dir.path(), 0, &[bad, "{not json".to_owned()]);
    let out = dir.path().join("out");
    let args = [
        tasks.to_str().unwrap(),
        "--model",
        "oracle",
        "--out",
        out.to_str().unwrap(),
    ];
    let first = eval(home.path(), &args);
    let written = result_bytes(&out);
    let second = eval(home.path(), &args);
    let first_err = stderr(&first);
    let actual = (
        first.status.code(),
        first_err.contains("line 2") && first_err.contains("problem_statement"),
        first_err.contains("line 3"),
        results(&out).iter().filter(|r| r.resolved()).count(),
        second.status.code(),
        stderr(&second).contains("1 of 1 attempts finished in an earlier run"),
        result_bytes(&out) == written,
    );
    assert_eq!(
        actual,
        (Some(0), true, true, 1, Some(0), true, true),
        "{first_err}"
    );
}

#[test]
fn infrastructure_errors_are_not_counted_and_run_again_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let tasks = small_set(dir.path(), 0, &[]);
    let out = dir.path().join("out");
    // A model service nobody listens on: every request fails after its one attempt.
    let args = [
        "-c",
        "model_service.max_attempts=1",
        "eval",
        tasks.to_str().unwrap(),
        "--model",
        "openai-compat:http://127.0.0.1:9/v1#m",
        "--out",
        out.to_str().unwrap(),
    ];
    let run = |extra: &[&str]| {
        let mut all: Vec<&str> = args.to_vec();
        all.extend_from_slice(extra);
        let mut command = plumb_command(home.path());
        command.env("OPENAI_API_KEY", "x").args(&all);
        command.output().unwrap()
    };
    let first = run(&[]);
    let written = result_bytes(&out);
    let again = run(&[]);
    let unchanged = result_bytes(&out) == written;
    let retried = run(&["--retry-errors"]);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let actual = (
        first.status.code(),
        again.status.code(),
        unchanged,
        retried.status.code(),
        result_bytes(&out) != written,
        summary["error_ids"].clone(),
        summary["unresolved_ids"].clone(),
    );
    let expected = (
        Some(3),
        Some(3),
        true,
        Some(3),
        true,
        json!(["calc-1"]),
        json!([]),
    );
    assert_eq!(actual, expected, "{}", stderr(&first));
}

#[test]
fn ctrl_c_stops_cleanly_and_the_next_run_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    // The hidden test sleeps, so the eval is busy in the ladder or the scoring when it is stopped.
    let tasks = small_set(dir.path(), 6, &[]);
    let out = dir.path().join("out");
    let args = [
        tasks.to_str().unwrap(),
        "--model",
        "oracle",
        "--out",
        out.to_str().unwrap(),
    ];
    let child = plumb_command(home.path())
        .arg("eval")
        .args(args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !out.join("calc-1/attempt-1/run/journal.jsonl").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the attempt never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(2));
    let pid = child.id().to_string();
    Command::new("kill").args(["-INT", &pid]).status().unwrap();
    let stopped = child.wait_with_output().unwrap();
    let left = out.join("calc-1/attempt-1/result.json").exists();
    let resumed = eval(home.path(), &args);
    let actual = (
        stopped.status.code(),
        String::from_utf8_lossy(&stopped.stderr).contains("run the same command again"),
        left,
        resumed.status.code(),
        results(&out).iter().filter(|r| r.resolved()).count(),
    );
    assert_eq!(actual, (Some(130), true, false, Some(0), 1));
}
