//! The review step end to end: BILL-412's bundled script fixes the bug, a scripted reviewer asks
//! for changes once (the fixer reads its notes and says `done` again), then approves.

use plumb_protocol::{Event, Outcome, ReviewVerdict};
use plumb_test_support::billing_example;
use pretty_assertions::assert_eq;

use super::common::{Fixture, journal_events, report, stderr};

const REQUEST: &str = r#"{"tool": "submit_review", "args": {"verdict": "request_changes", "summary": "The rounding is not covered.", "notes": [{"file": "tests/test_gst.py", "line": 9, "note": "add a case where GST rounds half up"}]}}"#;
const APPROVE: &str = r#"{"tool": "submit_review", "args": {"verdict": "approve", "summary": "GST on the discounted price, as the ticket asks.", "notes": []}}"#;

#[test]
fn a_reviewer_that_asks_for_changes_sends_the_run_back_once_and_its_approval_is_reported() {
    let fixture = Fixture::billing();
    let bundled = std::fs::read_to_string(billing_example().join("bill-412.script.jsonl")).unwrap();
    let done = bundled.lines().last().unwrap().to_string();
    let fixer = fixture.script_path("fixer.jsonl");
    std::fs::write(&fixer, format!("{}\n{done}\n", bundled.trim_end())).unwrap();
    let reviewer = fixture.script_path("reviewer.jsonl");
    std::fs::write(&reviewer, format!("{REQUEST}\n{APPROVE}\n")).unwrap();
    let setting = format!("review.model=script:{}", reviewer.display());

    let output = fixture.fix_with_script(&fixer, &["-c", &setting]);

    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    let report = report(&output);
    let events = journal_events(&report);
    let reviews: Vec<(u32, ReviewVerdict)> = events
        .iter()
        .filter_map(|event| match event {
            Event::Reviewed { review } => Some((review.round, review.verdict)),
            _ => None,
        })
        .collect();
    let done_answers: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            Event::ToolFinished { name, output, .. } if name == "done" => Some(output.as_str()),
            _ => None,
        })
        .collect();
    let review = report.review.clone().unwrap();
    let steps: Vec<(u32, ReviewVerdict, bool)> = report
        .reviews
        .iter()
        .map(|step| (step.round, step.verdict, step.sent_back))
        .collect();
    assert_eq!(
        steps,
        [
            (1, ReviewVerdict::RequestChanges, true),
            (2, ReviewVerdict::Approve, false)
        ]
    );
    assert_eq!(
        (
            report.outcome,
            reviews,
            review.verdict,
            review.summary.as_str(),
            review.patch_sha256 == report.patch_sha256,
        ),
        (
            Outcome::Success,
            vec![
                (1, ReviewVerdict::RequestChanges),
                (2, ReviewVerdict::Approve)
            ],
            ReviewVerdict::Approve,
            "GST on the discounted price, as the ticket asks.",
            true,
        )
    );
    assert_eq!(done_answers.len(), 2, "{done_answers:?}");
    assert!(
        done_answers[0].contains("asks for changes")
            && done_answers[0]
                .contains("- tests/test_gst.py:9: add a case where GST rounds half up"),
        "{}",
        done_answers[0]
    );
    assert!(
        stderr(&output).contains("review 2 by script:"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_small_model_is_not_asked_to_review_and_the_change_is_reported_not_reviewed() {
    let fixture = Fixture::billing();
    let fixer = billing_example().join("bill-412.script.jsonl");

    // The fixer is marked small (its guided phases off, so the bundled script's order of work
    // stands) and would review its own fix: no review request is sent (the script has no turn
    // for one), and the report says why.
    let output = fixture.fix_with_script(
        &fixer,
        &["-c", "helpers.profile=small", "-c", "helpers.phases=false"],
    );

    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    let report = report(&output);
    let review = report.review.clone().unwrap();
    assert_eq!(
        (
            report.outcome,
            review.verdict,
            review.model_verdict,
            report.reviews.len()
        ),
        (Outcome::Success, ReviewVerdict::NotReviewed, None, 0)
    );
    let why = review.not_reviewed.unwrap();
    assert!(
        why.contains("a small model") && why.contains("review.model"),
        "{why}"
    );
    assert!(
        stderr(&output).contains("review 1: not reviewed — the reviewer would be script:"),
        "{}",
        stderr(&output)
    );
}
