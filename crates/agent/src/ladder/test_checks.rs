//! The ladder's steps that run tests on the patched tree: pass (the reproduce step's tests pass,
//! none skipped) and the full suite against the baseline's per-test outcomes; and what the test
//! steps share (`TestSteps`; the reproduce step is `reproduce.rs`).
//!
//! All three run with the baseline's test configuration (`judged`): the reproduce tree is built
//! from the baseline anyway, and when the agent changed test configuration the pass and full
//! suite run in a copy of the patched tree with it put back. A command plumb cannot narrow runs
//! whole on both trees and is judged by `whole_suite`; the pass step's whole run is the full
//! suite's too.

use std::collections::BTreeSet;
use std::path::PathBuf;

use plumb_protocol::{CheckReport, CheckStatus, CheckStep};
use plumb_tools::TestRun;
use plumb_verify::tamper::{FileChange, TestSetupFiles};
use plumb_verify::{Runner, TestOutcome, TestResults};

use super::cx::{Checked, Cx, Ladder, report};
use super::judged::{self, Restore};
use super::whole_suite::{self, Before};
use crate::ending::Ending;

/// What the test steps of one `done` share.
pub(crate) struct TestSteps {
    /// The test configuration files the judged trees hold as the baseline had them.
    pub(super) restores: Vec<Restore>,
    /// The patched tree with the baseline's test configuration, once made (only when
    /// `restores` is not empty: otherwise the steps run in the workspace).
    judged: Option<PathBuf>,
    /// The pass step's run when it was of the whole suite: the full suite's run too.
    whole_run: Option<TestRun>,
}

impl TestSteps {
    pub(crate) fn new(changes: &[FileChange], setup: &TestSetupFiles) -> TestSteps {
        TestSteps {
            restores: judged::restores(changes, setup),
            judged: None,
            whole_run: None,
        }
    }

    /// `evidence`, followed by how the test configuration was judged when the agent changed it.
    pub(super) fn with_clause(&self, evidence: String) -> String {
        if self.restores.is_empty() {
            evidence
        } else {
            format!("{evidence}; {}", judged::describe(&self.restores))
        }
    }

    /// Removes the judged tree, as far as the run's time allows (the tests that ran there may
    /// have filled it; what is left is set aside).
    pub(crate) fn clean_up(&mut self, deadline: Option<std::time::Instant>) {
        if let Some(dir) = self.judged.take() {
            let _ = plumb_workspace::discard_tree(&dir, deadline);
        }
    }
}

impl Ladder {
    /// The tree the pass and full-suite steps run in: the workspace, or when the agent changed
    /// test configuration, a copy of it (made once per `done`, from a checkpoint of it) with the
    /// baseline's test configuration.
    /// The workspace was checkpointed before the ladder ran, so its head is the tree as it is.
    pub(super) fn judged_root(
        &self,
        cx: &Cx<'_>,
        steps: &mut TestSteps,
    ) -> Result<PathBuf, Ending> {
        if steps.restores.is_empty() {
            return Ok(cx.workspace.root().to_path_buf());
        }
        if let Some(dir) = &steps.judged {
            return Ok(dir.clone());
        }
        let head = cx.workspace.head().map_err(Ending::workspace)?;
        let dest = cx.tester.check_dir(&format!("judged-{}", self.done_count));
        plumb_workspace::discard_tree(&dest, cx.workspace.deadline()).map_err(Ending::infra)?;
        cx.tester.materialize(cx.workspace, &head, &dest)?;
        steps.judged = Some(dest.clone());
        judged::apply(&dest, &steps.restores).map_err(Ending::infra)?;
        Ok(dest)
    }

