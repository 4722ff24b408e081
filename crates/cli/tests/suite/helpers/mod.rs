//! The small-model helpers and reply handling, each measurable on and off: the file shown with a
//! failed `old_text` match, the code shown up front, tool calls written as text, and compaction
//! when a request no longer fits the context window.

use plumb_protocol::{Event, Message, Outcome, Role};
use plumb_test_support::Script;
use plumb_test_support::mock_http::{MockResponse, MockServer};
use serde_json::json;

use super::common::{Fixture, journal_events, plumb_command, report, requests_of, stderr};

/// The small-model helpers a guided run on BILL-412 needs: the phases, and the code (with its
/// test file) up front.
/// The guided phases with the helpers that work inside them, for a scripted model (whose profile
/// is capable, so each is switched on by name).
const GUIDED: [&str; 12] = [
    "-c",
    "helpers.phases=true",
    "-c",
    "helpers.code_up_front=true",
    "-c",
    "helpers.figures=true",
    "-c",
    "helpers.trace=true",
    "-c",
    "helpers.python_notes=true",
    "-c",
    "helpers.python_rewrites=true",
];

/// An `edit_file` call that appends `body` to the billing example's test file.
fn append_test(body: &str) -> serde_json::Value {
    json!({"path": "tests/test_invoice_totals.py", "old_text": "", "new_text": body})
}

/// A guided run of the article's fix, then `test_body` appended to the test file, then `done`,
/// which must succeed: the run's report and journal events.
fn fix_then_test(
    fixture: &Fixture,
    script_name: &str,
    test_body: &str,
) -> (plumb_protocol::FinalReport, Vec<Event>) {
    let ArticleCalls { fix, done, .. } = article_calls();
    let script = fixture.script_path(script_name);
    Script::new()
        .tool("edit_file", fix)
        .tool("edit_file", append_test(test_body))
        .tool("done", done)
        .write(&script);
    let output = fixture.fix_with_script(&script, &GUIDED);
    let report = report(&output);
    assert_eq!(report.outcome, Outcome::Success, "{}", stderr(&output));
    let events = journal_events(&report);
    (report, events)
}

fn tool_message(events: &[Event], round: u32) -> Option<String> {
    requests_of(events)
        .into_iter()
        .find(|request| request.round == round)?
        .messages
        .iter()
        .rev()
        .find(|m: &&Message| m.role == Role::Tool)
        .map(|m| m.content.clone())
}

