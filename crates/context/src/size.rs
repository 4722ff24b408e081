//! The size of a request part by part, for the journal (`PromptSize` with each `model_request`):
//! what grows in a long run shows there round by round.
//!
//! The count is an estimate, [`estimated_tokens`]: one token per three bytes, rounded up. It
//! needs no tokenizer and errs high for the embedded model: Qwen2.5's tokenizer gave 3.3–4.0
//! bytes a token on the prompts of a 12-round run (ASCII code, pytest output, English), so
//! bytes/3 stayed above the real count by 10–32 % (`docs/prompt.md`). Text far from ASCII (CJK,
//! emoji) can take more tokens than bytes/3; the journal says the count is an estimate.

use plumb_protocol::{Message, PromptSize, Role, ToolSpec};

/// How [`estimated_tokens`] counts, as the journal says it.
pub const ESTIMATE: &str = "estimate: bytes/3, rounded up";

/// Tokens of `text` by the estimate: bytes/3, rounded up.
pub fn estimated_tokens(text: &str) -> u64 {
    text.len().div_ceil(3) as u64
}

/// [`estimated_tokens`] as a count, for a budget counted in `usize`.
pub fn estimated_count(text: &str) -> usize {
    usize::try_from(estimated_tokens(text)).unwrap_or(usize::MAX)
}

/// Tokens of one message by the estimate: its text and its calls.
pub fn message_tokens(message: &Message) -> u64 {
    estimated_tokens(&message.content)
        + message
            .tool_calls
            .iter()
            .map(|call| {
                estimated_tokens(&call.name) + estimated_tokens(&call.arguments.to_string())
            })
            .sum::<u64>()
}

/// The size of a request: its messages, the tools it describes and the guided next step.
pub fn prompt_size(
    messages: &[Message],
    tools: &[ToolSpec],
    next_step: Option<&str>,
) -> PromptSize {
    let mut size = PromptSize {
        counted: ESTIMATE.to_string(),
        ..PromptSize::default()
    };
    let mut first_user = true;
    for message in messages {
        match message.role {
            Role::System => size.rules += message_tokens(message),
            Role::User if first_user => {
                first_user = false;
                first_message_parts(&message.content, &mut size);
            }
            Role::User => size.notes += message_tokens(message),
            Role::Assistant => size.calls += message_tokens(message),
            Role::Tool => size.results += message_tokens(message),
        }
    }
    for tool in tools {
        size.tools += estimated_tokens(&tool.name)
            + estimated_tokens(&tool.description)
            + estimated_tokens(&tool.parameters.to_string());
    }
    size.notes += next_step.map_or(0, estimated_tokens);
    size.total = size.rules
        + size.tools
        + size.ticket
        + size.project
        + size.repo_map
        + size.code
        + size.calls
        + size.results
        + size.notes;
    size
}

/// The first message by its sections (`prompt::first_message`): the ticket, the repo map, the
/// code shown up front, and the rest (project notes, the test line) as `project`.
fn first_message_parts(text: &str, size: &mut PromptSize) {
    let mut section = "";
    let mut start = 0;
    let add = |section: &str, part: &str, size: &mut PromptSize| {
        let tokens = estimated_tokens(part);
        match section {
            "# Ticket" => size.ticket += tokens,
            "# Repository map" => size.repo_map += tokens,
            "# Code the ticket is probably about" => size.code += tokens,
            _ => size.project += tokens,
        }
    };
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with("# ") {
            add(section, text.get(start..at).unwrap_or_default(), size);
            section = match line.trim_end() {
                "# Ticket" => "# Ticket",
                "# Repository map" => "# Repository map",
                "# Code the ticket is probably about" => "# Code the ticket is probably about",
                _ => "",
            };
            start = at;
        }
        at += line.len();
    }
    add(section, text.get(start..).unwrap_or_default(), size);
}

#[cfg(test)]
mod tests {
    use plumb_protocol::ToolCall;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::prompt::{FirstMessage, first_message};

    #[test]
    fn every_part_is_counted_where_it_belongs() {
        let first = first_message(&FirstMessage {
            ticket: "abc",
            notes: &[],
            test_command: "t",
            baseline: "1 passed",
            repo_map: "m",
            code: Some("def f(): pass"),
        })
        .unwrap();
        let messages = vec![
            Message::system("123456"),
            Message::user(first.clone()),
            Message::assistant(
                "ab",
                vec![ToolCall {
                    id: "c".into(),
                    name: "run".into(),
                    arguments: json!({}),
                }],
            ),
            Message::tool("c", "x".repeat(9)),
            Message::user("[plumb] n"),
        ];
        let size = prompt_size(&messages, &[], Some("go"));
        assert_eq!(
            (
                size.rules,
                size.ticket,
                size.repo_map,
                size.code,
                size.calls,
                size.results,
                size.notes
            ),
            (2, 5, 7, 17, 3, 3, 4)
        );
        // The sections add up to the first message, each rounded up on its own.
        let first_parts = size.ticket + size.project + size.repo_map + size.code;
        let whole = estimated_tokens(&first);
        assert!(whole <= first_parts && first_parts < whole + 4, "{size:?}");
        assert_eq!(size.total, 2 + 5 + size.project + 7 + 17 + 3 + 3 + 4);
    }
}
