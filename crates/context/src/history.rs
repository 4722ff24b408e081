//! What a request shows of the history (docs/contracts.md §4): the bounds that keep the prompt of
//! a long run about as large as the prompt of a short one. The ticket and the rules are in the
//! head and never shrink; here, counted back from the newest tool result:
//!
//! - **Results.** The last `keep_full` stay as the model saw them; each older one is one line.
//! - **Calls.** A call whose result has grown old shows its long texts (a `replace_function`'s
//!   code, an `edit_file`'s texts, a `create_file`'s content) as their size only, e.g. `[30 lines,
//!   not repeated]`. So does a recent write that succeeded and whose result shows the lines it
//!   changed: that view is the text as it is now, and a small model copies whatever it sees again.
//!   A refused write keeps its text while it is recent, so the model can see what was refused.
//! - **Notes.** A harness note (`[plumb] …`) older than the last `keep_full` results is its first
//!   sentence.
//! - **Views of a file.** A result's numbered lines of a file are shown only while no later result
//!   shows an overlapping part of that file and no later write changed it: an older view is stale
//!   (line numbers and code moved) and the later one has what is true now. It shrinks to one line
//!   saying so; the rest of that result (a test run after an edit) stays.
//! - **Repeated lines.** Among the recent results, a run of four or more lines that a newer one
//!   shows too (the same test failure printed by two test runs) is left out of the older, with a
//!   line saying so.
//!
//! Every decision depends only on the turns up to the newest result, never on the round, so a
//! message once shown in a form keeps that form until its result grows old: the prompt only
//! changes at the newest turns and at the one that just grew old.

use plumb_protocol::ToolCall;
use serde_json::Value;

use crate::prompt::Turn;

/// Tools that write the file named by their `path` argument.
const WRITES: [&str; 3] = ["edit_file", "replace_function", "create_file"];

/// Argument texts longer than this (or spanning lines) are shortened in a call shown short.
const LONG_TEXT_CHARS: usize = 80;

/// The longest an old assistant message's own text is shown, in characters.
const OLD_CONTENT_CHARS: usize = 200;

/// How each turn is shown in a request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shown {
    Assistant {
        content: String,
        tool_calls: Vec<ToolCall>,
    },
    Result {
        call_id: String,
        text: String,
        failed: bool,
    },
    Note(String),
}

/// A tool result with the call it answers.
struct Answered<'a> {
    /// The assistant turn and the position of the call in it.
    origin: Option<(usize, usize)>,
    call: Option<&'a ToolCall>,
    text: &'a str,
    failed: bool,
}

/// The turns as a request shows them, under the bounds of this module's header.
pub(crate) fn shown(turns: &[Turn], keep_full: usize) -> Vec<Shown> {
    let answered = answered(turns);
    let boundary = answered.len().saturating_sub(keep_full);
    let views: Vec<Option<View>> = answered.iter().map(view_of).collect();
    let mut out = Vec::with_capacity(turns.len());
    // How many results came before each turn.
    let mut results_before = 0usize;
    for (index, turn) in turns.iter().enumerate() {
        match turn {
            Turn::Assistant {
                content,
                tool_calls,
            } => {
                let mut any_old = false;
                let calls = tool_calls
                    .iter()
                    .enumerate()
                    .map(|(position, call)| {
                        let Some(at) = answered
                            .iter()
                            .position(|a| a.origin == Some((index, position)))
                        else {
                            return call.clone();
                        };
                        let old = at < boundary;
                        any_old |= old;
                        let shown_in_result = !answered[at].failed
                            && WRITES.contains(&call.name.as_str())
                            && views[at].is_some();
                        if old || shown_in_result {
                            short_call(call)
                        } else {
                            call.clone()
                        }
                    })
                    .collect();
                let content = if any_old {
                    first_part(content, OLD_CONTENT_CHARS)
                } else {
                    content.clone()
                };
                out.push(Shown::Assistant {
                    content,
                    tool_calls: calls,
                });
            }
            Turn::ToolResult {
                call_id,
                text,
                one_line,
                failed,
            } => {
                let at = results_before;
                results_before += 1;
                let text = if at < boundary {
                    format!("[older result, shortened] {one_line}")
                } else if let Some(later) = superseded(&answered, &views, at) {
                    collapse_view(text, views[at].as_ref(), later)
                } else {
                    text.clone()
                };
                out.push(Shown::Result {
                    call_id: call_id.clone(),
                    text,
                    failed: *failed,
                });
            }
            Turn::Summary(text) => out.push(Shown::Note(text.clone())),
            Turn::Note(text) => {
                let old = answered.len() - results_before >= keep_full.max(1);
                out.push(Shown::Note(if old {
                    first_sentence(text)
                } else {
                    text.clone()
                }));
            }
        }
    }
    drop_repeats(&mut out, boundary);
    out
}

