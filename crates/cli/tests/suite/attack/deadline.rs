//! The wall-clock budget ends a run wherever it is: here in the middle of a test run the agent
//! started, long before the command's own time limit, with the command's processes killed.

use plumb_protocol::Outcome;
use plumb_test_support::Script;
use serde_json::json;

use super::support::{Outside, fix_within, repo_with};
use crate::suite::common::report;

#[test]
fn the_wall_clock_budget_ends_a_run_in_the_middle_of_a_command() {
    let outside = Outside::new();
    let marker = format!("{}", 100_000 + std::process::id() % 50_000);
    let test = format!(
        "import subprocess\n\n\ndef test_slow():\n    subprocess.run(['sleep', '{marker}'])\n"
    );
    let repo = repo_with(&[], &[]);
    let home = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let output = fix_within(
        120,
        repo.path(),
        home.path(),
        Script::new()
            .tool(
                "create_file",
                json!({"path": "tests/test_slow.py", "content": test}),
            )
            .tool("run_tests", json!({"tests": ["tests/test_slow.py"]}))
            .tool("done", json!({"summary": "x"})),
        &[
            "--sandbox",
            "none",
            "-c",
            "limits.wall_clock_secs=10",
            "-c",
            "limits.command_timeout_secs=300",
        ],
    );
    let took = started.elapsed().as_secs();
    let report = report(&output);
    assert_eq!(
        (report.outcome, report.reason.as_str()),
        (
            Outcome::BudgetExceeded,
            "the wall-clock budget (10 s) ran out"
        )
    );
    assert!(took < 60, "the run took {took} s");
    let left = std::process::Command::new("pgrep")
        .args(["-f", &format!("sleep {marker}")])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "the command's process outlived the run: {}",
        String::from_utf8_lossy(&left.stdout)
    );
    assert_eq!(output.status.code(), Some(1));
    outside.assert_untouched(home.path(), &output);
}
