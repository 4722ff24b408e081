//! The guided phases through their hook points, on a fake run: what runs after a write, what
//! the model is told, what is undone, what the next request offers.

use plumb_protocol::ToolCall;
use plumb_verify::TestOutcome::{Failed, Passed};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::Guided;
use crate::facts::{Briefing, RunFacts};
use crate::fake_run::{FakeRun, Side, baseline, test_run};
use crate::policy::{Gate, Policy, RequestShape, ToolOutcome, Trial};

const EXAMPLES: &str = "tests/test_median.py::test_examples";

fn edit(path: &str) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: "edit_file".into(),
        arguments: json!({"path": path, "old_text": "a", "new_text": "b"}),
    }
}

fn written() -> ToolOutcome {
    ToolOutcome {
        ok: true,
        ran: true,
        text: "Edited.".into(),
        summary: "edited".into(),
        changed: true,
        ..ToolOutcome::default()
    }
}

fn guided(run: &FakeRun, fail_to_pass: &[String]) -> Guided {
    let briefing = Briefing::default();
    let settings = plumb_config::Helpers::default();
    Guided::new(
        &RunFacts {
            ticket: &run.ticket,
            runner: plumb_verify::Runner::Pytest,
            baseline: &run.baseline,
            fail_to_pass,
            profile: plumb_protocol::ModelProfile::Small,
            can_sample: false,
            briefing: &briefing,
            settings: &settings,
        },
        false,
        false,
    )
}

fn offered(guided: &Guided) -> Option<Vec<String>> {
    let mut shape = RequestShape::default();
    guided.shape_request(&mut shape).unwrap();
    shape.allowed_tools
}

#[tokio::test]
async fn a_fix_that_makes_the_baseline_failing_test_pass_opens_done_without_a_new_test() {
    let mut run = FakeRun {
        baseline: baseline(&[(EXAMPLES, Failed)]),
        ..FakeRun::default()
    };
    let mut guided = guided(&run, &[]);
    // A wrong fix first: the failing test still fails. Nothing that passed broke, so it stays,
    // and the model is told the test still fails (not that passing tests broke).
    run.runs.push_back((
        Side::Workspace,
        test_run(&[(EXAMPLES, Failed)], "E   assert 2 == 3"),
    ));
    run.runs.push_back((
        Side::Original,
        test_run(&[(EXAMPLES, Failed)], "E   assert 1 == 3"),
    ));
    run.runs
        .push_back((Side::Workspace, test_run(&[(EXAMPLES, Failed)], "")));
    let mut outcome = written();
    guided
        .after_tool(&mut run, &edit("median.py"), &mut outcome)
        .await
        .unwrap_or_else(|e| panic!("{}", e.reason));
    assert_eq!((outcome.ok, run.undone), (true, 0));
    assert!(
        outcome
            .text
            .contains("The failing tests still fail with the changed code"),
        "{}",
        outcome.text
    );
    assert!(
        !outcome.text.contains("passed before fail"),
        "{}",
        outcome.text
    );
    assert!(!offered(&guided).unwrap().contains(&"done".to_string()));
    // The right fix: the test passes, the suite breaks nothing.
    run.runs
        .push_back((Side::Workspace, test_run(&[(EXAMPLES, Passed)], "")));
    run.runs
        .push_back((Side::Workspace, test_run(&[(EXAMPLES, Passed)], "")));
    let mut outcome = written();
    guided
        .after_tool(&mut run, &edit("median.py"), &mut outcome)
        .await
        .unwrap_or_else(|e| panic!("{}", e.reason));
    assert!(outcome.text.contains("Call done"), "{}", outcome.text);
    assert_eq!(offered(&guided), Some(vec!["done".to_string()]));
    assert_eq!(
        run.asked.first(),
        Some(&(Side::Workspace, vec![EXAMPLES.to_string()])),
        "the failing test is what runs after a fix"
    );
}

