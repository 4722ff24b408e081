//! The guided phases' state machine, step by step.

use pretty_assertions::assert_eq;
use serde_json::json;

use plumb_protocol::TestCounts;
use plumb_verify::Runner;

use super::verdict::{explain_mistake, same_assertion};
use super::*;
use crate::helpers::trace::Pointer;
use crate::policy::Trial;

fn call(name: &str, arguments: serde_json::Value) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: name.into(),
        arguments,
    }
}

fn verdict(now: TestVerdict, original: Option<TestVerdict>) -> CheckVerdict {
    CheckVerdict {
        now,
        original,
        same_failure: false,
        broke_old: false,
    }
}

const TEST: &str = "tests/test_gst.py";

fn source_edit() -> ToolCall {
    call("edit_file", json!({"path": "billing/invoice.py"}))
}

fn test_edit() -> ToolCall {
    call("edit_file", json!({"path": TEST}))
}

#[test]
fn the_fix_is_asked_for_first_a_test_may_come_before_it_and_done_waits() {
    let mut phases = Phases::new(Runner::Pytest);
    phases.suggest_test_file(Some("tests/test_x.py".into()), None);
    let allowed = phases.allowed_tools().unwrap();
    for tool in ["done", "run", "create_file"] {
        assert!(!allowed.contains(&tool.to_string()), "{tool}");
    }
    assert!(allowed.contains(&"edit_file".to_string()));
    assert!(allowed.contains(&"replace_function".to_string()));
    assert_eq!(
        phases.refusal(&test_edit()),
        None,
        "the article's order, the failing test first, is not refused"
    );
    assert_eq!(
        phases.check_after(&test_edit()),
        Some(PhaseCheck::First(TEST.into())),
        "a test before any fix runs once, on the original code"
    );
    assert!(
        phases
            .refusal(&call("done", json!({})))
            .unwrap()
            .starts_with("done is not available yet: first fix the code")
    );
    assert_eq!(phases.refusal(&source_edit()), None);
    assert_eq!(
        phases.refusal(&call("read_file", json!({"path": "a.py"}))),
        None
    );
    assert!(
        phases
            .next_step()
            .unwrap()
            .starts_with("fix the code first")
    );
    assert_eq!(
        phases.check_after(&source_edit()),
        Some(PhaseCheck::Existing(Some("tests/test_x.py".into()))),
        "the fix is followed by the tests of the file shown"
    );
    assert_eq!(
        phases.check_after(&call("read_file", json!({"path": "a.py"}))),
        None
    );
}

