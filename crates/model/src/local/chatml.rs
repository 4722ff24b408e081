//! The prompt text for the embedded model: Qwen2.5's ChatML, rendered here rather than by the GGUF
//! file's own template (the 1.5B file's template has doubled braces that the model copies into its
//! output). Tools are described in the system turn; the model answers with one JSON object (forced
//! by the grammar) and tool results come back as `<tool_response>` user turns, as in Qwen's own format.

use plumb_protocol::{Message, Role, ToolSpec};
use serde_json::Value;

const START: &str = "<|im_start|>";
const END: &str = "<|im_end|>";

/// The stop string that ends an assistant turn.
pub(crate) const TURN_END: &str = END;

/// Renders the conversation up to the start of the next assistant turn.
pub(crate) fn render(messages: &[Message], tools: &[ToolSpec], thought: bool) -> String {
    let mut out = String::new();
    let system: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.content.as_str())
        .collect();
    push_turn(
        &mut out,
        "system",
        &format!(
            "{}\n\n{}",
            system.join("\n\n"),
            tools_section(tools, thought)
        ),
    );
    let mut pending_user = String::new();
    for message in messages.iter().filter(|m| m.role != Role::System) {
        match message.role {
            Role::System => {}
            Role::User => push_part(&mut pending_user, &message.content),
            Role::Tool => {
                let name = tool_name_for(messages, message.tool_call_id.as_deref());
                push_part(
                    &mut pending_user,
                    &format!(
                        "<tool_response name=\"{name}\">\n{}\n</tool_response>",
                        message.content.trim_end()
                    ),
                );
            }
            Role::Assistant => {
                if !pending_user.is_empty() {
                    push_turn(&mut out, "user", &pending_user);
                    pending_user.clear();
                }
                push_turn(&mut out, "assistant", &assistant_text(message, thought));
            }
        }
    }
    if !pending_user.is_empty() {
        push_turn(&mut out, "user", &pending_user);
    }
    out.push_str(START);
    out.push_str("assistant\n");
    out
}

/// The fixed head of every prompt (system turn and the first user turn), for warming the cache.
pub(crate) fn render_head(messages: &[Message], tools: &[ToolSpec], thought: bool) -> String {
    let head: Vec<Message> = messages
        .iter()
        .take_while(|m| matches!(m.role, Role::System | Role::User))
        .cloned()
        .collect();
    let mut text = render(&head, tools, thought);
    // Drop the trailing assistant opener: the warm-up is only the shared prefix.
    let opener = format!("{START}assistant\n");
    if text.ends_with(&opener) {
        text.truncate(text.len() - opener.len());
    }
    text
}

/// An assistant turn as the model itself would have written it: the one JSON object.
fn assistant_text(message: &Message, thought: bool) -> String {
    let Some(call) = message.tool_calls.first() else {
        return message.content.clone();
    };
    // Written by hand: the fields' order is the grammar's order, not serde_json's sorted one.
    let mut parts = Vec::new();
    if thought {
        parts.push(format!(
            "\"thought\": {}",
            Value::String(message.content.clone())
        ));
    }
    parts.push(format!("\"tool\": {}", Value::String(call.name.clone())));
    parts.push(format!("\"arguments\": {}", spaced_json(&call.arguments)));
    format!("{{{}}}", parts.join(", "))
}

fn tools_section(tools: &[ToolSpec], thought: bool) -> String {
    let mut text = String::from(
        "# Tools\n\nYou act by replying with exactly one JSON object and nothing else:\n",
    );
    if thought {
        text.push_str(
            "{\"thought\": \"<what you learned and what you do next, one or two sentences>\", \"tool\": \"<tool name>\", \"arguments\": {...}}\n",
        );
    } else {
        text.push_str("{\"tool\": \"<tool name>\", \"arguments\": {...}}\n");
    }
    text.push_str("\nThe tools:\n");
    for tool in tools {
        text.push_str(&format!(
            "\n## {}\n{}\nArguments: {}\n",
            tool.name,
            tool.description,
            argument_summary(&tool.parameters)
        ));
    }
    text
}