    pub(crate) async fn check_pass(
        &mut self,
        cx: &mut Cx<'_>,
        steps: &mut TestSteps,
    ) -> Result<Checked, Ending> {
        let step = CheckStep::Pass;
        let targets = self.target_tests.clone();
        let root = self.judged_root(cx, steps)?;
        let run = cx.tester.run_tests_in(&root, &targets).await?;
        let Some(counts) = run.counts else {
            return Ok((
                report(
                    step,
                    CheckStatus::Failed,
                    steps.with_clause(format!("the tests did not run: {}", run.headline())),
                ),
                run.excerpt,
            ));
        };
        if run.note.is_some() {
            let baseline = Before {
                counts: &cx.baseline.counts,
                results: cx.baseline.results.as_ref(),
            };
            let verdict =
                whole_suite::pass(&run, &counts, &targets, &self.reproduce_failing, &baseline);
            let excerpt = if verdict.status == CheckStatus::Failed {
                run.excerpt.clone()
            } else {
                String::new()
            };
            steps.whole_run = Some(run);
            return Ok((
                report(step, verdict.status, steps.with_clause(verdict.evidence)),
                excerpt,
            ));
        }
        let mut problems = Vec::new();
        if counts.passed == 0 {
            problems.push("no test passed".to_string());
        }
        if counts.failed + counts.errors > 0 {
            problems.push(format!("{} fail or error", counts.failed + counts.errors));
        }
        // libtest's "filtered out" (read as deselected) is only ever the name filter plumb gave
        // cargo; nothing in a crate can deselect a test. pytest's deselected can be a conftest's.
        let deselected = if cx.tester.runner() == Runner::Cargo {
            0
        } else {
            counts.deselected
        };
        let skipped = counts.skipped + counts.xfailed + counts.xpassed + deselected;
        if skipped > 0 {
            problems.push(format!("{skipped} skipped, deselected or marked xfail"));
        }
        if let Some(results) = &run.results {
            let missing: Vec<&String> = self
                .reproduce_failing
                .iter()
                .filter(|id| !passes_now(results, id, self.reproduce_crashed))
                .collect();
            if !missing.is_empty() {
                let missing: Vec<String> = missing.into_iter().cloned().collect();
                problems.push(format!(
                    "{} failed on the baseline but do not pass now",
                    listed_ids(&missing)
                ));
            }
        }
        if problems.is_empty() {
            Ok((
                report(
                    step,
                    CheckStatus::Passed,
                    steps.with_clause(format!(
                        "{} on the patched tree ({})",
                        listed_ids(&targets),
                        counts.summary()
                    )),
                ),
                String::new(),
            ))
        } else {
            Ok((
                report(
                    step,
                    CheckStatus::Failed,
                    steps.with_clause(format!("{}: {}", run.headline(), problems.join("; "))),
                ),
                run.excerpt,
            ))
        }
    }

    pub(crate) async fn check_full_suite(
        &mut self,
        cx: &mut Cx<'_>,
        steps: &mut TestSteps,
    ) -> Result<Checked, Ending> {
        let run = match steps.whole_run.take() {
            Some(run) => run,
            None => {
                let root = self.judged_root(cx, steps)?;
                cx.tester.run_tests_in(&root, &[]).await?
            }
        };
        let mut report = match (&cx.baseline.results, &run.results) {
            (Some(before), Some(after)) if !run.timed_out => {
                per_test_check(before, after, &run, &cx.baseline.flaky)
            }
            _ => super::suite::counts_check(&cx.baseline.counts, &run),
        };
        report.evidence = steps.with_clause(report.evidence);
        let excerpt = if report.status == CheckStatus::Failed {
            run.excerpt
        } else {
            String::new()
        };
        Ok((report, excerpt))
    }
}