#[test]
fn after_the_fix_a_test_is_run_with_it_and_on_the_original_code() {
    let mut phases = Phases::new(Runner::Pytest);
    phases.suggest_test_file(Some("tests/test_x.py".into()), None);
    let existing = PhaseCheck::Existing(Some("tests/test_x.py".into()));
    let broken = verdict(TestVerdict::Fails, None);
    assert!(
        phases.undoes(&existing, broken),
        "a fix that breaks tests is undone"
    );
    let said = phases.record(&existing, broken);
    assert!(
        said.starts_with(
            "Tests that passed before fail with this change (see above), so plumb undid it"
        ),
        "{said}"
    );
    assert!(
        phases
            .next_step()
            .unwrap()
            .starts_with("your last change broke tests that passed before, so plumb undid it")
    );
    assert_eq!(
        phases.check_after(&test_edit()),
        Some(PhaseCheck::First(TEST.into())),
        "the undone fix does not open the test phase: a test now is one before any fix"
    );
    assert!(!phases.undoes(&existing, verdict(TestVerdict::Passes, None)));
    assert_eq!(
        phases.shown_after(&existing, verdict(TestVerdict::Passes, None)),
        None,
        "no example was found and the ticket has no sentence to quote"
    );
    phases.record(&existing, verdict(TestVerdict::Passes, None));
    let step = phases.next_step().unwrap();
    let mut with_example = Phases::new(Runner::Pytest);
    with_example.suggest_test_file(
        Some("tests/test_x.py".into()),
        Some("12| def test_a():\n".into()),
    );
    with_example.quote_ticket(Some("It should be Rs 162.".into()));
    assert_eq!(
        with_example
            .shown_after(&existing, verdict(TestVerdict::Passes, None))
            .as_deref(),
        Some(
            "\n\nThe ticket says: \"It should be Rs 162.\"\n\nThe existing test closest to the ticket, to start from: 12| def test_a():\n"
        )
    );
    assert_eq!(with_example.shown_after(&existing, broken), None);
    with_example.record(&existing, verdict(TestVerdict::Passes, None));
    assert!(
        with_example
            .next_step()
            .unwrap()
            .contains("Start from the existing test shown after your fix")
    );
    let both = PhaseCheck::BothWays("tests/test_x.py".into());
    for (now, original, quoted) in [
        (TestVerdict::Passes, TestVerdict::Passes, true),
        (TestVerdict::Fails, TestVerdict::Fails, true),
        (TestVerdict::Passes, TestVerdict::Fails, false),
        (
            TestVerdict::FailsInTheTest,
            TestVerdict::FailsInTheTest,
            false,
        ),
    ] {
        assert_eq!(
            with_example
                .shown_after(&both, verdict(now, Some(original)))
                .is_some(),
            quoted,
            "{now:?} with the fix, {original:?} without"
        );
    }
    let mut second_edit = phases.clone();
    assert_eq!(
        second_edit.record(&existing, broken),
        "Tests that passed before fail with this change (see above), so plumb undid it: the code is as it was before this edit. Fix the code again, changing only the lines the ticket is about."
    );
    assert_eq!(
        second_edit.next_step().as_deref(),
        Some(step.as_str()),
        "undoing a second edit leaves the first fix, whose tests passed"
    );
    assert!(
        step.contains("at the end of tests/test_x.py, with edit_file (old_text empty"),
        "{step}"
    );
    let allowed = phases.allowed_tools().unwrap();
    assert!(!allowed.contains(&"done".to_string()));
    assert!(
        !allowed.contains(&"create_file".to_string()),
        "the shown file takes the test"
    );
    assert_eq!(phases.refusal(&test_edit()), None);
    let both = PhaseCheck::BothWays(TEST.into());
    assert_eq!(phases.check_after(&test_edit()), Some(both.clone()));

    let new_name_only = verdict(TestVerdict::Passes, Some(TestVerdict::FailsInTheTest));
    assert!(
        phases
            .record(&both, new_name_only)
            .contains("on the original code it could not run as written")
    );
    assert!(!phases.wanted(&both, new_name_only));
    assert!(
        phases
            .next_step()
            .unwrap()
            .contains("shows nothing about the bug")
    );
    let asserts_the_bug = verdict(TestVerdict::Passes, Some(TestVerdict::Passes));
    assert!(
        phases
            .record(&both, asserts_the_bug)
            .contains("passes on the original code too")
    );
    assert!(!phases.wanted(&both, asserts_the_bug));
    let wrong_figure = verdict(TestVerdict::Fails, Some(TestVerdict::Fails));
    assert!(
        phases
            .record(&both, wrong_figure)
            .starts_with("The test fails with your fix")
    );
    assert!(
        phases
            .next_step()
            .unwrap()
            .contains("Compare the figure it expects")
    );
    assert_eq!(
        phases.check_after(&source_edit()),
        Some(PhaseCheck::Again(TEST.into())),
        "a later fix runs the model's test again"
    );
    let shows = verdict(TestVerdict::Passes, Some(TestVerdict::Fails));
    assert!(phases.wanted(&both, shows));
    assert!(
        phases
            .record(&both, shows)
            .starts_with("Good: the test passes with your fix")
    );
    assert_eq!(
        phases.allowed_tools(),
        Some(vec!["done".to_string()]),
        "only done is offered"
    );
    assert!(phases.next_step().unwrap().contains("Call done"));
    assert_eq!(phases.refusal(&call("done", json!({}))), None);
    assert!(
        phases
            .refusal(&source_edit())
            .unwrap()
            .starts_with("edit_file is not offered now: the tests that show the bug pass")
    );
    phases.done_called();
    assert_eq!(
        phases.allowed_tools(),
        None,
        "after done every tool is offered again"
    );
    assert_eq!(phases.refusal(&source_edit()), None);
}