/// `path` (string, required): what it is — one line per argument, shorter than the raw schema.
fn argument_summary(schema: &Value) -> String {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return "none".into();
    };
    if properties.is_empty() {
        return "none".into();
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut lines = Vec::new();
    for (name, property) in properties {
        let kind = match property.get("type").and_then(Value::as_str) {
            Some("array") => {
                let item = property
                    .pointer("/items/type")
                    .and_then(Value::as_str)
                    .unwrap_or("value");
                format!("list of {item}s")
            }
            Some(kind) => kind.to_string(),
            None => "value".to_string(),
        };
        let need = if required.contains(&name.as_str()) {
            "required"
        } else {
            "optional"
        };
        let about = property
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("");
        lines.push(format!("\n- {name} ({kind}, {need}): {about}"));
    }
    lines.concat()
}

fn tool_name_for(messages: &[Message], id: Option<&str>) -> String {
    let Some(id) = id else {
        return "tool".into();
    };
    messages
        .iter()
        .flat_map(|m| m.tool_calls.iter())
        .find(|call| call.id == id)
        .map(|call| call.name.clone())
        .unwrap_or_else(|| "tool".into())
}

fn push_turn(out: &mut String, role: &str, content: &str) {
    out.push_str(START);
    out.push_str(role);
    out.push('\n');
    out.push_str(content.trim_end());
    out.push_str(END);
    out.push('\n');
}

fn push_part(pending: &mut String, part: &str) {
    if !pending.is_empty() {
        pending.push_str("\n\n");
    }
    pending.push_str(part.trim_end());
}

/// JSON with a space after `:` and `,` — the way the model writes it, so re-rendered turns keep
/// the tokens the model produced and the prompt cache keeps matching.
pub(crate) fn spaced_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(key, value)| {
                    format!("{}: {}", Value::String(key.clone()), spaced_json(value))
                })
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(spaced_json).collect();
            format!("[{}]", parts.join(", "))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use plumb_protocol::ToolCall;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "read_file".into(),
            description: "Show a file.".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string", "description": "The file."}}, "required": ["path"]}),
        }]
    }

    #[test]
    fn renders_turns_tool_results_and_the_open_assistant_turn() {
        let call = ToolCall {
            id: "c1".into(),
            name: "read_file".into(),
            arguments: json!({"path": "a.py"}),
        };
        let assistant = Message::assistant("look at a.py", vec![call]);
        let tool = Message::tool("c1", "1 | x = 1\n");
        let messages = vec![
            Message::system("RULES"),
            Message::user("TICKET"),
            assistant,
            tool,
            Message::user("a note"),
        ];
        let text = render(&messages, &tools(), true);
        assert!(
            text.starts_with("<|im_start|>system\nRULES\n\n# Tools"),
            "{text}"
        );
        assert!(
            text.contains("- path (string, required): The file."),
            "{text}"
        );
        assert!(text.contains("<|im_start|>user\nTICKET<|im_end|>\n<|im_start|>assistant\n{\"thought\": \"look at a.py\", \"tool\": \"read_file\", \"arguments\": {\"path\": \"a.py\"}}<|im_end|>\n"), "{text}");
        assert!(text.ends_with("<|im_start|>user\n<tool_response name=\"read_file\">\n1 | x = 1\n</tool_response>\n\na note<|im_end|>\n<|im_start|>assistant\n"), "{text}");
        let head = render_head(&messages, &tools(), true);
        assert!(
            text.starts_with(&head),
            "the head is a prefix of every prompt"
        );
        assert!(head.ends_with("TICKET<|im_end|>\n"));
    }

    #[test]
    fn spaced_json_matches_python_style() {
        assert_eq!(
            spaced_json(&json!({"a": [1, "x"], "b": {"c": null}})),
            r#"{"a": [1, "x"], "b": {"c": null}}"#
        );
    }
}
