//! The full-suite step on counts alone, for runners that give no per-test results: nothing that
//! ran at baseline may fail, error, be skipped or go missing, and a run whose summary is missing or
//! whose exit code contradicts it is a failure.

use plumb_protocol::{CheckReport, CheckStatus, CheckStep, TestCounts};
use plumb_tools::TestRun;

use super::cx::report;

pub(crate) fn counts_check(baseline: &TestCounts, run: &TestRun) -> CheckReport {
    let step = CheckStep::FullSuite;
    let Some(now) = run.counts else {
        return report(
            step,
            CheckStatus::Failed,
            format!("the suite did not run: {}", run.headline()),
        );
    };
    if run.timed_out {
        return report(
            step,
            CheckStatus::Failed,
            format!("the suite hit the time limit: {}", run.headline()),
        );
    }
    let broken_now = now.failed + now.errors;
    let broken_before = baseline.failed + baseline.errors;
    let mut problems = Vec::new();
    if broken_now > broken_before {
        problems.push(format!(
            "{broken_now} tests fail or error (baseline: {broken_before})"
        ));
    }
    if now.passed < baseline.passed {
        problems.push(format!(
            "{} tests pass, fewer than the {} at baseline",
            now.passed, baseline.passed
        ));
    }
    if now.skipped > baseline.skipped {
        problems.push(format!(
            "{} tests skipped (baseline: {})",
            now.skipped, baseline.skipped
        ));
    }
    if now.deselected > baseline.deselected {
        problems.push(format!(
            "{} tests deselected (baseline: {})",
            now.deselected, baseline.deselected
        ));
    }
    if now.total() < baseline.total() {
        problems.push(format!(
            "{} tests ran, fewer than the {} at baseline",
            now.total(),
            baseline.total()
        ));
    }
    if broken_now == 0 && run.exit_code != Some(0) {
        problems.push(format!(
            "the runner exited with {:?} although it reported no failure",
            run.exit_code
        ));
    }
    if problems.is_empty() {
        report(
            step,
            CheckStatus::Passed,
            format!("{} (baseline: {})", now.summary(), baseline.summary()),
        )
    } else {
        report(
            step,
            CheckStatus::Failed,
            format!("{}: {}", run.headline(), problems.join("; ")),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use pretty_assertions::assert_eq;

    use super::*;

    fn run_with(counts: Option<TestCounts>, exit: i32) -> TestRun {
        TestRun {
            argv: vec!["pytest".into()],
            counts,
            results: None,
            exit_code: Some(exit),
            timed_out: false,
            cancelled: false,
            duration: Duration::from_millis(10),
            excerpt: String::new(),
            limits_hit: Vec::new(),
            note: None,
        }
    }

    fn counts(passed: u32, failed: u32, skipped: u32) -> TestCounts {
        TestCounts {
            passed,
            failed,
            skipped,
            ..TestCounts::default()
        }
    }

    #[test]
    fn suite_verdicts() {
        let baseline = counts(40, 0, 0);
        let cases = [
            (Some(counts(41, 0, 0)), 0),
            (Some(counts(40, 1, 0)), 1),
            (Some(counts(0, 0, 41)), 0),
            (None, 0),
            (Some(counts(39, 0, 0)), 0),
            (Some(counts(41, 0, 0)), 2),
        ];
        let actual: Vec<CheckStatus> = cases
            .into_iter()
            .map(|(c, exit)| counts_check(&baseline, &run_with(c, exit)).status)
            .collect();
        use CheckStatus::{Failed, Passed};
        assert_eq!(actual, vec![Passed, Failed, Failed, Failed, Failed, Failed]);
    }
}
