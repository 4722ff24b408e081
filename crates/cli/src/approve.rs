//! The terminal's approval gate (docs/contracts.md §5 step 8): the diff in colour (paged when it is
//! longer than the screen), its size, the checks, the review and the patch's SHA-256, then one
//! question. Only the answer `yes` approves, naming the SHA-256 that was shown; any other answer,
//! the end of input, Ctrl-C or no answer in time (plumb-agent's `ask` holds the clock) keeps the
//! change out.
//!
//! Everything on this screen but plumb's own words came from outside (the patch, the checks'
//! evidence, the flags, the reviewer's notes), so all of it goes out through `screen`: shown as
//! text, never interpreted. A reviewer's note runs on indented lines under its own, and the size
//! is counted from the patch text itself, so what the screen shows can be checked against it.

use std::io::IsTerminal;

use async_trait::async_trait;
use plumb_agent::input::{Inbox, Op, Submitter};
use plumb_agent::{ApprovalGate, ApprovalRequest, Decision};
use plumb_protocol::{CheckStatus, ReviewVerdict};

use crate::diff_view;
use crate::screen::{self, Colour, Shown, Stream, say};

/// The terminal gate. Writes to stderr; the line read from stdin becomes a decision sent on the
/// run's input channel, where a Ctrl-C arrives as a cancel: the answer is whichever comes first.
pub(crate) struct TerminalGate {
    color: bool,
    submitter: Submitter,
    inbox: Inbox,
}

impl TerminalGate {
    pub(crate) fn new(submitter: Submitter, inbox: Inbox) -> Self {
        Self {
            color: Stream::Err.colour(),
            submitter,
            inbox,
        }
    }

    /// Whether a person can be asked: stdin and stderr are a terminal.
    pub(crate) fn can_ask() -> bool {
        std::io::stdin().is_terminal() && Stream::Err.is_terminal()
    }
}

#[async_trait]
impl ApprovalGate for TerminalGate {
    async fn decide(&self, request: &ApprovalRequest) -> Decision {
        let diff = diff_view::shown(&request.patch, self.color);
        if !(diff.lines() + 12 > screen::screen_rows() && screen::page(&diff)) {
            diff.write_to(Stream::Err);
        }
        let mut question = summary(request, self.color);
        question
            .text("Apply this change to ")
            .field(&request.destination)
            .text("? Type yes to apply it; anything else keeps it out: ");
        question.write_to(Stream::Err);
        let line = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            std::io::stdin().read_line(&mut line).map(|n| (n, line))
        });
        let shown = request.patch_sha256.clone();
        let submitter = self.submitter.clone();
        // The reader outlives a cancelled question only until the process ends.
        tokio::spawn(async move {
            submitter.submit(Op::Decide(answered(line.await, shown)));
        });
        let decision = self.inbox.decide(request).await;
        if matches!(decision, Decision::Reject { .. }) && self.inbox.is_cancelled() {
            say!();
        }
        decision
    }
}

/// The decision a line read from the terminal stands for: only `yes` approves, naming the
/// SHA-256 that was shown.
fn answered(
    answer: Result<std::io::Result<(usize, String)>, tokio::task::JoinError>,
    shown: String,
) -> Decision {
    match answer {
        Ok(Ok((0, _))) => {
            say!();
            Decision::Reject {
                reason: "no answer (the input ended)".to_string(),
            }
        }
        Ok(Ok((_, line))) if line.trim().eq_ignore_ascii_case("yes") => {
            Decision::Approve { sha256: shown }
        }
        Ok(Ok((_, line))) => Decision::Reject {
            reason: format!("the answer was {:?}, not yes", line.trim()),
        },
        Ok(Err(err)) => Decision::Reject {
            reason: format!("the answer could not be read: {err}"),
        },
        Err(err) => Decision::Reject {
            reason: format!("the answer could not be read: {err}"),
        },
    }
}

