//! The guided phases on runners other than pytest: the runner's adapter tells them whose
//! mistake a failure shows and whether two runs failed on the same values, from each tool's own
//! output (the phases read pytest's words only, before).

use plumb_protocol::ToolCall;
use plumb_verify::Runner;
use plumb_verify::TestOutcome::{Failed, Passed};
use serde_json::json;

use super::Guided;
use crate::facts::{Briefing, RunFacts};
use crate::fake_run::{FakeRun, Side, baseline, test_run};
use crate::policy::{Policy, ToolOutcome};

fn edit(path: &str) -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: "edit_file".into(),
        arguments: json!({"path": path, "old_text": "", "new_text": "b"}),
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

fn guided(run: &FakeRun, runner: Runner) -> Guided {
    let briefing = Briefing::default();
    let settings = plumb_config::Helpers::default();
    Guided::new(
        &RunFacts {
            ticket: &run.ticket,
            runner,
            baseline: &run.baseline,
            fail_to_pass: &[],
            profile: plumb_protocol::ModelProfile::Small,
            can_sample: false,
            briefing: &briefing,
            settings: &settings,
        },
        false,
        false,
    )
}

/// What node 20's `node --test` prints (TAP, to a pipe) for a test that uses a name it never
/// defined.
const NODE_REFERENCE_ERROR: &str = "TAP version 13
# Subtest: adds
not ok 1 - adds
  ---
  duration_ms: 13.555814
  location: '/w/test/add.test.js:5:1'
  failureType: 'testCodeFailure'
  error: 'expected is not defined'
  code: 'ERR_TEST_FAILURE'
  name: 'ReferenceError'
  stack: |-
    TestContext.<anonymous> (/w/test/add.test.js:6:33)
    Test.runInAsyncScope (node:async_hooks:206:9)
  ...
1..1
# tests 1
# pass 0
# fail 1
";

/// A test written first that fails on a `ReferenceError` in the test itself does not show the
/// bug: the model is told to fix the test. (Read by pytest's words, a failing node test was a
/// reproduction whatever it failed on.)
#[tokio::test]
async fn a_node_test_that_fails_on_its_own_reference_error_is_the_tests_mistake() {
    let mut run = FakeRun {
        runner: Some(Runner::Npm),
        baseline: baseline(&[("test/old.test.js", Passed)]),
        ..FakeRun::default()
    };
    let mut guided = guided(&run, Runner::Npm);
    let mut failed = test_run(&[("test/add.test.js", Failed)], NODE_REFERENCE_ERROR);
    failed.results = None;
    run.runs.push_back((Side::Workspace, failed));
    let mut outcome = written();
    guided
        .after_tool(&mut run, &edit("test/add.test.js"), &mut outcome)
        .await
        .unwrap_or_else(|e| panic!("{}", e.reason));
    assert!(
        outcome
            .text
            .contains("fails on a mistake in the test itself"),
        "{}",
        outcome.text
    );
}

const GO_TEST: &str = "example.com/m/calc/TestAdd";

/// `go test`'s failure of `TestAdd` with the value it got.
fn go_failure(got: i32) -> String {
    format!(
        "--- FAIL: TestAdd (0.00s)\n    calc_test.go:7: Add(2, 3) = {got}, want 5\nFAIL\nFAIL\texample.com/m/calc\t0.004s\nFAIL\n"
    )
}

/// A fix after which the failing go test reports the same value as on the original code did
/// not touch what the test checks, and the model is told so; one that moved the value is judged
/// as a fix not right yet.
#[tokio::test]
async fn a_go_fix_that_left_the_reported_value_as_it_was_is_named() {
    let mut run = FakeRun {
        runner: Some(Runner::Go),
        baseline: baseline(&[(GO_TEST, Failed), ("example.com/m/calc/TestSub", Passed)]),
        ..FakeRun::default()
    };
    let mut guided = guided(&run, Runner::Go);
    let suite = || {
        test_run(
            &[(GO_TEST, Failed), ("example.com/m/calc/TestSub", Passed)],
            "",
        )
    };
    run.runs.extend([
        (
            Side::Workspace,
            test_run(&[(GO_TEST, Failed)], &go_failure(-1)),
        ),
        (
            Side::Original,
            test_run(&[(GO_TEST, Failed)], &go_failure(-1)),
        ),
        (Side::Workspace, suite()),
    ]);
    let mut outcome = written();
    guided
        .after_tool(&mut run, &edit("calc/calc.go"), &mut outcome)
        .await
        .unwrap_or_else(|e| panic!("{}", e.reason));
    assert!(
        outcome.text.contains("exactly as on the original code"),
        "{}",
        outcome.text
    );
    run.runs.extend([
        (
            Side::Workspace,
            test_run(&[(GO_TEST, Failed)], &go_failure(4)),
        ),
        (
            Side::Original,
            test_run(&[(GO_TEST, Failed)], &go_failure(-1)),
        ),
        (Side::Workspace, suite()),
    ]);
    let mut outcome = written();
    guided
        .after_tool(&mut run, &edit("calc/calc.go"), &mut outcome)
        .await
        .unwrap_or_else(|e| panic!("{}", e.reason));
    assert!(
        !outcome.text.contains("exactly as on the original code"),
        "{}",
        outcome.text
    );
}
