//! Undoing what breaks and trying what a test or fix asserts: a fix that breaks the suite or moves
//! no figure of the ticket is undone, and a test's figures are tried against the ticket's.

use plumb_protocol::{Event, Outcome};
use plumb_test_support::Script;
use serde_json::json;

use super::super::common::{Fixture, journal_events, report, stderr};
use super::{ArticleCalls, GUIDED, append_test, article_calls, fix_then_test, tool_message};

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
