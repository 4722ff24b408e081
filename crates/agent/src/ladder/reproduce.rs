//! The ladder's reproduce step: the task's named tests, or the new and changed tests (test files,
//! and Rust tests inside source files), must fail on the original source with only the change's
//! tests. Where none does, a test that failed at baseline and passes with the change shows the bug
//! (SWE-bench's fail-to-pass) — unless the change's own test edits made it pass.

use std::path::Path;

use plumb_context::syntax::Language;
use plumb_protocol::{CheckStatus, CheckStep};
use plumb_tools::TestRun;
use plumb_verify::TestOutcome;
use plumb_verify::tamper::{ChangeStatus, FileChange, is_test_file};

use super::cx::{Checked, Cx, Ladder, report};
use super::inline_tests::{InlineTests, inline_tests};
use super::judged;
use super::original::original_source_with;
use super::test_checks::{TestSteps, ids_where, listed_ids};
use super::whole_suite::{self, Before};
use crate::ending::Ending;

/// The tests the ladder targets: the task's FAIL_TO_PASS list when it has one, else every new or
/// changed test file in a language plumb parses, and the new or changed tests inside source
/// files (`inline`: Rust's `#[cfg(test)]` items), by name.
fn target_tests(
    fail_to_pass: &[String],
    changes: &[FileChange],
    inline: &InlineTests,
) -> Vec<String> {
    if !fail_to_pass.is_empty() {
        return fail_to_pass.to_vec();
    }
    changes
        .iter()
        .filter(|c| !matches!(c.status, ChangeStatus::Deleted))
        .filter(|c| is_test_file(&c.path))
        .filter(|c| Language::from_path(Path::new(&c.path)).is_some())
        .map(|c| c.path.clone())
        .chain(inline.tests.iter().cloned())
        .collect()
}

impl Ladder {
    /// The reproduce step: the task's named tests, or the new and changed tests, fail on the
    /// original source. Where neither shows the bug, a test that failed at baseline and passes
    /// with the change does (SWE-bench's fail-to-pass), and the evidence says so.
    pub(crate) async fn check_reproduce(
        &mut self,
        cx: &mut Cx<'_>,
        changes: &[FileChange],
        steps: &mut TestSteps,
    ) -> Result<Checked, Ending> {
        let inline = inline_tests(changes);
        self.target_tests = target_tests(cx.fail_to_pass, changes, &inline);
        self.reproduce_failing.clear();
        self.reproduce_crashed = false;
        let checked = if self.target_tests.is_empty() {
            (
                report(
                    CheckStep::Reproduce,
                    CheckStatus::Failed,
                    "no new or changed test: add a test that fails without your fix and passes with it",
                ),
                String::new(),
            )
        } else {
            self.reproduce_new(cx, changes, steps).await?
        };
        if checked.0.status != CheckStatus::Failed || !cx.fail_to_pass.is_empty() {
            return Ok(checked);
        }
        let new_tests = (!self.target_tests.is_empty()).then(|| listed_ids(&self.target_tests));
        let Some(fixed) = self.fixed_since_baseline(cx, changes, steps).await? else {
            return Ok(checked);
        };
        let evidence = match new_tests {
            None => format!(
                "{} failed at baseline and pass with the change (SWE-bench's fail-to-pass); no new test was written",
                listed_ids(&fixed)
            ),
            Some(listed) => format!(
                "{} failed at baseline and pass with the change (SWE-bench's fail-to-pass); the new tests ({listed}) do not fail without it",
                listed_ids(&fixed)
            ),
        };
        self.reproduce_failing = fixed.clone();
        self.target_tests.extend(fixed);
        Ok((
            report(
                CheckStep::Reproduce,
                CheckStatus::Passed,
                steps.with_clause(evidence),
            ),
            String::new(),
        ))
    }

    /// The tests that failed at baseline (flaky ones left out) and pass on the patched tree, if
    /// any — and, when the change touched tests, still fail on the original source with the
    /// change's tests: a test the agent weakened until it passes was fixed by the edit to the
    /// test, not by a fix.
    async fn fixed_since_baseline(
        &self,
        cx: &mut Cx<'_>,
        changes: &[FileChange],
        steps: &mut TestSteps,
    ) -> Result<Option<Vec<String>>, Ending> {
        let failing = cx.baseline.failing();
        if failing.is_empty() {
            return Ok(None);
        }
        let root = self.judged_root(cx, steps)?;
        let run = cx.tester.run_tests_in(&root, &failing).await?;
        let mut fixed = cx.baseline.fixed_by(&run);
        if !fixed.is_empty() && !self.target_tests.is_empty() {
            let dest = original_source_with(
                cx.workspace,
                cx.tester,
                &format!("unfixed-{}", self.done_count),
                changes,
            )?;
            judged::apply(&dest, &steps.restores).map_err(Ending::infra)?;
            let without_fix = cx.tester.run_tests_in(&dest, &fixed).await;
            let _ = plumb_workspace::discard_tree(&dest, cx.workspace.deadline());
            let without_fix = without_fix?;
            let passed_without_fix = |id: &String| {
                without_fix
                    .results
                    .as_ref()
                    .is_some_and(|r| r.tests.get(id) == Some(&TestOutcome::Passed))
            };
            fixed.retain(|id| !passed_without_fix(id));
        }
        Ok((!fixed.is_empty()).then_some(fixed))
    }

