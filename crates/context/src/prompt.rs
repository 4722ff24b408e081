//! Prompt assembly: what the model sees in every request.
//!
//! Order, fixed: the rules (system), then the first user message with the ticket in full on top,
//! the project notes, the test command and its baseline, and the repo map; then the history. In the
//! history the last `keep_full` tool results stay as the model saw them, each older one shrinks to a
//! single line, and the other bounds of `history.rs` apply (long texts of old calls, old notes,
//! views of a file a later result replaced), so a long run keeps its ticket and its latest
//! evidence in view and its prompt stays about the size of a short run's. `size.rs` counts the
//! parts of a request for the journal.

use plumb_protocol::{Message, ToolCall};

pub use crate::history::shown_whole;
use crate::history::{self, Shown};
use crate::notes::NotesFile;
pub use crate::templates::TemplateError;
use crate::templates::{self, Find, FirstMessageValues, Rules, Steps};

/// The rules every request starts with (`templates::Rules`, template `rules.md`): `code_up_front`
/// fills the first step's slot with the code shown in the first message, `fix_first` (the guided
/// phases) the steps' slot with the fix before the test, which plumb then runs with and without
/// it, and `figures` (the figures helper is on) makes those steps speak of the figure the ticket
/// gives.
pub fn rules(code_up_front: bool, fix_first: bool, figures: bool) -> Result<String, TemplateError> {
    Rules {
        find: if code_up_front {
            Find::CodeUpFront
        } else {
            Find::Search
        },
        steps: if fix_first {
            Steps::FixFirst
        } else {
            Steps::TestFirst
        },
        figures,
    }
    .render()
}

/// The parts of the first user message.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FirstMessage<'a> {
    pub ticket: &'a str,
    /// The project notes files that apply, root first (`notes.rs`).
    pub notes: &'a [NotesFile],
    pub test_command: &'a str,
    /// The baseline test run, one line ("412 passed").
    pub baseline: &'a str,
    pub repo_map: &'a str,
    /// The code the ticket is probably about (the code-up-front helper), already rendered.
    pub code: Option<&'a str>,
}

/// The first user message (template `first_message.md`): the ticket always on top, then what
/// the project says about itself.
pub fn first_message(parts: &FirstMessage<'_>) -> Result<String, TemplateError> {
    templates::render(
        "first_message.md",
        FirstMessageValues {
            ticket: parts.ticket.trim_end(),
            notes: parts
                .notes
                .iter()
                .map(|file| NotesFile {
                    path: file.path.clone(),
                    text: file.text.trim_end().to_string(),
                })
                .collect(),
            test_command: parts.test_command,
            baseline: parts.baseline,
            repo_map: parts.repo_map.trim_end(),
            code: parts.code.map(str::trim_end),
        },
    )
}

/// One step of the conversation after the first message.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    /// What the model said and asked for.
    Assistant {
        content: String,
        tool_calls: Vec<ToolCall>,
    },
    /// The answer to one tool call: `text` as the model sees it in full (already shortened to the
    /// tool's line limit), `one_line` once it has grown old.
    ToolResult {
        call_id: String,
        text: String,
        one_line: String,
        /// The call was refused, failed, or its write was undone.
        failed: bool,
    },
    /// A note from the harness (a failed check at `done`, a reply without a tool call).
    Note(String),
    /// What stands for the rounds compaction took out (`compaction.rs`): shown whole in every
    /// request, where an old note shrinks to its first sentence.
    Summary(String),
}

/// How many of the first `results` tool results are shown shrunk to one line: all but the last
/// `keep_full` (the second seed's rule, docs/contracts.md §4). They shrink one a round, not
/// `keep_full` at a time as they once did: the steps kept a cached prefix matching for longer but
/// let up to `2 × keep_full − 1` results stand whole, which is what made the prompt of round 10
/// twice the budget.
pub fn shrunk_before(results: usize, keep_full: usize) -> usize {
    results.saturating_sub(keep_full)
}

/// The messages of one request: `head` (rules and first message), then the turns under the
/// history's bounds (`history.rs`): the last `keep_full` tool results whole, older ones one line,
/// long texts of old and already-shown calls by their size, old notes by their first sentence, a
/// view of a file a later result replaced by one line.
pub fn build_messages(head: &[Message], turns: &[Turn], keep_full: usize) -> Vec<Message> {
    let mut messages = head.to_vec();
    for shown in history::shown(turns, keep_full) {
        messages.push(match shown {
            Shown::Assistant {
                content,
                tool_calls,
            } => Message::assistant(content, tool_calls),
            Shown::Result {
                call_id,
                text,
                failed: true,
            } => Message::tool_error(call_id, text),
            Shown::Result {
                call_id,
                text,
                failed: false,
            } => Message::tool(call_id, text),
            Shown::Note(text) => Message::user(format!("[plumb] {text}")),
        });
    }
    messages
}

