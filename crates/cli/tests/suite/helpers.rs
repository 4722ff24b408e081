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

#[test]
fn a_breaking_fix_and_one_that_changes_no_figure_of_the_ticket_are_undone_and_their_lines_refused_after()
 {
    let fixture = Fixture::billing();
    let ArticleCalls { done, .. } = article_calls();
    let script = fixture.script_path("undone.jsonl");
    let source = "billing/invoice_totals.py";
    Script::new()
        .tool(
            "edit_file",
            json!({"path": source, "old_text": "tax = compute_gst(gross, rate)", "new_text": "tax = compute_gst(gross, rate) * 0"}),
        )
        .tool(
            "edit_file",
            json!({"path": source, "old_text": "if item.discount > item.gross():", "new_text": "if item.discount > item.gross() - item.discount:"}),
        )
        .tool(
            "edit_file",
            json!({"path": source, "old_text": "if item.discount > item.gross():", "new_text": "if item.discount >= item.gross():"}),
        )
        .tool(
            "edit_file",
            json!({"path": source, "old_text": "    tax = sum((line.tax for item in lines), ZERO)", "new_text": "    tax = ZERO"}),
        )
        .tool(
            "edit_file",
            json!({"path": source, "old_text": "tax = compute_gst(gross, rate)", "new_text": "tax = compute_gst(gross - item.discount, rate)"}),
        )
        .tool(
            "edit_file",
            append_test("def test_discount_reduces_taxable_value():\n    totals = compute_invoice_totals(invoice(item(\"1000.00\", discount=\"100.00\")))\n    assert totals.tax == Decimal(\"162.00\")\n"),
        )
        .tool("done", done)
        .write(&script);
    let output = fixture.fix_with_script(&script, &GUIDED);
    let report = report(&output);
    let events = journal_events(&report);
    assert_eq!(report.outcome, Outcome::Success, "{}", stderr(&output));

    let broke = tool_message(&events, 2).unwrap();
    assert!(
        broke.starts_with("Error: plumb undid this edit of billing/invoice_totals.py: the file is as it was before it (why is below).\n\nplumb ran the existing tests: ")
            && !broke.contains("* 0")
            && broke.ends_with("Tests that passed before fail with this change (see above), so plumb undid it: the code is as it was before this edit. Fix the code again, changing only the lines the ticket is about.\nplumb ran the closest test's example on the original code: line 52 of billing/invoice_totals.py (in line_totals), `tax = compute_gst(gross, rate)`, sets tax to 180.00: the ticket's 180, while no line comes to the ticket's 162. Change that line so it computes what the ticket says it should."),
        "a fix undone for breaking tests names the line the figure trace found: {broke}"
    );
    let undone = events.iter().any(|e| {
        matches!(e, Event::ToolFinished { round: 1, ok: false, name, .. } if name == "edit_file")
    });
    assert!(undone, "an undone edit is a failed action");

    let unconfirmed = tool_message(&events, 3).unwrap();
    assert!(
        unconfirmed.starts_with("Error: plumb undid this edit of billing/invoice_totals.py")
            && unconfirmed.contains("13 passed")
            && unconfirmed.contains("But plumb checked your change with the example of the closest test, and none of the values the tests there check comes out as a figure the ticket gives with it (and differently without it): it does not fix what the ticket describes.")
            && unconfirmed.ends_with("So plumb undid it: the code is as it was before this edit. Fix the code again:\nplumb ran the closest test's example on the original code: line 52 of billing/invoice_totals.py (in line_totals), `tax = compute_gst(gross, rate)`, sets tax to 180.00: the ticket's 180, while no line comes to the ticket's 162. Change that line so it computes what the ticket says it should."),
        "a fix that keeps the old tests but changes no figure of the ticket is undone too, and the figure trace names the line that makes the ticket's wrong figure: {unconfirmed}"
    );

    let again = tool_message(&events, 4).unwrap();
    assert_eq!(
        again,
        "Error: plumb already undid an edit of these lines (`if item.discount > item.gross():`), and the figure trace names another line. Nothing was changed.\nplumb ran the closest test's example on the original code: line 52 of billing/invoice_totals.py (in line_totals), `tax = compute_gst(gross, rate)`, sets tax to 180.00: the ticket's 180, while no line comes to the ticket's 162. Change that line so it computes what the ticket says it should.\nCopy that line as old_text: `tax = compute_gst(gross, rate)`.",
        "an edit going back to undone lines is refused while the trace names another line"
    );

    let missed = tool_message(&events, 5).unwrap();
    assert!(
        missed.starts_with("Error: old_text found 0 times.")
            && missed.ends_with("\nplumb ran the closest test's example on the original code: line 52 of billing/invoice_totals.py (in line_totals), `tax = compute_gst(gross, rate)`, sets tax to 180.00: the ticket's 180, while no line comes to the ticket's 162. Change that line so it computes what the ticket says it should.\nCopy that line as old_text: `tax = compute_gst(gross, rate)`."),
        "an edit of the traced file that matches nothing is told the line to copy: {missed}"
    );

    let kept = tool_message(&events, 6).unwrap();
    assert!(
        kept.contains("plumb checked your fix with the example of the closest test: with it `assert totals.tax == Decimal(\"162.00\")` passes")
            && kept.contains("The existing tests still pass. Now add a test that shows the bug: it must pass with your fix and fail on the original code.\n\nThe ticket says: \"Example: an item costs Rs 1,000 with a Rs 100 discount. 18 percent GST should be Rs 162 (18 percent of Rs 900), but the invoice shows Rs 180 (18 percent of Rs 1,000). Expected: GST is worked out on the price after the discount.\"\n\nThe existing test closest to the ticket, to start from: tests/test_invoice_totals.py, lines 75–76, up to its first assert:\ndef test_discount_reduces_taxable_value():\n    totals = compute_invoice_totals(invoice(item(\"1000.00\", discount=\"100.00\")))\n"),
        "the probe, the ticket's example and the closest test follow a confirmed fix: {kept}"
    );

    let test = tool_message(&events, 7).unwrap();
    assert!(
        test.starts_with("tests/test_invoice_totals.py already has a test called `test_discount_reduces_taxable_value`")
            && test.ends_with("Good: the test passes with your fix and fails on the original code, so it shows the bug and the fix. Call done."),
        "{test}"
    );
    assert!(
        !report.patch.contains("* 0")
            && !report.patch.contains("item.gross() - item.discount:")
            && report
                .patch
                .contains("+    tax = compute_gst(gross - item.discount, rate)"),
        "the undone edits are not in the patch: {}",
        report.patch
    );
}