#[test]
fn a_later_fix_that_makes_the_test_pass_opens_done() {
    let mut phases = Phases::new(Runner::Pytest);
    phases.record(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Passes, None),
    );
    phases.record(
        &PhaseCheck::BothWays(TEST.into()),
        verdict(TestVerdict::Fails, Some(TestVerdict::Fails)),
    );
    let again = PhaseCheck::Again(TEST.into());
    let breaks_the_test = verdict(TestVerdict::Broken, None);
    assert!(phases.undoes(&again, breaks_the_test));
    assert!(
        phases
            .record(&again, breaks_the_test)
            .ends_with("so plumb undid it.")
    );
    let broke_old = CheckVerdict {
        broke_old: true,
        ..verdict(TestVerdict::Fails, None)
    };
    assert!(phases.undoes(&again, broke_old));
    assert!(
        phases.clone().record(&again, broke_old).starts_with(
            "This change broke tests that passed before (see above), so plumb undid it"
        )
    );
    let mut broken_test = phases.clone();
    broken_test.record(
        &PhaseCheck::BothWays(TEST.into()),
        verdict(
            TestVerdict::FailsInTheTest,
            Some(TestVerdict::FailsInTheTest),
        ),
    );
    assert!(
        !broken_test.undoes(&again, breaks_the_test),
        "a code edit is not blamed for a test that did not run before it either"
    );
    assert!(
        phases.next_step().unwrap().contains("fails with your fix"),
        "the test's last runs stand: the edit was undone"
    );
    assert!(phases.wanted(&again, verdict(TestVerdict::Passes, None)));
    assert!(!phases.wanted(&again, verdict(TestVerdict::Fails, None)));
    assert!(
        phases
            .record(&again, verdict(TestVerdict::Passes, None))
            .contains("it failed on the original code. Call done")
    );
    assert_eq!(phases.allowed_tools(), Some(vec!["done".to_string()]));
}

#[test]
fn each_phase_says_what_a_tried_write_must_show() {
    let mut phases = Phases::new(Runner::Pytest);
    let read = call("read_file", json!({"path": "billing/invoice.py"}));
    assert_eq!(phases.trial(&read), None, "a read writes nothing");
    let fix = phases.trial(&source_edit()).unwrap();
    assert_eq!(fix, Trial::Fix { vote: true });
    assert!(phases.wanted(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Passes, None)
    ));
    assert!(!phases.wanted(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Fails, None)
    ));
    assert_eq!(
        phases.trial(&test_edit()),
        Some(Trial::Test),
        "a test before the fix is tried as a test"
    );
    assert!(
        matches!(
            phases.trial(&call(
                "create_file",
                json!({"path": "tests/test_new.py", "content": ""})
            )),
            Some(Trial::Unwanted(_))
        ) || phases.test_file.is_none()
    );

    phases.record(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Passes, None),
    );
    assert_eq!(phases.trial(&test_edit()), Some(Trial::Test));
    let both = PhaseCheck::BothWays(TEST.into());
    assert!(!phases.wanted(
        &both,
        verdict(TestVerdict::Passes, Some(TestVerdict::Passes))
    ));
    assert!(!phases.wanted(&both, verdict(TestVerdict::Fails, Some(TestVerdict::Fails))));
    assert!(!phases.wanted(
        &both,
        verdict(TestVerdict::Passes, Some(TestVerdict::FailsInTheTest))
    ));
    phases.record(
        &both,
        verdict(TestVerdict::Passes, Some(TestVerdict::Fails)),
    );
    assert_eq!(phases.trial(&source_edit()), None, "nothing left to want");
}

#[test]
fn an_unconfirmed_fix_starts_the_fix_step_again() {
    let mut phases = Phases::new(Runner::Pytest);
    assert!(phases.reject_unconfirmed().starts_with("So plumb undid it"));
    assert!(
        phases
            .next_step()
            .unwrap()
            .starts_with("your last change did not change any value the tests check")
    );
    assert_eq!(
        phases.check_after(&test_edit()),
        Some(PhaseCheck::First(TEST.into())),
        "still before any fix"
    );
    phases.record(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Passes, None),
    );
    assert!(phases.next_step().unwrap().starts_with("now add a test"));
}

