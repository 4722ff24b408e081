//! What the loop does with a model's reply before running it: text-form tool calls are read leniently, arguments that arrived as broken JSON are
//! repaired where that is unambiguous.

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