/// At most five ids or paths, each shown shortened, then how many more: what the model or a
/// task wrote is never copied unbounded into the evidence.
pub(super) fn listed_ids(ids: &[String]) -> String {
    let shown: Vec<String> = ids
        .iter()
        .take(5)
        .map(|id| plumb_verify::shown_id(id))
        .collect();
    match ids.len().saturating_sub(5) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

pub(super) fn ids_where(results: &TestResults, keep: impl Fn(&TestOutcome) -> bool) -> Vec<String> {
    results
        .tests
        .iter()
        .filter(|(_, outcome)| keep(outcome))
        .map(|(id, _)| id.clone())
        .collect()
}

/// `test_x[params]` → `test_x`: the part of a parametrized id before its parameters.
fn parameter_base(id: &str) -> Option<&str> {
    id.strip_suffix(']')?.rsplit_once('[').map(|(base, _)| base)
}

/// The parametrized ids of `after` that `before` did not have, by the test they parametrize. A
/// test parametrized with values made when it is collected (the current time, a random port)
/// has other ids in every run: such an id missing from `after` is judged by a new id of the same
/// test in its place, one for one, so that nothing is called missing that only changed its name.
fn renamed_parameters(
    before: &TestResults,
    after: &TestResults,
) -> std::collections::HashMap<String, Vec<String>> {
    let mut new: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
    for id in after
        .tests
        .keys()
        .filter(|id| !before.tests.contains_key(*id))
    {
        if let Some(base) = parameter_base(id) {
            new.entry(base.to_owned()).or_default().push(id.clone());
        }
    }
    new
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
    let mut renamed = renamed_parameters(before, after);
    for (id, outcome) in &before.tests {
        if *outcome != TestOutcome::Passed || flaky.contains(id) {
            continue;
        }
        let now = after.tests.get(id).or_else(|| {
            let stand_in = renamed.get_mut(parameter_base(id)?)?.pop()?;
            after.tests.get(&stand_in)
        });
        match now {
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

/// Whether `id`, which failed on the baseline source, passes in `results`. When the baseline run
/// `crashed` before it named any test (a stack overflow, the memory limit), the reproduce step
/// kept the targets as plumb gave them — a cargo name filter, a test file — so an id no result
/// has passes when every result it selects passed, and one did (HumanEvalFix's Rust/49 and
/// Rust/156: `test_modp` crashed, `hidden::tests::test_modp` passes with the fix). Otherwise an
/// id is a result's own and must pass as itself: a test file that could not even be collected on
/// the baseline (it imports what the change adds) is not matched by its tests passing now.
fn passes_now(results: &TestResults, id: &str, crashed: bool) -> bool {
    if let Some(outcome) = results.tests.get(id) {
        return *outcome == TestOutcome::Passed;
    }
    if !crashed {
        return false;
    }
    let mut selected = results
        .tests
        .iter()
        .filter(|(name, _)| whole_suite::belongs(name, id) || ends_with_name(name, id))
        .peekable();
    selected.peek().is_some() && selected.all(|(_, outcome)| *outcome == TestOutcome::Passed)
}

/// Whether the test path `id` ends with the test `name` (`hidden::tests::test_modp`, `pkg/TestX`).
fn ends_with_name(id: &str, name: &str) -> bool {
    id.strip_suffix(name)
        .is_some_and(|head| head.ends_with("::") || head.ends_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(ids: &[(&str, TestOutcome)]) -> TestResults {
        let mut results = TestResults::default();
        for (id, outcome) in ids {
            results.tests.insert((*id).to_owned(), *outcome);
        }
        results
    }

    #[test]
    fn a_test_parametrized_with_the_time_is_matched_to_its_new_ids() {
        let before = results(&[
            ("t.py::test_now[00:27:31]", TestOutcome::Passed),
            ("t.py::test_other", TestOutcome::Passed),
        ]);
        let after = results(&[
            ("t.py::test_now[00:28:05]", TestOutcome::Passed),
            ("t.py::test_other", TestOutcome::Passed),
            ("t.py::test_new", TestOutcome::Passed),
        ]);
        let renamed = renamed_parameters(&before, &after);
        let actual = (
            parameter_base("t.py::test_now[00:27:31]"),
            parameter_base("t.py::test_other"),
            renamed.get("t.py::test_now").cloned(),
            renamed.len(),
        );
        let expected = (
            Some("t.py::test_now"),
            None,
            Some(vec!["t.py::test_now[00:28:05]".to_owned()]),
            1,
        );
        assert_eq!(actual, expected);
    }

    /// Rust/49 and Rust/156 of HumanEvalFix: the buggy code crashed the test binary, so the
    /// baseline named no test and the reproduce step kept the name filter `test_modp`; the fix's
    /// run names the test by its path. The pass step held the oracle's fix back before.
    #[test]
    fn a_target_kept_from_a_crashed_baseline_passes_by_the_tests_it_selects() {
        let fixed = results(&[
            ("hidden::tests::test_modp", TestOutcome::Passed),
            ("tests::builds", TestOutcome::Passed),
        ]);
        let still_broken = results(&[
            ("hidden::tests::test_modp", TestOutcome::Failed),
            ("tests::builds", TestOutcome::Passed),
        ]);
        let file = results(&[
            ("tests/test_a.py::test_one", TestOutcome::Passed),
            ("tests/test_a.py::test_two", TestOutcome::Error),
        ]);
        let crashed = [
            passes_now(&fixed, "test_modp", true),
            passes_now(&fixed, "modp", true),
            passes_now(&still_broken, "test_modp", true),
            passes_now(&fixed, "test_gone", true),
            passes_now(&file, "tests/test_a.py", true),
            passes_now(&file, "tests/test_a.py::test_one", true),
        ];
        assert_eq!(crashed, [true, false, false, false, false, true]);
        // Ids a baseline run reported are matched as they are.
        let reported = [
            passes_now(&fixed, "test_modp", false),
            passes_now(&fixed, "hidden::tests::test_modp", false),
        ];
        assert_eq!(reported, [false, true]);
    }
}