    /// The new and changed tests (or the named ones) on the original source: at least one fails.
    async fn reproduce_new(
        &mut self,
        cx: &mut Cx<'_>,
        changes: &[FileChange],
        steps: &TestSteps,
    ) -> Result<Checked, Ending> {
        let step = CheckStep::Reproduce;
        let dest = original_source_with(
            cx.workspace,
            cx.tester,
            &format!("reproduce-{}", self.done_count),
            changes,
        )?;
        judged::apply(&dest, &steps.restores).map_err(Ending::infra)?;
        let targets = self.target_tests.clone();
        let run = cx.tester.run_tests_in(&dest, &targets).await;
        let _ = plumb_workspace::discard_tree(&dest, cx.workspace.deadline());
        let run = run?;
        let listed = listed_ids(&targets);
        let Some(counts) = run.counts else {
            return Ok((
                report(
                    step,
                    CheckStatus::Failed,
                    steps.with_clause(format!(
                        "{listed} did not run on the baseline source: {}",
                        run.headline()
                    )),
                ),
                run.excerpt,
            ));
        };
        // Tests that started and took their process down with them (a stack overflow, the
        // memory or time limit) on the original code errored there: the bug shows, as
        // SWE-bench counts an error (the oracle found HumanEvalFix's Rust tasks whose buggy code
        // recurses or allocates without end).
        if counts.total() == 0 && crashed_while_running(&run) {
            self.reproduce_failing = targets.clone();
            self.reproduce_crashed = true;
            return Ok((
                report(
                    step,
                    CheckStatus::Passed,
                    steps.with_clause(format!(
                        "{listed} crashed on the baseline source ({})",
                        run.headline()
                    )),
                ),
                String::new(),
            ));
        }
        // A run of no test at all (go's `ok … [no tests to run]`, a filter that matched nothing)
        // says nothing about the bug: it is not "already passes".
        if counts.total() == 0 {
            return Ok((
                report(
                    step,
                    CheckStatus::Failed,
                    steps.with_clause(format!(
                        "{listed} did not run on the baseline source: the test command ran no test ({})",
                        run.headline()
                    )),
                ),
                run.excerpt,
            ));
        }
        if run.note.is_some() {
            let baseline = Before {
                counts: &cx.baseline.counts,
                results: cx.baseline.results.as_ref(),
            };
            let verdict = whole_suite::reproduce(&run, &counts, &targets, &listed, &baseline);
            self.reproduce_failing = verdict.failing;
            let excerpt = if verdict.status == CheckStatus::Failed {
                run.excerpt
            } else {
                String::new()
            };
            return Ok((
                report(step, verdict.status, steps.with_clause(verdict.evidence)),
                excerpt,
            ));
        }
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
                    steps.with_clause(format!(
                        "{listed} already pass on the baseline source ({}), so they do not show the bug: make a test fail without your fix",
                        counts.summary()
                    )),
                ),
                String::new(),
            ));
        }
        self.reproduce_failing = failing.clone();
        let shown = if failing.is_empty() {
            listed
        } else {
            listed_ids(&failing)
        };
        Ok((
            report(
                step,
                CheckStatus::Passed,
                steps.with_clause(format!(
                    "{shown} fail on the baseline source ({})",
                    counts.summary()
                )),
            ),
            String::new(),
        ))
    }
}

/// True when a run started its tests ("running N tests", N > 0) and then ended without a test
/// summary and without success: the test process died (a signal, a sandbox limit).
fn crashed_while_running(run: &TestRun) -> bool {
    let started = run.excerpt.lines().any(|line| {
        line.trim_start()
            .strip_prefix("running ")
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n > 0)
    });
    let died = run.exit_code != Some(0)
        && (!run.limits_hit.is_empty()
            || run.timed_out
            || run.excerpt.contains("signal:")
            || run.excerpt.contains("stack overflow"));
    started && died
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_process_that_died_after_starting_crashed_and_one_that_never_started_did_not() {
        let run = |excerpt: &str, exit: i32| TestRun {
            argv: Vec::new(),
            counts: Some(plumb_protocol::TestCounts::default()),
            results: None,
            exit_code: Some(exit),
            timed_out: false,
            cancelled: false,
            duration: std::time::Duration::ZERO,
            excerpt: excerpt.to_string(),
            limits_hit: Vec::new(),
            note: None,
        };
        let overflow = "running 1 test\n\nthread 'hidden::tests::test_modp' has overflowed its stack\nfatal runtime error: stack overflow, aborting\n(signal: 6, SIGABRT: process abort signal)";
        let compile_error =
            "error[E0425]: cannot find function `modp` in this scope\nerror: could not compile";
        let nothing = "running 0 tests\n";
        assert_eq!(
            (
                crashed_while_running(&run(overflow, 101)),
                crashed_while_running(&run(compile_error, 101)),
                crashed_while_running(&run(nothing, 0)),
            ),
            (true, false, false)
        );
    }
}
