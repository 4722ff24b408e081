//! The review step against scripted reviewers: what the person sees, and when the run goes back.

use plumb_model::{ScriptModel, parse_script};
use plumb_protocol::{CheckStatus, CheckStep, ReviewNote};
use plumb_workspace::Patch;
use pretty_assertions::assert_eq;

use super::*;

const APPROVE: &str = r#"{"tool": "submit_review", "args": {"verdict": "approve", "summary": "Right fix.", "notes": []}}"#;
const REQUEST: &str = r#"{"tool": "submit_review", "args": {"verdict": "request_changes", "summary": "Misses zero.", "notes": [{"file": "calc.py", "line": 2, "note": "handle n == 0"}]}}"#;

fn reviewer(lines: &[&str], settings: plumb_config::Review) -> Reviewer {
    let script = parse_script(&lines.join("\n")).unwrap();
    Reviewer::new(
        Some(Box::new(ScriptModel::from_turns(
            "script:review".into(),
            script,
        ))),
        settings,
        ModelProfile::Capable,
    )
}

fn patch() -> Patch {
    Patch {
        text: "--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-x\n+y\n".into(),
        sha256: "ab".repeat(32),
        files: Vec::new(),
    }
}

async fn review_with(reviewer: &mut Reviewer, flags: &[(String, String)]) -> Reviewed {
    let fixer = ScriptModel::from_turns("script:fixer".into(), Vec::new());
    let checks = [CheckReport {
        step: CheckStep::Pass,
        status: CheckStatus::Passed,
        evidence: "1 passed".into(),
    }];
    let patch = patch();
    let change = Change {
        ticket: "n == 0 crashes",
        checks: &checks,
        flags,
        patch: &patch,
    };
    let prepared = reviewer.prepare(change).unwrap();
    reviewer
        .review(&fixer, prepared, &CancellationToken::new())
        .await
        .unwrap()
}

/// (verdict, model's verdict, attention, sent back).
fn seen(reviewed: &Reviewed) -> (ReviewVerdict, Option<ReviewVerdict>, Vec<String>, bool) {
    (
        reviewed.review.verdict,
        reviewed.review.model_verdict,
        reviewed.review.attention.clone(),
        reviewed.back_to_fixer.is_some(),
    )
}

#[tokio::test]
async fn an_approval_is_the_verdict_and_names_the_reviewer_and_the_diff() {
    let mut reviewer = reviewer(&[APPROVE], plumb_config::Review::default());

    let reviewed = review_with(&mut reviewer, &[]).await;

    assert_eq!(
        seen(&reviewed),
        (
            ReviewVerdict::Approve,
            Some(ReviewVerdict::Approve),
            vec![],
            false
        )
    );
    assert_eq!(
        (
            reviewed.review.reviewer.as_str(),
            reviewed.review.patch_sha256.clone(),
            reviewed.review.round
        ),
        ("script:review", "ab".repeat(32), 1)
    );
    assert_eq!(reviewer.last(), Some(&reviewed.review));
}

#[tokio::test]
async fn a_request_for_changes_sends_the_run_back_once_with_the_notes_then_stands() {
    let mut reviewer = reviewer(&[REQUEST, REQUEST], plumb_config::Review::default());

    let first = review_with(&mut reviewer, &[]).await;
    let second = review_with(&mut reviewer, &[]).await;

    let note = first.back_to_fixer.clone().unwrap();
    assert!(
        note.contains("Reviewer: Misses zero.\n- calc.py:2: handle n == 0\n"),
        "{note}"
    );
    assert_eq!(
        (seen(&second), second.review.round),
        (
            (
                ReviewVerdict::RequestChanges,
                Some(ReviewVerdict::RequestChanges),
                vec![],
                false
            ),
            2
        )
    );
    assert_eq!(
        second.review.notes,
        [ReviewNote {
            file: "calc.py".into(),
            line: Some(2),
            note: "handle n == 0".into()
        }]
    );
    // Both reviews are in the report's brief list, the first one marked as the one that sent
    // the run back.
    let steps: Vec<_> = reviewer
        .steps()
        .iter()
        .map(|s| (s.round, s.verdict, s.model_verdict, s.sent_back))
        .collect();
    let request = Some(ReviewVerdict::RequestChanges);
    assert_eq!(
        steps,
        [
            (1, ReviewVerdict::RequestChanges, request, true),
            (2, ReviewVerdict::RequestChanges, request, false)
        ]
    );
}

#[tokio::test]
async fn with_no_returns_a_request_for_changes_only_stands() {
    let settings = plumb_config::Review {
        returns: Some(0),
        ..plumb_config::Review::default()
    };
    let mut reviewer = reviewer(&[REQUEST], settings);

    let reviewed = review_with(&mut reviewer, &[]).await;

    assert_eq!(reviewed.back_to_fixer, None);
    assert_eq!(reviewed.review.verdict, ReviewVerdict::RequestChanges);
}

#[tokio::test]
async fn a_tamper_flag_needs_attention_whatever_the_reviewer_answers() {
    let flags = [(
        "test_modified".to_string(),
        "tests/test_calc.py: an existing test was changed".to_string(),
    )];
    let mut reviewer = reviewer(&[APPROVE], plumb_config::Review::default());

    let reviewed = review_with(&mut reviewer, &flags).await;

    assert_eq!(
        seen(&reviewed),
        (
            ReviewVerdict::NeedsAttention,
            Some(ReviewVerdict::Approve),
            vec!["tamper scan: tests/test_calc.py: an existing test was changed".to_string()],
            false
        )
    );
}

