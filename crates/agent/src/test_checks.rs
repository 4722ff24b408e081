//! The ladder's steps that run tests: reproduce (the new tests on the baseline source must fail),
//! pass (the same tests on the patched tree pass, none skipped) and the full suite against the
//! baseline's per-test outcomes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use plumb_context::syntax::Language;
use plumb_protocol::{CheckReport, CheckStatus, CheckStep, Outcome};
use plumb_tools::{TestRun, ToolError};
use plumb_verify::tamper::{ChangeStatus, FileChange, is_test_file};
use plumb_verify::{TestOutcome, TestResults};

use crate::done::report;
use crate::run::{Ending, Run};

/// A step's report and the test output worth showing the model when it failed.
pub(crate) type Checked = (CheckReport, String);

impl Run {
    /// The tests the ladder targets: the task's FAIL_TO_PASS list when it has one, else every new or
    /// changed test file in a language plumb parses.
    fn target_tests(&self, changes: &[FileChange]) -> Vec<String> {
        if !self.spec.fail_to_pass.is_empty() {
            return self.spec.fail_to_pass.clone();
        }
        changes
            .iter()
            .filter(|c| !matches!(c.status, ChangeStatus::Deleted))
            .filter(|c| is_test_file(&c.path))
            .filter(|c| Language::from_path(Path::new(&c.path)).is_some())
            .map(|c| c.path.clone())
            .collect()
    }

    pub(crate) async fn check_reproduce(
        &mut self,
        changes: &[FileChange],
    ) -> Result<Checked, Ending> {
        let step = CheckStep::Reproduce;
        self.target_tests = self.target_tests(changes);
        self.reproduce_failing.clear();
        if self.target_tests.is_empty() {
            return Ok((
                report(
                    step,
                    CheckStatus::Failed,
                    "no new or changed test: add a test that fails without your fix and passes with it",
                ),
                String::new(),
            ));
        }
        let dest = self
            .spec
            .run_dir
            .join("checks")
            .join(format!("reproduce-{}", self.done_count));
        self.workspace
            .materialize(self.workspace.baseline(), &dest)
            .map_err(Ending::infra)?;
        overlay_test_changes(self.workspace.root(), &dest, changes).map_err(Ending::infra)?;
        let targets = self.target_tests.clone();
        let run = self.run_tests_in(&dest, &targets).await;
        let _ = std::fs::remove_dir_all(&dest);
        let run = run?;
        let listed = targets.join(", ");
        let Some(counts) = run.counts else {
            return Ok((
                report(
                    step,
                    CheckStatus::Failed,
                    format!(
                        "{listed} did not run on the baseline source: {}",
                        run.headline()
                    ),
                ),
                run.excerpt,
            ));
        };
        let failing = run
            .results
            .as_ref()
            .map(|r| ids_where(r, |o| matches!(o, TestOutcome::Failed | TestOutcome::Error)))
            .unwrap_or_default();
        if counts.failed + counts.errors == 0 {
            return Ok((
                report(
                    step,
                    CheckStatus::Failed,
                    format!(
                        "{listed} already pass on the baseline source ({}), so they do not show the bug: make a test fail without your fix",
                        counts.summary()
                    ),
                ),
                String::new(),
            ));
        }
        self.reproduce_failing = failing.clone();
        let shown = if failing.is_empty() {
            listed
        } else {
            failing.join(", ")
        };
        Ok((
            report(
                step,
                CheckStatus::Passed,
                format!("{shown} fail on the baseline source ({})", counts.summary()),
            ),
            String::new(),
        ))
    }

