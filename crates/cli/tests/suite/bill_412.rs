//! BILL-412 end to end with the bundled script: a verified patch, the user's repository untouched.

use plumb_protocol::{CheckStatus, CheckStep, Event, Outcome};
use plumb_test_support::{billing_example, git, tree_digest};
use pretty_assertions::assert_eq;

use super::common::{Fixture, journal_events, report, stderr};

#[test]
fn bill_412_ends_with_a_verified_patch_and_an_untouched_repo() {
    let fixture = Fixture::billing();
    let before = (
        tree_digest(fixture.repo_path()),
        git(
            fixture.repo_path(),
            &["status", "--porcelain", "--untracked-files=all"],
        ),
    );
    let script = billing_example().join("bill-412.script.jsonl");

    let output = fixture.fix_with_script(&script, &[]);

    let report = report(&output);
    let after = (
        tree_digest(fixture.repo_path()),
        git(
            fixture.repo_path(),
            &["status", "--porcelain", "--untracked-files=all"],
        ),
    );
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    assert_eq!(after, before, "the user's repository changed");
    let touched: Vec<&str> = report
        .patch
        .lines()
        .filter_map(|l| l.strip_prefix("diff --git a/"))
        .collect();
    let suite = report
        .checks
        .iter()
        .find(|c| c.step == CheckStep::FullSuite)
        .unwrap();
    let actual = (
        report.outcome,
        report.rounds,
        touched,
        report.patch.contains("+    tax = compute_gst(net, rate)"),
        suite.status,
        suite.evidence.clone(),
    );
    let expected = (
        Outcome::Success,
        8,
        vec![
            "billing/invoice_totals.py b/billing/invoice_totals.py",
            "tests/test_gst.py b/tests/test_gst.py",
        ],
        true,
        CheckStatus::Passed,
        "41 passed (baseline: 40 passed); every test that passed at baseline still passes"
            .to_string(),
    );
    assert_eq!(actual, expected);
}

#[test]
fn progress_goes_to_stderr_one_line_per_round_and_warns_about_no_sandbox() {
    let fixture = Fixture::billing();
    let script = billing_example().join("bill-412.script.jsonl");

    let output = fixture.fix_with_script(&script, &[]);

    let err = stderr(&output);
    let finished_rounds = err
        .lines()
        .filter(|l| l.starts_with("round") && (l.contains("→") || l.contains("✗")))
        .count();
    assert_eq!(finished_rounds, 8, "{err}");
    assert!(err.contains("WARNING"), "{err}");
    assert!(err.contains("baseline tests: 40 passed"), "{err}");
    // The journal saw the failing reproduction before the fix, and the passing run after it.
    let report = report(&output);
    let outputs: Vec<String> = journal_events(&report)
        .into_iter()
        .filter_map(|e| match e {
            Event::ToolFinished { name, summary, .. } if name == "run_tests" => Some(summary),
            _ => None,
        })
        .collect();
    assert!(outputs[0].contains("1 failed"), "{outputs:?}");
    assert!(outputs[1].contains("1 passed"), "{outputs:?}");
    assert!(outputs[2].contains("41 passed"), "{outputs:?}");
}

#[test]
fn bill_412_passes_behind_the_default_bwrap_sandbox_without_a_warning() {
    let fixture = Fixture::billing();
    let script = billing_example().join("bill-412.script.jsonl");

    let output = fixture.fix_in_default_sandbox(&script, &[]);

    let report = report(&output);
    let actual = (
        output.status.code(),
        report.outcome,
        report.sandbox,
        stderr(&output).contains("WARNING"),
    );
    assert_eq!(
        actual,
        (
            Some(0),
            Outcome::Success,
            plumb_protocol::SandboxKind::Bwrap,
            false
        ),
        "stderr: {}",
        stderr(&output)
    );
}

#[test]
fn bill_412_passes_behind_gvisor() {
    let fixture = Fixture::billing();
    let script = billing_example().join("bill-412.script.jsonl");

    let output = fixture.fix_in_default_sandbox(&script, &["--sandbox", "gvisor"]);

    let report = report(&output);
    let actual = (output.status.code(), report.outcome, report.sandbox);
    assert_eq!(
        actual,
        (
            Some(0),
            Outcome::Success,
            plumb_protocol::SandboxKind::Gvisor
        ),
        "stderr: {}",
        stderr(&output)
    );
}