#[test]
fn the_figure_trace_runs_once_and_names_its_line_in_the_fix_step() {
    let mut phases = Phases::new(Runner::Pytest);
    assert_eq!(phases.trace_with(), None, "nothing to trace with yet");
    phases.suggest_test_file(Some("tests/test_a.py".into()), None);
    phases.probe_with(
        Some("def test_a():\n    x = f(1)\n".into()),
        Some("a.py".into()),
    );
    assert_eq!(
        phases.trace_with(),
        Some((
            "tests/test_a.py".into(),
            "def test_a():\n    x = f(1)\n".into(),
            "a.py".into()
        ))
    );
    let found = pointer("a.py", "x = f(1)");
    phases.point_at(Some(&found));
    let sentence = found.sentence();
    assert_eq!(phases.trace_with(), None, "the trace runs once");
    assert!(
        phases
            .reject_unconfirmed()
            .ends_with(&format!("Fix the code again:\n{sentence}"))
    );
    assert!(
        phases
            .next_step()
            .unwrap()
            .ends_with(&format!("fix the code again. {sentence}"))
    );
    // A fix undone for breaking the old tests names the line too.
    phases.record(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Fails, None),
    );
    assert!(phases.next_step().unwrap().ends_with(&format!(
        "changing only the lines the ticket is about. {sentence}"
    )));
    // Once a fix is kept, the line of the original code is no longer named.
    phases.record(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Passes, None),
    );
    assert_eq!(phases.pointer(), None);
    // Nothing found: the general sentence.
    let mut phases = Phases::new(Runner::Pytest);
    phases.point_at(None);
    assert!(
        phases
            .reject_unconfirmed()
            .ends_with("change the line that computes what the ticket says is wrong.")
    );
}

/// A trace's pointer at `code` in `file`.
fn pointer(file: &str, code: &str) -> Pointer {
    Pointer {
        file: file.into(),
        line: 3,
        function: "f".into(),
        name: "x".into(),
        value: "180.00".into(),
        code: code.into(),
        figure: "180".into(),
        missing: Some("162".into()),
    }
}

#[test]
fn an_edit_back_to_undone_lines_is_refused_when_the_trace_names_another() {
    let mut phases = Phases::new(Runner::Pytest);
    let edit = |old: &str, new: &str| {
        call(
            "edit_file",
            json!({"path": "a.py", "old_text": old, "new_text": new}),
        )
    };
    let first = edit(
        "    if x > 1:\n        return y",
        "    if x >= 1:\n        return y",
    );
    phases.remember_undone(&first);
    let again = edit("    if x > 1:", "    if x > 0:");
    assert_eq!(phases.refusal(&again), None, "no line named yet");
    phases.point_at(Some(&pointer("a.py", "tax = f(gross)")));
    let refused = phases.refusal(&again).expect("the undone lines again");
    assert!(
        refused.starts_with("plumb already undid an edit of these lines (`if x > 1:`)"),
        "{refused}"
    );
    assert!(
        refused.ends_with("\nCopy that line as old_text: `tax = f(gross)`."),
        "{refused}"
    );
    // Its own undone line as old_text is rebased onto the original, and refused the same.
    assert!(
        phases
            .refusal(&edit("    if x >= 1:\n        return y", "    if x > 2:"))
            .is_some()
    );
    // The named line, alone or with the undone lines, and other lines, may be edited.
    assert_eq!(
        phases.refusal(&edit("    tax = f(gross)", "    tax = 1")),
        None
    );
    assert_eq!(
        phases.refusal(&edit("    if x > 1:\n    tax = f(gross)", "    tax = 1")),
        None
    );
    assert_eq!(phases.refusal(&edit("    z = 2", "    z = 3")), None);
    phases.remember_undone(&edit("    total = f(\n    )", "    total = g(\n    )"));
    assert_eq!(
        phases.refusal(&edit("    other = h(\n    )", "    other = 1")),
        None,
        "a line with no code in common is not the undone lines"
    );
    let other_file = call(
        "edit_file",
        json!({"path": "b.py", "old_text": "    if x > 1:", "new_text": ""}),
    );
    assert_eq!(phases.refusal(&other_file), None);
    // Once a fix is kept, the line of the original code no longer counts.
    phases.record(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Passes, None),
    );
    assert_eq!(phases.refusal(&again), None);
}

