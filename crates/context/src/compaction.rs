//! Compaction (docs/prompt.md): when the history of a request passes its budget, the older rounds
//! are replaced by a summary the model writes, and when the rounds kept after that still do not
//! fit, their whole results shrink to one line early, oldest first.
//!
//! The history is everything after the first message (`history.rs` shows it). Its budget is what
//! the head of a request (rules, tools, first message) leaves of the prompt's share of the
//! model's context window, or a number of tokens, whichever is smaller ([`HistoryLimits`]). The rounds kept are those of the last `keep_full` results: the ticket, the notes
//! and the latest evidence stay; what came before them is what a summary replaces. A summary is
//! worth a model request only when that older part is a real share of the budget
//! ([`to_summarise`]); on a run whose history is mostly its five whole results (a large tree's
//! windowed reads), [`keep_within`] shrinks those instead. This module decides and writes the
//! texts; the loop sends the request and journals it.

use plumb_protocol::{Message, ModelReply, SUMMARY_TOOL, ToolSpec};
use serde::Serialize;
use serde_json::{Value, json};

use crate::history::{self, Shown};
use crate::prompt::Turn;
use crate::size::message_tokens;
use crate::templates::{TemplateError, render};

/// The smallest history budget: below it a run would compact nearly every round.
pub const MIN_BUDGET: u64 = 1_000;

/// A summary is asked for only when the rounds it would replace take at least 1/this of the
/// budget: replacing less costs a model request to save a few hundred tokens.
const WORTH_A_SUMMARY: u64 = 4;

/// The longest summary kept, in characters: a small model that rambles is cut, not trusted.
const SUMMARY_MAX_CHARS: usize = 3_000;

/// What bounds a run's history, in estimated tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HistoryLimits {
    /// The most a whole request may take: the prompt's share of the model's window.
    pub prompt: Option<u64>,
    /// The most the history may take, whatever the window.
    pub history: Option<u64>,
}

impl HistoryLimits {
    /// `prompt_share` of `window` (a share past 1 is 1; 0 or less, or an unknown window: no
    /// bound) and `history_tokens` (0: no bound).
    pub fn new(window: Option<u32>, prompt_share: f64, history_tokens: u64) -> Self {
        Self {
            prompt: window
                .filter(|_| prompt_share > 0.0)
                .map(|window| (f64::from(window) * prompt_share.min(1.0)) as u64),
            history: (history_tokens > 0).then_some(history_tokens),
        }
    }

    /// The history's budget in a request whose head (rules, tools, first message, next step)
    /// takes `head` tokens: what the head leaves of the prompt's bound and the history's bound,
    /// the smaller; never below [`MIN_BUDGET`]. `None` when nothing bounds it.
    pub fn budget(&self, head: u64) -> Option<u64> {
        let left = self.prompt.map(|prompt| prompt.saturating_sub(head));
        let budget = match (left, self.history) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        Some(budget.max(MIN_BUDGET))
    }
}

/// Estimated tokens of the history as a request shows it with `keep_full` whole results.
pub fn history_tokens(turns: &[Turn], keep_full: usize) -> u64 {
    crate::prompt::build_messages(&[], turns, keep_full)
        .iter()
        .map(message_tokens)
        .sum()
}

/// The index of the first turn of the kept rounds: the reply whose call the oldest of the last
/// `keep_full` results answers (every turn before it is older). 0 when nothing is older.
pub fn kept_from(turns: &[Turn], keep_full: usize) -> usize {
    let results = turns
        .iter()
        .filter(|turn| matches!(turn, Turn::ToolResult { .. }))
        .count();
    let Some(oldest_kept) = results.checked_sub(keep_full.max(1)) else {
        return 0;
    };
    let mut seen = 0;
    let mut last_reply = 0;
    for (index, turn) in turns.iter().enumerate() {
        match turn {
            Turn::Assistant { .. } => last_reply = index,
            Turn::ToolResult { .. } if seen == oldest_kept => return last_reply,
            Turn::ToolResult { .. } => seen += 1,
            Turn::Note(_) | Turn::Summary(_) => {}
        }
    }
    0
}

/// How many of the first turns a summary should replace, when the history shown with
/// `keep_full` whole results is over `budget` and the older rounds are worth a request; `None`
/// otherwise.
pub fn to_summarise(turns: &[Turn], keep_full: usize, budget: u64) -> Option<usize> {
    let shown = crate::prompt::build_messages(&[], turns, keep_full);
    let total: u64 = shown.iter().map(message_tokens).sum();
    if total <= budget {
        return None;
    }
    let older = kept_from(turns, keep_full);
    // Only a reply can start the kept rounds, and a summary alone is not worth summarising again.
    let worth = turns[..older]
        .iter()
        .any(|turn| matches!(turn, Turn::Assistant { .. }));
    // `build_messages` shows one message per turn, in order. An earlier summary is not counted:
    // it is in every request either way, and counting it would summarise it again each round.
    let older_tokens: u64 = shown
        .iter()
        .zip(turns)
        .take(older)
        .filter(|(_, turn)| !matches!(turn, Turn::Summary(_)))
        .map(|(message, _)| message_tokens(message))
        .sum();
    (worth && older_tokens * WORTH_A_SUMMARY >= budget).then_some(older)
}

