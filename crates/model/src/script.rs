//! The scripted model (`script:PATH`): JSON Lines, one assistant turn per line (DESIGN.md §6).
//!
//! A line is either the short form `{"tool": "search_code", "args": {"query": "gst"}}` or the
//! general form `{"content": "text", "tool_calls": [{"name": "...", "arguments": {...}}]}`. Blank
//! lines are skipped. When the script runs out the model has nothing more to say: the reply comes
//! back with `exhausted` set and the loop ends the run. Tests, demos and `plumb replay` use it.

use std::path::Path;
use std::sync::Mutex;

use async_trait::async_trait;
use plumb_protocol::{ModelReply, ToolCall};
use serde::Deserialize;

use crate::{ModelClient, ModelError, ModelRequest};

/// One scripted assistant turn.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptTurn {
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
}

#[derive(Deserialize)]
#[serde(untagged, deny_unknown_fields)]
enum Line {
    Short {
        tool: String,
        #[serde(default)]
        args: serde_json::Value,
        #[serde(default)]
        content: String,
    },
    General {
        #[serde(default)]
        content: String,
        #[serde(default)]
        tool_calls: Vec<LineCall>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LineCall {
    name: String,
    #[serde(default)]
    arguments: serde_json::Value,
    #[serde(default)]
    id: Option<String>,
}

/// Plays a script turn by turn, whatever the request says.
#[derive(Debug)]
pub struct ScriptModel {
    name: String,
    turns: Vec<ScriptTurn>,
    next: Mutex<usize>,
}

impl ScriptModel {
    /// Reads a script file; a line that is not a turn is an error naming the file and line.
    pub fn load(path: &Path) -> Result<Self, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|err| ModelError::Script {
            path: path.display().to_string(),
            message: format!("{err}; check the path after script:"),
        })?;
        let turns = parse_script(&text).map_err(|message| ModelError::Script {
            path: path.display().to_string(),
            message,
        })?;
        Ok(Self::from_turns(
            format!("script:{}", path.display()),
            turns,
        ))
    }

    pub fn from_turns(name: String, turns: Vec<ScriptTurn>) -> Self {
        Self {
            name,
            turns,
            next: Mutex::new(0),
        }
    }

    pub fn turns(&self) -> &[ScriptTurn] {
        &self.turns
    }
}

/// Parses script text into turns; the error names the line and what is wrong with it.
pub fn parse_script(text: &str) -> Result<Vec<ScriptTurn>, String> {
    let mut turns = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let parsed: Line = serde_json::from_str(line).map_err(|err| {
            format!(
                "line {number} is not a turn ({err}); write {{\"tool\": NAME, \"args\": {{...}}}} or {{\"content\": TEXT, \"tool_calls\": [...]}}"
            )
        })?;
        let turn = match parsed {
            Line::Short {
                tool,
                args,
                content,
            } => ScriptTurn {
                content,
                tool_calls: vec![ToolCall {
                    id: format!("call_{number}_1"),
                    name: tool,
                    arguments: args,
                }],
            },
            Line::General {
                content,
                tool_calls,
            } => ScriptTurn {
                content,
                tool_calls: tool_calls
                    .into_iter()
                    .enumerate()
                    .map(|(i, call)| ToolCall {
                        id: call
                            .id
                            .unwrap_or_else(|| format!("call_{number}_{}", i + 1)),
                        name: call.name,
                        arguments: call.arguments,
                    })
                    .collect(),
            },
        };
        turns.push(turn);
    }
    Ok(turns)
}

#[async_trait]
impl ModelClient for ScriptModel {
    fn name(&self) -> String {
        self.name.clone()
    }

    async fn complete(&self, _request: &ModelRequest) -> Result<ModelReply, ModelError> {
        let index = {
            let mut next = self.next.lock().map_err(|_| {
                ModelError::Service("the script's turn counter was poisoned".into())
            })?;
            let index = *next;
            *next += 1;
            index
        };
        Ok(match self.turns.get(index) {
            Some(turn) => ModelReply {
                content: turn.content.clone(),
                tool_calls: turn.tool_calls.clone(),
                ..ModelReply::default()
            },
            None => ModelReply {
                exhausted: true,
                ..ModelReply::default()
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn both_forms_parse() {
        let text = r#"{"tool": "search_code", "args": {"query": "gst"}}

{"content": "reading", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]}
{"content": "thinking only"}
"#;
        let actual = parse_script(text).unwrap();
        let expected = vec![
            ScriptTurn {
                content: String::new(),
                tool_calls: vec![ToolCall {
                    id: "call_1_1".into(),
                    name: "search_code".into(),
                    arguments: json!({"query": "gst"}),
                }],
            },
            ScriptTurn {
                content: "reading".into(),
                tool_calls: vec![ToolCall {
                    id: "call_3_1".into(),
                    name: "read_file".into(),
                    arguments: json!({"path": "a.py"}),
                }],
            },
            ScriptTurn {
                content: "thinking only".into(),
                tool_calls: vec![],
            },
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_bad_line_names_its_number() {
        let err = parse_script("{\"tool\": \"done\"}\nnot json\n").unwrap_err();
        assert!(err.starts_with("line 2 is not a turn"), "{err}");
    }

    #[tokio::test]
    async fn runs_out_with_exhausted() {
        let model = ScriptModel::from_turns(
            "s".into(),
            parse_script("{\"tool\": \"done\", \"args\": {\"summary\": \"x\"}}").unwrap(),
        );
        let request = ModelRequest {
            messages: vec![],
            tools: vec![],
            ..ModelRequest::default()
        };
        let first = model.complete(&request).await.unwrap();
        let second = model.complete(&request).await.unwrap();
        assert_eq!(
            (first.exhausted, first.tool_calls.len(), second.exhausted),
            (false, 1, true)
        );
    }
}
