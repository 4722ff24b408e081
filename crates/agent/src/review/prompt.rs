//! What the reviewer is asked: its rules, the one message with the ticket, the checks and the
//! diff, and the one tool it answers with. Then the note that sends the fixer back when the
//! reviewer asks for changes.

use plumb_protocol::{CheckReport, CheckStatus, Message, ReviewNote, ToolSpec};
use serde_json::json;

/// The tool the reviewer answers with.
pub(super) const REVIEW_TOOL: &str = "submit_review";

/// The reviewer's rules. Short: the embedded model reads them every review.
const RULES: &str = "You review a code change before a person approves it. An automated agent made it for the ticket below, and the harness's own checks (the tests, lint, a scan for weakened tests) passed. Judge the diff as a careful engineer would before merging:
- does it do what the ticket asks, and nothing unrelated;
- is it correct, also for the cases the ticket implies;
- does it weaken, skip or delete a test, or hard-code an answer so that a test passes;
- does it add anything unsafe (secrets, network, shell commands).
Answer with submit_review: verdict approve when you would merge it as it is, request_changes when something must change first. Each note names the file and the line in the changed file and says what to change. No notes on style alone.";

/// The reviewer's tool: a verdict, a summary and notes tied to places.
pub(super) fn review_tool() -> ToolSpec {
    ToolSpec {
        name: REVIEW_TOOL.to_string(),
        description: "Give your verdict on the change, a one-sentence summary, and notes that name a file and line.".to_string(),
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
    }
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

/// The review request's messages.
pub(super) fn messages(shown: &Shown<'_>) -> Vec<Message> {
    let mut text = format!("Ticket:\n{}\n\nChecks:\n", shown.ticket.trim());
    for check in shown.checks {
        if check.status == CheckStatus::NotRun {
            continue;
        }
        let status = match check.status {
            CheckStatus::Passed => "passed",
            CheckStatus::Failed => "failed",
            CheckStatus::Flagged => "flagged",
            CheckStatus::NotRun => "not run",
        };
        text.push_str(&format!(
            "- {}: {status}: {}\n",
            check.step.as_str(),
            first_line(&check.evidence)
        ));
    }
    if !shown.flags.is_empty() {
        text.push_str("\nThe tamper scan flagged:\n");
        for flag in shown.flags {
            text.push_str(&format!("- {flag}\n"));
        }
    }
    text.push_str(&format!("\nDiff:\n```diff\n{}", shown.diff));
    if !shown.diff.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("```\n");
    if shown.cut_chars > 0 {
        text.push_str(&format!(
            "(the diff goes on for {} more characters that are not shown)\n",
            shown.cut_chars
        ));
    }
    vec![Message::system(RULES), Message::user(text)]
}

/// The note `done` answers the fixer with when the reviewer asks for changes.
pub(super) fn back_to_fixer(summary: &str, notes: &[ReviewNote]) -> String {
    let mut text = String::from(
        "The checks passed, but a reviewer read your change and asks for changes before a person sees it.",
    );
    if !summary.trim().is_empty() {
        text.push_str(&format!(" Reviewer: {}", summary.trim()));
    }
    for note in notes {
        text.push_str(&format!("\n- {}", note.sentence()));
    }
    text.push_str(
        "\nMake the changes that are right (the tests must still pass), then call done again.",
    );
    text
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
        let messages = messages(&shown);
        let text = messages[1].content.clone();
        assert!(text.starts_with(
            "Ticket:\nTotals are off by one.\n\nChecks:\n- pass: passed: 1 test passes\n"
        ));
        assert!(!text.contains("lint"));
        assert!(text.contains("flagged:\n- tests/test_a.py: an existing test was changed\n"));
        assert!(text.contains("```diff\n+x\n```\n(the diff goes on for 7 more characters"));
    }

    #[test]
    fn the_fixer_hears_the_summary_and_each_note_with_its_place() {
        let notes = [ReviewNote {
            file: "a.py".into(),
            line: Some(3),
            note: "handle zero".into(),
        }];
        assert_eq!(
            back_to_fixer("Misses zero.", &notes),
            "The checks passed, but a reviewer read your change and asks for changes before a person sees it. Reviewer: Misses zero.\n- a.py:3: handle zero\nMake the changes that are right (the tests must still pass), then call done again."
        );
    }
}