fn first_user_message(events: &[Event]) -> String {
    requests_of(events)
        .into_iter()
        .find_map(|request| {
            request
                .messages
                .into_iter()
                .find(|m| m.role == Role::User)
                .map(|m| m.content)
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
    // The reviewer (the same model) reads the verified change last.
    let review = plumb_model::parse_script(
        r#"{"tool": "submit_review", "args": {"verdict": "approve", "summary": "Right.", "notes": []}}"#,
    )
    .unwrap();
    responses.push(body(&review[0], responses.len() + 1));
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
    assert_eq!(requests.len(), 10);
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
        2,
        "seven results: all but the last five are one line"
    );
    assert_eq!(shortened(8), 6, "after compaction only the last is in full");
    let warned = journal_events(&report)
        .iter()
        .any(|e| matches!(e, Event::Warning { message } if message.contains("context window")));
    assert!(warned);
}

const PASSING_TEST: &str = "from decimal import Decimal\n\nfrom billing.invoice_totals import compute_invoice_totals\nfrom billing.models import Invoice, LineItem\n\n\ndef test_gst_without_discount():\n    item = LineItem(sku=\"KB\", description=\"kb\", unit_price=Decimal(\"1000.00\"), quantity=1, category=\"standard\", discount=Decimal(\"0.00\"))\n    totals = compute_invoice_totals(Invoice(number=\"I-1\", customer_id=\"C\", items=[item], place_of_supply=\"KA\"))\n    assert totals.tax == Decimal(\"180.00\")\n";

/// The arguments of three calls of the article's script bundled with the example: the new test
/// file, the fix and the done.
struct ArticleCalls {
    create_failing: serde_json::Value,
    fix: serde_json::Value,
    done: serde_json::Value,
}

fn article_calls() -> ArticleCalls {
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(
        plumb_test_support::billing_example().join("bill-412.script.jsonl"),
    )
    .unwrap()
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    ArticleCalls {
        create_failing: lines[2]["tool_calls"][0]["arguments"].clone(),
        fix: lines[4]["tool_calls"][0]["arguments"].clone(),
        done: lines[7]["args"].clone(),
    }
}

fn guided_script(fixture: &Fixture) -> std::path::PathBuf {
    let ArticleCalls {
        create_failing,
        fix,
        done,
    } = article_calls();
    let script = fixture.script_path("guided.jsonl");
    Script::new()
        .tool("create_file", create_failing)
        .tool("done", done.clone())
        .tool("edit_file", fix)
        .tool(
            "create_file",
            json!({"path": "tests/test_plain.py", "content": PASSING_TEST}),
        )
        .tool("done", done)
        .write(&script);
    script
}

/// The article's order under the phases: the failing test first (run on the original code, it
/// shows the bug), then the fix (the test runs again and passes), then `done`. Before, the test
/// was refused until the code changed, and a run in this order ended rolled back.
#[test]
fn guided_phases_take_the_articles_order_a_failing_test_then_the_fix() {
    let fixture = Fixture::billing();
    let script = guided_script(&fixture);
    let output = fixture.fix_with_script(&script, &["-c", "helpers.phases=true"]);
    let report = report(&output);
    let events = journal_events(&report);
    assert_eq!(report.outcome, Outcome::Success, "{}", stderr(&output));
    let test_first = tool_message(&events, 2).unwrap();
    assert!(
        test_first.starts_with("Created tests/test_gst.py")
            && test_first.contains("plumb ran it on the original code: `")
            && test_first.contains("The test fails on the original code (see above), so it shows the bug. Now fix the code so that it passes"),
        "{test_first}"
    );
    let early_done = tool_message(&events, 3).unwrap();
    assert_eq!(
        early_done,
        "Error: done is not available yet: first make the tests that show the bug pass. Nothing was done."
    );
    let fixed = tool_message(&events, 4).unwrap();
    assert!(
        fixed.starts_with("Edited billing/invoice_totals.py.")
            && fixed.contains("plumb ran the tests that show the bug again: `")
            && fixed.ends_with("The test passes now, and it failed on the original code. Call done: plumb then runs the whole suite and its other checks."),
        "the model's test runs after the fix: {fixed}"
    );
    let more = tool_message(&events, 5).unwrap();
    assert!(
        more.starts_with("Error: create_file is not offered now: the tests that show the bug pass with your change"),
        "once a test shows the fix, only done is offered: {more}"
    );
    let checks = evidence_of(&report, plumb_protocol::CheckStep::Reproduce);
    assert!(checks.contains("tests/test_gst.py"), "{checks}");
}

fn evidence_of(report: &plumb_protocol::FinalReport, step: plumb_protocol::CheckStep) -> String {
    report
        .checks
        .iter()
        .find(|check| check.step == step)
        .map(|check| check.evidence.clone())
        .unwrap_or_default()
}

#[test]
fn without_guided_phases_the_same_first_call_runs() {
    let fixture = Fixture::billing();
    let script = guided_script(&fixture);
    let output = fixture.fix_with_script(&script, &["--max-rounds", "2"]);
    let events = journal_events(&report(&output));
    // Round 2's request carries round 1's result: the test file written, and not run.
    let test_written = tool_message(&events, 2).unwrap();
    assert!(
        test_written.starts_with("Created tests/test_gst.py")
            && !test_written.contains("plumb ran"),
        "no refusal and no automatic run with the helper off: {test_written}"
    );
}

#[test]
fn an_edit_copied_without_its_indentation_lands_at_the_files_indentation() {
    let fixture = Fixture::billing();
    let script = fixture.script_path("flat.jsonl");
    Script::new()
        .tool(
            "edit_file",
            json!({
                "path": "billing/invoice_totals.py",
                "old_text": "tax = compute_gst(gross, rate)\nnet = apply_discount(gross, item.discount)\n",
                "new_text": "net = apply_discount(gross, item.discount)\ntax = compute_gst(net, rate)\n",
            }),
        )
        .write(&script);
    let output = fixture.fix_with_script(&script, &["--max-rounds", "1"]);
    let events = journal_events(&report(&output));
    let result = events
        .iter()
        .find_map(|e| match e {
            Event::ToolFinished { name, output, .. } if name == "edit_file" => Some(output.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        result.starts_with("old_text matched once when its indentation was set aside;"),
        "{result}"
    );
    assert!(
        result.contains("|     net = apply_discount(gross, item.discount)\n")
            && result.contains("|     tax = compute_gst(net, rate)\n"),
        "both lines at the function body's depth: {result}"
    );
}

#[test]
fn create_file_rewrites_a_file_of_this_run_but_not_one_of_the_project() {
    let fixture = Fixture::billing();
    let script = fixture.script_path("create.jsonl");
    let body = "def test_one():\n    assert 1 == 1\n";
    Script::new()
        .tool(
            "create_file",
            json!({"path": "tests/test_invoice_totals.py", "content": body}),
        )
        .tool("create_file", json!({"path": "tests/test_new.py", "content": body}))
        .tool(
            "create_file",
            json!({"path": "tests/test_new.py", "content": format!("{body}\n\ndef test_two():\n    assert 2 == 2\n")}),
        )
        .tool(
            "create_file",
            json!({"path": "tests/test_new.py", "content": format!("{body}\n\ndef test_two():\n    assert 2 == 2\n")}),
        )
        .write(&script);
    let output = fixture.fix_with_script(&script, &["--max-rounds", "4"]);
    let events = journal_events(&report(&output));
    let results: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolFinished { output, .. } => Some(output.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        vec![
            "Error: there is already a file called tests/test_invoice_totals.py; add to its end with edit_file and an empty old_text, change it with edit_file, or create the new file as tests/test_invoice_totals_2.py.".to_string(),
            "Created tests/test_new.py (2 lines).".to_string(),
            "Replaced (a file this run created) tests/test_new.py (6 lines).".to_string(),
            "Error: tests/test_new.py already has exactly this content, so nothing changed. Write something different, or take another step.".to_string(),
        ]
    );
    assert!(
        std::fs::read_to_string(fixture.repo_path().join("tests/test_invoice_totals.py"))
            .unwrap()
            .contains("def test_gst_on_full_price_without_discount"),
        "the project's file is untouched"
    );
}

#[test]
fn a_test_appended_with_an_empty_old_text_uses_the_files_helpers() {
    let fixture = Fixture::billing();
    let (report, events) = fix_then_test(
        &fixture,
        "append.jsonl",
        "def test_gst_on_full_price_without_discount():\n    totals = compute_invoice_totals(invoice(item(\"1000.00\", discount=\"100.00\")))\n    assert totals.tax == Decimal(\"162.00\")\n",
    );
    let fixed = tool_message(&events, 2).unwrap();
    assert!(
        fixed.contains("plumb ran the existing tests: `python3 -m pytest -q -p no:cacheprovider tests/test_invoice_totals.py`"),
        "the tests of the file shown up front: {fixed}"
    );
    let appended = tool_message(&events, 3).unwrap();
    assert!(
        appended.starts_with("tests/test_invoice_totals.py already has a test called `test_gst_on_full_price_without_discount` (a second definition would replace it), so the new one was renamed `test_gst_on_full_price_without_discount_2`. Appended to tests/test_invoice_totals.py."),
        "a copied test name is renamed, not refused: {appended}"
    );
    assert!(
        appended.contains("| def test_gst_on_full_price_without_discount_2():"),
        "{appended}"
    );
    assert!(
        appended.ends_with("so it shows the bug and the fix. Call done."),
        "{appended}"
    );
    assert!(
        report
            .patch
            .contains("+def test_gst_on_full_price_without_discount_2():"),
        "{}",
        report.patch
    );
}

mod candidates;
mod undo_and_figures;