#[test]
fn a_code_edit_that_breaks_the_suite_once_a_test_exists_is_undone() {
    let fixture = Fixture::billing();
    let ArticleCalls { done, .. } = article_calls();
    let script = fixture.script_path("broken_later.jsonl");
    let source = "billing/invoice_totals.py";
    Script::new()
        .tool(
            "edit_file",
            json!({"path": source, "old_text": "tax = compute_gst(gross, rate)", "new_text": "tax = compute_gst(gross - item.discount, rate)"}),
        )
        .tool(
            "edit_file",
            append_test("def test_gst_with_discount():\n    with pytest.raises(InvoiceError):\n        compute_invoice_totals(invoice(item('1000.00', discount='100.00')))\n"),
        )
        .tool(
            "edit_file",
            json!({"path": source, "old_text": "tax = compute_gst(gross - item.discount, rate)", "new_text": "tax = compute_gst(gross - item.discount, rate / 1.18)"}),
        )
        .tool("done", done)
        .write(&script);
    let output = fixture.fix_with_script(&script, &GUIDED);
    let report = report(&output);
    let events = journal_events(&report);
    let broke = tool_message(&events, 4).unwrap();
    assert!(
        broke.starts_with("Error: plumb undid this edit of billing/invoice_totals.py")
            && broke.contains(
                "This change broke tests that passed before (see above), so plumb undid it"
            ),
        "{broke}"
    );
    assert!(!report.patch.contains("1.18"), "{}", report.patch);
}