/// Newest first, each recent result loses the runs of lines a newer recent result shows too.
fn drop_repeats(shown: &mut [Shown], boundary: usize) {
    let recent: Vec<usize> = shown
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, Shown::Result { .. }))
        .map(|(index, _)| index)
        .skip(boundary)
        .collect();
    let mut later_texts: Vec<String> = Vec::new();
    for &index in recent.iter().rev() {
        let Shown::Result { text, .. } = &shown[index] else {
            continue;
        };
        let later: std::collections::HashSet<&str> =
            later_texts.iter().flat_map(|t| t.lines()).collect();
        let trimmed = without_repeats(text, &later);
        later_texts.push(text.clone());
        if let Shown::Result { text, .. } = &mut shown[index] {
            *text = trimmed;
        }
    }
}

/// For each tool result, in order, whether a request shows it whole (not shrunk to a line and
/// not a view a later result replaced).
pub fn shown_whole(turns: &[Turn], keep_full: usize) -> Vec<bool> {
    let answered = answered(turns);
    let boundary = answered.len().saturating_sub(keep_full);
    let views: Vec<Option<View>> = answered.iter().map(view_of).collect();
    (0..answered.len())
        .map(|at| at >= boundary && superseded(&answered, &views, at).is_none())
        .collect()
}

/// Every tool result with the call it answers: by id, else the next call of the reply before it.
fn answered(turns: &[Turn]) -> Vec<Answered<'_>> {
    let mut out = Vec::new();
    // The calls of the last reply not answered yet: (assistant turn, position, call).
    let mut pending: Vec<(usize, usize, &ToolCall)> = Vec::new();
    for (index, turn) in turns.iter().enumerate() {
        match turn {
            Turn::Assistant { tool_calls, .. } => {
                pending = tool_calls
                    .iter()
                    .enumerate()
                    .map(|(position, call)| (index, position, call))
                    .collect();
            }
            Turn::ToolResult {
                call_id,
                text,
                failed,
                ..
            } => {
                let by_id = pending
                    .iter()
                    .position(|(_, _, c)| !call_id.is_empty() && &c.id == call_id);
                let found = match by_id {
                    Some(at) => Some(pending.remove(at)),
                    None if !pending.is_empty() => Some(pending.remove(0)),
                    None => None,
                };
                out.push(Answered {
                    origin: found.map(|(turn, position, _)| (turn, position)),
                    call: found.map(|(_, _, call)| call),
                    text,
                    failed: *failed,
                });
            }
            Turn::Note(_) | Turn::Summary(_) => {}
        }
    }
    out
}

/// The numbered lines of one file a result shows: which file, which lines, and where they are
/// in the result's text (line indices, the header above them and a "more below" line included).
#[derive(Debug, Clone, PartialEq)]
struct View {
    path: String,
    first: usize,
    last: usize,
    from_line: usize,
    to_line: usize,
}

fn path_of(call: &ToolCall) -> Option<&str> {
    call.arguments.get("path").and_then(Value::as_str)
}

/// The view a result shows: its first block of `N| text` lines, for a call that names a path.
fn view_of(answered: &Answered<'_>) -> Option<View> {
    let path = answered.call.and_then(path_of)?;
    let lines: Vec<&str> = answered.text.lines().collect();
    let numbered = |line: &str| numbered_line(line);
    let start = lines.iter().position(|l| numbered(l).is_some())?;
    let count = lines[start..]
        .iter()
        .take_while(|l| numbered(l).is_some())
        .count();
    let first = numbered(lines[start])?;
    let last = numbered(lines[start + count - 1])?;
    // read_file's header just above ("path: lines a–b of N") and its pointer just below go with
    // the lines; an edit's "Edited path." line stays.
    let header = format!("{path}: lines ");
    let from_line = if start > 0 && lines[start - 1].starts_with(&header) {
        start - 1
    } else {
        start
    };
    let end = start + count;
    let to_line = if lines.get(end).is_some_and(|l| l.starts_with("(more below")) {
        end + 1
    } else {
        end
    };
    Some(View {
        path: path.to_string(),
        first,
        last,
        from_line,
        to_line,
    })
}

/// The line number of a `  12| text` line.
fn numbered_line(line: &str) -> Option<usize> {
    let (number, _) = line.split_once('|')?;
    number.trim_start().parse().ok()
}

