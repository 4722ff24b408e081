//! The candidates helper: other samples of a reply tried in a throwaway state, the one that does
//! what the phase needs going on, a vote among fixes, and a reply without a call sampled again.

use plumb_protocol::{Event, Outcome};
use plumb_test_support::Script;
use serde_json::json;

use super::super::common::{Fixture, journal_events, report, stderr};
use super::{ArticleCalls, append_test, article_calls, tool_message};

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
    let replay =
        super::super::common::plumb(fixture.home.path(), &["replay", &report.journal, "--json"]);
    let replayed = super::super::common::report(&replay);
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

/// A sample the reply limit cut has no call: it is never taken over the model's call, even one the
/// tool refuses, and a cut reply is explained as cut.
#[test]
fn a_cut_sample_is_never_chosen_over_a_call() {
    let fixture = Fixture::billing();
    let ArticleCalls { done, .. } = article_calls();
    let missing = json!({
        "path": "billing/invoice_totals.py",
        "old_text": "    this line is not in the file\n",
        "new_text": "    tax = compute_gst(net, rate)\n",
    });
    let cut = format!(
        "{{\"tool\": \"edit_file\", \"args\": {{\"path\": \"billing/in\n{}",
        plumb_model::CUT_OFF_MARK
    );
    let first = json!({"tool": "edit_file", "args": missing, "alternatives": [{"content": cut}]});
    let script = fixture.script_path("cut.jsonl");
    std::fs::write(
        &script,
        format!("{first}\n{}\n", json!({"tool": "done", "args": done})),
    )
    .unwrap();
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
            "2",
        ],
    );
    let events = journal_events(&report(&output));
    let tried = candidates_tried(&events, 1);
    assert_eq!(
        tried.iter().map(|(_, used)| *used).collect::<Vec<_>>(),
        vec![true, false],
        "{tried:?}"
    );
    assert!(tried[0].0.starts_with("not applied: "), "{tried:?}");
    assert_eq!(tried[1].0, "it has no call");
    assert!(
        !events.iter().any(
            |e| matches!(e, Event::Note { text, .. } if text.contains("no tool call") || text.contains("cut off"))
        ),
        "the round went on with the call, so no reply is explained as missing one"
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