#[test]
fn a_fix_using_a_variable_above_its_assignment_is_undone_with_the_line_that_assigns_it() {
    let fixture = Fixture::billing();
    let ArticleCalls { done, .. } = article_calls();
    let script = fixture.script_path("unbound.jsonl");
    let source = "billing/invoice_totals.py";
    Script::new()
        .tool(
            "edit_file",
            json!({"path": source, "old_text": "tax = compute_gst(gross, rate)", "new_text": "tax = compute_gst(net, rate)"}),
        )
        .tool(
            "edit_file",
            json!({"path": source, "old_text": "tax = compute_gst(gross, rate)\n    net = apply_discount(gross, item.discount)", "new_text": "net = apply_discount(gross, item.discount)\n    tax = compute_gst(net, rate)"}),
        )
        .tool(
            "edit_file",
            append_test("def test_gst_after_discount():\n    totals = compute_invoice_totals(invoice(item(\"1000.00\", discount=\"100.00\")))\n    assert totals.tax == Decimal(\"162.00\")\n"),
        )
        .tool("run_tests", json!({}))
        .tool("done", done)
        .write(&script);
    let output = fixture.fix_with_script(&script, &GUIDED);
    let report = report(&output);
    let events = journal_events(&report);
    assert_eq!(report.outcome, Outcome::Success, "{}", stderr(&output));
    let undone = tool_message(&events, 2).unwrap();
    assert!(
        undone.starts_with("Error: plumb undid this edit of billing/invoice_totals.py")
            && undone.ends_with("changing only the lines the ticket is about.\nplumb ran the closest test's example on the original code: line 52 of billing/invoice_totals.py (in line_totals), `tax = compute_gst(gross, rate)`, sets tax to 180.00: the ticket's 180, while no line comes to the ticket's 162. Change that line so it computes what the ticket says it should.\nUnboundLocalError: your line uses `net` above the line that assigns it (billing/invoice_totals.py line 53: `net = apply_discount(gross, item.discount)`). To use `net`, make one edit whose old_text is from your line down to that line, and whose new_text assigns `net` first, then uses it."),
        "{undone}"
    );
    let refused = tool_message(&events, 5).unwrap();
    assert!(
        refused.starts_with("Error: run_tests is not offered now: the tests that show the bug pass with your change and fail on the original code, so call done"),
        "once the test shows the fix only done is offered: {refused}"
    );
    assert!(
        report.patch.contains(
            "-    tax = compute_gst(gross, rate)\n     net = apply_discount(gross, item.discount)\n+    tax = compute_gst(net, rate)"
        ),
        "{}",
        report.patch
    );
}