#[test]
fn a_failed_edit_of_the_traced_file_is_told_the_line_the_trace_names() {
    let mut phases = Phases::new(Runner::Pytest);
    let edit = |path: &str, old: &str| {
        call(
            "edit_file",
            json!({"path": path, "old_text": old, "new_text": "x"}),
        )
    };
    let missed = edit("a.py", "    tax = sum(item.tax for item in lines)");
    assert_eq!(phases.after_failed_edit(&missed), None, "no line named yet");
    phases.point_at(Some(&pointer("a.py", "tax = f(gross)")));
    let told = phases.after_failed_edit(&missed).expect("the line to copy");
    assert!(told.starts_with('\n'), "{told}");
    assert!(
        told.ends_with("\nCopy that line as old_text: `tax = f(gross)`."),
        "{told}"
    );
    assert_eq!(
        phases.after_failed_edit(&edit("a.py", "    tax = f(gross)\n    y = 2")),
        None,
        "an old_text with the named line failed for another reason"
    );
    assert_eq!(phases.after_failed_edit(&edit("b.py", "z = 1")), None);
    assert_eq!(phases.after_failed_edit(&edit("a.py", "")), None);
    phases.record(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Passes, None),
    );
    assert_eq!(
        phases.after_failed_edit(&missed),
        None,
        "once a fix is kept, the line of the original code no longer counts"
    );
}

#[test]
fn an_edit_of_undone_lines_replaces_the_lines_they_had_replaced() {
    let mut phases = Phases::new(Runner::Pytest);
    let undone = call(
        "edit_file",
        json!({"path": "a.py", "old_text": "x = 1", "new_text": "x = 2"}),
    );
    phases.remember_undone(&undone);
    let again = call(
        "edit_file",
        json!({"path": "a.py", "old_text": "x = 2", "new_text": "x = 3"}),
    );
    let (arguments, note) = phases.rebase_on_undone(&again).unwrap();
    assert_eq!(
        arguments,
        json!({"path": "a.py", "old_text": "x = 1", "new_text": "x = 3"})
    );
    assert!(
        note.contains("taken as the lines that edit replaced: `x = 1`"),
        "{note}"
    );
    let elsewhere = call(
        "edit_file",
        json!({"path": "b.py", "old_text": "x = 2", "new_text": "x = 3"}),
    );
    assert_eq!(phases.rebase_on_undone(&elsewhere), None);
    phases.remember_undone(&again);
    let third = call(
        "edit_file",
        json!({"path": "a.py", "old_text": "x = 3", "new_text": "x = 4"}),
    );
    assert_eq!(
        phases.rebase_on_undone(&third).unwrap().0["old_text"],
        "x = 1",
        "an undone rebased edit had replaced the original lines too"
    );
}