/// The most whole results, at most `keep_full` and at least one, whose history fits `budget`.
pub fn keep_within(turns: &[Turn], keep_full: usize, budget: u64) -> usize {
    (1..=keep_full)
        .rev()
        .find(|&keep| history_tokens(turns, keep) <= budget)
        .unwrap_or(keep_full.min(1))
}

/// A request for a summary: its messages and its one tool.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRequest {
    pub messages: Vec<Message>,
    pub tool: ToolSpec,
}

/// The request that asks the model to summarise `older` (templates `compaction/*.md`): the
/// ticket, then each older turn as the history shows it once old (results one line, long texts
/// by size).
pub fn summary_request(ticket: &str, older: &[Turn]) -> Result<SummaryRequest, TemplateError> {
    #[derive(Serialize)]
    struct Values<'a> {
        ticket: &'a str,
        steps: Vec<String>,
    }
    let steps = history::shown(older, 0).iter().map(narrated).collect();
    let request = render(
        "compaction/request.md",
        Values {
            ticket: ticket.trim_end(),
            steps,
        },
    )?;
    Ok(SummaryRequest {
        messages: vec![
            Message::system(render("compaction/rules.md", ())?),
            Message::user(request),
        ],
        tool: ToolSpec {
            name: SUMMARY_TOOL.to_string(),
            description: render("compaction/summarise_rounds.md", ())?,
            parameters: json!({
                "type": "object",
                "properties": {
                    "summary": {
                        "type": "string",
                        "description": "What the rounds found, changed and tried, and what is next."
                    }
                },
                "required": ["summary"]
            }),
        },
    })
}

/// One shown turn as a line or two of plain text for the summary request.
fn narrated(shown: &Shown) -> String {
    match shown {
        Shown::Assistant {
            content,
            tool_calls,
        } => {
            let calls: Vec<String> = tool_calls
                .iter()
                .map(|call| format!("{} {}", call.name, call.arguments))
                .collect();
            let said = content.trim();
            match (said.is_empty(), calls.is_empty()) {
                (_, true) => format!("The agent said: {said}"),
                (true, false) => format!("The agent called {}", calls.join("; ")),
                (false, false) => {
                    format!("The agent said: {said}\nIt called {}", calls.join("; "))
                }
            }
        }
        Shown::Result { text, failed, .. } => {
            let label = if *failed { "Result (failed)" } else { "Result" };
            format!("{label}: {}", text.trim_end())
        }
        Shown::Note(text) => format!("plumb said: {}", text.trim_end()),
    }
}

/// The summary in a reply to [`summary_request`]: the `summary` of its summary-tool call, cut to
/// [`SUMMARY_MAX_CHARS`]. The error says why the reply cannot be used.
pub fn read_summary(reply: &ModelReply) -> Result<String, String> {
    let call = reply
        .tool_calls
        .iter()
        .find(|call| call.name == SUMMARY_TOOL)
        .ok_or_else(|| format!("the reply did not call {SUMMARY_TOOL}"))?;
    let summary = call
        .arguments
        .get("summary")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|summary| !summary.is_empty())
        .ok_or_else(|| format!("the {SUMMARY_TOOL} call had no summary"))?;
    Ok(match summary.char_indices().nth(SUMMARY_MAX_CHARS) {
        Some((at, _)) => format!("{}…", summary.get(..at).unwrap_or_default()),
        None => summary.to_string(),
    })
}

/// plumb's own summary of `older`, when the model's cannot be used: each call it made, in order,
/// by its name and short arguments, after the earlier summary it carries, if any (without the
/// line above it that says what it is: the new summary gets its own).
pub fn fallback_summary(older: &[Turn]) -> String {
    let mut lines = Vec::new();
    for turn in older {
        match turn {
            Turn::Summary(earlier) => {
                let body = earlier.split_once('\n').map_or("", |(_, body)| body);
                lines.push(body.trim_end().to_string());
            }
            Turn::Assistant { tool_calls, .. } => {
                for call in tool_calls {
                    lines.push(format!(
                        "- called {} {}",
                        call.name,
                        short_arguments(&call.arguments)
                    ));
                }
            }
            Turn::ToolResult { .. } | Turn::Note(_) => {}
        }
    }
    lines.join("\n")
}

/// The arguments on one line, each string cut to its first line and 40 characters.
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

/// The turn that stands for the first `rounds` rounds: the summary under a line saying what it is
/// (template `compaction/summary_note.md`). It is shown whole in every later request.
pub fn summary_turn(summary: &str, rounds: u32) -> Result<Turn, TemplateError> {
    #[derive(Serialize)]
    struct Values<'a> {
        summary: &'a str,
        rounds: u32,
    }
    let text = render(
        "compaction/summary_note.md",
        Values {
            summary: summary.trim_end(),
            rounds,
        },
    )?;
    Ok(Turn::Summary(text.trim_end().to_string()))
}

/// How many replies (rounds) `turns` holds, an earlier summary not counted.
pub fn rounds_in(turns: &[Turn]) -> u32 {
    let replies = turns
        .iter()
        .filter(|turn| matches!(turn, Turn::Assistant { .. }))
        .count();
    u32::try_from(replies).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests;