/// A code edit after which the baseline's failing test stops on `NameError`, where on the
/// original code it failed with `original`: whether the edit was undone, and what the model was
/// told.
async fn edit_that_stops_on_a_name_error(original: &str) -> (u32, String) {
    let mut run = FakeRun {
        baseline: baseline(&[(EXAMPLES, Failed)]),
        ..FakeRun::default()
    };
    let mut guided = guided(&run, &[]);
    let stopped = ">       assert candidate('(()())') == ['(()())']\nseparate.py:9: in separate\n    if c == ' ':\nE   NameError: name 'c' is not defined";
    run.runs
        .push_back((Side::Workspace, test_run(&[(EXAMPLES, Failed)], stopped)));
    run.runs
        .push_back((Side::Original, test_run(&[(EXAMPLES, Failed)], original)));
    run.runs
        .push_back((Side::Workspace, test_run(&[(EXAMPLES, Failed)], stopped)));
    let mut outcome = written();
    guided
        .after_tool(&mut run, &edit("separate.py"), &mut outcome)
        .await
        .unwrap_or_else(|e| panic!("{}", e.reason));
    (run.undone, outcome.text)
}

/// HumanEvalFix Python/1 under the 1.5B model: an edit replaced the loop header `for c in
/// paren_string:` with `if c == ' ':`, the example test went on failing (now on `NameError`), and
/// the edit stayed; every later round built on the broken code. An edit that makes the code stop
/// on an error the original code did not raise is undone, however the test ends.
#[tokio::test]
async fn an_edit_after_which_the_code_stops_on_a_name_error_is_undone() {
    let (undone, text) =
        edit_that_stops_on_a_name_error("E   AssertionError: assert [] == ['(()())']").await;
    assert_eq!(undone, 1, "{text}");
    assert!(
        text.contains("NameError") && text.contains("With this change the code stops on an error"),
        "{text}"
    );
}

/// The same error on the original code (the bug is a name error itself) is not a step back.
#[tokio::test]
async fn a_name_error_the_original_code_raised_too_is_not_undone() {
    let (undone, text) =
        edit_that_stops_on_a_name_error("E   NameError: name 'x' is not defined").await;
    assert_eq!(undone, 0, "{text}");
}

#[tokio::test]
async fn a_fix_that_breaks_a_passing_test_is_undone() {
    let mut run = FakeRun {
        baseline: baseline(&[
            (EXAMPLES, Failed),
            ("tests/test_median.py::test_odd", Passed),
        ]),
        ..FakeRun::default()
    };
    let mut guided = guided(&run, &[]);
    run.runs
        .push_back((Side::Workspace, test_run(&[(EXAMPLES, Passed)], "")));
    run.runs.push_back((
        Side::Workspace,
        test_run(
            &[
                (EXAMPLES, Passed),
                ("tests/test_median.py::test_odd", Failed),
            ],
            "E   assert 2 == 1",
        ),
    ));
    let mut outcome = written();
    guided
        .after_tool(&mut run, &edit("median.py"), &mut outcome)
        .await
        .unwrap_or_else(|e| panic!("{}", e.reason));
    assert_eq!((outcome.ok, outcome.undone, run.undone), (false, true, 1));
    assert!(
        outcome
            .text
            .starts_with("plumb undid this edit of median.py"),
        "{}",
        outcome.text
    );
}