#[test]
fn a_test_asserting_the_bugs_figure_is_tried_with_the_tickets_figures() {
    let fixture = Fixture::billing();
    let (report, events) = fix_then_test(
        &fixture,
        "figures.jsonl",
        "def test_gst_after_discount(item):\n    totals = compute_invoice_totals(invoice(item(\"1000.00\", discount=\"100.00\")))\n    assert totals.taxable_value == Decimal(\"900.00\")\n    assert totals.tax == Decimal(\"180.00\")\n",
    );
    let fixed = tool_message(&events, 2).unwrap();
    assert!(
        fixed.contains("plumb checked your fix with the example of the closest test: with it `assert totals.tax == Decimal(\"162.00\")` passes, a figure the ticket gives, and on the original code it fails."),
        "the fix probe: {fixed}"
    );
    let searched = tool_message(&events, 3).unwrap();
    assert!(
        searched.starts_with("Took `item` out of the test's parameters: pytest fills a test's parameters from fixtures"),
        "{searched}"
    );
    assert!(
        searched.contains("plumb tried your test with each figure the ticket gives in place of the one an assert expects: with `assert totals.tax == Decimal(\"162.00\")` instead of `assert totals.tax == Decimal(\"180.00\")` it passes with your fix and fails on the original code"),
        "{searched}"
    );
    assert!(
        searched.ends_with("Good: the test passes with your fix and fails on the original code, so it shows the bug and the fix. Call done."),
        "{searched}"
    );
    assert!(
        searched.contains("(the failure, of an assert plumb then replaced: AssertionError: assert Decimal('162.00') == Decimal('180.00'))")
            && !searched.contains("short test summary info"),
        "the replaced assert's failure in one line, not its traceback: {searched}"
    );
    assert!(
        searched.contains("Appended to tests/test_invoice_totals.py. The version of the test plumb kept is shown below.\n")
            && !searched.contains("Lines around the change now read:")
            && !searched.contains("| def test_gst_after_discount"),
        "the replaced version's lines are left out, the kept one is shown: {searched}"
    );
    assert!(
        report.patch.contains("+def test_gst_after_discount():\n+    totals = compute_invoice_totals(invoice(item(\"1000.00\", discount=\"100.00\")))\n+    assert totals.tax == Decimal(\"162.00\")\n"),
        "the kept version, one assert of the ticket's figure: {}",
        report.patch
    );
}

#[test]
fn a_test_asserting_the_tickets_figure_on_the_wrong_value_is_tried_on_the_values_other_tests_check()
{
    let fixture = Fixture::billing();
    let (_, events) = fix_then_test(
        &fixture,
        "figures-side.jsonl",
        "def test_gst_after_discount():\n    totals = compute_invoice_totals(invoice(item(\"1000.00\", discount=\"100.00\")))\n    assert totals.taxable_value == Decimal(\"162.00\")\n",
    );
    let searched = tool_message(&events, 3).unwrap();
    assert!(
        searched.contains("with `assert totals.tax == Decimal(\"162.00\")` instead of `assert totals.taxable_value == Decimal(\"162.00\")` it passes with your fix and fails on the original code"),
        "{searched}"
    );
}

#[test]
fn a_test_built_on_an_input_the_ticket_does_not_give_is_tried_with_the_tickets_figure_as_input() {
    let fixture = Fixture::billing();
    let (report, events) = fix_then_test(
        &fixture,
        "figures-input.jsonl",
        "def test_gst_after_discount():\n    totals = compute_invoice_totals(invoice(item(\"1000.00\", discount=\"150.00\")))\n    assert totals.tax == Decimal(\"162.00\")\n    assert totals.total == Decimal(\"1012.00\")\n",
    );
    let searched = tool_message(&events, 3).unwrap();
    assert!(
        searched.contains("but with the ticket's figure as an input, `totals = compute_invoice_totals(invoice(item(\"1000.00\", discount=\"100.00\")))` instead of `totals = compute_invoice_totals(invoice(item(\"1000.00\", discount=\"150.00\")))`, and `assert totals.tax == Decimal(\"162.00\")`, it passes with your fix and fails on the original code."),
        "{searched}"
    );
    assert!(
        report.patch.contains("+def test_gst_after_discount():\n+    totals = compute_invoice_totals(invoice(item(\"1000.00\", discount=\"100.00\")))\n+    assert totals.tax == Decimal(\"162.00\")\n"),
        "the kept version: the ticket's discount, the model's own assert of the ticket's figure: {}",
        report.patch
    );
}

