//! What the loop does with a model's reply before running it, and with a conversation that no
//! longer fits: text-form tool calls are read leniently, arguments that arrived as broken JSON are
//! repaired where that is unambiguous, and compaction shrinks the history when the context overflows.

use plumb_context::prompt::Turn;
use plumb_model::textcall::{TextCall, parse_text_call, repair_arguments};
use plumb_protocol::{ModelReply, ToolCall};
use serde_json::Value;

use plumb_tools::Registry;

use super::Run;

impl Run {
    /// Normalises a reply in place. Returns why a call in the text could not be used, if one was tried.
    pub(super) fn normalise_reply(&self, reply: &mut ModelReply) -> Option<String> {
        normalise(reply, &self.registry, self.round)
    }

    /// Makes the next request smaller after the model said it does not fit: first only the last
    /// tool result stays in full, then the oldest half of the rounds is replaced by one note that
    /// lists what was done in them. Returns a sentence for the journal, or `None` when nothing is
    /// left to drop.
    pub(super) fn compact(&mut self) -> Option<String> {
        if self.keep_full > 1 {
            self.keep_full = 1;
            return Some(
                "the request did not fit the model's context window; only the last tool result is kept in full now".into(),
            );
        }
        let assistants: Vec<usize> = self
            .turns
            .iter()
            .enumerate()
            .filter(|(_, t)| matches!(t, Turn::Assistant { .. }))
            .map(|(i, _)| i)
            .collect();
        // Keep at least the latest round; cut at a round boundary so every kept result has its call.
        if assistants.len() < 2 {
            return None;
        }
        let cut = assistants[assistants.len() / 2];
        let dropped: Vec<Turn> = self.turns.drain(..cut).collect();
        let mut calls = Vec::new();
        for turn in &dropped {
            if let Turn::Assistant { tool_calls, .. } = turn {
                for call in tool_calls {
                    calls.push(format!(
                        "{} {}",
                        call.name,
                        short_arguments(&call.arguments)
                    ));
                }
            }
        }
        let summary = format!(
            "Earlier rounds were removed to fit the context window. In them you called: {}. Files you changed are still changed; read them again if you need their text.",
            calls.join("; ")
        );
        self.turns.insert(0, Turn::Note(summary));
        Some(format!(
            "the request did not fit the model's context window; {} earlier turns were replaced by a summary",
            dropped.len()
        ))
    }
}

/// The arguments on one line, long strings cut.
fn short_arguments(arguments: &Value) -> String {
    let Value::Object(map) = arguments else {
        return String::new();
    };
    let parts: Vec<String> = map
        .iter()
        .map(|(key, value)| {
            let text = match value {
                Value::String(s) => s.lines().next().unwrap_or("").to_string(),
                other => other.to_string(),
            };
            let cut: String = text.chars().take(40).collect();
            format!("{key}={cut}")
        })
        .collect();
    parts.join(" ")
}

/// Normalises a reply in place: arguments that arrived as broken JSON repaired where that is
/// unambiguous, a tool call written as text read leniently. Returns why a call in the text could
/// not be used, if one was tried.
pub(super) fn normalise(reply: &mut ModelReply, registry: &Registry, round: u32) -> Option<String> {
    for call in &mut reply.tool_calls {
        if let Value::String(raw) = &call.arguments
            && let Ok(repaired) = repair_arguments(raw)
        {
            call.arguments = repaired;
        }
    }
    if !reply.tool_calls.is_empty() || reply.exhausted || reply.content.trim().is_empty() {
        return None;
    }
    if reply.content.ends_with(plumb_model::CUT_OFF_MARK) {
        return Some(
                "your reply was cut off at the reply length limit before its tool call was complete; send a shorter call (in edit_file, old_text and new_text need only the lines that change)".to_string(),
            );
    }
    let names = registry.names();
    match parse_text_call(&reply.content, &names) {
        TextCall::Call {
            name,
            arguments,
            thought,
        } => {
            reply.tool_calls.push(ToolCall {
                id: format!("text_call_{round}"),
                name,
                arguments,
            });
            reply.content = thought;
            None
        }
        TextCall::Malformed(why) => Some(why),
        TextCall::NoCall => None,
    }
}
