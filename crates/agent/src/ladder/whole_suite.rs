//! The reproduce and pass steps when the whole suite ran instead of the targeted tests: the test
//! command is one plumb cannot narrow (a script, `make test`, `sh -c …`), or the task's test ids
//! cannot be used. Both trees then run everything, and the verdict comes from what the output
//! gives, said in the evidence:
//!
//! - per-test results (a runner's output plumb recognises, see `plumb_verify::read_results`):
//!   the tests in the targeted files (or with the targeted ids) are judged; when no test id
//!   names a target (a wrapper that runs the runner from another folder), the tests that fail on
//!   the baseline source but did not fail at baseline are the new ones;
//! - otherwise the counts and the exit code: the baseline source with the test changes must have
//!   more failures than the untouched baseline, with an exit code that is a test failure (not 126
//!   or 127, "cannot run" and "not found", nor a kill), and the patched tree no more than the
//!   baseline, with no more skipped, and exit 0 when nothing fails.

use plumb_protocol::{CheckStatus, TestCounts};
use plumb_tools::TestRun;
use plumb_verify::{TestOutcome, TestResults};

/// A step's verdict on a whole-suite run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub status: CheckStatus,
    pub evidence: String,
    /// The tests that failed (reproduce), by id; empty when judged from counts.
    pub failing: Vec<String>,
}

/// What the steps compare a whole-suite run with.
pub(crate) struct Before<'a> {
    pub counts: &'a TestCounts,
    pub results: Option<&'a TestResults>,
}

/// How the verdict was reached, for the evidence.
fn how(run: &TestRun, per_test: bool) -> String {
    let why = run
        .note
        .as_deref()
        .unwrap_or("plumb ran the whole suite")
        .trim_end_matches('.');
    if per_test {
        format!("{why}, and judged from the per-test results in its output")
    } else {
        format!(
            "{why}, and judged from the counts and exit codes in its output (it names no single test)"
        )
    }
}

/// Whether the test `id` is one of `target` (a test id, a file or a folder).
pub(super) fn belongs(id: &str, target: &str) -> bool {
    id == target
        || id.strip_prefix(target).is_some_and(|rest| {
            rest.starts_with("::") || rest.starts_with('/') || rest.starts_with('[')
        })
}

fn is_broken(outcome: TestOutcome) -> bool {
    matches!(outcome, TestOutcome::Failed | TestOutcome::Error)
}

fn broken(counts: &TestCounts) -> u32 {
    counts.failed + counts.errors
}

/// An exit code that says the tests ran and some failed, as opposed to a command that could not
/// start (126, 127) or was killed (no code).
fn is_test_failure(run: &TestRun) -> bool {
    !run.timed_out
        && run
            .exit_code
            .is_some_and(|code| code != 0 && code != 126 && code != 127)
}

/// The ids of `results` the steps judge: those of `targets` when any names one, else `fallback`.
fn targeted<'a>(results: &'a TestResults, targets: &[String]) -> Vec<(&'a String, TestOutcome)> {
    results
        .tests
        .iter()
        .filter(|(id, _)| targets.iter().any(|target| belongs(id, target)))
        .map(|(id, outcome)| (id, *outcome))
        .collect()
}

