//! What the journal keeps of each event, and the way back to the requests the model was sent.
//!
//! Two rules keep a journal about as large as what happened in the run, not as large as every
//! request added up (one 10 MB `create_file` used to make an 84 MB journal in five rounds):
//!
//! 1. A model request is kept as the number of leading messages it shares with the request before
//!    it, plus the messages after those. The prefix is compared message by message, never assumed:
//!    the prompt builder shortens older tool results and compaction drops whole rounds, so a request
//!    is not always the last one plus a few. A new assistant message that is exactly an earlier
//!    round's reply is kept as a pointer to that round's `model_reply` line.
//! 2. Every other text is capped at [`ENTRY_CAP_BYTES`]: a tool's arguments and output, a message,
//!    a note, a check's evidence, the patch in `run_finished` (`patch.diff` beside the journal has it
//!    whole, and `patch_sha256` stays exact). The head and the tail are kept with a line saying how
//!    many bytes were left out. The model's replies (`model_reply`) are never cut: `plumb replay`
//!    rebuilds its script from them and must reach the same patch byte for byte.
//!
//! [`journal_requests`] undoes rule 1: it rebuilds every request's messages, and says how many bytes
//! rule 2 left out of them (0: exactly what was sent).

use plumb_protocol::{Event, JournalLine, LoggedMessage, Message, ModelReply, ToolCall};
use serde_json::Value;

/// The most bytes of one text (a message, a tool output, an argument) a journal line keeps.
pub const ENTRY_CAP_BYTES: usize = 64 * 1024;

/// The journal writer's memory: the last request in full and every reply so far, so each request
/// can be written as what is new in it.
#[derive(Default)]
pub(crate) struct EntryWriter {
    /// The last request's messages, each with 0 bytes left out (the writer sees them whole).
    previous: Vec<(Message, u64)>,
    replies: Vec<(u32, Message)>,
}

impl EntryWriter {
    /// The event as the journal keeps it.
    pub(crate) fn entry(&mut self, event: Event) -> Event {
        match event {
            Event::ModelRequest {
                round,
                shared,
                messages,
                size,
            } => self.request(round, shared, messages, size),
            Event::ModelReply {
                round,
                reply,
                duration_ms,
            } => {
                self.replies.push((round, reply_message(&reply)));
                Event::ModelReply {
                    round,
                    reply,
                    duration_ms,
                }
            }
            Event::CandidateTried {
                round,
                attempt,
                mut reply,
                duration_ms,
                mut verdict,
                used,
            } => {
                cap_text(&mut reply.content);
                for call in &mut reply.tool_calls {
                    cap_call(call);
                }
                cap_text(&mut verdict);
                Event::CandidateTried {
                    round,
                    attempt,
                    reply,
                    duration_ms,
                    verdict,
                    used,
                }
            }
            Event::ToolStarted {
                round,
                call_id,
                name,
                mut arguments,
            } => {
                cap_value(&mut arguments);
                Event::ToolStarted {
                    round,
                    call_id,
                    name,
                    arguments,
                }
            }
            Event::ToolFinished {
                round,
                call_id,
                name,
                ok,
                mut summary,
                mut output,
                duration_ms,
            } => {
                cap_text(&mut summary);
                cap_text(&mut output);
                Event::ToolFinished {
                    round,
                    call_id,
                    name,
                    ok,
                    summary,
                    output,
                    duration_ms,
                }
            }
            Event::Warning { mut message } => {
                cap_text(&mut message);
                Event::Warning { message }
            }
            // plumb's own words, a few short lines.
            Event::Helpers { helpers } => Event::Helpers { helpers },
            Event::Setup {
                argv,
                network,
                exit_code,
                duration_ms,
                mut output,
            } => {
                cap_text(&mut output);
                Event::Setup {
                    argv,
                    network,
                    exit_code,
                    duration_ms,
                    output,
                }
            }
            Event::Check { mut check } => {
                cap_text(&mut check.evidence);
                Event::Check { check }
            }
            Event::Note { round, mut text } => {
                cap_text(&mut text);
                Event::Note { round, text }
            }
            Event::RunFinished {
                outcome,
                mut report,
            } => {
                cap_text(&mut report.patch);
                cap_text(&mut report.reason);
                for check in &mut report.checks {
                    cap_text(&mut check.evidence);
                }
                for flag in &mut report.flags {
                    cap_text(flag);
                }
                Event::RunFinished { outcome, report }
            }
            // The run's own metadata is what a replay needs (the ticket, the settings), as is a
            // compaction's reply (its summary is cut to a few thousand characters already), and
            // the rest holds no text that grows with the repository or the model.
            event @ (Event::RunStarted { .. }
            | Event::Compacted { .. }
            | Event::BaselineTests { .. }
            | Event::Checkpoint { .. }
            | Event::Reviewed { .. }
            | Event::RolledBack { .. }) => event,
        }
    }