#[test]
fn a_wrong_fix_that_moves_a_figure_the_original_code_had_is_neither_confirmed_nor_kept_by_a_test() {
    let fixture = Fixture::billing();
    let ArticleCalls { done, .. } = article_calls();
    let script = fixture.script_path("moved.jsonl");
    Script::new()
        .tool(
            "edit_file",
            json!({"path": "billing/invoice_totals.py", "old_text": "tax = compute_gst(gross, rate)", "new_text": "tax = compute_gst(gross * (1 - item.discount / 100), rate)"}),
        )
        .tool(
            "edit_file",
            append_test("def test_total_after_discount():\n    totals = compute_invoice_totals(invoice(item(\"1000.00\", discount=\"100.00\")))\n    assert totals.total == Decimal(\"800.00\")\n"),
        )
        .tool("done", done)
        .write(&script);
    let output = fixture.fix_with_script(&script, &GUIDED);
    let report = report(&output);
    let events = journal_events(&report);
    assert_ne!(report.outcome, Outcome::Success, "{}", report.patch);
    let fixed = tool_message(&events, 2).unwrap();
    assert!(
        fixed.starts_with("Edited billing/invoice_totals.py.")
            && !fixed.contains("plumb checked your fix")
            && !fixed.contains("plumb undid"),
        "GST 0 makes the total the Rs 900 the original code gave as taxable value: no confirmation, no undo: {fixed}"
    );
    let searched = tool_message(&events, 3).unwrap();
    assert!(
        searched.contains("plumb also tried your test with each figure the ticket gives")
            && !searched.contains("now has this version of your test"),
        "`assert totals.total == Decimal(\"900.00\")` is not kept: {searched}"
    );
}

#[test]
fn a_test_with_one_right_assert_and_one_wrong_keeps_the_right_one_alone() {
    let fixture = Fixture::billing();
    let (report, events) = fix_then_test(
        &fixture,
        "figures-alone.jsonl",
        "def test_gst_after_discount():\n    totals = compute_invoice_totals(invoice(item(\"1000.00\", discount=\"100.00\")))\n    assert totals.tax == Decimal(\"162.00\")\n    assert totals.total == Decimal(\"1100.00\")\n",
    );
    let searched = tool_message(&events, 3).unwrap();
    assert!(
        searched.contains("plumb tried your test's asserts one at a time: `assert totals.tax == Decimal(\"162.00\")` alone passes with your fix and fails on the original code"),
        "{searched}"
    );
    assert!(
        report
            .patch
            .contains("+    assert totals.tax == Decimal(\"162.00\")\n")
            && !report.patch.contains("1100.00"),
        "{}",
        report.patch
    );
}

/// Which replies the candidates helper tried in `round`: (verdict, used).
fn candidates_tried(events: &[Event], round: u32) -> Vec<(String, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::CandidateTried {
                round: r,
                verdict,
                used,
                ..
            } if *r == round => Some((verdict.clone(), *used)),
            _ => None,
        })
        .collect()
}

fn candidates_script(fixture: &Fixture) -> std::path::PathBuf {
    let ArticleCalls { fix, done, .. } = article_calls();
    let good_test = "def test_gst_after_discount():\n    totals = compute_invoice_totals(invoice(item(\"1000.00\", discount=\"100.00\")))\n    assert totals.tax == Decimal(\"162.00\")\n";
    // The fix the small model came closest with: the right idea, above the line that sets `net`.
    let early_fix = json!({
        "path": "billing/invoice_totals.py",
        "old_text": "    tax = compute_gst(gross, rate)\n",
        "new_text": "    tax = compute_gst(net, rate)\n",
    });
    let script = fixture.script_path("candidates.jsonl");
    Script::new()
        .tool_or(
            "edit_file",
            early_fix,
            &[
                ("read_file", json!({"path": "billing/tax.py"})),
                ("edit_file", fix),
            ],
        )
        .tool_or(
            "edit_file",
            append_test(good_test),
            // Never sampled: a reply that writes a test goes on as it is.
            &[(
                "edit_file",
                append_test("def test_gst_plain():\n    assert compute_invoice_totals(invoice(item(\"1000.00\"))).tax == Decimal(\"180.00\")\n"),
            )],
        )
        .tool("done", done)
        .write(&script);
    script
}