#[tokio::test]
async fn a_reviewer_with_nothing_to_say_needs_attention_and_sends_nothing_back() {
    let mut reviewer = reviewer(&[], plumb_config::Review::default());

    let reviewed = review_with(&mut reviewer, &[]).await;

    assert_eq!(
        seen(&reviewed),
        (
            ReviewVerdict::NeedsAttention,
            None,
            vec!["no usable review: the reviewer had nothing to say".to_string()],
            false
        )
    );
}

#[tokio::test]
async fn a_diff_cut_for_the_reviewer_needs_attention() {
    let settings = plumb_config::Review {
        max_diff_chars: 20,
        ..plumb_config::Review::default()
    };
    let mut reviewer = reviewer(&[APPROVE], settings);

    let reviewed = review_with(&mut reviewer, &[]).await;

    assert_eq!(reviewed.review.verdict, ReviewVerdict::NeedsAttention);
    assert_eq!(
        reviewed.review.attention,
        ["the diff is longer than review.max_diff_chars (20), so the reviewer read only its start"]
    );
}

#[test]
fn a_review_replays_as_the_same_call() {
    let review = Review {
        reviewer: "script:review".into(),
        verdict: ReviewVerdict::NeedsAttention,
        model_verdict: Some(ReviewVerdict::RequestChanges),
        summary: "Misses zero.".into(),
        notes: vec![ReviewNote {
            file: "calc.py".into(),
            line: Some(2),
            note: "handle n == 0".into(),
        }],
        attention: vec!["tamper scan: x".into()],
        patch_sha256: String::new(),
        round: 1,
        not_reviewed: None,
    };

    let turn = as_script_turn(&review);

    let said = verdict::read_reply(&plumb_protocol::ModelReply {
        tool_calls: turn.tool_calls,
        ..plumb_protocol::ModelReply::default()
    })
    .unwrap();
    assert_eq!(
        (said.verdict, said.summary, said.notes),
        (ReviewVerdict::RequestChanges, review.summary, review.notes)
    );
}

#[tokio::test]
async fn a_small_fixer_reviewing_its_own_fix_sends_nothing_back_unless_told_to() {
    let fixer = ScriptModel::from_turns("local".into(), parse_script(REQUEST).unwrap());
    let checks = [];
    let patch = patch();
    let change = || Change {
        ticket: "n == 0 crashes",
        checks: &checks,
        flags: &[],
        patch: &patch,
    };
    let mut small = Reviewer::new(None, plumb_config::Review::default(), ModelProfile::Small);
    let prepared = small.prepare(change()).unwrap();
    let reviewed = small
        .review(&fixer, prepared, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        (reviewed.review.verdict, reviewed.back_to_fixer.is_some()),
        (ReviewVerdict::RequestChanges, false)
    );

    let told = plumb_config::Review {
        returns: Some(1),
        ..plumb_config::Review::default()
    };
    let fixer = ScriptModel::from_turns("local".into(), parse_script(REQUEST).unwrap());
    let mut small = Reviewer::new(None, told, ModelProfile::Small);
    let prepared = small.prepare(change()).unwrap();
    let reviewed = small
        .review(&fixer, prepared, &CancellationToken::new())
        .await
        .unwrap();
    assert!(reviewed.back_to_fixer.is_some());
}

#[test]
fn a_small_reviewer_is_not_asked_and_the_change_is_reported_not_reviewed() {
    let fixer = ScriptModel::from_turns("local".into(), Vec::new());
    let checks = [];
    let patch = patch();
    let flags = [("skip_marker".to_string(), "tests/t.py: skip".to_string())];
    let change = |flags| Change {
        ticket: "n == 0 crashes",
        checks: &checks,
        flags,
        patch: &patch,
    };

    let mut small = Reviewer::new(None, plumb_config::Review::default(), ModelProfile::Small);
    let review = small.not_reviewed(&fixer, &change(&[])).unwrap();
    assert_eq!(
        (
            review.verdict,
            review.model_verdict,
            review.reviewer.as_str()
        ),
        (ReviewVerdict::NotReviewed, None, "local")
    );
    assert!(review.not_reviewed.unwrap().contains("review.model"));
    assert_eq!(small.last().map(|last| last.round), Some(1));
    // A flagged diff still needs a person's attention, reviewed or not.
    let flagged = small.not_reviewed(&fixer, &change(&flags)).unwrap();
    assert_eq!(
        (flagged.verdict, flagged.attention, flagged.round),
        (
            ReviewVerdict::NeedsAttention,
            vec!["tamper scan: tests/t.py: skip".to_string()],
            2
        )
    );

    let asked = plumb_config::Review {
        small_model: true,
        ..plumb_config::Review::default()
    };
    let mut told = Reviewer::new(None, asked, ModelProfile::Small);
    assert!(told.not_reviewed(&fixer, &change(&[])).is_none());
    let mut capable = Reviewer::new(None, plumb_config::Review::default(), ModelProfile::Capable);
    assert!(capable.not_reviewed(&fixer, &change(&[])).is_none());
}