/// The result after `at` that makes its view stale: a later view overlapping it, or a later
/// write of the same file that went through.
fn superseded(answered: &[Answered<'_>], views: &[Option<View>], at: usize) -> Option<usize> {
    let view = views[at].as_ref()?;
    (at + 1..answered.len()).find(|&later| {
        let overlaps = views[later]
            .as_ref()
            .is_some_and(|v| v.path == view.path && v.first <= view.last && view.first <= v.last);
        let wrote = answered[later].call.is_some_and(|call| {
            !answered[later].failed
                && WRITES.contains(&call.name.as_str())
                && path_of(call) == Some(view.path.as_str())
        });
        overlaps || wrote
    })
}

/// `text` with its view replaced by one line naming the lines and why they are gone.
fn collapse_view(text: &str, view: Option<&View>, later: usize) -> String {
    let Some(view) = view else {
        return text.to_string();
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = lines[..view.from_line]
        .iter()
        .map(|l| l.to_string())
        .collect();
    let _ = later;
    out.push(format!(
        "[lines {}–{} of {} were shown here; a later step shows or changes them, so they are left out]",
        view.first, view.last, view.path,
    ));
    out.extend(lines[view.to_line..].iter().map(|l| l.to_string()));
    let mut joined = out.join("\n");
    if text.ends_with('\n') {
        joined.push('\n');
    }
    joined
}

/// The fewest lines in a row that [`without_repeats`] leaves out: shorter runs are too likely
/// to be lines that merely look alike (a blank, a rule of `=`).
const REPEAT_RUN_LINES: usize = 4;

/// `text` with every run of at least [`REPEAT_RUN_LINES`] non-blank lines that all appear in
/// `later` (the lines of the newer results shown whole) replaced by one line saying so: the same
/// test failure printed by two test runs is shown once, in the newer.
fn without_repeats(text: &str, later: &std::collections::HashSet<&str>) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let repeated = |line: &str| line.trim().is_empty() || later.contains(line);
    let mut out: Vec<String> = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let run = lines[at..].iter().take_while(|l| repeated(l)).count();
        let solid = lines[at..at + run]
            .iter()
            .filter(|l| !l.trim().is_empty())
            .count();
        if solid >= REPEAT_RUN_LINES {
            out.push(format!(
                "[{solid} lines left out: a later result shows the same lines]"
            ));
            at += run;
        } else {
            out.push(lines[at].to_string());
            at += 1;
        }
    }
    let mut joined = out.join("\n");
    if text.ends_with('\n') {
        joined.push('\n');
    }
    joined
}

/// The call with every long text argument replaced by its size.
fn short_call(call: &ToolCall) -> ToolCall {
    let arguments = match &call.arguments {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| (key.clone(), short_value(value)))
                .collect(),
        ),
        other => other.clone(),
    };
    ToolCall {
        arguments,
        ..call.clone()
    }
}

fn short_value(value: &Value) -> Value {
    match value {
        Value::String(text) if text.contains('\n') || text.chars().count() > LONG_TEXT_CHARS => {
            let lines = text.lines().count();
            Value::String(format!(
                "[{lines} line{}, not repeated]",
                if lines == 1 { "" } else { "s" }
            ))
        }
        other => other.clone(),
    }
}

/// The first line of `text`, at most `max` characters.
fn first_part(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", line.get(..at).unwrap_or_default()),
        None if line.len() < text.trim_end().len() => format!("{line} …"),
        None => line.to_string(),
    }
}