#[test]
fn candidates_try_other_fixes_until_one_does_what_the_phase_needs_and_leave_tests_alone() {
    let fixture = Fixture::billing();
    let script = candidates_script(&fixture);
    let output = fixture.fix_with_script(
        &script,
        &[
            "-c",
            "helpers.phases=true",
            "-c",
            "helpers.code_up_front=true",
            "-c",
            "helpers.candidates=4",
            "-c",
            "helpers.figures=true",
        ],
    );
    let report = report(&output);
    let events = journal_events(&report);
    assert_eq!(
        (report.outcome, report.rounds),
        (Outcome::Success, 3),
        "{}",
        stderr(&output)
    );
    assert_eq!(
        candidates_tried(&events, 1),
        vec![
            ("the existing tests after it: tests that passed before fail".to_string(), false),
            ("it writes nothing, so there is nothing to try".to_string(), false),
            ("the existing tests after it: no test that passed before fails; the fix probe finds a figure of the ticket".to_string(), true),
        ]
    );
    assert!(
        candidates_tried(&events, 2).is_empty(),
        "a test is left to the figure search, not sampled"
    );
    assert!(
        candidates_tried(&events, 3).is_empty(),
        "done writes nothing"
    );
    // The round went on with the chosen reply only: the tried writes left nothing behind.
    assert!(
        report.patch.contains("+def test_gst_after_discount():")
            && !report.patch.contains("test_gst_plain")
            && !report
                .patch
                .contains("+    tax = compute_gst(net, rate)\n     net ="),
        "{}",
        report.patch
    );
    let chosen: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::ModelReply { reply, .. } => Some(reply.tool_calls[0].id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(chosen, vec!["call_1_alt2_1", "call_2_1", "call_3_1"]);

    // The journal holds the replies the run went on with, so a replay reaches the same patch.
    let replay = super::common::plumb(fixture.home.path(), &["replay", &report.journal, "--json"]);
    let replayed = super::common::report(&replay);
    assert_eq!(
        (
            replayed.outcome,
            replayed.patch_sha256 == report.patch_sha256
        ),
        (Outcome::Success, true),
        "{}",
        stderr(&replay)
    );
}

#[test]
fn with_one_candidate_the_first_reply_runs_as_it_is() {
    let fixture = Fixture::billing();
    let script = candidates_script(&fixture);
    let output = fixture.fix_with_script(
        &script,
        &[
            "-c",
            "helpers.phases=true",
            "-c",
            "helpers.code_up_front=true",
            "--max-rounds",
            "2",
        ],
    );
    let events = journal_events(&report(&output));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::CandidateTried { .. })),
        "the helper is off for a script unless set"
    );
    let first = tool_message(&events, 2).unwrap();
    assert!(
        first.starts_with("Error: plumb undid this edit of billing/invoice_totals.py"),
        "the first reply's breaking fix ran and was undone, not replaced: {first}"
    );
}

