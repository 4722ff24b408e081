//! The small-model helpers and reply handling, each measurable on and off: the file shown with a
//! failed `old_text` match, the code shown up front, tool calls written as text, and compaction
//! when a request no longer fits the context window.

use plumb_protocol::{Event, Message, Outcome, Role};
use plumb_test_support::Script;
use plumb_test_support::mock_http::{MockResponse, MockServer};
use serde_json::json;

use super::common::{Fixture, journal_events, plumb_command, report, stderr};

fn tool_message(events: &[Event], round: u32) -> Option<String> {
    events.iter().find_map(|e| match e {
        Event::ModelRequest { round: r, messages } if *r == round => messages
            .iter()
            .rev()
            .find(|m: &&Message| m.role == Role::Tool)
            .map(|m| m.content.clone()),
        _ => None,
    })
}

fn first_user_message(events: &[Event]) -> String {
    events
        .iter()
        .find_map(|e| match e {
            Event::ModelRequest { messages, .. } => messages
                .iter()
                .find(|m| m.role == Role::User)
                .map(|m| m.content.clone()),
            _ => None,
        })
        .unwrap()
}

#[test]
fn a_failed_match_shows_the_file_only_with_the_helper_on() {
    let fixture = Fixture::billing();
    let script = fixture.script_path("miss.jsonl");
    Script::new()
        .tool(
            "edit_file",
            json!({"path": "billing/invoice_totals.py", "old_text": "tax = compute_gst(gross,rate)", "new_text": "x"}),
        )
        .write(&script);
    let on = fixture.fix_with_script(&script, &["-c", "helpers.show_file_on_failed_edit=true"]);
    let on_events = journal_events(&report(&on));
    let note = tool_message(&on_events, 2).unwrap();
    assert!(note.starts_with("Error: old_text found 0 times."), "{note}");
    assert!(
        note.contains("The file as it is now:\nbilling/invoice_totals.py: lines "),
        "{note}"
    );
    assert!(
        note.contains("| def "),
        "numbered lines of the file: {note}"
    );

    let off = fixture.fix_with_script(&script, &[]);
    let off_note = tool_message(&journal_events(&report(&off)), 2).unwrap();
    assert!(off_note.starts_with("Error: old_text found 0 times."));
    assert!(
        !off_note.contains("The file as it is now"),
        "hosted models get the short note: {off_note}"
    );
}

#[test]
fn code_up_front_puts_the_likely_file_in_the_first_message_only_when_on() {
    let fixture = Fixture::billing();
    let script = fixture.script_path("one.jsonl");
    Script::new().tool("list_files", json!({})).write(&script);
    let on = fixture.fix_with_script(&script, &["-c", "helpers.code_up_front=true"]);
    let first = first_user_message(&journal_events(&report(&on)));
    let section = first
        .split("# Code the ticket is probably about\n\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no code section: {first}"));
    assert!(
        section.starts_with("billing/invoice_totals.py: lines 1–"),
        "{section}"
    );
    assert!(
        first.find("# Ticket").unwrap() < first.find("# Code the ticket").unwrap(),
        "the ticket stays on top"
    );

    let off = fixture.fix_with_script(&script, &[]);
    let first_off = first_user_message(&journal_events(&report(&off)));
    assert!(!first_off.contains("# Code the ticket is probably about"));
}

#[test]
fn a_tool_call_written_as_text_is_run_and_a_broken_one_is_a_note() {
    let fixture = Fixture::billing();
    let script = fixture.script_path("text.jsonl");
    Script::new()
        .say("I will search first.\n```json\n{\"tool\": \"search_code\", \"arguments\": {\"query\": \"compute_gst\"}}\n```")
        .say("{'tool': 'read_file', 'arguments': {'path': 'billing/tax.py'}}")
        .say("{\"tool\": \"bash\", \"arguments\": {\"cmd\": \"ls\"}}")
        .write(&script);
    let output = fixture.fix_with_script(&script, &[]);
    let report = report(&output);
    let events = journal_events(&report);
    let ran: Vec<(String, bool)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolFinished { name, ok, .. } => Some((name.clone(), *ok)),
            _ => None,
        })
        .collect();
    assert_eq!(
        ran,
        vec![
            ("search_code".to_string(), true),
            ("read_file".to_string(), true)
        ],
        "{}",
        stderr(&output)
    );
    let note = events
        .iter()
        .find_map(|e| match e {
            Event::Note { round: 3, text } => Some(text.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        note.contains("no tool called `bash`") && note.contains("search_code"),
        "{note}"
    );
}

#[test]
fn a_context_overflow_compacts_the_history_and_the_run_goes_on() {
    let fixture = Fixture::billing();
    let path = plumb_test_support::billing_example().join("bill-412.script.jsonl");
    let turns = plumb_model::parse_script(&std::fs::read_to_string(path).unwrap()).unwrap();
    let body = |turn: &plumb_model::ScriptTurn, round: usize| {
        let call = &turn.tool_calls[0];
        let chunk = json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": turn.content, "tool_calls": [{"index": 0, "id": format!("call_{round}"), "type": "function", "function": {"name": call.name, "arguments": call.arguments.to_string()}}]}, "finish_reason": "tool_calls"}]});
        MockResponse::sse(format!("data: {chunk}\n\ndata: [DONE]\n\n"))
    };
    let mut responses: Vec<MockResponse> = turns
        .iter()
        .enumerate()
        .map(|(i, t)| body(t, i + 1))
        .collect();
    responses.insert(
        7,
        MockResponse::json(
            400,
            &json!({"error": {"message": "This model's maximum context length is 128000 tokens.", "type": "invalid_request_error", "code": "context_length_exceeded"}}),
        ),
    );
    let server = MockServer::start(responses);
    let repo = fixture.repo_path().display().to_string();
    let ticket = fixture.ticket().display().to_string();
    let model = format!("openai-compat:{}/v1#small", server.url());
    let output = plumb_command(fixture.home.path())
        .args([
            "fix",
            "--repo",
            &repo,
            "--ticket",
            &ticket,
            "--model",
            &model,
            "--json",
            "--sandbox",
            "none",
        ])
        .output()
        .unwrap();
    let report = report(&output);
    assert_eq!(report.outcome, Outcome::Success, "{}", stderr(&output));
    let requests = server.requests();
    assert_eq!(requests.len(), 9);
    let shortened = |n: usize| {
        requests[n].json()["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| {
                m["role"] == "tool"
                    && m["content"]
                        .as_str()
                        .unwrap()
                        .starts_with("[older result, shortened]")
            })
            .count()
    };
    assert_eq!(
        shortened(7),
        0,
        "seven results: shrinking goes five at a time, from ten"
    );
    assert_eq!(shortened(8), 6, "after compaction only the last is in full");
    let warned = journal_events(&report)
        .iter()
        .any(|e| matches!(e, Event::Warning { message } if message.contains("context window")));
    assert!(warned);
}
