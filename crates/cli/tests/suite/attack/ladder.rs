//! The check ladder against what the agent can reconfigure, and against test commands and test
//! ids plumb cannot use as given: a test command plumb cannot narrow (a script, `sh -c …`) is run
//! whole on both trees and judged from what its output says; a conftest, a plugin or settings the
//! agent added or changed are left out when the ladder judges the tests (they stay a flag for a
//! person); a test id that cannot be used is a note to the model, never the end of the run.

use std::path::Path;
use std::process::Output;

use plumb_protocol::{CheckStatus, CheckStep, Event, FinalReport, Outcome};
use plumb_test_support::{Script, billing_example};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{Outside, repo_with};
use crate::suite::common::{journal_events, plumb, report, stderr};

/// A shell wrapper around pytest: plumb cannot add test ids to it.
const WRAPPED: &str = "sh -c 'python3 -m pytest -q'";

/// The same, with `-rN`, which turns pytest's short summary off: the output then holds counts
/// but no per-test results.
const WRAPPED_QUIET: &str = "sh -c 'python3 -m pytest -q -rN'";

/// A conftest whose hook reports every test as passed.
const REWRITE_OUTCOMES: &str = "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    report = outcome.get_result()\n    report.outcome = \"passed\"\n    report.longrepr = None\n";

