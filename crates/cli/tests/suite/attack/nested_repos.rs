//! Nested repositories are content, never git's business: a gitfile pointing at a repository on
//! the host, a repository a test made with `git init`, a `.gitmodules`, FIFOs where git looks for
//! a nested repository's `HEAD` or for `.gitignore` and `.gitattributes`. Each case plays
//! BILL-412's honest test and fix, the test also leaving the hazard in the workspace, behind the
//! default sandbox. Host git never follows, reads or blocks on any of it: the run ends as the
//! checks say (never exit 3), the hazard is flagged and kept out of the patch, and nothing of the
//! host repository (its commit id) reaches anything plumb wrote.

use std::process::Output;
use std::time::{Duration, Instant};

use plumb_protocol::{FinalReport, Outcome};
use plumb_test_support::{Script, billing_example};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{Outside, assert_nowhere, fix_within, repo_with};
use crate::suite::common::{report, stderr};

/// The bundled script's turn `index` as (tool, arguments).
fn bundled(index: usize) -> (String, Value) {
    let text = std::fs::read_to_string(billing_example().join("bill-412.script.jsonl")).unwrap();
    let turn: Value = serde_json::from_str(text.lines().nth(index).unwrap()).unwrap();
    let call = &turn["tool_calls"][0];
    (
        call["name"].as_str().unwrap().to_string(),
        call["arguments"].clone(),
    )
}

/// BILL-412's new test with `extra` (a second test function, with its imports) appended, run,
/// the bundled fix, then `done`: a run the checks verify whatever `extra` leaves behind.
fn honest_run_with(extra: &str) -> Script {
    let (name, mut args) = bundled(2);
    let content = format!("{}{extra}", args["content"].as_str().unwrap());
    args["content"] = Value::String(content);
    let (fix, fix_args) = bundled(4);
    Script::new()
        .tool(&name, args)
        .tool("run_tests", json!({"tests": ["tests/test_gst.py"]}))
        .tool(&fix, fix_args)
        .tool("done", json!({"summary": "BILL-412 fixed"}))
}

/// The run's report and output, behind the default sandbox, failed if it takes over `secs`.
fn play(script: Script, settings: &[&str], secs: u64) -> (Output, FinalReport, tempfile::TempDir) {
    let repo = repo_with(&[], &[]);
    let home = tempfile::tempdir().unwrap();
    let mut extra = Vec::new();
    for setting in settings {
        extra.extend(["-c", setting]);
    }
    let output = fix_within(secs, repo.path(), home.path(), script, &extra);
    let report = report(&output);
    (output, report, home)
}

/// The files the patch touches (from its `diff --git` lines), and whether it carries a gitlink.
fn patched(report: &FinalReport) -> (Vec<String>, bool) {
    let files = report
        .patch
        .lines()
        .filter_map(|line| line.strip_prefix("diff --git a/"))
        .filter_map(|rest| rest.split(" b/").next())
        .map(str::to_string)
        .collect();
    (files, report.patch.contains("Subproject commit"))
}

/// The flags of `kind`.
fn flags_of(report: &FinalReport, kind: &str) -> Vec<String> {
    report
        .flag_kinds
        .iter()
        .zip(&report.flags)
        .filter(|(k, _)| k.as_str() == kind)
        .map(|(_, detail)| detail.clone())
        .collect()
}

/// The files of BILL-412's fix and test, with `more`, in the patch's order.
fn fixed_and_tested(more: &[&str]) -> Vec<String> {
    let mut files: Vec<String> = ["billing/invoice_totals.py", "tests/test_gst.py"]
        .iter()
        .chain(more)
        .map(|f| f.to_string())
        .collect();
    files.sort();
    files
}