#[test]
fn a_fix_that_did_not_touch_the_asserted_figure_is_named() {
    let with_fix = "    def test_gst_after_discount():\n>       assert totals.tax == Decimal(\"162.00\")\nE       AssertionError: assert Decimal('180.00') == Decimal('162.00')\nE        +  where Decimal('180.00') = InvoiceTotals(lines=(1,)).tax\n";
    let original = with_fix.replace("(1,)", "(2,)");
    assert!(
        same_assertion(with_fix, &original),
        "the where lines print whole objects and may differ"
    );
    let right_fix = with_fix.replace("180.00", "171.00");
    assert!(!same_assertion(&right_fix, &original));
    let raises = "E       Failed: DID NOT RAISE InvoiceError\n";
    assert!(
        !same_assertion(raises, raises),
        "only a compared value says the fix missed a figure"
    );
    assert!(!same_assertion("", ""));

    let mut phases = Phases::new(Runner::Pytest);
    phases.record(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Passes, None),
    );
    let missed = CheckVerdict {
        now: TestVerdict::Fails,
        original: Some(TestVerdict::Fails),
        same_failure: true,
        broke_old: false,
    };
    assert!(
        phases
            .record(&PhaseCheck::BothWays(TEST.into()), missed)
            .contains("your change did not touch the figure it checks")
    );
    assert!(
        phases
            .next_step()
            .unwrap()
            .contains("the fix is in the wrong place")
    );
    let again = PhaseCheck::Again(TEST.into());
    let missed_again = CheckVerdict {
        original: None,
        ..missed
    };
    assert!(
        phases
            .record(&again, missed_again)
            .contains("did not touch the figure it checks either")
    );
    phases.record(&again, verdict(TestVerdict::Fails, None));
    assert!(
        phases
            .next_step()
            .unwrap()
            .contains("Compare the figure it expects"),
        "a change that moved the figure is judged as before"
    );
}

#[test]
fn a_failure_on_the_tests_own_mistake_is_not_a_reproduction() {
    let assertion = "E       assert Decimal('180.00') == Decimal('162.00')";
    assert_eq!(
        TestVerdict::of(&counts(1, 0, 0), assertion),
        TestVerdict::Fails
    );
    let own = "E       UnboundLocalError: cannot access local variable 'item'";
    assert_eq!(
        TestVerdict::of(&counts(1, 0, 0), own),
        TestVerdict::FailsInTheTest
    );
    let bad_call =
        "E       TypeError: LineItem.__init__() got an unexpected keyword argument 'price'";
    assert_eq!(
        TestVerdict::of(&counts(1, 0, 0), bad_call),
        TestVerdict::FailsInTheTest
    );
    // A bug that raises is still a reproduction.
    let raised = "E       ZeroDivisionError: division by zero";
    assert_eq!(
        TestVerdict::of(&counts(1, 0, 0), raised),
        TestVerdict::Fails
    );
    assert_eq!(TestVerdict::of(&counts(0, 0, 2), ""), TestVerdict::Passes);
    assert_eq!(TestVerdict::of(&counts(0, 1, 0), ""), TestVerdict::Broken);
    assert_eq!(TestVerdict::of(&counts(0, 0, 0), ""), TestVerdict::Broken);
}

fn counts(failed: u32, errors: u32, passed: u32) -> TestCounts {
    TestCounts {
        failed,
        errors,
        passed,
        ..TestCounts::default()
    }
}

#[test]
fn a_local_that_hides_a_helper_is_explained_by_name() {
    let excerpt = "E       UnboundLocalError: cannot access local variable 'invoice' where it is not associated with a value";
    let explained = explain_mistake(excerpt).unwrap();
    assert!(
        explained.starts_with("In the test, `invoice = ...` makes `invoice` a local variable"),
        "{explained}"
    );
    assert_eq!(explain_mistake("E       assert 1 == 2"), None);
}

#[test]
fn a_test_written_before_the_fix_that_fails_shows_the_bug_and_the_fix_that_passes_it_opens_done() {
    let mut phases = Phases::new(Runner::Pytest);
    let first = PhaseCheck::First(TEST.into());
    let passes_before = verdict(TestVerdict::Passes, Some(TestVerdict::Passes));
    assert!(!phases.wanted(&first, passes_before));
    assert!(
        phases
            .record(&first, passes_before)
            .starts_with("The test passes on the original code, so it does not show the bug")
    );
    assert!(
        phases
            .next_step()
            .unwrap()
            .starts_with("fix the code first")
    );
    let fails = verdict(TestVerdict::Fails, Some(TestVerdict::Fails));
    assert!(phases.wanted(&first, fails));
    assert!(
        phases
            .record(&first, fails)
            .starts_with("The test fails on the original code (see above), so it shows the bug")
    );
    assert!(phases.next_step().unwrap().starts_with(
        "tests/test_gst.py fails on the original code, so it shows the bug: now fix the code"
    ));
    let again = PhaseCheck::Again(TEST.into());
    assert_eq!(phases.check_after(&source_edit()), Some(again.clone()));
    assert_eq!(
        phases.trial(&source_edit()),
        Some(Trial::Fix { vote: false }),
        "the test judges a fix: the first sample that passes it is taken"
    );
    let still_fails = verdict(TestVerdict::Fails, None);
    assert!(
        !phases.undoes(&again, still_fails),
        "a fix that breaks nothing stays"
    );
    phases.record(&again, still_fails);
    assert_eq!(
        phases.allowed_tools().map(|t| t.contains(&"done".into())),
        Some(false)
    );
    let passes = verdict(TestVerdict::Passes, None);
    assert!(phases.wanted(&again, passes));
    assert!(phases.record(&again, passes).contains("Call done"));
    assert_eq!(phases.allowed_tools(), Some(vec!["done".to_string()]));
}

