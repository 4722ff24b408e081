//! The scripted model (`script:PATH`): JSON Lines, one assistant turn per line (docs/contracts.md
//! §6).
//!
//! A line is either the short form `{"tool": "search_code", "args": {"query": "gst"}}` or the
//! general form `{"content": "text", "tool_calls": [{"name": "...", "arguments": {...}}]}`. Blank
//! lines are skipped. Either form may carry `"alternatives": [turn, …]`: the replies
//! `sample_again` gives for that request, in order, so a script can drive the candidates helper.
//! When the script runs out the model has nothing more to say: the reply comes
//! back with `exhausted` set and the loop ends the run. Tests, demos and `plumb replay` use it.
//!
//! A compaction request (one that allows only [`SUMMARY_TOOL`]) takes the next turn only when that
//! turn calls the summary tool; otherwise it gets an empty reply and the script stays where it
//! was, so a script written without compaction in mind drives a run that compacts just the same
//! (the loop then writes its own summary).

use std::path::Path;
use std::sync::Mutex;

use async_trait::async_trait;
use plumb_protocol::{ModelReply, ToolCall};
use serde::Deserialize;

use crate::{ModelClient, ModelError, ModelRequest, SUMMARY_TOOL};

/// One scripted assistant turn.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptTurn {
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    /// Other replies to the same request, given by `sample_again` (attempt 1 is the first).
    pub alternatives: Vec<ScriptTurn>,
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
        #[serde(default)]
        alternatives: Vec<serde_json::Value>,
    },
    General {
        #[serde(default)]
        content: String,
        #[serde(default)]
        tool_calls: Vec<LineCall>,
        #[serde(default)]
        alternatives: Vec<serde_json::Value>,
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

/// The turn served last, for `sample_again`.
fn last_served(next: &Mutex<usize>) -> Option<usize> {
    next.lock().ok()?.checked_sub(1)
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
        let turn = turn_from(parsed, number, "").map_err(|err| {
            format!("line {number} has an alternative that is not a turn ({err})")
        })?;
        turns.push(turn);
    }
    Ok(turns)
}