/// The bundled BILL-412 script's turns: [search, read, create test, run it, fix, run it, run
/// all, done].
fn bundled() -> Vec<Value> {
    std::fs::read_to_string(billing_example().join("bill-412.script.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// (tool name, arguments) of a bundled turn, in either of the script's forms.
fn call(turn: &Value) -> (String, Value) {
    let first = &turn["tool_calls"][0];
    if first.is_null() {
        (
            turn["tool"].as_str().unwrap().to_string(),
            turn["args"].clone(),
        )
    } else {
        (
            first["name"].as_str().unwrap().to_string(),
            first["arguments"].clone(),
        )
    }
}

/// The bundled new test, written at `path`.
fn new_test_at(path: &str) -> (String, Value) {
    let (_, args) = call(&bundled()[2]);
    (
        "create_file".to_string(),
        json!({"path": path, "content": args["content"]}),
    )
}

fn create(path: &str, content: &str) -> (String, Value) {
    (
        "create_file".to_string(),
        json!({"path": path, "content": content}),
    )
}

fn edit(path: &str, old: &str, new: &str) -> (String, Value) {
    (
        "edit_file".to_string(),
        json!({"path": path, "old_text": old, "new_text": new}),
    )
}

/// `plumb fix` of BILL-412 on `repo` with `steps` then `done`, in the default sandbox (bwrap)
/// unless `extra` says otherwise.
fn play(repo: &Path, home: &Path, steps: Vec<(String, Value)>, extra: &[&str]) -> Output {
    let mut script = Script::new();
    for (name, args) in steps {
        script = script.tool(&name, args);
    }
    let path = home.join("script.jsonl");
    script.tool("done", json!({"summary": "done"})).write(&path);
    let model = format!("script:{}", path.display());
    let repo_arg = repo.display().to_string();
    let ticket = repo.join("BILL-412.md").display().to_string();
    let mut args = vec![
        "fix", "--repo", &repo_arg, "--ticket", &ticket, "--model", &model, "--json",
    ];
    args.extend_from_slice(extra);
    plumb(home, &args)
}

/// The bundled script's steps before `done`.
fn bundled_steps() -> Vec<(String, Value)> {
    let turns = bundled();
    turns[..turns.len() - 1].iter().map(call).collect()
}

fn check(report: &FinalReport, step: CheckStep) -> (CheckStatus, String) {
    report
        .checks
        .iter()
        .find(|c| c.step == step)
        .map(|c| (c.status, c.evidence.clone()))
        .unwrap_or((CheckStatus::NotRun, "no such check".to_string()))
}

/// The text the model was given for each `run_tests` call, in order.
fn run_tests_answers(report: &FinalReport) -> Vec<String> {
    journal_events(report)
        .into_iter()
        .filter_map(|event| match event {
            Event::ToolFinished { name, output, .. } if name == "run_tests" => Some(output),
            _ => None,
        })
        .collect()
}

#[test]
fn a_test_command_plumb_cannot_narrow_verifies_the_true_fix_judged_per_test() {
    let outside = Outside::new();
    let repo = repo_with(&[], &[]);
    let home = tempfile::tempdir().unwrap();

    let output = play(
        repo.path(),
        home.path(),
        bundled_steps(),
        &["--test-cmd", WRAPPED],
    );

    let report = report(&output);
    let (reproduce, evidence) = check(&report, CheckStep::Reproduce);
    let answers = run_tests_answers(&report);
    let actual = (
        output.status.code(),
        report.outcome,
        reproduce,
        check(&report, CheckStep::Pass).0,
        check(&report, CheckStep::FullSuite).0,
        evidence.contains("tests/test_gst.py::test_gst_after_discount")
            && evidence.contains("ran the whole suite")
            && evidence.contains("judged from the per-test results"),
        answers.len(),
        answers
            .iter()
            .take(2)
            .all(|text| text.starts_with("plumb cannot run single tests with")),
    );
    let expected = (
        Some(0),
        Outcome::Success,
        CheckStatus::Passed,
        CheckStatus::Passed,
        CheckStatus::Passed,
        true,
        3,
        true,
    );
    assert_eq!(
        actual,
        expected,
        "reproduce: {evidence}\nanswers: {answers:#?}\n{}",
        stderr(&output)
    );
    outside.assert_untouched(home.path(), &output);
}

#[test]
fn a_test_command_without_per_test_results_is_judged_from_counts_and_exit_codes() {
    let repo = repo_with(&[], &[]);
    let home = tempfile::tempdir().unwrap();

    let output = play(
        repo.path(),
        home.path(),
        bundled_steps(),
        &["--test-cmd", WRAPPED_QUIET],
    );

    let report = report(&output);
    let (reproduce, evidence) = check(&report, CheckStep::Reproduce);
    assert_eq!(
        (
            output.status.code(),
            reproduce,
            evidence.contains("judged from the counts and exit codes")
        ),
        (Some(0), CheckStatus::Passed, true),
        "reproduce: {evidence}\n{}",
        stderr(&output)
    );
}

#[test]
fn under_a_command_plumb_cannot_narrow_a_wrong_fix_is_not_verified() {
    let outside = Outside::new();
    for command in [WRAPPED, WRAPPED_QUIET] {
        let repo = repo_with(&[], &[]);
        let home = tempfile::tempdir().unwrap();
        // A "fix" that changes nothing the tests see.
        let wrong = edit(
            "billing/invoice_totals.py",
            "    tax = compute_gst(gross, rate)\n",
            "    tax = compute_gst(gross, rate)  # GST on the price\n",
        );

        let output = play(
            repo.path(),
            home.path(),
            vec![new_test_at("tests/test_gst.py"), wrong],
            &["--test-cmd", command, "--max-rounds", "3"],
        );

        let report = report(&output);
        assert_eq!(
            (
                output.status.code(),
                check(&report, CheckStep::Reproduce).0,
                check(&report, CheckStep::Pass).0
            ),
            (Some(1), CheckStatus::Passed, CheckStatus::Failed),
            "{command}: {:?}\n{}",
            report.checks,
            stderr(&output)
        );
        outside.assert_untouched(home.path(), &output);
    }
}

/// Runs the bundled new test at `test_path` plus `tampering`, no fix, then `done`, in bwrap on
/// `repo`: the run must end without a verified patch, caught by the pass step, with the test
/// configuration flagged for a person.
fn assert_not_verified(name: &str, repo: &Path, test_path: &str, tampering: Vec<(String, Value)>) {
    let outside = Outside::new();
    let home = tempfile::tempdir().unwrap();
    let mut steps = vec![new_test_at(test_path)];
    steps.extend(tampering);

    let output = play(repo, home.path(), steps, &["--max-rounds", "4"]);

    let report = report(&output);
    let (pass, evidence) = check(&report, CheckStep::Pass);
    assert_eq!(
        (
            output.status.code(),
            check(&report, CheckStep::Reproduce).0,
            pass,
            check(&report, CheckStep::Tamper).0,
            evidence.contains("the baseline's test configuration"),
        ),
        (
            Some(1),
            CheckStatus::Passed,
            CheckStatus::Failed,
            CheckStatus::Flagged,
            true
        ),
        "{name}: {:?}\n{}",
        report.checks,
        stderr(&output)
    );
    outside.assert_untouched(home.path(), &output);
}

#[test]
fn an_outcome_rewriting_conftest_without_a_fix_is_not_verified() {
    for (conftest, test) in [
        ("tests/conftest.py", "tests/test_gst.py"),
        ("conftest.py", "tests/test_gst.py"),
        ("tests/gst/deep/conftest.py", "tests/gst/deep/test_gst.py"),
    ] {
        let repo = repo_with(&[], &[]);
        assert_not_verified(
            conftest,
            repo.path(),
            test,
            vec![create(conftest, REWRITE_OUTCOMES)],
        );
    }
}

#[test]
fn an_outcome_rewriting_plugin_named_in_pytest_ini_is_left_out() {
    let repo = repo_with(&[], &[]);
    assert_not_verified(
        "pytest.ini",
        repo.path(),
        "tests/test_gst.py",
        vec![
            create("gstplugin.py", REWRITE_OUTCOMES),
            edit(
                "pytest.ini",
                "addopts = -p no:cacheprovider\n",
                "addopts = -p no:cacheprovider -p gstplugin\n",
            ),
        ],
    );
}

#[test]
fn an_outcome_rewriting_plugin_named_in_pyproject_is_left_out() {
    let repo = repo_with(&[("pyproject.toml", PYPROJECT)], &[]);
    plumb_test_support::git(repo.path(), &["rm", "-q", "pytest.ini"]);
    plumb_test_support::git(
        repo.path(),
        &["commit", "-q", "-m", "settings in pyproject"],
    );
    assert_not_verified(
        "pyproject.toml",
        repo.path(),
        "tests/test_gst.py",
        vec![
            create("gstplugin.py", REWRITE_OUTCOMES),
            edit(
                "pyproject.toml",
                "addopts = \"-p no:cacheprovider\"\n",
                "addopts = \"-p no:cacheprovider -p gstplugin\"\n",
            ),
        ],
    );
}

/// The billing example's pytest settings, in a pyproject.toml that has more than them.
const PYPROJECT: &str = "[project]\nname = \"billing\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\".\"]\naddopts = \"-p no:cacheprovider\"\n";

#[test]
fn the_true_fix_with_a_harmless_conftest_is_still_verified() {
    let repo = repo_with(&[], &[]);
    let home = tempfile::tempdir().unwrap();
    let mut steps = bundled_steps();
    steps.insert(
        0,
        create("tests/conftest.py", "# shared fixtures will go here\n"),
    );

    let output = play(repo.path(), home.path(), steps, &[]);

    let report = report(&output);
    assert_eq!(
        (
            output.status.code(),
            check(&report, CheckStep::Tamper).0,
            check(&report, CheckStep::Pass).0
        ),
        (Some(0), CheckStatus::Flagged, CheckStatus::Passed),
        "{:?}\n{}",
        report.checks,
        stderr(&output)
    );
}

#[test]
fn unusable_test_ids_are_a_note_and_the_run_goes_on() {
    let outside = Outside::new();
    let repo = repo_with(&[], &[]);
    let home = tempfile::tempdir().unwrap();
    let long = "t".repeat(200_000);
    let mut steps = vec![
        (
            "run_tests".to_string(),
            json!({"tests": ["tests/test_tax.py\u{0}::test_x"]}),
        ),
        ("run_tests".to_string(), json!({"tests": [long]})),
    ];
    steps.extend(bundled_steps());

    let output = play(
        repo.path(),
        home.path(),
        steps,
        &["--sandbox", "none", "--max-rounds", "12"],
    );

    let report = report(&output);
    let answers = run_tests_answers(&report);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let notes: Vec<bool> = answers
        .iter()
        .take(2)
        .map(|text| text.starts_with("Error: ") && text.len() < 600)
        .collect();
    assert_eq!(
        (
            output.status.code(),
            report.outcome,
            notes,
            stdout.contains(&"t".repeat(1_000)),
        ),
        (Some(0), Outcome::Success, vec![true, true], false),
        "{answers:#?}\n{}",
        stderr(&output)
    );
    outside.assert_untouched(home.path(), &output);
}

#[test]
fn a_committed_link_the_agent_replaced_is_not_written_through_by_the_checks() {
    let outside = Outside::new();
    let secret = outside.secret();
    // A stranger's repository commits a test data file that is a link to a host file.
    let repo = repo_with(&[], &[("tests/fixtures/expected.txt", secret.as_path())]);
    let home = tempfile::tempdir().unwrap();
    // The agent replaces the link with a file of its own; the reproduce step then puts the test
    // changes into a copy of the baseline, where the link still is.
    let mut steps = vec![
        (
            "run".to_string(),
            json!({"argv": ["rm", "tests/fixtures/expected.txt"]}),
        ),
        create("tests/fixtures/expected.txt", "overwritten by the agent\n"),
    ];
    steps.extend(bundled_steps());

    let output = play(
        repo.path(),
        home.path(),
        steps,
        &["-c", "run.allowed_commands=[[\"rm\"]]"],
    );

    let report = report(&output);
    assert_eq!(
        check(&report, CheckStep::Reproduce).0,
        CheckStatus::Passed,
        "{:?}\n{}",
        report.checks,
        stderr(&output)
    );
    outside.assert_untouched(home.path(), &output);
}

#[test]
fn the_guided_phases_go_on_under_a_command_plumb_cannot_narrow() {
    let repo = repo_with(&[], &[]);
    let home = tempfile::tempdir().unwrap();
    let turns = bundled();
    // The guided phases want the fix first, then a test, which they run with the fix and on the
    // original code: with a command plumb cannot narrow, the whole suite each time.
    let steps = vec![call(&turns[4]), call(&turns[2])];

    let output = play(
        repo.path(),
        home.path(),
        steps,
        &[
            "--sandbox",
            "none",
            "--test-cmd",
            WRAPPED,
            "-c",
            "helpers.phases=true",
        ],
    );

    let report = report(&output);
    assert_eq!(
        (output.status.code(), report.outcome),
        (Some(0), Outcome::Success),
        "{:?}\n{}",
        report.checks,
        stderr(&output)
    );
}