    pub(crate) async fn check_pass(&mut self) -> Result<Checked, Ending> {
        let step = CheckStep::Pass;
        let targets = self.target_tests.clone();
        let root = self.workspace.root().to_path_buf();
        let run = self.run_tests_in(&root, &targets).await?;
        let Some(counts) = run.counts else {
            return Ok((
                report(
                    step,
                    CheckStatus::Failed,
                    format!("the tests did not run: {}", run.headline()),
                ),
                run.excerpt,
            ));
        };
        let mut problems = Vec::new();
        if counts.passed == 0 {
            problems.push("no test passed".to_string());
        }
        if counts.failed + counts.errors > 0 {
            problems.push(format!("{} fail or error", counts.failed + counts.errors));
        }
        let skipped = counts.skipped + counts.xfailed + counts.xpassed + counts.deselected;
        if skipped > 0 {
            problems.push(format!("{skipped} skipped, deselected or marked xfail"));
        }
        if let Some(results) = &run.results {
            let missing: Vec<&String> = self
                .reproduce_failing
                .iter()
                .filter(|id| results.tests.get(*id) != Some(&TestOutcome::Passed))
                .collect();
            if !missing.is_empty() {
                problems.push(format!(
                    "{} failed on the baseline but do not pass now",
                    missing
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        if problems.is_empty() {
            Ok((
                report(
                    step,
                    CheckStatus::Passed,
                    format!(
                        "{} on the patched tree ({})",
                        targets.join(", "),
                        counts.summary()
                    ),
                ),
                String::new(),
            ))
        } else {
            Ok((
                report(
                    step,
                    CheckStatus::Failed,
                    format!("{}: {}", run.headline(), problems.join("; ")),
                ),
                run.excerpt,
            ))
        }
    }

    pub(crate) async fn check_full_suite(&mut self) -> Result<Checked, Ending> {
        let root = self.workspace.root().to_path_buf();
        let run = self.run_tests_in(&root, &[]).await?;
        let report = match (&self.baseline_results, &run.results) {
            (Some(before), Some(after)) if !run.timed_out => {
                per_test_check(before, after, &run, &self.flaky)
            }
            _ => crate::suite::counts_check(&self.baseline, &run),
        };
        let excerpt = if report.status == CheckStatus::Failed {
            run.excerpt
        } else {
            String::new()
        };
        Ok((report, excerpt))
    }

    /// Runs `test` on the original source with only the test changes made so far (what the
    /// reproduce step does at `done`), for the guided phases.
    pub(crate) async fn run_on_original_source(&mut self, test: &str) -> Result<TestRun, Ending> {
        let changed = self.workspace.changed_files().map_err(Ending::infra)?;
        let changes = self.file_changes(&changed)?;
        let dest = self.fresh_baseline_tree("original-source")?;
        overlay_test_changes(self.workspace.root(), &dest, &changes).map_err(Ending::infra)?;
        let run = self.run_tests_in(&dest, &[test.to_string()]).await;
        let _ = std::fs::remove_dir_all(&dest);
        run
    }

    /// A fresh copy of the baseline tree in `checks/NAME` of the run folder (whatever an earlier
    /// check left there removed first), for a check that runs on the original code.
    pub(crate) fn fresh_baseline_tree(&self, name: &str) -> Result<PathBuf, Ending> {
        let dest = self.spec.run_dir.join("checks").join(name);
        if dest.exists() {
            std::fs::remove_dir_all(&dest).map_err(Ending::infra)?;
        }
        self.workspace
            .materialize(self.workspace.baseline(), &dest)
            .map_err(Ending::infra)?;
        Ok(dest)
    }

    /// Runs the test command (narrowed to `tests` when given) in `workdir`.
    pub(crate) async fn run_tests_in(
        &mut self,
        workdir: &Path,
        tests: &[String],
    ) -> Result<TestRun, Ending> {
        let run = self
            .run_counted(workdir, tests)
            .await
            .map_err(|err| match err {
                ToolError::Infra(text) => Ending::new(Outcome::InfraError, text),
                // A test id the runner cannot take (e.g. from a task's FAIL_TO_PASS) is the task's
                // fault, but the ladder cannot go on without it.
                ToolError::RespondToModel(text) => Ending::new(
                    Outcome::InfraError,
                    format!("the checks could not run the tests: {text}"),
                ),
            })?;
        if run.cancelled {
            return Err(Ending::new(
                Outcome::Cancelled,
                "the run was cancelled during the checks",
            ));
        }
        Ok(run)
    }
}

/// Copies the changed test files into `dest` (a baseline tree) and removes deleted ones.
pub(crate) fn overlay_test_changes(
    root: &Path,
    dest: &Path,
    changes: &[FileChange],
) -> std::io::Result<()> {
    for change in changes.iter().filter(|c| is_test_file(&c.path)) {
        let target: PathBuf = dest.join(&change.path);
        if let ChangeStatus::Renamed { from } = &change.status {
            let _ = std::fs::remove_file(dest.join(from));
        }
        match change.status {
            ChangeStatus::Deleted => {
                let _ = std::fs::remove_file(&target);
            }
            ChangeStatus::Added | ChangeStatus::Modified | ChangeStatus::Renamed { .. } => {
                if let Some(parent) = target.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::copy(root.join(&change.path), &target)?;
            }
        }
    }
    Ok(())
}

fn ids_where(results: &TestResults, keep: impl Fn(&TestOutcome) -> bool) -> Vec<String> {
    results
        .tests
        .iter()
        .filter(|(_, outcome)| keep(outcome))
        .map(|(id, _)| id.clone())
        .collect()
}

/// Nothing that passed at baseline fails, errors, is skipped or is missing; the number of tests did
/// not drop; the exit code agrees with the results. Flaky tests count neither way.
fn per_test_check(
    before: &TestResults,
    after: &TestResults,
    run: &TestRun,
    flaky: &BTreeSet<String>,
) -> CheckReport {
    let step = CheckStep::FullSuite;
    let mut broken = Vec::new();
    let mut skipped = Vec::new();
    let mut missing = Vec::new();
    for (id, outcome) in &before.tests {
        if *outcome != TestOutcome::Passed || flaky.contains(id) {
            continue;
        }
        match after.tests.get(id) {
            Some(TestOutcome::Passed) => {}
            Some(TestOutcome::Failed | TestOutcome::Error) => broken.push(id.clone()),
            Some(TestOutcome::Skipped | TestOutcome::XFailed | TestOutcome::XPassed) => {
                skipped.push(id.clone())
            }
            None => missing.push(id.clone()),
        }
    }
    let mut problems = Vec::new();
    let list = |ids: &[String]| {
        let shown: Vec<&str> = ids.iter().take(5).map(String::as_str).collect();
        let more = ids.len().saturating_sub(5);
        if more > 0 {
            format!("{} and {more} more", shown.join(", "))
        } else {
            shown.join(", ")
        }
    };
    if !broken.is_empty() {
        problems.push(format!("passed at baseline, now fail: {}", list(&broken)));
    }
    if !skipped.is_empty() {
        problems.push(format!(
            "passed at baseline, now skipped: {}",
            list(&skipped)
        ));
    }
    if !missing.is_empty() {
        problems.push(format!(
            "passed at baseline, now missing: {}",
            list(&missing)
        ));
    }
    let before_total = before.tests.len();
    let after_total = after.tests.len();
    if after_total < before_total {
        problems.push(format!(
            "{after_total} tests ran, fewer than the {before_total} at baseline"
        ));
    }
    if let (Some(b), Some(a)) = (before.collected, after.collected)
        && a < b
    {
        problems.push(format!(
            "{a} tests collected, fewer than the {b} at baseline"
        ));
    }
    let failing_now = after
        .tests
        .values()
        .filter(|o| matches!(o, TestOutcome::Failed | TestOutcome::Error))
        .count();
    if failing_now == 0 && run.exit_code != Some(0) {
        problems.push(format!(
            "the runner exited with {:?} although no test failed",
            run.exit_code
        ));
    }
    if failing_now > 0 && run.exit_code == Some(0) {
        problems.push("the runner exited 0 although tests failed".to_string());
    }
    if problems.is_empty() {
        let mut evidence = format!(
            "{} (baseline: {}); every test that passed at baseline still passes",
            after.counts.summary(),
            before.counts.summary()
        );
        if !flaky.is_empty() {
            evidence.push_str(&format!(
                "; flaky, not counted: {}",
                flaky.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
        report(step, CheckStatus::Passed, evidence)
    } else {
        report(
            step,
            CheckStatus::Failed,
            format!("{}: {}", run.headline(), problems.join("; ")),
        )
    }
}