#[test]
fn tests_failing_at_baseline_are_the_reproduction_and_their_pass_opens_done() {
    let mut phases = Phases::new(Runner::Pytest);
    let ids = vec!["tests/test_x.py::test_examples".to_string()];
    phases.with_reproduction(Origin::Baseline, ids.clone(), ids[0].clone());
    let step = phases.next_step().unwrap();
    assert!(
        step.starts_with("fix the code: tests/test_x.py::test_examples fail on the original code"),
        "{step}"
    );
    let again = PhaseCheck::Again(Written {
        path: ids[0].clone(),
        targets: ids.clone(),
    });
    assert_eq!(phases.check_after(&source_edit()), Some(again.clone()));
    let still_fails = verdict(TestVerdict::Fails, None);
    assert!(
        !phases.undoes(&again, still_fails),
        "an edit after which the failing test still fails broke nothing, so it is not undone"
    );
    assert!(
        phases
            .record(&again, still_fails)
            .starts_with("The failing tests still fail with the changed code")
    );
    assert!(
        phases
            .next_step()
            .unwrap()
            .contains("still fail with your change")
    );
    let broke = CheckVerdict {
        broke_old: true,
        ..verdict(TestVerdict::Passes, None)
    };
    assert!(phases.undoes(&again, broke) && !phases.wanted(&again, broke));
    assert!(
        phases
            .record(&again, broke)
            .contains("broke tests that passed before")
    );
    let passes = verdict(TestVerdict::Passes, None);
    assert!(phases.wanted(&again, passes));
    assert!(
        phases
            .record(&again, passes)
            .starts_with("The tests that failed on the original code pass now")
    );
    assert_eq!(
        phases.allowed_tools(),
        Some(vec!["done".to_string()]),
        "no new test is asked for: the failing test shows the bug"
    );
}

#[test]
fn the_tasks_named_tests_stay_the_reproduction_whatever_test_the_model_adds() {
    let mut phases = Phases::new(Runner::Pytest);
    let named = vec!["tests/test_a.py::test_b".to_string()];
    phases.with_reproduction(Origin::Named, named.clone(), named[0].clone());
    phases.record(
        &PhaseCheck::Again(Written {
            path: named[0].clone(),
            targets: named.clone(),
        }),
        verdict(TestVerdict::Fails, None),
    );
    let own = PhaseCheck::BothWays(TEST.into());
    phases.record(&own, verdict(TestVerdict::Passes, Some(TestVerdict::Fails)));
    assert_eq!(
        phases.check_after(&source_edit()),
        Some(PhaseCheck::Again(Written {
            path: named[0].clone(),
            targets: named,
        }))
    );
    assert!(
        !phases
            .allowed_tools()
            .unwrap()
            .contains(&"done".to_string())
    );
}

#[test]
fn a_rust_project_without_a_test_file_is_asked_for_a_test_in_its_tests_module() {
    let mut phases = Phases::new(Runner::Cargo);
    phases.probe_with(None, Some("src/lib.rs".into()));
    phases.record(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Passes, None),
    );
    let step = phases.next_step().unwrap();
    assert!(
        step.contains("a #[test] function in the #[cfg(test)] mod tests of src/lib.rs"),
        "{step}"
    );
}
