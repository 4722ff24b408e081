//! The budget bounds host work too: a test run that fills the workspace with files (many empty
//! ones, or one sparse file as long as a disk) is stopped by `limits.max_workspace_files` and
//! `limits.max_workspace_bytes` right after the command, before plumb reads any of it. The run
//! ends rolled back with the reason, the attempt it had before is kept and shown, and the
//! workspace is at the baseline again.

use std::path::Path;
use std::process::Output;

use plumb_protocol::{FinalReport, Outcome};
use plumb_test_support::Script;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Outside, fix_within, repo_with};
use crate::suite::common::{plumb, report, stderr, work_dir};

/// A test file whose one test runs `body` (Python, indented by four spaces), created, run, then
/// `done`, with `settings` lowered by `-c`.
fn filling_run(body: &str, settings: &[&str]) -> (Output, FinalReport, tempfile::TempDir) {
    let repo = repo_with(&[], &[]);
    let home = tempfile::tempdir().unwrap();
    let test = format!("import os\n\n\ndef test_fill():\n{body}");
    let script = Script::new()
        .tool(
            "create_file",
            json!({"path": "tests/test_fill.py", "content": test}),
        )
        .tool("run_tests", json!({"tests": ["tests/test_fill.py"]}))
        .tool("done", json!({"summary": "x"}));
    let mut extra = Vec::new();
    for setting in settings {
        extra.extend(["-c", setting]);
    }
    let output = fix_within(180, repo.path(), home.path(), script, &extra);
    let report = report(&output);
    let work = work_dir(&report);
    assert_eq!(
        (
            work.join("data").exists(),
            work.join("tests/test_fill.py").exists()
        ),
        (false, false),
        "the workspace is not at the baseline"
    );
    (output, report, home)
}

/// What `plumb show RUN` printed and its exit code.
fn show(home: &Path, run_id: &str) -> (Option<i32>, String, String) {
    let output = plumb(home, &["show", run_id]);
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr(&output),
    )
}

#[test]
fn many_files_end_the_run_at_the_file_limit_with_the_attempt_kept() {
    let outside = Outside::new();
    let body = "    os.makedirs('data', exist_ok=True)\n    for n in range(3000):\n        open(f'data/{n}', 'w').close()\n";

    let (output, report, home) = filling_run(body, &["limits.max_workspace_files=1000"]);

    let (code, shown, said) = show(home.path(), &report.run_id);
    let actual = (
        output.status.code(),
        report.outcome,
        report.reason.starts_with(
            "the workspace holds more than limits.max_workspace_files (1000) files and folders",
        ),
        report.attempt_ref.is_some(),
        code,
        shown.contains("+++ b/tests/test_fill.py") && !shown.contains("+++ b/data/"),
    );
    let expected = (Some(1), Outcome::BudgetExceeded, true, true, Some(0), true);
    assert_eq!(actual, expected, "{}\n{shown}{said}", report.reason);
    outside.assert_untouched(home.path(), &output);
}

#[test]
fn a_sparse_file_as_long_as_a_disk_ends_the_run_at_the_byte_limit_unread() {
    let outside = Outside::new();
    // 900 MB long, none of it on disk: under the sandbox's 1 GiB a file, over the lowered limit.
    let body = "    os.makedirs('data', exist_ok=True)\n    with open('data/disk.img', 'wb') as out:\n        out.truncate(900 * 1000 * 1000)\n";

    let (output, report, home) = filling_run(body, &["limits.max_workspace_bytes=100000000"]);

    let (code, shown, said) = show(home.path(), &report.run_id);
    let actual = (
        output.status.code(),
        report.outcome,
        report.reason.starts_with(
            "the workspace's files are longer than limits.max_workspace_bytes (95.4 MiB)",
        ),
        report.attempt_ref.is_some(),
        code,
        shown.contains("+++ b/tests/test_fill.py") && !shown.contains("+++ b/data/"),
    );
    let expected = (Some(1), Outcome::BudgetExceeded, true, true, Some(0), true);
    assert_eq!(actual, expected, "{}\n{shown}{said}", report.reason);
    outside.assert_untouched(home.path(), &output);
}