#[test]
fn a_gitfile_to_a_host_repository_is_never_followed() {
    let mut outside = Outside::new();
    let head = outside.add_repo("project");
    let gitdir = outside.path().join("project/.git").display().to_string();
    let extra = format!(
        "\n\nimport os\n\n\ndef test_vendor_checkout():\n    os.makedirs('vendor/lib', exist_ok=True)\n    with open('vendor/lib/.git', 'w') as out:\n        out.write('gitdir: {gitdir}\\n')\n"
    );

    let (output, report, home) = play(honest_run_with(&extra), &[], 300);

    let actual = (
        output.status.code(),
        report.outcome,
        patched(&report),
        flags_of(&report, "nested_repository"),
    );
    let expected = (
        Some(0),
        Outcome::Success,
        (fixed_and_tested(&[]), false),
        vec![
            "vendor/lib/.git: a git file (it points git at another repository) was left in the \
             tree; it is kept out of the patch"
                .to_string(),
        ],
    );
    assert_eq!(actual, expected, "{}", stderr(&output));
    assert_nowhere(home.path(), &output, &head);
    outside.assert_untouched(home.path(), &output);
}

#[test]
fn a_repository_a_test_made_and_a_gitmodules_end_the_run_as_the_checks_say() {
    let outside = Outside::new();
    // A repository with no commit (host `git add` fails on it) and a `.gitmodules` git cannot
    // parse (host `git diff` fails reading it).
    let extra = "\n\nimport subprocess\n\n\ndef test_nested_repository():\n    subprocess.run(['git', 'init', '-q', 'nested'], check=True)\n    with open('nested/notes.txt', 'w') as out:\n        out.write('notes\\n')\n    with open('.gitmodules', 'w') as out:\n        out.write('[submodule \"nested\\n\\tpath = nested\\n')\n";

    let (output, report, home) = play(honest_run_with(extra), &[], 300);

    let actual = (
        output.status.code(),
        report.outcome,
        patched(&report),
        flags_of(&report, "nested_repository"),
    );
    let expected = (
        Some(0),
        Outcome::Success,
        (fixed_and_tested(&["nested/notes.txt"]), false),
        vec![
            ".gitmodules: a .gitmodules file was added; it is kept out of the patch".to_string(),
            "nested/.git: a git folder (a nested repository) was left in the tree; it is kept \
             out of the patch"
                .to_string(),
        ],
    );
    assert_eq!(actual, expected, "{}", stderr(&output));
    outside.assert_untouched(home.path(), &output);
}

#[test]
fn fifos_where_git_looks_never_block_the_host_past_the_budget() {
    let outside = Outside::new();
    // A FIFO as a nested repository's HEAD (host `git add` opened it to tell whether `lib` is a
    // repository) and as a `.gitignore` and a `.gitattributes` (which git opens on its walk).
    let extra = "\n\nimport os\n\n\ndef test_pipes():\n    for folder in ['lib/.git/objects', 'lib/.git/refs', 'docs']:\n        os.makedirs(folder, exist_ok=True)\n    for pipe in ['lib/.git/HEAD', 'docs/.gitignore', 'docs/.gitattributes']:\n        if not os.path.exists(pipe):\n            os.mkfifo(pipe)\n";
    let budget = 60;
    let started = Instant::now();

    let (output, report, home) = play(
        honest_run_with(extra),
        &[&format!("limits.wall_clock_secs={budget}")],
        200,
    );

    let took = started.elapsed();
    let actual = (
        output.status.code(),
        report.outcome,
        patched(&report),
        flags_of(&report, "nested_repository"),
        // The budget plus the finish's grace, with room for a slow machine.
        took < Duration::from_secs(budget + 30 + 20),
    );
    let expected = (
        Some(0),
        Outcome::Success,
        (fixed_and_tested(&[]), false),
        vec![
            "lib/.git: a git folder (a nested repository) was left in the tree; it is kept out of \
             the patch"
                .to_string(),
        ],
        true,
    );
    assert_eq!(actual, expected, "took {took:?}\n{}", stderr(&output));
    outside.assert_untouched(home.path(), &output);
}
