//! The order of the work: the fix, a test with it and on the original code, `done`; the test
//! first; tests failing at baseline and named tests as the reproduction.

use pretty_assertions::assert_eq;

use super::*;

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
        phases.refusal_said(&test_edit()),
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
            .refusal_said(&call("done", json!({})))
            .unwrap()
            .starts_with("done is not available yet: first fix the code")
    );
    assert_eq!(phases.refusal_said(&source_edit()), None);
    assert_eq!(
        phases.refusal_said(&call("read_file", json!({"path": "a.py"}))),
        None
    );
    assert!(
        phases
            .next_step_text()
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
    let said = phases.record_text(&existing, broken);
    assert!(
        said.starts_with(
            "Tests that passed before fail with this change (see above), so plumb undid it"
        ),
        "{said}"
    );
    assert!(
        phases
            .next_step_text()
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
    phases.record_text(&existing, verdict(TestVerdict::Passes, None));
    let step = phases.next_step_text().unwrap();
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
    with_example.record_text(&existing, verdict(TestVerdict::Passes, None));
    assert!(
        with_example
            .next_step_text()
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
        second_edit.record_text(&existing, broken),
        "Tests that passed before fail with this change (see above), so plumb undid it: the code is as it was before this edit. Fix the code again, changing only the lines the ticket is about."
    );
    assert_eq!(
        second_edit.next_step_text().as_deref(),
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
    assert_eq!(phases.refusal_said(&test_edit()), None);
    let both = PhaseCheck::BothWays(TEST.into());
    assert_eq!(phases.check_after(&test_edit()), Some(both.clone()));

    let new_name_only = verdict(TestVerdict::Passes, Some(TestVerdict::FailsInTheTest));
    assert!(
        phases
            .record_text(&both, new_name_only)
            .contains("on the original code it could not run as written")
    );
    assert!(!phases.wanted(&both, new_name_only));
    assert!(
        phases
            .next_step_text()
            .unwrap()
            .contains("shows nothing about the bug")
    );
    let asserts_the_bug = verdict(TestVerdict::Passes, Some(TestVerdict::Passes));
    assert!(
        phases
            .record_text(&both, asserts_the_bug)
            .contains("passes on the original code too")
    );
    assert!(!phases.wanted(&both, asserts_the_bug));
    let wrong_figure = verdict(TestVerdict::Fails, Some(TestVerdict::Fails));
    assert!(
        phases
            .record_text(&both, wrong_figure)
            .starts_with("The test fails with your fix")
    );
    assert!(
        phases
            .next_step_text()
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
            .record_text(&both, shows)
            .starts_with("Good: the test passes with your fix")
    );
    assert_eq!(
        phases.allowed_tools(),
        Some(vec!["done".to_string()]),
        "only done is offered"
    );
    assert!(phases.next_step_text().unwrap().contains("Call done"));
    assert_eq!(phases.refusal_said(&call("done", json!({}))), None);
    assert!(
        phases
            .refusal_said(&source_edit())
            .unwrap()
            .starts_with("edit_file is not offered now: the tests that show the bug pass")
    );
    phases.done_called();
    assert_eq!(
        phases.allowed_tools(),
        None,
        "after done every tool is offered again"
    );
    assert_eq!(phases.refusal_said(&source_edit()), None);
}

#[test]
fn a_later_fix_that_makes_the_test_pass_opens_done() {
    let mut phases = Phases::new(Runner::Pytest);
    phases.record_text(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Passes, None),
    );
    phases.record_text(
        &PhaseCheck::BothWays(TEST.into()),
        verdict(TestVerdict::Fails, Some(TestVerdict::Fails)),
    );
    let again = PhaseCheck::Again(TEST.into());
    let breaks_the_test = verdict(TestVerdict::Broken, None);
    assert!(phases.undoes(&again, breaks_the_test));
    assert!(
        phases
            .record_text(&again, breaks_the_test)
            .ends_with("so plumb undid it.")
    );
    let broke_old = CheckVerdict {
        broke_old: true,
        ..verdict(TestVerdict::Fails, None)
    };
    assert!(phases.undoes(&again, broke_old));
    assert!(
        phases.clone().record_text(&again, broke_old).starts_with(
            "This change broke tests that passed before (see above), so plumb undid it"
        )
    );
    let mut broken_test = phases.clone();
    broken_test.record_text(
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
        phases
            .next_step_text()
            .unwrap()
            .contains("fails with your fix"),
        "the test's last runs stand: the edit was undone"
    );
    assert!(phases.wanted(&again, verdict(TestVerdict::Passes, None)));
    assert!(!phases.wanted(&again, verdict(TestVerdict::Fails, None)));
    assert!(
        phases
            .record_text(&again, verdict(TestVerdict::Passes, None))
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

    phases.record_text(
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
    phases.record_text(
        &both,
        verdict(TestVerdict::Passes, Some(TestVerdict::Fails)),
    );
    assert_eq!(phases.trial(&source_edit()), None, "nothing left to want");
}

#[test]
fn an_unconfirmed_fix_starts_the_fix_step_again() {
    let mut phases = Phases::new(Runner::Pytest);
    assert!(
        phases
            .reject_unconfirmed()
            .unwrap()
            .starts_with("So plumb undid it")
    );
    assert!(
        phases
            .next_step_text()
            .unwrap()
            .starts_with("your last change did not change any value the tests check")
    );
    assert_eq!(
        phases.check_after(&test_edit()),
        Some(PhaseCheck::First(TEST.into())),
        "still before any fix"
    );
    phases.record_text(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Passes, None),
    );
    assert!(
        phases
            .next_step_text()
            .unwrap()
            .starts_with("now add a test")
    );
}

#[test]

fn a_test_written_before_the_fix_that_fails_shows_the_bug_and_the_fix_that_passes_it_opens_done() {
    let mut phases = Phases::new(Runner::Pytest);
    let first = PhaseCheck::First(TEST.into());
    let passes_before = verdict(TestVerdict::Passes, Some(TestVerdict::Passes));
    assert!(!phases.wanted(&first, passes_before));
    assert!(
        phases
            .record_text(&first, passes_before)
            .starts_with("The test passes on the original code, so it does not show the bug")
    );
    assert!(
        phases
            .next_step_text()
            .unwrap()
            .starts_with("fix the code first")
    );
    let fails = verdict(TestVerdict::Fails, Some(TestVerdict::Fails));
    assert!(phases.wanted(&first, fails));
    assert!(
        phases
            .record_text(&first, fails)
            .starts_with("The test fails on the original code (see above), so it shows the bug")
    );
    assert!(phases.next_step_text().unwrap().starts_with(
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
    phases.record_text(&again, still_fails);
    assert_eq!(
        phases.allowed_tools().map(|t| t.contains(&"done".into())),
        Some(false)
    );
    let passes = verdict(TestVerdict::Passes, None);
    assert!(phases.wanted(&again, passes));
    assert!(phases.record_text(&again, passes).contains("Call done"));
    assert_eq!(phases.allowed_tools(), Some(vec!["done".to_string()]));
}

#[test]
fn tests_failing_at_baseline_are_the_reproduction_and_their_pass_opens_done() {
    let mut phases = Phases::new(Runner::Pytest);
    let ids = vec!["tests/test_x.py::test_examples".to_string()];
    phases.with_reproduction(Origin::Baseline, ids.clone(), ids[0].clone());
    let step = phases.next_step_text().unwrap();
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
            .record_text(&again, still_fails)
            .starts_with("The failing tests still fail with the changed code")
    );
    assert!(
        phases
            .next_step_text()
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
            .record_text(&again, broke)
            .contains("broke tests that passed before")
    );
    let passes = verdict(TestVerdict::Passes, None);
    assert!(phases.wanted(&again, passes));
    assert!(
        phases
            .record_text(&again, passes)
            .starts_with("The tests that failed on the original code pass now")
    );
    assert_eq!(
        phases.allowed_tools(),
        Some(vec!["done".to_string()]),
        "no new test is asked for: the failing test shows the bug"
    );
}

/// HumanEvalFix Python/7: the 1.5B model rewrote the example test's `check` in round 5. The tests
/// that show the bug are the reproduction: an edit of their file's lines is refused; a test added
/// at its end and an edit of the code are not, and a `replace_function` there goes to the code's
/// file (Python/14: the right fix of `all_prefixes`, sent with the test file's path eight rounds
/// running).
#[test]
fn the_file_of_the_tests_that_show_the_bug_is_not_rewritten() {
    let mut phases = Phases::new(Runner::Pytest);
    phases.probe_with(None, Some("filter.py".into()));
    let ids = vec!["tests/test_filter.py::test_examples".to_string()];
    phases.with_reproduction(Origin::Baseline, ids.clone(), ids[0].clone());
    let calls = [
        call(
            "edit_file",
            json!({"path": "tests/test_filter.py", "old_text": "    assert f([]) == []\n", "new_text": ""}),
        ),
        call(
            "replace_function",
            json!({"path": "tests/test_filter.py", "name": "check", "code": "def check(f):\n    pass"}),
        ),
        call(
            "create_file",
            json!({"path": "tests/test_filter.py", "content": ""}),
        ),
        call(
            "edit_file",
            json!({"path": "tests/test_filter.py", "old_text": "", "new_text": "def test_more():\n    assert True\n"}),
        ),
        call(
            "edit_file",
            json!({"path": "filter.py", "old_text": "x", "new_text": "y"}),
        ),
    ];
    let refused: Vec<bool> = calls
        .iter()
        .map(|c| phases.refusal_said(c).is_some())
        .collect();
    // replace_function goes to the code's file instead (below).
    assert_eq!(refused, vec![true, false, true, false, false]);
    assert!(
        phases.refusal_said(&calls[0]).unwrap().starts_with(
            "Change the code in filter.py, not tests/test_filter.py: tests/test_filter.py holds the tests that show the bug, which must stay as they are"
        )
    );
    // A replace_function aimed at the tests' file goes to the code's file, with a note.
    let (arguments, note) = phases.to_the_code_said(&calls[1]).unwrap();
    assert_eq!(
        (arguments["path"].as_str(), arguments["name"].as_str()),
        (Some("filter.py"), Some("check"))
    );
    assert!(note.starts_with("plumb sent this to filter.py:"), "{note}");
    assert_eq!(phases.to_the_code_said(&calls[4]), None);
    // The model's own test is its to change.
    let mut own = Phases::new(Runner::Pytest);
    own.record_text(
        &PhaseCheck::First("tests/test_filter.py".into()),
        verdict(TestVerdict::Fails, None),
    );
    assert_eq!(own.refusal_said(&calls[0]), None);
}

#[test]
fn the_tasks_named_tests_stay_the_reproduction_whatever_test_the_model_adds() {
    let mut phases = Phases::new(Runner::Pytest);
    let named = vec!["tests/test_a.py::test_b".to_string()];
    phases.with_reproduction(Origin::Named, named.clone(), named[0].clone());
    phases.record_text(
        &PhaseCheck::Again(Written {
            path: named[0].clone(),
            targets: named.clone(),
        }),
        verdict(TestVerdict::Fails, None),
    );
    let own = PhaseCheck::BothWays(TEST.into());
    phases.record_text(&own, verdict(TestVerdict::Passes, Some(TestVerdict::Fails)));
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
    phases.record_text(
        &PhaseCheck::Existing(None),
        verdict(TestVerdict::Passes, None),
    );
    let step = phases.next_step_text().unwrap();
    assert!(
        step.contains("a #[test] function in the #[cfg(test)] mod tests of src/lib.rs"),
        "{step}"
    );
}
