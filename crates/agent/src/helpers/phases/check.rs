//! What the guided phases run after a write, and how its result reads: the project's tests or
//! the model's test (with the fix, and on the original source), the verdicts, and the notes on a
//! failure (an undone edit's `UnboundLocalError` or `NameError`, a mistake in the new test).
//! Whose mistake a failure shows is the runner's adapter's reading (`plumb_verify::read_failure`),
//! so the phases tell a test's own mistake from the fix's on every runner.

use plumb_protocol::TestCounts;
use plumb_tools::TestRun;
use plumb_verify::tamper::is_test_file;
use plumb_verify::{FailureKind, FailureReading, Place, Runner, TestOutcome, TestPlaces};

use super::verdict::{self, CheckVerdict, PhaseCheck, TestVerdict};
use super::words::{self, CheckLine, Note};
use crate::baseline::Baseline;
use crate::ending::Ending;
use crate::policy::RunHandle;

/// What a phase check tells the model.
pub(crate) struct PhaseReport {
    pub(crate) text: String,
    /// Where in `text` the output of the failing run with the fix is, when it failed.
    pub(crate) failure: Option<std::ops::Range<usize>>,
}

/// Runs what the guided phases want after a write: the project's tests, or the model's test
/// (with the fix, and for a newly written test on the original source too). Returns the
/// verdict and the report for the model, without the phase's sentence.
pub(crate) async fn run_phase_check(
    run_handle: &mut dyn RunHandle,
    check: &PhaseCheck,
) -> Result<(CheckVerdict, PhaseReport), Ending> {
    let tests = check.targets();
    let runner = run_handle.runner();
    let run = run_handle.run_tests(&tests).await?;
    let reading = read_failure(runner, &run, check);
    let now = match check {
        PhaseCheck::Existing(_) => regressions_verdict(run_handle.baseline(), &run, &reading),
        PhaseCheck::BothWays(_) | PhaseCheck::First(_) | PhaseCheck::Again(_) => {
            targeted_verdict(&run, &reading, &tests)
        }
    };
    let which = match check {
        PhaseCheck::Existing(_) => "existing",
        PhaseCheck::BothWays(_) => "both_ways",
        PhaseCheck::First(_) => "first",
        PhaseCheck::Again(_) => "again",
    };
    let line = |line: CheckLine<'_>| words::check_line(&line).map_err(Ending::infra);
    let headline = run.headline();
    let mut report = format!(
        "\n\n{}\n",
        line(CheckLine::Ran {
            check: which,
            headline: &headline,
        })?
    );
    let mut failure = None;
    if now != TestVerdict::Passes && !run.excerpt.trim().is_empty() {
        let start = report.len();
        report.push_str(run.excerpt.trim_end());
        report.push('\n');
        failure = Some(start..report.len());
    }
    // A test written before any fix ran on the original code: that run is both.
    let mut original = matches!(check, PhaseCheck::First(_)).then_some(now);
    let mut same_failure = false;
    let mut broke_code = false;
    let mut passes_more = false;
    // A failing test runs on the original code too after a later code edit: only to tell
    // whether the edit touched the figure that fails.
    let compare = now == TestVerdict::Fails && matches!(check, PhaseCheck::Again(_));
    if check.runs_on_the_original() || compare {
        let before = run_handle.run_on_original(&tests).await?;
        let before_failure = read_failure(runner, &before, check);
        let before_verdict = targeted_verdict(&before, &before_failure, &tests);
        same_failure = now == TestVerdict::Fails
            && before_verdict == TestVerdict::Fails
            && reading.same_assertion(&before_failure);
        // The code stops now, where on the original code it ran to the test's check (it did
        // not stop, and the test's own mistake did not stop it first).
        broke_code = compare
            && reading.kind == FailureKind::CodeStopped
            && !matches!(
                before_failure.kind,
                FailureKind::CodeStopped | FailureKind::TestMistake
            );
        passes_more = compare
            && targeted(&run, &tests, TestOutcome::Passed)
                > targeted(&before, &tests, TestOutcome::Passed);
        if check.runs_on_the_original() {
            let headline = before.headline();
            report.push_str(&line(CheckLine::OnTheOriginal {
                headline: &headline,
            })?);
            report.push('\n');
            original = Some(before_verdict);
        }
    }
    // After a code edit once the model has a test, the project's tests must still pass too:
    // the model's test alone does not show an edit that breaks them.
    let mut broke_old = false;
    if matches!(check, PhaseCheck::Again(_)) {
        let suite = run_handle.run_tests(&[]).await?;
        if !run_handle.baseline().broken_by(&suite).is_empty() {
            broke_old = true;
            let headline = suite.headline();
            report.push_str(&line(CheckLine::ProjectTests {
                headline: &headline,
            })?);
            report.push_str(&format!("\n{}\n", suite.excerpt.trim_end()));
        }
    }
    Ok((
        CheckVerdict {
            now,
            original,
            same_failure,
            broke_old,
            broke_code,
            passes_more,
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
pub(crate) fn regressions_verdict(
    baseline: &Baseline,
    run: &TestRun,
    failure: &FailureReading,
) -> TestVerdict {
    match (&baseline.results, &run.results, run.counts) {
        (Some(_), Some(_), Some(counts)) => {
            let broken = !baseline.broken_by(run).is_empty();
            let more_errors = counts.errors > baseline.counts.errors;
            // A suite with no passing test at baseline (its only test fails) cannot lose one.
            let none_pass = counts.passed == 0 && baseline.counts.passed > 0;
            if broken || more_errors || none_pass {
                TestVerdict::Fails
            } else {
                TestVerdict::Passes
            }
        }
        _ => run_verdict(run, failure),
    }
}

/// The verdict on the tests `targets` names in one run: from the runner's per-test outcomes when
/// it gave them (a run widened to the whole suite counts only these tests), else from its
/// counts.
pub(crate) fn targeted_verdict(
    run: &TestRun,
    failure: &FailureReading,
    targets: &[String],
) -> TestVerdict {
    let outcomes = targeted_outcomes(run, targets);
    if outcomes.is_empty() {
        return run_verdict(run, failure);
    }
    let counts = TestCounts {
        passed: count(&outcomes, TestOutcome::Passed),
        failed: count(&outcomes, TestOutcome::Failed),
        errors: count(&outcomes, TestOutcome::Error),
        skipped: count(&outcomes, TestOutcome::Skipped),
        ..TestCounts::default()
    };
    TestVerdict::of(&counts, failure)
}

/// The outcomes, in one run, of the tests `targets` names.
fn targeted_outcomes(run: &TestRun, targets: &[String]) -> Vec<TestOutcome> {
    run.results
        .iter()
        .flat_map(|results| results.tests.iter())
        .filter(|(id, _)| targets.iter().any(|target| names_test(target, id)))
        .map(|(_, outcome)| *outcome)
        .collect()
}

/// How many of the tests `targets` names had the outcome `which` in one run.
fn targeted(run: &TestRun, targets: &[String], which: TestOutcome) -> u32 {
    count(&targeted_outcomes(run, targets), which)
}

fn count(outcomes: &[TestOutcome], which: TestOutcome) -> u32 {
    outcomes.iter().filter(|o| **o == which).count() as u32
}

/// True when the target (an id, a file, or a name a filter matches) names the test `id`.
fn names_test(target: &str, id: &str) -> bool {
    id == target
        || id.starts_with(&format!("{target}::"))
        || id.ends_with(&format!("::{target}"))
        || id.ends_with(&format!("/{target}"))
}

/// The verdict on one run of a test the model wrote.
pub(crate) fn run_verdict(run: &TestRun, failure: &FailureReading) -> TestVerdict {
    match run.counts {
        Some(counts) => TestVerdict::of(&counts, failure),
        None => TestVerdict::Broken,
    }
}

/// Whose mistake `run`'s failures show, as the project's runner prints them (see
/// `plumb_verify::RunnerAdapter::read_failure`).
pub(crate) fn read_failure(runner: Runner, run: &TestRun, check: &PhaseCheck) -> FailureReading {
    plumb_verify::read_failure(runner, &run.excerpt, &CheckPlaces { test: check.test() })
}

/// Test code, for a phase check: a file named as a test, or the file the check runs as its
/// test (the model's test, whatever its name).
struct CheckPlaces<'a> {
    test: Option<&'a str>,
}

impl TestPlaces for CheckPlaces<'_> {
    fn is_test(&self, place: &Place<'_>) -> bool {
        // Output names a file relative to the project or by its absolute path in the sandbox.
        let checked = self
            .test
            .is_some_and(|test| place.path == test || place.path.ends_with(&format!("/{test}")));
        checked || is_test_file(place.path)
    }
}

/// The plain-words reading of a mistake in the model's new test, when that is what failed.
pub(crate) fn report_explanation(
    check: &PhaseCheck,
    verdict: CheckVerdict,
    report: &str,
) -> Option<Note> {
    // After an edit of the code an error is the edit's, not the test's.
    (matches!(check, PhaseCheck::BothWays(_) | PhaseCheck::First(_))
        && verdict.now == TestVerdict::FailsInTheTest)
        .then(|| verdict::explain_mistake(report))
        .flatten()
}
