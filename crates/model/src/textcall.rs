//! A lenient reader for tool calls written as text instead of through the provider's tool-call
//! channel: small models (and some servers) answer with `{"tool": "read_file", "arguments": {…}}`
//! in the reply text, inside code fences or `<tool_call>` tags. One JSON object naming a known tool
//! is a call; quoting is repaired only where the repair is unambiguous; anything else that looks like
//! an attempted call becomes a note that tells the model exactly what to send instead.

use serde_json::{Map, Value};

/// What a reply's text amounts to.
#[derive(Debug, Clone, PartialEq)]
pub enum TextCall {
    /// Exactly one call of a known tool.
    Call {
        name: String,
        arguments: Value,
        /// The `thought` field, or the prose around the object.
        thought: String,
    },
    /// The text tried to call a tool but the call cannot be used; the sentence says why and what to send.
    Malformed(String),
    /// Plain prose with no attempted call.
    NoCall,
}

const SHAPE: &str =
    r#"reply with exactly one JSON object: {"tool": "<tool name>", "arguments": {...}}"#;

/// Reads a reply's text for one tool call among `tools` (the names the model was offered).
pub fn parse_text_call(text: &str, tools: &[&str]) -> TextCall {
    let candidates = json_objects(text);
    if candidates.is_empty() {
        return TextCall::NoCall;
    }
    let mut calls = Vec::new();
    let mut problems = Vec::new();
    for (start, end) in &candidates {
        let Some(raw) = text.get(*start..*end) else {
            continue;
        };
        match parse_lenient(raw) {
            Ok(Value::Object(object)) => match call_from_object(&object, tools) {
                Ok(Some(call)) => calls.push((call, *start, *end)),
                Ok(None) => {}
                Err(problem) => problems.push(problem),
            },
            Ok(_) => {}
            Err(err) => problems.push(format!("your tool call is not valid JSON ({err})")),
        }
    }
    match calls.len() {
        1 => {
            let ((name, arguments, thought), start, end) = calls.remove(0);
            let prose = format!(
                "{} {}",
                text.get(..start).unwrap_or(""),
                text.get(end..).unwrap_or("")
            );
            let thought = thought.unwrap_or_else(|| clean_prose(&prose));
            TextCall::Call {
                name,
                arguments,
                thought,
            }
        }
        0 if problems.is_empty() => TextCall::NoCall,
        0 => TextCall::Malformed(format!("{}; {SHAPE}", problems.join("; "))),
        n => TextCall::Malformed(format!(
            "your reply holds {n} tool calls as text; send one at a time: {SHAPE}"
        )),
    }
}

/// Repairs the arguments of a native tool call that arrived as a string that is not valid JSON.
/// Returns the object, or a sentence for the model.
pub fn repair_arguments(raw: &str) -> Result<Value, String> {
    let trimmed = strip_fences(raw.trim());
    match parse_lenient(trimmed) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err("the arguments must be one JSON object".to_string()),
        Err(err) => Err(format!("the arguments are not valid JSON ({err})")),
    }
}

type Found = (String, Value, Option<String>);

/// Reads the call out of one object, in the forms models use: `{"tool"|"name", "arguments"|"args"|
/// "parameters"|"input"}` or OpenAI's `{"function": {"name", "arguments": "<json>"}}`.
fn call_from_object(object: &Map<String, Value>, tools: &[&str]) -> Result<Option<Found>, String> {
    if let Some(Value::Object(function)) = object.get("function") {
        return call_from_object(function, tools);
    }
    let name = ["tool", "name", "tool_name", "function"]
        .iter()
        .find_map(|key| object.get(*key).and_then(Value::as_str));
    let Some(name) = name else {
        return Ok(None);
    };
    if !tools.contains(&name) {
        return Err(format!(
            "there is no tool called `{name}` (the tools are {})",
            tools.join(", ")
        ));
    }
    let arguments = ["arguments", "args", "parameters", "input"]
        .iter()
        .find_map(|key| object.get(*key));
    let arguments = match arguments {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::String(text)) if text.trim().is_empty() => Value::Object(Map::new()),
        Some(Value::String(text)) => {
            repair_arguments(text).map_err(|why| format!("in your `{name}` call {why}"))?
        }
        Some(value @ Value::Object(_)) => value.clone(),
        Some(_) => {
            return Err(format!(
                "the arguments of your `{name}` call must be a JSON object"
            ));
        }
    };
    let thought = object
        .get("thought")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(Some((name.to_string(), arguments, thought)))
}

/// Parses JSON, then tries the repairs that cannot change meaning: Python's `True`/`False`/`None`,
/// trailing commas, raw newlines inside strings, and single quotes when the text has no double quotes.
fn parse_lenient(raw: &str) -> Result<Value, serde_json::Error> {
    let first = serde_json::from_str(raw);
    let Err(err) = first else {
        return first;
    };
    let mut repaired = repair(raw, false);
    if !raw.contains('"') && raw.contains('\'') {
        repaired = repair(raw, true);
    }
    serde_json::from_str(&repaired).map_err(|_| err)
}

/// One pass over the text that keeps strings intact and fixes what is outside them.
fn repair(raw: &str, single_quotes: bool) -> String {
    let quote = if single_quotes { '\'' } else { '"' };
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            match c {
                '\\' => {
                    out.push('\\');
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                }
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '"' if single_quotes => out.push_str("\\\""),
                c if c == quote => {
                    in_string = false;
                    out.push('"');
                }
                c => out.push(c),
            }
            continue;
        }
        match c {
            c if c == quote => {
                in_string = true;
                out.push('"');
            }
            ',' => {
                // A comma followed only by whitespace and a closing bracket is dropped.
                let rest: String = chars.clone().take_while(|c| c.is_whitespace()).collect();
                let after = chars.clone().nth(rest.chars().count());
                if !matches!(after, Some('}') | Some(']')) {
                    out.push(',');
                }
            }
            c if c.is_ascii_alphabetic() => {
                let mut word = String::from(c);
                while let Some(&next) = chars.peek() {
                    if next.is_ascii_alphanumeric() || next == '_' {
                        word.push(next);
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push_str(match word.as_str() {
                    "True" => "true",
                    "False" => "false",
                    "None" => "null",
                    other => other,
                });
            }
            c => out.push(c),
        }
    }
    out
}

