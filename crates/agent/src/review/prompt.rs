//! What the reviewer is asked: its rules, the one message with the ticket, the checks and the
//! diff, and the one tool it answers with. Then the note that sends the fixer back when the
//! reviewer asks for changes.

use plumb_context::templates::{TemplateError, render};
use plumb_protocol::{CheckReport, CheckStatus, Message, ReviewNote, ToolSpec};
use serde::Serialize;
use serde_json::json;

/// The tool the reviewer answers with.
pub(super) const REVIEW_TOOL: &str = "submit_review";

/// The reviewer's tool: a verdict, a summary and notes tied to places.
pub(super) fn review_tool() -> Result<ToolSpec, TemplateError> {
    Ok(ToolSpec {
        name: REVIEW_TOOL.to_string(),
        description: render("review/submit_review.md", ())?,
        parameters: json!({
            "type": "object",
            "properties": {
                "verdict": {"type": "string", "enum": ["approve", "request_changes"]},
                "summary": {"type": "string", "description": "One or two sentences."},
                "notes": {
                    "type": "array",
                    "description": "What must change; empty when you approve.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "file": {"type": "string"},
                            "line": {"type": "integer"},
                            "note": {"type": "string"}
                        },
                        "required": ["file", "line", "note"]
                    }
                }
            },
            "required": ["verdict", "summary", "notes"]
        }),
    })
}

/// What the reviewer reads, as far as this module is concerned.
pub(super) struct Shown<'a> {
    pub ticket: &'a str,
    pub checks: &'a [CheckReport],
    /// The tamper flags, each a sentence.
    pub flags: &'a [String],
    /// The diff, already cut to what the reviewer may be sent.
    pub diff: &'a str,
    /// How many characters of the diff were cut off (0 when it is whole).
    pub cut_chars: usize,
}

/// The review request's messages: the reviewer's rules (template `review/rules.md`, short: the
/// embedded model reads them every review), then the ticket, the checks that ran, the tamper
/// flags and the diff (`review/request.md`).
pub(super) fn messages(shown: &Shown<'_>) -> Result<Vec<Message>, TemplateError> {
    #[derive(Serialize)]
    struct CheckRow<'a> {
        step: &'a str,
        status: &'a str,
        evidence: &'a str,
    }
    let checks: Vec<CheckRow<'_>> = shown
        .checks
        .iter()
        .filter(|check| check.status != CheckStatus::NotRun)
        .map(|check| CheckRow {
            step: check.step.as_str(),
            status: match check.status {
                CheckStatus::Passed => "passed",
                CheckStatus::Failed => "failed",
                CheckStatus::Flagged => "flagged",
                CheckStatus::NotRun => "not run",
            },
            evidence: first_line(&check.evidence),
        })
        .collect();
    // The diff's last line ends with a newline before the fence closes.
    let diff = if shown.diff.ends_with('\n') {
        shown.diff.to_string()
    } else {
        format!("{}\n", shown.diff)
    };
    let request = render(
        "review/request.md",
        json!({
            "ticket": shown.ticket.trim(),
            "checks": checks,
            "flags": shown.flags,
            "diff": diff,
            "cut_chars": shown.cut_chars,
        }),
    )?;
    Ok(vec![
        Message::system(render("review/rules.md", ())?),
        Message::user(request),
    ])
}

/// The note `done` answers the fixer with when the reviewer asks for changes
/// (`review/back_to_fixer.md`).
pub(super) fn back_to_fixer(summary: &str, notes: &[ReviewNote]) -> Result<String, TemplateError> {
    let notes: Vec<String> = notes.iter().map(ReviewNote::sentence).collect();
    render(
        "review/back_to_fixer.md",
        json!({"summary": summary.trim(), "notes": notes}),
    )
}

/// The diff cut to at most `max_chars` characters at a line end, and how many were cut.
pub(super) fn cut_diff(diff: &str, max_chars: usize) -> (&str, usize) {
    let total = diff.chars().count();
    if total <= max_chars {
        return (diff, 0);
    }
    let end = diff
        .char_indices()
        .nth(max_chars)
        .map_or(diff.len(), |(i, _)| i);
    let head = diff.get(..end).unwrap_or(diff);
    // Cut after the last whole line when there is one.
    let kept = head
        .rfind('\n')
        .and_then(|i| head.get(..=i))
        .unwrap_or(head);
    (kept, total - kept.chars().count())
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use plumb_protocol::CheckStep;

    use super::*;

    #[test]
    fn a_long_diff_is_cut_at_a_line_end_and_says_how_much_is_missing() {
        let diff = "+aaaa\n+bbbb\n+cccc\n";
        assert_eq!(cut_diff(diff, 100), (diff, 0));
        assert_eq!(cut_diff(diff, 8), ("+aaaa\n", 12));
    }

    #[test]
    fn the_message_holds_the_ticket_the_checks_that_ran_the_flags_and_the_diff() {
        let checks = [
            CheckReport {
                step: CheckStep::Pass,
                status: CheckStatus::Passed,
                evidence: "1 test passes\nmore".into(),
            },
            CheckReport {
                step: CheckStep::Lint,
                status: CheckStatus::NotRun,
                evidence: "no linter".into(),
            },
        ];
        let flags = ["tests/test_a.py: an existing test was changed".to_string()];
        let shown = Shown {
            ticket: "Totals are off by one.\n",
            checks: &checks,
            flags: &flags,
            diff: "+x",
            cut_chars: 7,
        };
        let flagged = messages(&shown).unwrap();
        assert!(flagged[0].content.starts_with("You review a code change"));
        assert_eq!(
            flagged[1].content,
            "Ticket:\nTotals are off by one.\n\nChecks:\n- pass: passed: 1 test passes\n\nThe tamper scan flagged:\n- tests/test_a.py: an existing test was changed\n\nDiff:\n```diff\n+x\n```\n(the diff goes on for 7 more characters that are not shown)\n"
        );
        let plain = messages(&Shown {
            flags: &[],
            diff: "+x\n",
            cut_chars: 0,
            ..shown
        })
        .unwrap();
        assert_eq!(
            plain[1].content,
            "Ticket:\nTotals are off by one.\n\nChecks:\n- pass: passed: 1 test passes\n\nDiff:\n```diff\n+x\n```\n"
        );
    }

    #[test]
    fn the_fixer_hears_the_summary_and_each_note_with_its_place() {
        let notes = [ReviewNote {
            file: "a.py".into(),
            line: Some(3),
            note: "handle zero".into(),
        }];
        assert_eq!(
            back_to_fixer("Misses zero.", &notes).unwrap(),
            "The checks passed, but a reviewer read your change and asks for changes before a person sees it. Reviewer: Misses zero.\n- a.py:3: handle zero\nMake the changes that are right (the tests must still pass), then call done again."
        );
        assert_eq!(
            back_to_fixer(" ", &[]).unwrap(),
            "The checks passed, but a reviewer read your change and asks for changes before a person sees it.\nMake the changes that are right (the tests must still pass), then call done again."
        );
    }
}
