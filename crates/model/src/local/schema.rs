//! The JSON schema that constrains the embedded model's reply to one well-formed tool call: one
//! alternative per tool, the tool's name as a constant, its arguments typed, and (with the thought
//! helper) a free-text `thought` first. llama.cpp turns it into a grammar; the schema is written as
//! text by hand because the grammar follows the order of the properties, and the order matters to a
//! small model: think first, then name the tool, then `path` before `old_text` before `new_text`.

use plumb_protocol::ToolSpec;
use serde_json::Value;

/// The longest `thought` the grammar allows: a sentence or two.
const THOUGHT_MAX_CHARS: usize = 200;

/// The longest `old_text` or `new_text` of an edit the grammar allows: some 30 lines, more than
/// a fix or a test needs. Without a bound the model can repeat one line until its reply limit
/// (a BILL-412 run wrote the same assert 30 times, three rounds in a row), and a reply cut there
/// has no call at all; with it, the call closes and the edit gets an answer.
const EDIT_TEXT_MAX_CHARS: usize = 1200;

/// The longest `summary` of `done` the grammar allows: the report says what the checks found, so
/// the model's own account only needs a few sentences.
const SUMMARY_MAX_CHARS: usize = 200;

/// The longest `note` of a review the grammar allows.
const NOTE_MAX_CHARS: usize = 300;

