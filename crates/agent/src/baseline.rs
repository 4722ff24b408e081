//! The baseline: how the project's tests came out on the untouched copy, run once before the
//! first round, and the tests that failed there and then passed when run again (flaky, counted
//! neither for nor against a change). Every later verdict — the helpers' after a write, the
//! ladder's at `done` — is read against it.

use std::collections::BTreeSet;

use plumb_protocol::TestCounts;
use plumb_tools::TestRun;
use plumb_verify::{TestOutcome, TestResults};

/// The baseline run's counts and per-test outcomes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Baseline {
    pub counts: TestCounts,
    /// Per-test outcomes, when the runner reports them.
    pub results: Option<TestResults>,
    /// Tests that failed at baseline and passed when run again.
    pub flaky: BTreeSet<String>,
}

fn is_failure(outcome: &TestOutcome) -> bool {
    matches!(outcome, TestOutcome::Failed | TestOutcome::Error)
}

impl Baseline {
    /// The tests that failed or errored at baseline, flaky ones left out.
    pub(crate) fn failing(&self) -> Vec<String> {
        self.results
            .iter()
            .flat_map(|results| results.tests.iter())
            .filter(|(id, outcome)| is_failure(outcome) && !self.flaky.contains(*id))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The tests that failed or errored at baseline, flaky ones included (to run them again).
    pub(crate) fn failing_with_flaky(&self) -> Vec<String> {
        self.results
            .iter()
            .flat_map(|results| results.tests.iter())
            .filter(|(_, outcome)| is_failure(outcome))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The tests that passed at baseline, ran in `run` and did not pass.
    pub(crate) fn broken_by(&self, run: &TestRun) -> Vec<String> {
        let (Some(before), Some(after)) = (&self.results, &run.results) else {
            return Vec::new();
        };
        before
            .tests
            .iter()
            .filter(|(id, outcome)| {
                **outcome == TestOutcome::Passed
                    && after
                        .tests
                        .get(*id)
                        .is_some_and(|now| *now != TestOutcome::Passed)
            })
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// The tests that failed at baseline (flaky ones left out) and passed in `run`.
    pub(crate) fn fixed_by(&self, run: &TestRun) -> Vec<String> {
        let Some(after) = &run.results else {
            return Vec::new();
        };
        self.failing()
            .into_iter()
            .filter(|id| after.tests.get(id) == Some(&TestOutcome::Passed))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use pretty_assertions::assert_eq;

    use super::*;

    fn results(ids: &[(&str, TestOutcome)]) -> TestResults {
        TestResults {
            tests: ids
                .iter()
                .map(|(id, outcome)| (id.to_string(), *outcome))
                .collect::<BTreeMap<_, _>>(),
            ..TestResults::default()
        }
    }

    fn run(ids: &[(&str, TestOutcome)]) -> TestRun {
        TestRun {
            argv: Vec::new(),
            counts: None,
            results: Some(results(ids)),
            exit_code: Some(1),
            timed_out: false,
            cancelled: false,
            duration: Duration::ZERO,
            excerpt: String::new(),
            limits_hit: Vec::new(),
            note: None,
        }
    }

    #[test]
    fn a_run_is_read_against_the_baseline_test_by_test() {
        use TestOutcome::{Error, Failed, Passed};
        let baseline = Baseline {
            counts: TestCounts::default(),
            results: Some(results(&[
                ("a", Passed),
                ("b", Failed),
                ("c", Error),
                ("d", Failed),
                ("e", Passed),
            ])),
            flaky: ["d".to_string()].into_iter().collect(),
        };
        let after = run(&[("a", Failed), ("b", Passed), ("c", Failed), ("d", Passed)]);
        assert_eq!(
            (
                baseline.failing(),
                baseline.broken_by(&after),
                baseline.fixed_by(&after)
            ),
            (
                vec!["b".to_string(), "c".to_string()],
                vec!["a".to_string()],
                vec!["b".to_string()]
            )
        );
    }
}