#[cfg(test)]
mod tests {
    use plumb_protocol::Role;
    use pretty_assertions::assert_eq;

    use super::*;

    fn result(n: usize) -> Turn {
        Turn::ToolResult {
            call_id: format!("c{n}"),
            text: format!("full {n}"),
            one_line: format!("line {n}"),
            failed: false,
        }
    }

    #[test]
    fn only_the_last_results_stay_in_full() {
        let head = vec![Message::system("rules"), Message::user("ticket")];
        let turns: Vec<Turn> = (1..=4)
            .map(result)
            .chain([Turn::Note("check failed".into())])
            .collect();
        let actual: Vec<(Role, String)> = build_messages(&head, &turns, 2)
            .into_iter()
            .map(|m| (m.role, m.content))
            .collect();
        let expected = vec![
            (Role::System, "rules".to_string()),
            (Role::User, "ticket".to_string()),
            (Role::Tool, "[older result, shortened] line 1".to_string()),
            (Role::Tool, "[older result, shortened] line 2".to_string()),
            (Role::Tool, "full 3".to_string()),
            (Role::Tool, "full 4".to_string()),
            (Role::User, "[plumb] check failed".to_string()),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn rules_point_at_the_code_shown_up_front() {
        let plain = rules(false, false, false).unwrap();
        let with_code = rules(true, false, false).unwrap();
        assert_ne!(with_code, plain);
        assert!(with_code.contains("under \"Code the ticket is probably about\", so start from it; otherwise search_code for the words"));
    }

    #[test]
    fn fix_first_rules_put_the_fix_before_the_test() {
        let figures = rules(false, true, true).unwrap();
        assert!(figures.contains("asserting only the figure the ticket gives"));
        assert!(
            !rules(false, true, false).unwrap().contains("figure"),
            "figure wording only with the figures helper"
        );
        let rules = rules(false, true, false).unwrap();
        assert!(!rules.contains("Before you fix anything"));
        let fix = rules.find("2. Fix the code with edit_file").unwrap();
        let test = rules.find("3. Then add a test that shows the bug").unwrap();
        let done = rules.find("5. Call done").unwrap();
        assert!(fix < test && test < done, "{rules}");
    }

    #[test]
    fn text_from_the_ticket_and_the_repository_is_never_read_as_a_template() {
        let tricky = "{{ ticket }} {% if true %}x{% endif %} {# c #} <b>&amp;</b> {{";
        let text = first_message(&FirstMessage {
            ticket: tricky,
            notes: &[NotesFile {
                path: "{{ path }}/AGENTS.md".into(),
                text: tricky.into(),
            }],
            test_command: "{% raw %}",
            baseline: "1 passed",
            repo_map: tricky,
            code: Some(tricky),
        })
        .unwrap();
        assert_eq!(
            text,
            format!(
                "# Ticket\n\n{tricky}\n\n# Project notes ({{{{ path }}}}/AGENTS.md)\n\n{tricky}\n\n# Tests\n\nThe test command is `{{% raw %}}`. Before any change: 1 passed.\n\n# Repository map\n\n{tricky}\n\n# Code the ticket is probably about\n\n{tricky}\n"
            )
        );
    }

    #[test]
    fn the_ticket_comes_first() {
        let text = first_message(&FirstMessage {
            ticket: "BILL-412: GST on discounted items",
            notes: &[NotesFile {
                path: "AGENTS.md".into(),
                text: "never edit migrations/".into(),
            }],
            test_command: "python3 -m pytest -q",
            baseline: "34 passed",
            repo_map: "billing/\n  tax.py",
            code: None,
        })
        .unwrap();
        assert_eq!(
            text,
            "# Ticket\n\nBILL-412: GST on discounted items\n\n# Project notes (AGENTS.md)\n\nnever edit migrations/\n\n# Tests\n\nThe test command is `python3 -m pytest -q`. Before any change: 34 passed.\n\n# Repository map\n\nbilling/\n  tax.py\n"
        );
    }
}