/// The size, checks, flags, review and SHA-256 under the diff.
fn summary(request: &ApprovalRequest, color: bool) -> Shown {
    let mut out = Shown::new(color);
    out.text("\npatch: ")
        .text(&diff_view::size(&request.patch).words())
        .text("\nchecks:\n");
    for check in &request.checks {
        out.text("  ");
        match check.status {
            CheckStatus::Passed => out.painted(Colour::Green, "passed "),
            CheckStatus::Failed => out.painted(Colour::Red, "FAILED "),
            CheckStatus::Flagged => out.painted(Colour::Yellow, "FLAGGED"),
            CheckStatus::NotRun => out.text("not run"),
        };
        out.text(&format!("  {:<10} ", check.step.as_str()))
            .field(check.evidence.lines().next().unwrap_or_default())
            .text("\n");
    }
    for flag in &request.flags {
        out.text("  ")
            .painted(Colour::Yellow, "FLAG   ")
            .text("  ")
            .field(flag)
            .text("\n");
    }
    match &request.review {
        Some(review) => {
            let colour = match review.verdict {
                ReviewVerdict::Approve => Colour::Green,
                ReviewVerdict::RequestChanges => Colour::Red,
                ReviewVerdict::NeedsAttention | ReviewVerdict::NotReviewed => Colour::Yellow,
            };
            match &review.not_reviewed {
                Some(why) => {
                    out.text("review: ")
                        .painted(colour, ReviewVerdict::NotReviewed.words())
                        .text(" — ")
                        .indented(why, "    ");
                }
                None => {
                    out.text("review by ")
                        .field(&review.reviewer)
                        .text(": ")
                        .painted(colour, review.verdict.words());
                }
            }
            if !review.summary.is_empty() {
                out.text(" — ").indented(&review.summary, "    ");
            }
            out.text("\n");
            for note in &review.notes {
                out.text("    ")
                    .indented(&note.sentence(), "      ")
                    .text("\n");
            }
            for why in &review.attention {
                out.text("    attention: ")
                    .indented(why, "      ")
                    .text("\n");
            }
        }
        None => {
            out.text("review: none (review.enabled is off)\n");
        }
    }
    out.text("patch sha256: ")
        .painted(Colour::Bold, &request.patch_sha256)
        .text("\n");
    out
}

#[cfg(test)]
mod tests {
    use plumb_protocol::{CheckReport, CheckStep, Review, ReviewNote};
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn the_summary_states_the_size_and_shows_hostile_notes_as_indented_text() {
        let request = ApprovalRequest {
            run_id: "r1".into(),
            destination: "/repo".into(),
            patch: "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n-a\n+b\n+++ c\n".into(),
            patch_sha256: "ab12".into(),
            checks: vec![CheckReport {
                step: CheckStep::Tamper,
                status: CheckStatus::Flagged,
                evidence: "x: U+001B\nmore".into(),
            }],
            flags: vec!["x line 2: U+001B (escape)".into()],
            review: Some(Review {
                reviewer: "script:r".into(),
                verdict: ReviewVerdict::NeedsAttention,
                model_verdict: Some(ReviewVerdict::Approve),
                summary: "fine".into(),
                notes: vec![ReviewNote {
                    file: "x".into(),
                    line: Some(2),
                    note: "ok\u{1b}[9A\u{1b}[J\nchecks:\n  passed   tamper".into(),
                }],
                attention: vec!["tamper scan: x".into()],
                patch_sha256: "ab12".into(),
                round: 1,
                not_reviewed: None,
            }),
        };

        let actual = summary(&request, false).as_str().to_string();

        let expected = "
patch: 1 file, +2 -1 lines
checks:
  FLAGGED  tamper     x: U+001B
  FLAG     x line 2: U+001B (escape)
review by script:r: needs attention — fine
    x:2: ok<U+001B>[9A<U+001B>[J
      checks:
        passed   tamper
    attention: tamper scan: x
patch sha256: ab12
";
        assert_eq!(actual, expected);
    }
}
