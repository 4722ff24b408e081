//! Reading the reviewer's reply: its `submit_review` call, leniently (a line given as text, a
//! note without a file), and never trusting it beyond its words: a reply with no usable verdict
//! is a review that needs a person's attention.

use plumb_protocol::{ModelReply, ReviewNote, ReviewVerdict};
use serde_json::Value;

use super::prompt::REVIEW_TOOL;

/// The most notes kept from one review, and the longest note: a small model can repeat itself.
const MAX_NOTES: usize = 12;
const MAX_NOTE_CHARS: usize = 400;

/// What the reviewer said, when it said something usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Said {
    pub verdict: ReviewVerdict,
    pub summary: String,
    pub notes: Vec<ReviewNote>,
}

/// The reviewer's verdict, or why there is none.
pub(super) fn read_reply(reply: &ModelReply) -> Result<Said, String> {
    let Some(call) = reply.tool_calls.iter().find(|c| c.name == REVIEW_TOOL) else {
        return Err(if reply.exhausted {
            "the reviewer had nothing to say".to_string()
        } else {
            format!("the reviewer did not call {REVIEW_TOOL}")
        });
    };
    let arguments = match &call.arguments {
        Value::String(raw) => plumb_model::textcall::repair_arguments(raw)
            .map_err(|why| format!("the reviewer's answer is not JSON: {why}"))?,
        other => other.clone(),
    };
    let verdict = match arguments.get("verdict").and_then(Value::as_str) {
        Some("approve") => ReviewVerdict::Approve,
        Some("request_changes") => ReviewVerdict::RequestChanges,
        Some(other) => {
            return Err(format!(
                "the reviewer's verdict {other:?} is not one of approve, request_changes"
            ));
        }
        None => return Err("the reviewer gave no verdict".to_string()),
    };
    let summary = arguments
        .get("summary")
        .and_then(Value::as_str)
        .map(|s| cut(s.trim()))
        .unwrap_or_default();
    let notes = arguments
        .get("notes")
        .and_then(Value::as_array)
        .map(|notes| notes.iter().filter_map(note).take(MAX_NOTES).collect())
        .unwrap_or_default();
    Ok(Said {
        verdict,
        summary,
        notes,
    })
}

/// One note; a note with no text is dropped, a line that is not a positive number left out.
fn note(value: &Value) -> Option<ReviewNote> {
    let text = match value {
        Value::String(text) => text.as_str(),
        other => other.get("note").and_then(Value::as_str)?,
    };
    if text.trim().is_empty() {
        return None;
    }
    let line = match value.get("line") {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    };
    Some(ReviewNote {
        file: value
            .get("file")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .trim()
            .to_string(),
        line: line.filter(|&n| n > 0).and_then(|n| u32::try_from(n).ok()),
        note: cut(text.trim()),
    })
}

fn cut(text: &str) -> String {
    if text.chars().count() <= MAX_NOTE_CHARS {
        return text.to_string();
    }
    let kept: String = text.chars().take(MAX_NOTE_CHARS - 1).collect();
    format!("{kept}…")
}

#[cfg(test)]
mod tests {
    use plumb_protocol::ToolCall;
    use serde_json::json;

    use super::*;

    fn reply(arguments: Value) -> ModelReply {
        ModelReply {
            tool_calls: vec![ToolCall {
                id: "r".into(),
                name: REVIEW_TOOL.into(),
                arguments,
            }],
            ..ModelReply::default()
        }
    }

    #[test]
    fn a_verdict_with_notes_is_read_with_their_places() {
        let said = read_reply(&reply(json!({
            "verdict": "request_changes",
            "summary": " Misses zero. ",
            "notes": [
                {"file": "a.py", "line": 3, "note": "handle zero"},
                {"file": "a.py", "line": "7", "note": "and negatives"},
                {"file": "b.py", "line": 0, "note": "whole file"},
                {"file": "c.py", "note": "  "},
                "the whole change is too broad"
            ]
        })))
        .unwrap();
        assert_eq!(said.verdict, ReviewVerdict::RequestChanges);
        assert_eq!(said.summary, "Misses zero.");
        let sentences: Vec<String> = said.notes.iter().map(ReviewNote::sentence).collect();
        assert_eq!(
            sentences,
            [
                "a.py:3: handle zero",
                "a.py:7: and negatives",
                "b.py: whole file",
                "the whole change is too broad"
            ]
        );
    }

    #[test]
    fn arguments_sent_as_text_are_read() {
        let said = read_reply(&reply(Value::String(
            r#"{"verdict": "approve", "summary": "Fine.", "notes": []}"#.into(),
        )))
        .unwrap();
        assert_eq!(said.verdict, ReviewVerdict::Approve);
    }

    #[test]
    fn no_call_or_an_unknown_verdict_is_no_verdict() {
        let silent = ModelReply {
            content: "Looks good to me!".into(),
            ..ModelReply::default()
        };
        assert_eq!(
            read_reply(&silent),
            Err("the reviewer did not call submit_review".into())
        );
        let odd = read_reply(&reply(
            json!({"verdict": "lgtm", "summary": "", "notes": []}),
        ));
        assert_eq!(
            odd,
            Err("the reviewer's verdict \"lgtm\" is not one of approve, request_changes".into())
        );
    }
}