/// One parsed line (or alternative) as a turn; call ids are `call_{number}{suffix}_{i}`.
fn turn_from(line: Line, number: usize, suffix: &str) -> Result<ScriptTurn, serde_json::Error> {
    let (content, calls, alternatives) = match line {
        Line::Short {
            tool,
            args,
            content,
            alternatives,
        } => (
            content,
            vec![LineCall {
                name: tool,
                arguments: args,
                id: None,
            }],
            alternatives,
        ),
        Line::General {
            content,
            tool_calls,
            alternatives,
        } => (content, tool_calls, alternatives),
    };
    let alternatives = alternatives
        .into_iter()
        .enumerate()
        .map(|(i, value)| {
            let line: Line = serde_json::from_value(value)?;
            turn_from(line, number, &format!("{suffix}_alt{}", i + 1))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ScriptTurn {
        content,
        tool_calls: calls
            .into_iter()
            .enumerate()
            .map(|(i, call)| ToolCall {
                id: call
                    .id
                    .unwrap_or_else(|| format!("call_{number}{suffix}_{}", i + 1)),
                name: call.name,
                arguments: call.arguments,
            })
            .collect(),
        alternatives,
    })
}

/// True for a compaction request: the summary tool is the only one it allows.
fn is_summary_request(request: &ModelRequest) -> bool {
    request
        .allowed_tools
        .as_deref()
        .is_some_and(|allowed| allowed == [SUMMARY_TOOL])
}

fn calls_summary_tool(turn: &ScriptTurn) -> bool {
    turn.tool_calls.iter().any(|call| call.name == SUMMARY_TOOL)
}

#[async_trait]
impl ModelClient for ScriptModel {
    fn name(&self) -> String {
        self.name.clone()
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ModelError> {
        let index = {
            let mut next = self.next.lock().map_err(|_| {
                ModelError::Service("the script's turn counter was poisoned".into())
            })?;
            let index = *next;
            if is_summary_request(request) && !self.turns.get(index).is_some_and(calls_summary_tool)
            {
                return Ok(ModelReply::default());
            }
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

    fn can_sample(&self) -> bool {
        self.turns.iter().any(|turn| !turn.alternatives.is_empty())
    }

    async fn sample_again(
        &self,
        _request: &ModelRequest,
        attempt: u32,
    ) -> Option<Result<ModelReply, ModelError>> {
        let turn = self.turns.get(last_served(&self.next)?)?;
        let alternative = turn.alternatives.get((attempt as usize).checked_sub(1)?)?;
        Some(Ok(ModelReply {
            content: alternative.content.clone(),
            tool_calls: alternative.tool_calls.clone(),
            ..ModelReply::default()
        }))
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
                alternatives: vec![],
            },
            ScriptTurn {
                content: "reading".into(),
                tool_calls: vec![ToolCall {
                    id: "call_3_1".into(),
                    name: "read_file".into(),
                    arguments: json!({"path": "a.py"}),
                }],
                alternatives: vec![],
            },
            ScriptTurn {
                content: "thinking only".into(),
                tool_calls: vec![],
                alternatives: vec![],
            },
        ];
        assert_eq!(actual, expected);
    }

    #[tokio::test]
    async fn alternatives_are_the_replies_sampled_again() {
        let text = r#"{"tool": "read_file", "args": {"path": "a.py"}, "alternatives": [{"tool": "search_code", "args": {"query": "x"}}]}
{"tool": "done", "args": {"summary": "s"}}"#;
        let model = ScriptModel::from_turns("s".into(), parse_script(text).unwrap());
        let request = ModelRequest::default();
        assert!(
            model.sample_again(&request, 1).await.is_none(),
            "nothing served yet"
        );
        let first = model.complete(&request).await.unwrap();
        assert_eq!(first.tool_calls[0].name, "read_file");
        let again = model.sample_again(&request, 1).await.unwrap().unwrap();
        assert_eq!(
            (
                again.tool_calls[0].name.as_str(),
                again.tool_calls[0].id.as_str()
            ),
            ("search_code", "call_1_alt1_1")
        );
        assert!(model.sample_again(&request, 2).await.is_none());
        let second = model.complete(&request).await.unwrap();
        assert_eq!(
            second.tool_calls[0].name, "done",
            "alternatives take no turn"
        );
        assert!(model.sample_again(&request, 1).await.is_none());
    }

    #[tokio::test]
    async fn a_summary_request_takes_only_a_summary_turn() {
        let text = r#"{"tool": "read_file", "args": {"path": "a.py"}}
{"tool": "summarise_rounds", "args": {"summary": "read a.py"}}
{"tool": "done", "args": {"summary": "s"}}"#;
        let model = ScriptModel::from_turns("s".into(), parse_script(text).unwrap());
        let summary = ModelRequest {
            allowed_tools: Some(vec![SUMMARY_TOOL.to_string()]),
            ..ModelRequest::default()
        };
        let empty = model.complete(&summary).await.unwrap();
        assert!(empty.tool_calls.is_empty() && !empty.exhausted, "{empty:?}");
        let step = model.complete(&ModelRequest::default()).await.unwrap();
        assert_eq!(step.tool_calls[0].name, "read_file", "no turn was taken");
        let summarised = model.complete(&summary).await.unwrap();
        assert_eq!(summarised.tool_calls[0].name, SUMMARY_TOOL);
        let last = model.complete(&ModelRequest::default()).await.unwrap();
        assert_eq!(last.tool_calls[0].name, "done");
    }

    #[test]
    fn a_bad_alternative_names_its_line() {
        let err = parse_script("{\"tool\": \"done\", \"alternatives\": [3]}").unwrap_err();
        assert!(err.starts_with("line 1 has an alternative"), "{err}");
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