/// The first sentence of a note (to the first ". " or line end), with a mark that it was cut.
fn first_sentence(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let end = line.find(". ").map(|at| at + 1).unwrap_or(line.len());
    let sentence = first_part(line.get(..end).unwrap_or(line), OLD_CONTENT_CHARS);
    if sentence.len() < text.trim_end().len() {
        format!(
            "{} [older note, shortened]",
            sentence.trim_end_matches(" …")
        )
    } else {
        sentence
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn call(id: &str, name: &str, arguments: Value) -> Turn {
        Turn::Assistant {
            content: format!("thinking about {id}"),
            tool_calls: vec![ToolCall {
                id: id.into(),
                name: name.into(),
                arguments,
            }],
        }
    }

    fn result(id: &str, text: &str, failed: bool) -> Turn {
        Turn::ToolResult {
            call_id: id.into(),
            text: text.into(),
            one_line: format!("one line of {id}"),
            failed,
        }
    }

    fn texts(turns: &[Turn], keep: usize) -> Vec<String> {
        shown(turns, keep)
            .into_iter()
            .map(|s| match s {
                Shown::Assistant { tool_calls, .. } => {
                    format!("call {}", tool_calls[0].arguments)
                }
                Shown::Result { text, .. } => format!("result {text}"),
                Shown::Note(text) => format!("note {text}"),
            })
            .collect()
    }

    const CODE: &str = "def f():\n    return 1\n";

    #[test]
    fn old_calls_show_long_texts_by_size_and_recent_refused_writes_in_full() {
        let turns = vec![
            call("a", "create_file", json!({"path": "t.py", "content": CODE})),
            result("a", "Created t.py", false),
            call(
                "b",
                "replace_function",
                json!({"path": "m.py", "name": "f", "code": CODE}),
            ),
            result("b", "Error: it does not parse", true),
        ];
        assert_eq!(
            texts(&turns, 1),
            [
                r#"call {"content":"[2 lines, not repeated]","path":"t.py"}"#.to_string(),
                "result [older result, shortened] one line of a".into(),
                format!(
                    "call {}",
                    json!({"path": "m.py", "name": "f", "code": CODE})
                ),
                "result Error: it does not parse".into(),
            ]
        );
    }

    #[test]
    fn a_write_whose_result_shows_the_lines_is_not_repeated_in_the_call() {
        let turns = vec![
            call(
                "b",
                "replace_function",
                json!({"path": "m.py", "name": "f", "code": CODE}),
            ),
            result(
                "b",
                "Edited m.py. Lines around the change now read:\n1| def f():\n2|     return 1\n",
                false,
            ),
        ];
        assert_eq!(
            texts(&turns, 5)[0],
            r#"call {"code":"[2 lines, not repeated]","name":"f","path":"m.py"}"#
        );
    }

    #[test]
    fn a_view_a_later_result_replaces_shrinks_to_a_line_and_the_rest_stays() {
        let read = |id: &str, from: usize| {
            let lines: String = (from..from + 3)
                .map(|n| format!("{n:>2}| x{n}\n"))
                .collect();
            result(
                id,
                &format!(
                    "m.py: lines {from}–{} of 9\n{lines}(more below: read_file with start_line={})\n\ntail",
                    from + 2,
                    from + 3
                ),
                false,
            )
        };
        let turns = vec![
            call("a", "read_file", json!({"path": "m.py"})),
            read("a", 1),
            call("b", "read_file", json!({"path": "m.py", "start_line": 7})),
            read("b", 7),
            call("c", "read_file", json!({"path": "m.py", "start_line": 3})),
            read("c", 3),
        ];
        let shown = texts(&turns, 5);
        assert_eq!(
            shown[1],
            "result [lines 1–3 of m.py were shown here; a later step shows or changes them, so they are left out]\n\ntail"
        );
        assert!(shown[3].contains(" 7| x7"), "no overlap: {}", shown[3]);
        assert!(shown[5].contains(" 3| x3"));
        assert_eq!(shown_whole(&turns, 5), [false, true, true]);
    }

    #[test]
    fn a_write_makes_earlier_views_of_its_file_stale() {
        let turns = vec![
            call("a", "read_file", json!({"path": "m.py"})),
            result("a", "m.py: lines 1–1 of 1\n1| x\n", false),
            call(
                "b",
                "edit_file",
                json!({"path": "m.py", "old_text": "x", "new_text": "y"}),
            ),
            result("b", "Edited m.py.", false),
        ];
        assert!(texts(&turns, 5)[1].starts_with("result [lines 1–1 of m.py were shown here"));
    }

    #[test]
    fn old_notes_keep_their_first_sentence() {
        let turns = vec![
            Turn::Note("The check failed. Here is why, at length.".into()),
            call("a", "run_tests", json!({})),
            result("a", "1 passed", false),
            Turn::Note("Recent. Kept whole.".into()),
        ];
        let shown = texts(&turns, 1);
        assert_eq!(shown[0], "note The check failed. [older note, shortened]");
        assert_eq!(shown[3], "note Recent. Kept whole.");
    }

    #[test]
    fn lines_a_newer_result_repeats_are_left_out_of_the_older() {
        let failure = "FAILURES\n> assert f() == 2\nE assert 1 == 2\ntest_m.py:3: AssertionError\n";
        let turns = vec![
            call("a", "run_tests", json!({})),
            result("a", &format!("1 failed\n{failure}"), false),
            call("b", "run_tests", json!({"tests": ["test_m.py"]})),
            result("b", &format!("1 failed again\n{failure}"), false),
        ];
        let shown = texts(&turns, 5);
        assert_eq!(
            shown[1],
            "result 1 failed\n[4 lines left out: a later result shows the same lines]\n"
        );
        assert_eq!(shown[3], format!("result 1 failed again\n{failure}"));
    }
}