    fn request(
        &mut self,
        round: u32,
        shared: usize,
        logged: Vec<LoggedMessage>,
        size: Option<plumb_protocol::PromptSize>,
    ) -> Event {
        let full: Vec<(Message, u64)> = match expand(&self.previous, shared, &logged, &self.replies)
        {
            Ok(full) => full,
            // Not a request this writer can read back (it never is for the run's own events):
            // kept as it came.
            Err(_) => {
                return Event::ModelRequest {
                    round,
                    shared,
                    messages: logged,
                    size,
                };
            }
        };
        let shared = self
            .previous
            .iter()
            .zip(&full)
            .take_while(|((a, _), (b, _))| a == b)
            .count();
        let messages = full
            .iter()
            .skip(shared)
            .map(|(message, _)| self.logged(message))
            .collect();
        self.previous = full;
        Event::ModelRequest {
            round,
            shared,
            messages,
            size,
        }
    }

    /// A new message as the journal keeps it: a pointer to the reply it is, or capped.
    fn logged(&self, message: &Message) -> LoggedMessage {
        if let Some((round, _)) = self.replies.iter().rev().find(|(_, m)| m == message) {
            return LoggedMessage::ReplyOf {
                reply_of_round: *round,
            };
        }
        let mut message = message.clone();
        let mut left_out = cap_text(&mut message.content);
        for call in &mut message.tool_calls {
            left_out += cap_call(call);
        }
        LoggedMessage::Sent { message, left_out }
    }
}

/// The assistant message a reply becomes in the requests after it.
fn reply_message(reply: &ModelReply) -> Message {
    Message::assistant(reply.content.clone(), reply.tool_calls.clone())
}

/// One model request rebuilt from a journal.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalRequest {
    /// The journal line's `seq`.
    pub seq: u64,
    pub round: u32,
    /// Every message of the request, in order.
    pub messages: Vec<Message>,
    /// How many bytes of these messages the journal left out (texts over [`ENTRY_CAP_BYTES`]);
    /// 0 means `messages` is exactly what the model was sent.
    pub left_out: u64,
}

/// Every model request of a journal with all its messages, in the order they were sent. Reads
/// journals of both versions (a version 1 line holds every message). The error names the line
/// that does not fit the lines before it.
pub fn journal_requests(lines: &[JournalLine]) -> Result<Vec<JournalRequest>, String> {
    let mut previous: Vec<(Message, u64)> = Vec::new();
    let mut replies: Vec<(u32, Message)> = Vec::new();
    let mut requests = Vec::new();
    for line in lines {
        match &line.event {
            Event::ModelReply { round, reply, .. } => {
                replies.push((*round, reply_message(reply)));
            }
            Event::ModelRequest {
                round,
                shared,
                messages,
                ..
            } => {
                let full = expand(&previous, *shared, messages, &replies)
                    .map_err(|why| format!("journal line {}: {why}", line.seq))?;
                requests.push(JournalRequest {
                    seq: line.seq,
                    round: *round,
                    messages: full.iter().map(|(m, _)| m.clone()).collect(),
                    left_out: full.iter().map(|(_, cut)| cut).sum(),
                });
                previous = full;
            }
            Event::RunStarted { .. }
            | Event::Warning { .. }
            | Event::Helpers { .. }
            | Event::Setup { .. }
            | Event::BaselineTests { .. }
            | Event::CandidateTried { .. }
            | Event::ToolStarted { .. }
            | Event::ToolFinished { .. }
            | Event::Checkpoint { .. }
            | Event::Check { .. }
            | Event::Note { .. }
            | Event::Compacted { .. }
            | Event::Reviewed { .. }
            | Event::RolledBack { .. }
            | Event::RunFinished { .. } => {}
        }
    }
    Ok(requests)
}

/// The first `shared` messages of `previous`, then `logged` resolved: each message with the bytes
/// the journal left out of it.
fn expand(
    previous: &[(Message, u64)],
    shared: usize,
    logged: &[LoggedMessage],
    replies: &[(u32, Message)],
) -> Result<Vec<(Message, u64)>, String> {
    let Some(prefix) = previous.get(..shared) else {
        return Err(format!(
            "the request shares {shared} messages with the one before it, which had {}",
            previous.len()
        ));
    };
    let mut messages = prefix.to_vec();
    for item in logged {
        match item {
            LoggedMessage::Sent { message, left_out } => {
                messages.push((message.clone(), *left_out))
            }
            LoggedMessage::ReplyOf { reply_of_round } => {
                let reply = replies
                    .iter()
                    .rev()
                    .find(|(round, _)| round == reply_of_round)
                    .ok_or_else(|| {
                        format!("the request names the reply of round {reply_of_round}, which no line before it holds")
                    })?;
                messages.push((reply.1.clone(), 0));
            }
        }
    }
    Ok(messages)
}

