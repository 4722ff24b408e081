//! Hand-made attempts for the report's tests.

use std::path::Path;

use plumb_protocol::Outcome;

use crate::result::{AttemptResult, AttemptStatus, Score};
use crate::task::folder_name;

/// A finished attempt whose non-empty patch was scored.
pub(crate) fn scored(id: &str, attempt: u32, resolved: bool, verified: bool) -> AttemptResult {
    let mut result = base(id, attempt);
    result.outcome = Some(if verified {
        Outcome::Success
    } else {
        Outcome::RoundLimit
    });
    result.patch = format!("diff --git a/{id}.py b/{id}.py\n");
    result.score = Some(Score {
        resolved,
        empty_patch: false,
        applied: true,
        reason: if resolved {
            "resolved".into()
        } else {
            "1 of 1 FAIL_TO_PASS tests failed: test_x".into()
        },
        tests: Vec::new(),
        log: "score.log".into(),
    });
    result
}

/// A finished attempt that delivered no patch (the ladder never verified one).
pub(crate) fn empty(id: &str, attempt: u32) -> AttemptResult {
    let mut result = base(id, attempt);
    result.outcome = Some(Outcome::RoundLimit);
    result.score = Some(Score {
        resolved: false,
        empty_patch: true,
        applied: false,
        reason: "the patch is empty".into(),
        tests: Vec::new(),
        log: String::new(),
    });
    result
}

pub(crate) fn infra(id: &str, attempt: u32) -> AttemptResult {
    let mut result = base(id, attempt);
    result.status = AttemptStatus::InfraError {
        message: "bwrap: cannot mount /proc".into(),
    };
    result
}

pub(crate) fn bad(id: &str, attempt: u32) -> AttemptResult {
    let mut result = base(id, attempt);
    result.status = AttemptStatus::BadTask {
        message: "setup_command exited 1".into(),
    };
    result
}

fn base(id: &str, attempt: u32) -> AttemptResult {
    let mut result = AttemptResult::empty(id, attempt, None, "scripted".into());
    result.reason = "the round limit was reached".into();
    result.journal = "journal.jsonl".into();
    result
}

/// Writes `result` where the runner would: `OUT/<task folder>/attempt-<n>/result.json`.
pub(crate) fn write_result(out: &Path, result: &AttemptResult) {
    let folder = out
        .join(folder_name(&result.instance_id))
        .join(format!("attempt-{}", result.attempt));
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("result.json"),
        serde_json::to_string(result).unwrap(),
    )
    .unwrap();
}