#[test]
fn before_a_test_exists_the_fix_most_samples_make_wins() {
    let fixture = Fixture::billing();
    let ArticleCalls { fix, done, .. } = article_calls();
    let harmless = json!({
        "path": "billing/invoice_totals.py",
        "old_text": "    tax = compute_gst(gross, rate)\n",
        "new_text": "    tax = compute_gst(gross, rate)  # GST\n",
    });
    let script = fixture.script_path("vote.jsonl");
    Script::new()
        .tool_or(
            "edit_file",
            harmless,
            &[("edit_file", fix.clone()), ("edit_file", fix)],
        )
        .tool("done", done)
        .write(&script);
    let output = fixture.fix_with_script(
        &script,
        &[
            "-c",
            "helpers.phases=true",
            "-c",
            "helpers.candidates=3",
            "--max-rounds",
            "1",
        ],
    );
    let report = report(&output);
    let events = journal_events(&report);
    let passed = "the existing tests after it: no test that passed before fails";
    assert_eq!(
        candidates_tried(&events, 1),
        vec![
            (passed.to_string(), false),
            (
                format!("{passed}; 2 of the 3 that passed make this same change"),
                true
            ),
            ("the same call as candidate 2".to_string(), false),
        ],
        "{}",
        stderr(&output)
    );
    let fixed = events
        .iter()
        .find_map(|e| match e {
            Event::ToolFinished { output, .. } => Some(output.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        fixed.contains("GST is due on the discounted price"),
        "the voted fix ran: {fixed}"
    );
}

#[test]
fn the_same_tests_run_again_with_no_file_changed_is_refused_and_counts_toward_stuck() {
    let fixture = Fixture::billing();
    let script = fixture.script_path("rerun.jsonl");
    let narrow = json!({"tests": ["tests/test_tax.py"]});
    Script::new()
        .tool("run_tests", narrow.clone())
        .tool("run_tests", narrow.clone())
        .tool("run_tests", narrow.clone())
        .tool("run_tests", narrow)
        .write(&script);
    let output = fixture.fix_with_script(&script, &[]);
    let report = report(&output);
    let events = journal_events(&report);
    let first = tool_message(&events, 2).unwrap();
    assert!(first.contains("passed"), "the first run runs: {first}");
    let again = tool_message(&events, 3).unwrap();
    assert!(
        again.starts_with("Error: you already called run_tests with these same arguments in round 1, and no file has changed since"),
        "{again}"
    );
    assert_eq!(report.outcome, Outcome::Stuck, "{}", stderr(&output));
}

#[test]
fn when_no_reply_does_what_is_needed_one_that_would_not_be_refused_goes_on() {
    let fixture = Fixture::billing();
    let script = fixture.script_path("fallback.jsonl");
    Script::new()
        .tool_or(
            "create_file",
            json!({"path": "tests/test_x.py", "content": "def test_x():\n    assert True\n"}),
            &[("read_file", json!({"path": "billing/tax.py"}))],
        )
        .write(&script);
    let output = fixture.fix_with_script(
        &script,
        &[
            "-c",
            "helpers.phases=true",
            "-c",
            "helpers.code_up_front=true",
            "-c",
            "helpers.candidates=2",
            "--max-rounds",
            "1",
        ],
    );
    let events = journal_events(&report(&output));
    let tried = candidates_tried(&events, 1);
    assert_eq!(
        tried.iter().map(|(_, used)| *used).collect::<Vec<_>>(),
        vec![false, true],
        "{tried:?}"
    );
    assert!(
        tried[0]
            .0
            .starts_with("not tried: create_file is not offered now")
    );
    let ran: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolFinished { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(ran, vec!["read_file".to_string()]);
}

#[test]
fn a_reply_without_a_call_is_sampled_again() {
    let fixture = Fixture::billing();
    let script = fixture.script_path("nocall.jsonl");
    let line = json!({
        "content": "{\"thought\": \"The test expects a wrong figure. The test expects a wrong figure.",
        "alternatives": [{"tool": "read_file", "args": {"path": "billing/tax.py"}}],
    });
    std::fs::write(&script, format!("{line}\n")).unwrap();
    let output = fixture.fix_with_script(
        &script,
        &[
            "-c",
            "helpers.phases=true",
            "-c",
            "helpers.candidates=3",
            "--max-rounds",
            "1",
        ],
    );
    let events = journal_events(&report(&output));
    assert_eq!(
        candidates_tried(&events, 1),
        vec![
            ("it has no tool call".to_string(), false),
            ("it has a tool call".to_string(), true),
        ],
        "{}",
        stderr(&output)
    );
    assert!(
        events.iter().any(
            |e| matches!(e, Event::ToolFinished { name, ok: true, .. } if name == "read_file")
        ),
        "the sampled call ran"
    );
}