/// The schema text for a reply that calls one of `tools`. When `done` is the only tool offered
/// there is nothing to decide, so the reply has no `thought` even with the helper on: on
/// BILL-412 that thought was some 45 of the round's 80 generated tokens, about 2 s.
pub(crate) fn reply_schema(tools: &[ToolSpec], thought: bool) -> String {
    let only_done = matches!(tools, [tool] if tool.name == "done");
    let thought = thought && !only_done;
    let alternatives: Vec<String> = tools
        .iter()
        .map(|tool| {
            let mut properties = Vec::new();
            let mut required = Vec::new();
            if thought {
                // Bounded: a small model at low temperature can otherwise think until its reply
                // limit and never reach the call.
                properties.push(format!(
                    r#""thought": {{"type": "string", "maxLength": {THOUGHT_MAX_CHARS}}}"#
                ));
                required.push(r#""thought""#);
            }
            properties.push(format!(
                r#""tool": {{"const": {}}}"#,
                Value::String(tool.name.clone())
            ));
            properties.push(format!(r#""arguments": {}"#, arguments_schema(&tool.parameters)));
            required.extend([r#""tool""#, r#""arguments""#]);
            format!(
                r#"{{"type": "object", "properties": {{{}}}, "required": [{}], "additionalProperties": false}}"#,
                properties.join(", "),
                required.join(", ")
            )
        })
        .collect();
    format!(r#"{{"oneOf": [{}]}}"#, alternatives.join(", "))
}

/// A tool's argument schema with required properties first (in the order `required` lists them),
/// then the optional ones; descriptions, defaults and bounds dropped (they do not shape the grammar
/// and only make it bigger).
fn arguments_schema(parameters: &Value) -> String {
    let empty = serde_json::Map::new();
    let properties = parameters
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut ordered: Vec<&str> = required
        .iter()
        .copied()
        .filter(|name| properties.contains_key(*name))
        .collect();
    ordered.extend(
        properties
            .keys()
            .map(String::as_str)
            .filter(|name| !required.contains(name)),
    );
    let fields: Vec<String> = ordered
        .iter()
        .filter_map(|name| {
            let property = properties.get(*name)?;
            Some(format!(
                "{}: {}",
                Value::String((*name).to_string()),
                bounded(name, property_schema(property))
            ))
        })
        .collect();
    let required_text: Vec<String> = required
        .iter()
        .map(|name| Value::String((*name).to_string()).to_string())
        .collect();
    format!(
        r#"{{"type": "object", "properties": {{{}}}, "required": [{}], "additionalProperties": false}}"#,
        fields.join(", "),
        required_text.join(", ")
    )
}

/// `schema` with the length bound the grammar puts on argument `name`, if any.
fn bounded(name: &str, schema: String) -> String {
    let is_string = schema == r#"{"type":"string"}"#;
    let limit = match name {
        "old_text" | "new_text" => EDIT_TEXT_MAX_CHARS,
        "summary" => SUMMARY_MAX_CHARS,
        "note" => NOTE_MAX_CHARS,
        _ => return schema,
    };
    if is_string {
        format!(r#"{{"type":"string","maxLength":{limit}}}"#)
    } else {
        schema
    }
}

fn property_schema(property: &Value) -> String {
    // An object with named fields (a reviewer's note) keeps them, in the same order rules.
    if property.get("properties").is_some_and(Value::is_object) {
        return arguments_schema(property);
    }
    // Written as text, not through a `Value`, whose map would sort nested fields by name.
    let mut parts: Vec<String> = ["type", "enum", "const"]
        .into_iter()
        .filter_map(|key| Some(format!(r#""{key}":{}"#, property.get(key)?)))
        .collect();
    if let Some(items) = property.get("items") {
        parts.push(format!(r#""items":{}"#, property_schema(items)));
    }
    format!("{{{}}}", parts.join(","))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn edit_tool() -> ToolSpec {
        ToolSpec {
            name: "edit_file".into(),
            description: "Edit.".into(),
            parameters: json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "new_text": {"type": "string", "description": "x"},
                    "old_text": {"type": "string"},
                    "path": {"type": "string"},
                    "tests": {"type": "array", "items": {"type": "string", "description": "y"}}
                },
                "required": ["path", "old_text", "new_text"]
            }),
        }
    }

    #[test]
    fn schema_is_valid_json_in_the_intended_order() {
        let text = reply_schema(&[edit_tool()], true);
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            parsed["oneOf"][0]["properties"]["tool"]["const"],
            "edit_file"
        );
        let thought = text.find("\"thought\"").unwrap();
        let tool = text.find("\"tool\"").unwrap();
        let path = text.find("\"path\"").unwrap();
        let old = text.find("\"old_text\"").unwrap();
        let new = text.find("\"new_text\"").unwrap();
        let tests = text.find("\"tests\"").unwrap();
        assert!(
            thought < tool && tool < path && path < old && old < new && new < tests,
            "{text}"
        );
        assert!(!text.contains("description"), "{text}");
        assert_eq!(
            parsed["oneOf"][0]["properties"]["arguments"]["properties"]["tests"],
            json!({"type": "array", "items": {"type": "string"}})
        );
    }

    #[test]
    fn the_texts_of_an_edit_are_bounded_and_other_arguments_are_not() {
        let parsed: Value = serde_json::from_str(&reply_schema(&[edit_tool()], true)).unwrap();
        let arguments = &parsed["oneOf"][0]["properties"]["arguments"]["properties"];
        for name in ["old_text", "new_text"] {
            assert_eq!(
                arguments[name]["maxLength"],
                json!(EDIT_TEXT_MAX_CHARS),
                "{arguments}"
            );
        }
        assert_eq!(arguments["path"], json!({"type": "string"}));
    }

    #[test]
    fn without_thought_there_is_no_thought_field() {
        let text = reply_schema(&[edit_tool()], false);
        assert!(!text.contains("thought"), "{text}");
    }

    fn done_tool() -> ToolSpec {
        ToolSpec {
            name: "done".into(),
            description: "Finish.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"summary": {"type": "string"}},
                "required": ["summary"]
            }),
        }
    }

    #[test]
    fn a_reply_that_can_only_be_done_has_no_thought_and_a_bounded_summary() {
        let alone: Value = serde_json::from_str(&reply_schema(&[done_tool()], true)).unwrap();
        let beside_edit: Value =
            serde_json::from_str(&reply_schema(&[edit_tool(), done_tool()], true)).unwrap();

        let actual = (
            alone["oneOf"][0]["required"].clone(),
            alone["oneOf"][0]["properties"]["arguments"]["properties"]["summary"].clone(),
            beside_edit["oneOf"][1]["required"].clone(),
        );

        let expected = (
            json!(["tool", "arguments"]),
            json!({"type": "string", "maxLength": SUMMARY_MAX_CHARS}),
            json!(["thought", "tool", "arguments"]),
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn objects_in_an_array_keep_their_fields_in_order_and_a_note_is_bounded() {
        let review = ToolSpec {
            name: "submit_review".into(),
            description: "Review.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "notes": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "note": {"type": "string"},
                                "line": {"type": "integer"},
                                "file": {"type": "string", "description": "x"}
                            },
                            "required": ["file", "line", "note"]
                        }
                    }
                },
                "required": ["notes"]
            }),
        };
        let text = reply_schema(&[review], false);
        let items = r#""items":{"type": "object", "properties": {"file": {"type":"string"}, "line": {"type":"integer"}, "note": {"type":"string","maxLength":300}}, "required": ["file", "line", "note"], "additionalProperties": false}"#;
        // Required first in `required`'s order: a note's place before the note.
        assert!(text.contains(items), "{text}");
    }
}
