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
///
/// Earlier rounds are not replayed as assistant turns: they are narrated, in order, in the one user
/// turn ("Step 2: you called read_file with …; the result: …"). A small model copies its own
/// earlier replies almost token for token — even at a high temperature, even after a note saying
/// the call was already made — and a narrated history gives it nothing to copy. The text only grows
/// at the end, so the prompt cache keeps matching. `next_step` (the guided-phases helper) closes the
/// prompt, after the history, where it changes nothing the cache holds.
pub(crate) fn render(
    messages: &[Message],
    tools: &[ToolSpec],
    thought: bool,
    next_step: Option<&str>,
) -> String {
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
    let mut user = String::new();
    let mut step = 0;
    for message in messages.iter().filter(|m| m.role != Role::System) {
        match message.role {
            Role::System => {}
            Role::User => push_part(&mut user, &message.content),
            Role::Tool => {
                let name = tool_name_for(messages, message.tool_call_id.as_deref());
                push_part(
                    &mut user,
                    &format!(
                        "<tool_response name=\"{name}\">\n{}\n</tool_response>",
                        message.content.trim_end()
                    ),
                );
            }
            Role::Assistant => {
                step += 1;
                push_part(&mut user, &narrated_step(step, message, thought));
            }
        }
    }
    if step > 0 || next_step.is_some() {
        let mut closing = format!(
            "# Step {}\nYour next call, as one JSON object (do not repeat a call whose result is above).",
            step + 1
        );
        if let Some(next) = next_step {
            closing.push_str(&format!("\nNow: {next}"));
        }
        push_part(&mut user, &closing);
    }
    if !user.is_empty() {
        push_turn(&mut out, "user", &user);
    }
    out.push_str(START);
    out.push_str("assistant\n");
    out
}

/// One earlier round in the user's words: what was thought and called.
fn narrated_step(step: usize, message: &Message, thought: bool) -> String {
    let mut text = format!("# Step {step}\n");
    if thought && !message.content.trim().is_empty() {
        text.push_str(&format!("You thought: {}\n", message.content.trim()));
    }
    match message.tool_calls.first() {
        Some(call) => text.push_str(&format!(
            "You called {} with {}.",
            call.name,
            spaced_json(&call.arguments)
        )),
        None => text.push_str("You called no tool."),
    }
    text
}

/// The fixed head of every prompt, the system turn (rules and tools), for warming the cache.
pub(crate) fn render_head(messages: &[Message], tools: &[ToolSpec], thought: bool) -> String {
    let system: Vec<Message> = messages
        .iter()
        .filter(|m| m.role == Role::System)
        .cloned()
        .collect();
    let text = render(&system, tools, thought, None);
    // Only the system turn: what follows it differs from run to run.
    let end = text.find(END).map_or(text.len(), |at| at + END.len() + 1);
    text.get(..end).unwrap_or(&text).to_string()
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
    fn renders_the_history_as_narrated_steps_in_one_user_turn() {
        let call = ToolCall {
            id: "c1".into(),
            name: "read_file".into(),
            arguments: json!({"path": "a.py"}),
        };
        let messages = vec![
            Message::system("RULES"),
            Message::user("TICKET"),
            Message::assistant("look at a.py", vec![call]),
            Message::tool("c1", "1 | x = 1\n"),
            Message::user("a note"),
        ];
        let text = render(&messages, &tools(), true, None);
        assert!(
            text.starts_with("<|im_start|>system\nRULES\n\n# Tools"),
            "{text}"
        );
        assert!(
            text.contains("- path (string, required): The file."),
            "{text}"
        );
        assert!(
            text.ends_with("<|im_start|>user\nTICKET\n\n# Step 1\nYou thought: look at a.py\nYou called read_file with {\"path\": \"a.py\"}.\n\n<tool_response name=\"read_file\">\n1 | x = 1\n</tool_response>\n\na note\n\n# Step 2\nYour next call, as one JSON object (do not repeat a call whose result is above).<|im_end|>\n<|im_start|>assistant\n"),
            "{text}"
        );
        assert_eq!(
            text.matches("<|im_start|>assistant").count(),
            1,
            "no replayed assistant turns"
        );
        let head = render_head(&messages, &tools(), true);
        assert!(
            head.ends_with("<|im_end|>\n") && !head.contains("TICKET"),
            "{head}"
        );
        assert!(
            text.starts_with(&head),
            "the system turn is a prefix of every prompt"
        );
    }

    #[test]
    fn the_next_step_closes_the_prompt_and_leaves_the_history_as_it_was() {
        let messages = vec![Message::system("RULES"), Message::user("TICKET")];
        let plain = render(&messages, &tools(), true, None);
        let guided = render(
            &messages,
            &tools(),
            true,
            Some("write a test that shows the bug."),
        );
        let history_end = plain.rfind("<|im_end|>").unwrap();
        assert!(
            guided.starts_with(plain.get(..history_end).unwrap()),
            "{guided}"
        );
        assert!(
            guided.ends_with("TICKET\n\n# Step 1\nYour next call, as one JSON object (do not repeat a call whose result is above).\nNow: write a test that shows the bug.<|im_end|>\n<|im_start|>assistant\n"),
            "{guided}"
        );
    }

    #[test]
    fn spaced_json_matches_python_style() {
        assert_eq!(
            spaced_json(&json!({"a": [1, "x"], "b": {"c": null}})),
            r#"{"a": [1, "x"], "b": {"c": null}}"#
        );
    }
}