/// Caps a tool call's texts; returns the bytes left out.
fn cap_call(call: &mut ToolCall) -> u64 {
    cap_text(&mut call.id) + cap_text(&mut call.name) + cap_value(&mut call.arguments)
}

/// Caps every string in `value`, and the whole of it when its strings are short but many;
/// returns the bytes left out.
fn cap_value(value: &mut Value) -> u64 {
    let mut left_out = cap_strings(value);
    let text = value.to_string();
    if text.len() > ENTRY_CAP_BYTES {
        let mut text = text;
        left_out += cap_text(&mut text);
        *value = Value::String(text);
    }
    left_out
}

fn cap_strings(value: &mut Value) -> u64 {
    match value {
        Value::String(text) => cap_text(text),
        Value::Array(items) => items.iter_mut().map(cap_strings).sum(),
        Value::Object(map) => map.values_mut().map(cap_strings).sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

/// Keeps the first and last halves of [`ENTRY_CAP_BYTES`] of `text` (cut at character boundaries)
/// with a line between them saying how many bytes were left out; returns that number.
pub(crate) fn cap_text(text: &mut String) -> u64 {
    if text.len() <= ENTRY_CAP_BYTES {
        return 0;
    }
    let half = ENTRY_CAP_BYTES / 2;
    let mut head = half;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - half;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    let left_out = (tail - head) as u64;
    let capped = format!(
        "{}\n[… {left_out} bytes left out of the journal …]\n{}",
        text.get(..head).unwrap_or_default(),
        text.get(tail..).unwrap_or_default()
    );
    *text = capped;
    left_out
}

#[cfg(test)]
mod tests {
    use plumb_protocol::{JOURNAL_VERSION, ModelReply};
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn line(seq: u64, event: Event) -> JournalLine {
        JournalLine {
            v: JOURNAL_VERSION,
            ts: 0,
            run: "r".into(),
            seq,
            event,
        }
    }

    fn request(round: u32, messages: &[Message]) -> Event {
        Event::ModelRequest {
            round,
            shared: 0,
            messages: messages.iter().cloned().map(LoggedMessage::sent).collect(),
            size: None,
        }
    }

    fn reply(round: u32, content: &str, calls: Vec<ToolCall>) -> Event {
        Event::ModelReply {
            round,
            reply: ModelReply {
                content: content.into(),
                tool_calls: calls,
                ..ModelReply::default()
            },
            duration_ms: 1,
        }
    }

    fn call(id: &str, content: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "create_file".into(),
            arguments: json!({"path": "big.txt", "content": content}),
        }
    }

    /// Three rounds whose history changes as the prompt builder changes it: a result shortened
    /// after the fact, then the older rounds dropped by compaction; the first reply is far over
    /// the cap.
    fn sent() -> (Vec<Event>, Vec<Vec<Message>>) {
        let big = "x".repeat(3 * ENTRY_CAP_BYTES);
        let head = vec![Message::system("rules"), Message::user("ticket")];
        let first = head.clone();
        let mut second = head.clone();
        second.push(Message::assistant("writing", vec![call("c1", &big)]));
        second.push(Message::tool("c1", "created big.txt"));
        let mut third = head.clone();
        third.push(Message::assistant("writing", vec![call("c1", &big)]));
        third.push(Message::tool("c1", "[older result, shortened] created"));
        third.push(Message::assistant("again", vec![call("c2", "small")]));
        third.push(Message::tool("c2", "created"));
        let mut fourth = head;
        fourth.push(Message::user("[plumb] Earlier rounds were removed"));
        fourth.push(Message::assistant("again", vec![call("c2", "small")]));
        fourth.push(Message::tool("c2", "created"));
        let events = vec![
            request(1, &first),
            reply(1, "writing", vec![call("c1", &big)]),
            request(2, &second),
            reply(2, "again", vec![call("c2", "small")]),
            request(3, &third),
            request(3, &fourth),
        ];
        (events, vec![first, second, third, fourth])
    }

    #[test]
    fn requests_are_rebuilt_exactly_from_their_new_messages() {
        let (events, sent) = sent();
        let mut writer = EntryWriter::default();
        let lines: Vec<JournalLine> = events
            .into_iter()
            .enumerate()
            .map(|(seq, e)| line(seq as u64, writer.entry(e)))
            .collect();

        let actual: Vec<(Vec<Message>, u64)> = journal_requests(&lines)
            .unwrap()
            .into_iter()
            .map(|r| (r.messages, r.left_out))
            .collect();

        let expected: Vec<(Vec<Message>, u64)> = sent.into_iter().map(|m| (m, 0)).collect();
        assert_eq!(actual, expected);
    }

    #[test]
    fn the_journal_keeps_what_is_new_and_points_at_replies() {
        let (events, _) = sent();
        let mut writer = EntryWriter::default();
        let kept: Vec<(usize, Vec<String>)> = events
            .into_iter()
            .filter_map(|e| match writer.entry(e) {
                Event::ModelRequest {
                    shared, messages, ..
                } => Some((
                    shared,
                    messages
                        .iter()
                        .map(|m| match m {
                            LoggedMessage::ReplyOf { reply_of_round } => {
                                format!("reply {reply_of_round}")
                            }
                            LoggedMessage::Sent { message, .. } => message.content.clone(),
                        })
                        .collect(),
                )),
                _ => None,
            })
            .collect();

        let expected: Vec<(usize, Vec<String>)> = vec![
            (0, vec!["rules".into(), "ticket".into()]),
            (2, vec!["reply 1".into(), "created big.txt".into()]),
            (
                3,
                vec![
                    "[older result, shortened] created".into(),
                    "reply 2".into(),
                    "created".into(),
                ],
            ),
            (
                2,
                vec![
                    "[plumb] Earlier rounds were removed".into(),
                    "reply 2".into(),
                    "created".into(),
                ],
            ),
        ];
        assert_eq!(kept, expected);
    }

    #[test]
    fn a_text_over_the_cap_keeps_its_head_and_tail_and_says_how_much_is_missing() {
        // Multi-byte characters across both cut points.
        let mut text = format!(
            "{}{}",
            "é".repeat(ENTRY_CAP_BYTES),
            "z".repeat(ENTRY_CAP_BYTES)
        );
        let original = text.clone();

        let left_out = cap_text(&mut text);

        let marker = format!("\n[… {left_out} bytes left out of the journal …]\n");
        let (head, tail) = text.split_once(&marker).unwrap();
        let actual = (
            original.starts_with(head),
            original.ends_with(tail),
            head.len() + tail.len() + left_out as usize,
            head.len() <= ENTRY_CAP_BYTES / 2 && tail.len() <= ENTRY_CAP_BYTES / 2,
        );
        assert_eq!(actual, (true, true, original.len(), true));
    }

    #[test]
    fn a_message_over_the_cap_is_rebuilt_with_what_was_left_out_counted() {
        let long = "y".repeat(ENTRY_CAP_BYTES + 10);
        let head = vec![Message::system("rules"), Message::tool("c1", long)];
        let mut next = head.clone();
        next.push(Message::user("more"));
        let mut writer = EntryWriter::default();
        let lines: Vec<JournalLine> = [request(1, &head), request(2, &next)]
            .into_iter()
            .enumerate()
            .map(|(seq, e)| line(seq as u64, writer.entry(e)))
            .collect();

        let actual: Vec<(usize, u64)> = journal_requests(&lines)
            .unwrap()
            .iter()
            .map(|r| (r.messages.len(), r.left_out))
            .collect();

        let cut = (ENTRY_CAP_BYTES + 10 - 2 * (ENTRY_CAP_BYTES / 2)) as u64;
        assert_eq!(actual, vec![(2, cut), (3, cut)]);
    }

    #[test]
    fn a_version_1_line_reads_as_a_request_in_full() {
        let text = r#"{"v":1,"ts":0,"run":"r","seq":4,"event":{"type":"model_request","round":1,"messages":[{"role":"system","content":"rules"},{"role":"user","content":"ticket"}]}}"#;
        let old: JournalLine = serde_json::from_str(text).unwrap();

        let actual = journal_requests(&[old]).unwrap();

        let expected = vec![JournalRequest {
            seq: 4,
            round: 1,
            messages: vec![Message::system("rules"), Message::user("ticket")],
            left_out: 0,
        }];
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_request_sharing_more_than_there_was_names_its_line() {
        let broken = line(
            7,
            Event::ModelRequest {
                round: 1,
                shared: 3,
                messages: Vec::new(),
                size: None,
            },
        );

        let actual = journal_requests(&[broken]);

        assert_eq!(
            actual,
            Err(
                "journal line 7: the request shares 3 messages with the one before it, which had 0"
                    .to_string()
            )
        );
    }
}