/// The byte ranges of the top-level `{…}` objects in the text, brace-matched outside strings.
fn json_objects(text: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut depth = 0usize;
    let mut start = 0usize;
    let mut in_string: Option<char> = None;
    let mut escaped = false;
    for (index, c) in text.char_indices() {
        if let Some(quote) = in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == quote {
                in_string = None;
            }
            continue;
        }
        match c {
            '"' if depth > 0 => in_string = Some('"'),
            '\'' if depth > 0 && !text.contains('"') => in_string = Some('\''),
            '{' => {
                if depth == 0 {
                    start = index;
                }
                depth += 1;
            }
            '}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    found.push((start, index + 1));
                }
            }
            _ => {}
        }
    }
    if depth > 0 {
        // An object that never closes (a reply cut at its token limit) is still an attempt.
        found.push((start, text.len()));
    }
    found
}

fn strip_fences(text: &str) -> &str {
    let text = text.trim();
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_alphanumeric());
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

fn clean_prose(text: &str) -> String {
    let text = text
        .replace("```json", " ")
        .replace("```", " ")
        .replace("<tool_call>", " ")
        .replace("</tool_call>", " ");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    const TOOLS: &[&str] = &["read_file", "edit_file", "done"];

    fn call(text: &str) -> TextCall {
        parse_text_call(text, TOOLS)
    }

    #[test]
    fn plain_object_is_a_call() {
        let got = call(r#"{"tool": "read_file", "arguments": {"path": "a.py"}}"#);
        assert_eq!(
            got,
            TextCall::Call {
                name: "read_file".into(),
                arguments: json!({"path": "a.py"}),
                thought: String::new(),
            }
        );
    }

    #[test]
    fn fenced_and_tagged_forms_keep_the_prose_as_thought() {
        let got = call(
            "I will read it.\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.py\"}}\n```",
        );
        let TextCall::Call { name, thought, .. } = got else {
            panic!("{got:?}");
        };
        assert_eq!(name, "read_file");
        assert_eq!(thought, "I will read it.");
        let tagged = call(
            "<tool_call>\n{\"name\": \"done\", \"arguments\": {\"summary\": \"x\"}}\n</tool_call>",
        );
        assert!(matches!(tagged, TextCall::Call { ref name, .. } if name == "done"));
    }

    #[test]
    fn thought_field_is_read() {
        let got = call(
            r#"{"thought": "the tax is applied first", "tool": "edit_file", "arguments": {"path": "a.py", "old_text": "x", "new_text": "y"}}"#,
        );
        assert!(
            matches!(got, TextCall::Call { ref thought, .. } if thought == "the tax is applied first")
        );
    }

    #[test]
    fn openai_function_form_with_string_arguments() {
        let got = call(
            r#"{"type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"a.py\"}"}}"#,
        );
        assert!(
            matches!(got, TextCall::Call { ref arguments, .. } if arguments == &json!({"path": "a.py"}))
        );
    }

    #[test]
    fn unambiguous_repairs() {
        let single = call("{'tool': 'read_file', 'arguments': {'path': 'a.py'}}");
        assert!(matches!(single, TextCall::Call { .. }), "{single:?}");
        let python = call(r#"{"tool": "done", "arguments": {"flag": True,}}"#);
        assert!(
            matches!(python, TextCall::Call { ref arguments, .. } if arguments == &json!({"flag": true})),
            "{python:?}"
        );
        let newline = call(
            "{\"tool\": \"edit_file\", \"arguments\": {\"path\": \"a.py\", \"old_text\": \"a\nb\", \"new_text\": \"c\"}}",
        );
        assert!(
            matches!(newline, TextCall::Call { ref arguments, .. } if arguments["old_text"] == "a\nb"),
            "{newline:?}"
        );
    }

    #[test]
    fn unknown_tool_two_calls_and_broken_json_are_notes() {
        let unknown = call(r#"{"tool": "bash", "arguments": {"cmd": "ls"}}"#);
        assert!(
            matches!(unknown, TextCall::Malformed(ref m) if m.contains("no tool called `bash`") && m.contains("read_file")),
            "{unknown:?}"
        );
        let two = call(
            r#"{"tool": "read_file", "arguments": {"path": "a"}} {"tool": "done", "arguments": {}}"#,
        );
        assert!(matches!(two, TextCall::Malformed(ref m) if m.contains("2 tool calls")));
        let cut = call(r#"{"tool": "read_file", "arguments": {"path": "a.p"#);
        assert!(
            matches!(cut, TextCall::Malformed(ref m) if m.contains("not valid JSON")),
            "{cut:?}"
        );
    }

    #[test]
    fn prose_and_unrelated_objects_are_no_call() {
        assert_eq!(call("I think the bug is in totals."), TextCall::NoCall);
        assert_eq!(call(r#"The config is {"a": 1}."#), TextCall::NoCall);
    }

    #[test]
    fn repair_arguments_of_native_calls() {
        assert_eq!(
            repair_arguments(r#"{"path": "a.py",}"#),
            Ok(json!({"path": "a.py"}))
        );
        assert!(repair_arguments(r#"{"path": "#).is_err());
        assert!(repair_arguments("[1]").is_err());
    }
}