#[tokio::test]
async fn a_test_written_first_that_fails_is_the_reproduction() {
    let mut run = FakeRun {
        baseline: baseline(&[("tests/test_a.py::test_old", Passed)]),
        ..FakeRun::default()
    };
    let mut guided = guided(&run, &[]);
    assert_eq!(guided.before_tool(&edit("tests/test_a.py")), Gate::Run);
    run.runs.push_back((
        Side::Workspace,
        test_run(
            &[
                ("tests/test_a.py::test_old", Passed),
                ("tests/test_a.py::test_new", Failed),
            ],
            "E   assert 180 == 162",
        ),
    ));
    let mut outcome = written();
    guided
        .after_tool(&mut run, &edit("tests/test_a.py"), &mut outcome)
        .await
        .unwrap_or_else(|e| panic!("{}", e.reason));
    assert!(
        outcome.text.contains("so it shows the bug"),
        "{}",
        outcome.text
    );
    assert_eq!(run.asked.len(), 1, "a test before any fix runs once");
    run.runs.push_back((
        Side::Workspace,
        test_run(&[("tests/test_a.py::test_new", Passed)], ""),
    ));
    run.runs.push_back((
        Side::Workspace,
        test_run(&[("tests/test_a.py::test_old", Passed)], ""),
    ));
    let mut outcome = written();
    guided
        .after_tool(&mut run, &edit("billing/invoice.py"), &mut outcome)
        .await
        .unwrap_or_else(|e| panic!("{}", e.reason));
    assert!(outcome.text.contains("Call done"), "{}", outcome.text);
    assert_eq!(offered(&guided), Some(vec!["done".to_string()]));
}

#[tokio::test]
async fn the_tasks_named_tests_are_what_a_fix_is_run_against() {
    let named = vec!["tests/test_a.py::test_named".to_string()];
    let mut run = FakeRun {
        baseline: baseline(&[("tests/test_a.py::test_old", Passed)]),
        ..FakeRun::default()
    };
    let mut guided = guided(&run, &named);
    run.runs.push_back((
        Side::Workspace,
        test_run(&[("tests/test_a.py::test_named", Passed)], ""),
    ));
    run.runs.push_back((
        Side::Workspace,
        test_run(&[("tests/test_a.py::test_old", Passed)], ""),
    ));
    let mut outcome = written();
    guided
        .after_tool(&mut run, &edit("a.py"), &mut outcome)
        .await
        .unwrap_or_else(|e| panic!("{}", e.reason));
    assert_eq!(run.asked.first(), Some(&(Side::Workspace, named)));
    assert_eq!(offered(&guided), Some(vec!["done".to_string()]));
}

#[tokio::test]
async fn a_test_added_beside_the_code_of_a_rust_file_is_a_test_and_runs_by_name() {
    let before = "fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n";
    let after = "fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n}\n";
    let mut run = FakeRun {
        runner: Some(plumb_verify::Runner::Cargo),
        baseline: baseline(&[("tests::builds", Passed)]),
        ..FakeRun::default()
    };
    run.before.insert("src/lib.rs".into(), before.into());
    run.files.insert("src/lib.rs".into(), after.into());
    let mut guided = guided(&run, &[]);
    run.runs.push_back((
        Side::Workspace,
        test_run(&[("tests::adds", Failed)], "left: -1"),
    ));
    let mut outcome = written();
    guided
        .after_tool(&mut run, &edit("src/lib.rs"), &mut outcome)
        .await
        .unwrap_or_else(|e| panic!("{}", e.reason));
    assert_eq!(run.asked, vec![(Side::Workspace, vec!["adds".to_string()])]);
    assert!(
        outcome.text.contains("so it shows the bug"),
        "{}",
        outcome.text
    );
}

/// A code edit of `median.py` that makes its text `text`, then the check after it with the
/// workspace runs `now` (the reproduction, then the suite) and the original code's `before`.
async fn fix_that_leaves(
    run: &mut FakeRun,
    guided: &mut Guided,
    text: &str,
    runs: Vec<(Side, plumb_tools::TestRun)>,
) -> ToolOutcome {
    run.files.insert("median.py".into(), text.into());
    run.runs.extend(runs);
    let mut outcome = written();
    guided
        .after_tool(run, &edit("median.py"), &mut outcome)
        .await
        .unwrap_or_else(|e| panic!("{}", e.reason));
    outcome
}