/// At most five ids, then how many more.
fn listed(ids: &[String]) -> String {
    let shown: Vec<&str> = ids.iter().take(5).map(String::as_str).collect();
    match ids.len().saturating_sub(5) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// The reproduce step on a whole-suite run of the baseline source plus the test changes;
/// `listed_targets` names the targets for the evidence. The caller has checked that the run has
/// counts (else the suite did not run).
pub(crate) fn reproduce(
    run: &TestRun,
    counts: &TestCounts,
    targets: &[String],
    listed_targets: &str,
    baseline: &Before<'_>,
) -> Verdict {
    if let Some(results) = &run.results {
        let mut judged = targeted(results, targets);
        if judged.is_empty() {
            // No id names a target: the new failures are the test changes'.
            judged = results
                .tests
                .iter()
                .filter(|(id, _)| {
                    baseline
                        .results
                        .and_then(|before| before.tests.get(*id))
                        .is_none_or(|before| !is_broken(*before))
                })
                .map(|(id, outcome)| (id, *outcome))
                .collect();
        }
        let failing: Vec<String> = judged
            .iter()
            .filter(|(_, outcome)| is_broken(*outcome))
            .map(|(id, _)| (*id).clone())
            .collect();
        if failing.is_empty() {
            return Verdict {
                status: CheckStatus::Failed,
                evidence: format!(
                    "{listed_targets} already pass on the baseline source ({}), so they do not show the bug: make a test fail without your fix; {}",
                    counts.summary(),
                    how(run, true)
                ),
                failing,
            };
        }
        return Verdict {
            status: CheckStatus::Passed,
            evidence: format!(
                "{} fail on the baseline source ({}); {}",
                listed(&failing),
                counts.summary(),
                how(run, true)
            ),
            failing,
        };
    }
    let now = broken(counts);
    let before = broken(baseline.counts);
    let exit = exit_words(run);
    let (status, what) = if now > before && is_test_failure(run) {
        (
            CheckStatus::Passed,
            format!(
                "{listed_targets} fail on the baseline source: {now} tests fail or error there, {before} on the untouched baseline ({exit})"
            ),
        )
    } else if now > before {
        (
            CheckStatus::Failed,
            format!(
                "the test command ended with {exit} on the baseline source, which is not a test failure (126: cannot run, 127: not found), so it does not show that {listed_targets} fail"
            ),
        )
    } else {
        (
            CheckStatus::Failed,
            format!(
                "{listed_targets} already pass on the baseline source: no more tests fail there ({now}) than on the untouched baseline ({before}), so they do not show the bug: make a test fail without your fix"
            ),
        )
    };
    Verdict {
        status,
        evidence: format!("{what}; {}", how(run, false)),
        failing: Vec::new(),
    }
}

/// "exit 1", or how the run ended without one.
fn exit_words(run: &TestRun) -> String {
    match (run.exit_code, run.timed_out) {
        (_, true) => "the time limit".to_string(),
        (Some(code), false) => format!("exit {code}"),
        (None, false) => "a kill".to_string(),
    }
}

/// The pass step on a whole-suite run of the patched tree. `failing` are the ids that failed on
/// the baseline source (reproduce), `reproduced` its counts. The caller has checked that the run
/// has counts.
pub(crate) fn pass(
    run: &TestRun,
    counts: &TestCounts,
    targets: &[String],
    failing: &[String],
    baseline: &Before<'_>,
) -> Verdict {
    let mut problems = Vec::new();
    if run.timed_out {
        problems.push("the suite hit the time limit".to_string());
    }
    if let Some(results) = run
        .results
        .as_ref()
        .filter(|_| !failing.is_empty() || !targets.is_empty())
    {
        let mut judged = targeted(results, targets);
        for id in failing {
            if !judged.iter().any(|(judged_id, _)| *judged_id == id) {
                let outcome = results.tests.get(id).copied();
                match outcome {
                    Some(outcome) => judged.push((id, outcome)),
                    None => problems.push(format!("{} did not run", plumb_verify::shown_id(id))),
                }
            }
        }
        if !judged.is_empty() || !failing.is_empty() {
            let ids = |keep: fn(TestOutcome) -> bool| -> Vec<String> {
                judged
                    .iter()
                    .filter(|(_, outcome)| keep(*outcome))
                    .map(|(id, _)| (*id).clone())
                    .collect()
            };
            let broken_now = ids(is_broken);
            let skipped = ids(|o| {
                matches!(
                    o,
                    TestOutcome::Skipped | TestOutcome::XFailed | TestOutcome::XPassed
                )
            });
            let passed = ids(|o| o == TestOutcome::Passed);
            if passed.is_empty() {
                problems.push("none of the targeted tests passed".to_string());
            }
            if !broken_now.is_empty() {
                problems.push(format!("{} fail or error", listed(&broken_now)));
            }
            if !skipped.is_empty() {
                problems.push(format!("{} skipped or marked xfail", listed(&skipped)));
            }
            return verdict(run, counts, problems, passed, true);
        }
    }
    let now = broken(counts);
    let before = broken(baseline.counts);
    if now > before {
        problems.push(format!(
            "{now} tests fail or error, more than the {before} on the untouched baseline"
        ));
    }
    if counts.skipped + counts.xfailed > baseline.counts.skipped + baseline.counts.xfailed {
        problems.push(format!(
            "{} tests skipped or marked xfail (baseline: {})",
            counts.skipped + counts.xfailed,
            baseline.counts.skipped + baseline.counts.xfailed
        ));
    }
    if now == 0 && run.exit_code != Some(0) && !run.timed_out {
        problems.push(format!(
            "the test command ended with {} although no test failed",
            exit_words(run)
        ));
    }
    verdict(run, counts, problems, Vec::new(), false)
}

fn verdict(
    run: &TestRun,
    counts: &TestCounts,
    problems: Vec<String>,
    passed: Vec<String>,
    per_test: bool,
) -> Verdict {
    if problems.is_empty() {
        let what = if passed.is_empty() {
            format!(
                "no more tests fail than on the untouched baseline ({})",
                counts.summary()
            )
        } else {
            format!(
                "{} pass on the patched tree ({})",
                listed(&passed),
                counts.summary()
            )
        };
        Verdict {
            status: CheckStatus::Passed,
            evidence: format!("{what}; {}", how(run, per_test)),
            failing: Vec::new(),
        }
    } else {
        Verdict {
            status: CheckStatus::Failed,
            evidence: format!(
                "{}: {}; {}",
                run.headline(),
                problems.join("; "),
                how(run, per_test)
            ),
            failing: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use pretty_assertions::assert_eq;

    use super::*;

    const NOTE: &str = "plumb cannot run single tests with `make test`, so it ran the whole suite.";

    fn counts(passed: u32, failed: u32) -> TestCounts {
        TestCounts {
            passed,
            failed,
            ..TestCounts::default()
        }
    }

    fn results(tests: &[(&str, TestOutcome)]) -> TestResults {
        let tests: BTreeMap<String, TestOutcome> =
            tests.iter().map(|(id, o)| (id.to_string(), *o)).collect();
        TestResults {
            tests,
            collected: None,
            counts: TestCounts::default(),
        }
    }

    fn run(counts: TestCounts, results: Option<TestResults>, exit: Option<i32>) -> TestRun {
        TestRun {
            argv: vec!["make".into(), "test".into()],
            counts: Some(counts),
            results,
            exit_code: exit,
            timed_out: false,
            cancelled: false,
            duration: Duration::from_millis(10),
            excerpt: String::new(),
            limits_hit: Vec::new(),
            note: Some(NOTE.to_string()),
        }
    }

    /// The baseline of the per-test cases: one test passing, one already broken.
    fn one_passing_one_broken() -> TestResults {
        results(&[
            ("tests/test_a.py::test_one", TestOutcome::Passed),
            ("tests/test_old.py::test_broken", TestOutcome::Failed),
        ])
    }

    #[test]
    fn reproduce_per_test_judges_the_targeted_tests_else_the_new_failures() {
        use TestOutcome::{Failed, Passed};
        let base_counts = counts(2, 1);
        let base_results = one_passing_one_broken();
        let baseline = Before {
            counts: &base_counts,
            results: Some(&base_results),
        };
        let targets = vec!["tests/test_gst.py".to_string()];
        let with = |tests: &[(&str, TestOutcome)]| run(counts(2, 2), Some(results(tests)), Some(1));
        let cases = [
            with(&[
                ("tests/test_gst.py::test_gst", Failed),
                ("tests/test_old.py::test_broken", Failed),
            ]),
            with(&[
                ("tests/test_gst.py::test_gst", Passed),
                ("tests/test_old.py::test_broken", Failed),
            ]),
            // Ids relative to another folder: the failure that is new is the test change's.
            with(&[
                ("test_gst.py::test_gst", Failed),
                ("test_old.py::test_broken", Failed),
                ("tests/test_old.py::test_broken", Failed),
            ]),
        ];
        let actual: Vec<(CheckStatus, Vec<String>)> = cases
            .iter()
            .map(|r| {
                let v = reproduce(
                    r,
                    r.counts.as_ref().unwrap(),
                    &targets,
                    "tests/test_gst.py",
                    &baseline,
                );
                (v.status, v.failing)
            })
            .collect();
        let expected = vec![
            (
                CheckStatus::Passed,
                vec!["tests/test_gst.py::test_gst".to_string()],
            ),
            (CheckStatus::Failed, vec![]),
            (
                CheckStatus::Passed,
                vec![
                    "test_gst.py::test_gst".to_string(),
                    "test_old.py::test_broken".to_string(),
                ],
            ),
        ];
        assert_eq!(actual, expected);
        let evidence = reproduce(
            &cases[0],
            &counts(2, 2),
            &targets,
            "tests/test_gst.py",
            &baseline,
        )
        .evidence;
        assert_eq!(
            evidence,
            "tests/test_gst.py::test_gst fail on the baseline source (2 failed, 2 passed); plumb cannot run single tests with `make test`, so it ran the whole suite, and judged from the per-test results in its output"
        );
    }

    #[test]
    fn reproduce_from_counts_needs_more_failures_and_a_test_failures_exit_code() {
        let base_counts = counts(40, 0);
        let baseline = Before {
            counts: &base_counts,
            results: None,
        };
        let targets = vec!["tests/test_gst.py".to_string()];
        let cases = [
            run(counts(40, 1), None, Some(1)),
            run(counts(40, 1), None, Some(127)),
            run(counts(40, 1), None, None),
            run(counts(41, 0), None, Some(0)),
        ];
        let actual: Vec<CheckStatus> = cases
            .iter()
            .map(|r| {
                reproduce(
                    r,
                    r.counts.as_ref().unwrap(),
                    &targets,
                    "tests/test_gst.py",
                    &baseline,
                )
                .status
            })
            .collect();
        use CheckStatus::{Failed, Passed};
        assert_eq!(actual, vec![Passed, Failed, Failed, Failed]);
        assert_eq!(
            reproduce(
                &cases[1],
                &counts(40, 1),
                &targets,
                "tests/test_gst.py",
                &baseline
            )
            .evidence,
            "the test command ended with exit 127 on the baseline source, which is not a test failure (126: cannot run, 127: not found), so it does not show that tests/test_gst.py fail; plumb cannot run single tests with `make test`, so it ran the whole suite, and judged from the counts and exit codes in its output (it names no single test)"
        );
    }

    #[test]
    fn pass_per_test_judges_the_targeted_and_reproduced_tests_only() {
        use TestOutcome::{Failed, Passed, Skipped};
        let base_counts = counts(1, 1);
        let base_results = one_passing_one_broken();
        let baseline = Before {
            counts: &base_counts,
            results: Some(&base_results),
        };
        let targets = vec!["tests/test_gst.py".to_string()];
        let failing = vec!["tests/test_gst.py::test_gst".to_string()];
        let with = |tests: &[(&str, TestOutcome)]| run(counts(2, 1), Some(results(tests)), Some(1));
        let cases = [
            // A test that failed at baseline still fails: not the fix's business.
            with(&[
                ("tests/test_gst.py::test_gst", Passed),
                ("tests/test_old.py::test_broken", Failed),
            ]),
            with(&[("tests/test_gst.py::test_gst", Failed)]),
            with(&[("tests/test_gst.py::test_gst", Skipped)]),
            with(&[("tests/test_a.py::test_one", Passed)]),
        ];
        let actual: Vec<(CheckStatus, String)> = cases
            .iter()
            .map(|r| {
                let v = pass(r, r.counts.as_ref().unwrap(), &targets, &failing, &baseline);
                let problem = v
                    .evidence
                    .split("(exit 1): ")
                    .nth(1)
                    .unwrap_or_default()
                    .split(';')
                    .next()
                    .unwrap_or_default()
                    .to_string();
                (v.status, problem)
            })
            .collect();
        let expected = vec![
            (CheckStatus::Passed, "".to_string()),
            (
                CheckStatus::Failed,
                "none of the targeted tests passed".to_string(),
            ),
            (
                CheckStatus::Failed,
                "none of the targeted tests passed".to_string(),
            ),
            (
                CheckStatus::Failed,
                "tests/test_gst.py::test_gst did not run".to_string(),
            ),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn pass_from_counts_needs_no_more_failures_or_skips_than_the_baseline() {
        let base_counts = counts(40, 1);
        let baseline = Before {
            counts: &base_counts,
            results: None,
        };
        let skipped = TestCounts {
            passed: 40,
            failed: 1,
            skipped: 1,
            ..TestCounts::default()
        };
        let cases = [
            run(counts(41, 1), None, Some(1)),
            run(counts(40, 2), None, Some(1)),
            run(skipped, None, Some(1)),
        ];
        let actual: Vec<CheckStatus> = cases
            .iter()
            .map(|r| pass(r, r.counts.as_ref().unwrap(), &[], &[], &baseline).status)
            .collect();
        use CheckStatus::{Failed, Passed};
        assert_eq!(actual, vec![Passed, Failed, Failed]);
        let clean = Before {
            counts: &counts(40, 0),
            results: None,
        };
        assert_eq!(
            pass(
                &run(counts(41, 0), None, Some(2)),
                &counts(41, 0),
                &[],
                &[],
                &clean
            )
            .status,
            Failed,
            "exit 2 with nothing failing contradicts the counts"
        );
    }
}
