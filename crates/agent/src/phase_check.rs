//! What the guided phases run after a write, and how its result reads: the project's tests or
//! the model's test (with the fix, and on the original source), the verdicts, and the notes on a
//! failure (an undone edit's `UnboundLocalError` or `NameError`, a mistake in the new test).

use plumb_protocol::ToolCall;
use plumb_tools::TestRun;
use plumb_verify::TestOutcome;

use crate::phases::{self, CheckVerdict, PhaseCheck, TestVerdict};
use crate::run::{Ending, PhaseReport, Run};
use crate::{unbound, undefined};

impl Run {
    /// Runs what the guided phases want after a write: the project's tests, or the model's test
    /// (with the fix, and for a newly written test on the original source too). Returns the
    /// verdict and the report for the model, without the phase's sentence.
    pub(crate) async fn run_phase_check(
        &mut self,
        check: &PhaseCheck,
    ) -> Result<(CheckVerdict, PhaseReport), Ending> {
        let root = self.workspace.root().to_path_buf();
        let tests: Vec<String> = check.test().map(str::to_string).into_iter().collect();
        let run = self.run_tests_in(&root, &tests).await?;
        let now = match check {
            PhaseCheck::Existing(_) => self.regressions_verdict(&run),
            _ => run_verdict(&run),
        };
        let what = match check {
            PhaseCheck::Existing(_) => "plumb ran the existing tests",
            PhaseCheck::BothWays(_) => "plumb ran it with your fix",
            PhaseCheck::Again(_) => "plumb ran your test again",
        };
        let mut report = format!("\n\n{what}: {}\n", run.headline());
        let mut failure = None;
        if now != TestVerdict::Passes && !run.excerpt.trim().is_empty() {
            let start = report.len();
            report.push_str(run.excerpt.trim_end());
            report.push('\n');
            failure = Some(start..report.len());
        }
        let mut original = None;
        let mut same_failure = false;
        // A failing test runs on the original code too after a later code edit: only to tell
        // whether the edit touched the figure that fails.
        let compare = now == TestVerdict::Fails && matches!(check, PhaseCheck::Again(_));
        if (check.runs_on_the_original() || compare)
            && let Some(test) = check.test()
        {
            let before = self.run_on_original_source(test).await?;
            let before_verdict = run_verdict(&before);
            same_failure = now == TestVerdict::Fails
                && before_verdict == TestVerdict::Fails
                && phases::same_assertion(&run.excerpt, &before.excerpt);
            if check.runs_on_the_original() {
                report.push_str(&format!(
                    "and on the original code: {}\n",
                    before.headline()
                ));
                original = Some(before_verdict);
            }
        }
        // After a code edit once the model has a test, the project's tests must still pass too:
        // the model's test alone does not show an edit that breaks them.
        let mut broke_old = false;
        if matches!(check, PhaseCheck::Again(_)) {
            let suite = self.run_tests_in(&root, &[]).await?;
            if self.broke_passing_tests(&suite) {
                broke_old = true;
                report.push_str(&format!(
                    "and the project's tests: {}\n{}\n",
                    suite.headline(),
                    suite.excerpt.trim_end()
                ));
            }
        }
        Ok((
            CheckVerdict {
                now,
                original,
                same_failure,
                broke_old,
            },
            PhaseReport {
                text: report,
                failure,
            },
        ))
    }

    /// The project's tests after a fix: `Passes` when every test that passed at baseline and ran
    /// still passes (tests that failed before do not count against the fix) and no more errors
    /// came than at baseline (a module that no longer imports hides its tests as one error).
    pub(crate) fn regressions_verdict(&self, run: &TestRun) -> TestVerdict {
        match (&self.baseline_results, &run.results, run.counts) {
            (Some(before), Some(after), Some(counts)) => {
                let broken = before.tests.iter().any(|(id, outcome)| {
                    *outcome == TestOutcome::Passed
                        && after
                            .tests
                            .get(id)
                            .is_some_and(|now| *now != TestOutcome::Passed)
                });
                let more_errors = counts.errors > self.baseline.errors;
                if broken || more_errors || counts.passed == 0 {
                    TestVerdict::Fails
                } else {
                    TestVerdict::Passes
                }
            }
            _ => run_verdict(run),
        }
    }

    /// True when a test that passed at baseline ran in `run` and did not pass. Unlike
    /// [`Run::regressions_verdict`], new collection errors do not count: once the model has a
    /// test, they are as likely its test's.
    pub(crate) fn broke_passing_tests(&self, run: &TestRun) -> bool {
        let (Some(before), Some(after)) = (&self.baseline_results, &run.results) else {
            return false;
        };
        before.tests.iter().any(|(id, outcome)| {
            *outcome == TestOutcome::Passed
                && after
                    .tests
                    .get(id)
                    .is_some_and(|now| *now != TestOutcome::Passed)
        })
    }
}

/// The verdict on one run of a test the model wrote.
pub(crate) fn run_verdict(run: &TestRun) -> TestVerdict {
    match run.counts {
        Some(counts) => TestVerdict::of(&counts, &run.excerpt),
        None => TestVerdict::Broken,
    }
}

impl Run {
    /// The note on an undone code edit whose tests failed with `UnboundLocalError` (see
    /// [`unbound`]) or `NameError` (see [`undefined`]), read against the file as it is again.
    pub(crate) fn name_note(&self, call: &ToolCall, path: &str, report: &str) -> Option<String> {
        let text = self
            .workspace
            .tree()
            .read_text(path, plumb_tools::MAX_READ_BYTES)
            .ok()?;
        let old_text = call
            .arguments
            .get("old_text")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        unbound::used_before_assignment(report, path, &text, old_text)
            .or_else(|| undefined::not_defined(report, &text, old_text))
    }
}

/// The plain-words reading of a mistake in the model's new test, when that is what failed.
pub(crate) fn report_explanation(
    check: &PhaseCheck,
    verdict: CheckVerdict,
    report: &str,
) -> Option<String> {
    // After an edit of the code an error is the edit's, not the test's.
    (matches!(check, PhaseCheck::BothWays(_)) && verdict.now == TestVerdict::FailsInTheTest)
        .then(|| phases::explain_mistake(report))
        .flatten()
}