/// `helpers.undo_failing_fixes`: a fix after which the baseline's failing test still fails is
/// undone (HumanEvalFix Python/67: kept, the 1.5B model piled `- 1` onto the line for six
/// rounds), and the same code sent again is undone before any test runs.
#[tokio::test]
async fn with_undo_failing_fixes_a_fix_that_leaves_the_test_failing_is_undone_and_not_tried_twice()
{
    let mut run = FakeRun {
        baseline: baseline(&[(EXAMPLES, Failed)]),
        ..FakeRun::default()
    };
    let mut guided = guided(&run, &[]).undo_failing_fixes(true);
    let failing = |excerpt: &str| test_run(&[(EXAMPLES, Failed)], excerpt);
    let outcome = fix_that_leaves(
        &mut run,
        &mut guided,
        "return n - 2",
        vec![
            (Side::Workspace, failing("E   assert 6 == 8")),
            (Side::Original, failing("E   assert 7 == 8")),
            (Side::Workspace, failing("E   assert 6 == 8")),
        ],
    )
    .await;
    assert_eq!((outcome.ok, outcome.undone, run.undone), (false, true, 1));
    assert!(
        outcome
            .text
            .contains("The tests that show the bug still fail with this change")
            && outcome.text.contains("assert 6 == 8"),
        "{}",
        outcome.text
    );
    let asked = run.asked.len();
    // A sample of the candidates helper that writes it is judged without a run, as undone.
    run.files.insert("median.py".into(), "return n - 2".into());
    let judged = guided
        .judge(&mut run, &edit("median.py"), &Trial::Fix { vote: false })
        .await
        .unwrap_or_else(|e| panic!("{}", e.reason))
        .map(|j| (j.wanted, j.undone, j.verdict));
    assert_eq!(
        judged,
        Some((
            false,
            true,
            "the code as tried in round 1, when the tests that show the bug still failed".into()
        ))
    );
    let outcome = fix_that_leaves(&mut run, &mut guided, "return n - 2", vec![]).await;
    assert_eq!((outcome.ok, outcome.undone, run.undone), (false, true, 2));
    assert_eq!(run.asked.len(), asked, "no test ran for code already tried");
    assert!(
        outcome.text.contains(
            "exactly as after your change in round 1, when the tests that show the bug still failed"
        ),
        "{}",
        outcome.text
    );
    // Other code is tried as usual: the right fix passes and opens `done`.
    let outcome = fix_that_leaves(
        &mut run,
        &mut guided,
        "return n",
        vec![
            (Side::Workspace, test_run(&[(EXAMPLES, Passed)], "")),
            (Side::Workspace, test_run(&[(EXAMPLES, Passed)], "")),
        ],
    )
    .await;
    assert_eq!((outcome.ok, run.undone), (true, 2), "{}", outcome.text);
    assert_eq!(offered(&guided), Some(vec!["done".to_string()]));
}

/// A fix after which more of the failing tests pass than on the original code is on its way:
/// it stays, for the next edit to finish.
#[tokio::test]
async fn with_undo_failing_fixes_a_fix_that_makes_some_failing_tests_pass_stays() {
    const ODD: &str = "tests/test_median.py::test_odd";
    let mut run = FakeRun {
        baseline: baseline(&[(EXAMPLES, Failed), (ODD, Failed)]),
        ..FakeRun::default()
    };
    let mut guided = guided(&run, &[]).undo_failing_fixes(true);
    let half = test_run(&[(EXAMPLES, Passed), (ODD, Failed)], "E   assert 2 == 1");
    let outcome = fix_that_leaves(
        &mut run,
        &mut guided,
        "half a fix",
        vec![
            (Side::Workspace, half.clone()),
            (
                Side::Original,
                test_run(&[(EXAMPLES, Failed), (ODD, Failed)], "E   assert 0 == 1"),
            ),
            (Side::Workspace, half),
        ],
    )
    .await;
    assert_eq!((outcome.ok, run.undone), (true, 0), "{}", outcome.text);
}
