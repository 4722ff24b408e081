//! Answering `done`: the harness runs its own checks and never takes the model's word.
//!
//! This version runs the ladder's steps that exist so far: the patch is non-empty and text only,
//! every changed file parses (compared with its baseline, so an already-broken file does not
//! block), and the full suite holds up against the baseline counts. The steps that come later
//! (tamper scan, reproduce, pass, lint, review, approval) are reported as `not_run`, saying so.

use std::time::Instant;

use plumb_context::syntax::{Language, syntax_problems};
use plumb_protocol::{CheckReport, CheckStatus, CheckStep, Event, Outcome, TestCounts};
use plumb_tools::{TestRun, ToolError, ToolOutput};
use plumb_workspace::ChangeKind;
use serde::Deserialize;

use crate::run::{Ending, Run, elapsed_ms};

/// What `done` answers the model.
pub(crate) struct DoneAnswer {
    pub result: Result<ToolOutput, ToolError>,
    pub verified: bool,
}

#[derive(Deserialize)]
struct DoneArgs {
    #[serde(default)]
    summary: String,
}

const LATER: &str = "not part of this version of plumb's check ladder yet";

impl Run {
    /// Runs the checks. `Err` ends the run (an infrastructure failure or a cancel).
    pub(crate) async fn answer_done(
        &mut self,
        args: &serde_json::Value,
    ) -> Result<DoneAnswer, Ending> {
        let started = Instant::now();
        let summary = serde_json::from_value::<DoneArgs>(args.clone())
            .map(|a| a.summary)
            .unwrap_or_default();
        let answer = self.run_checks(&summary).await;
        self.timings.checks_ms += elapsed_ms(started);
        for check in self.checks.clone() {
            self.emit(Event::Check { check }).await;
        }
        answer
    }

    async fn run_checks(&mut self, _summary: &str) -> Result<DoneAnswer, Ending> {
        self.checks.clear();
        let changed = self
            .workspace
            .changed_files()
            .map_err(|err| Ending::new(Outcome::InfraError, err.to_string()))?;
        if changed.is_empty() {
            return Ok(refuse(
                "you have not changed any file, so the ticket is not resolved. Make the fix (and a test that shows it), then call done.",
            ));
        }
        if let Err(err) = self.workspace.patch() {
            if err.is_infra() {
                return Err(Ending::new(Outcome::InfraError, err.to_string()));
            }
            return Ok(refuse(format!("{err}")));
        }

        let syntax = self.check_syntax(&changed);
        let syntax_ok = syntax.status == CheckStatus::Passed;
        self.checks.push(syntax);
        for step in [CheckStep::Tamper, CheckStep::Reproduce, CheckStep::Pass] {
            self.checks.push(not_run(step));
        }
        if !syntax_ok {
            self.checks.push(not_run_because(
                CheckStep::FullSuite,
                "the syntax check failed",
            ));
            self.checks.push(not_run(CheckStep::Lint));
            return Ok(self.refusal_from_checks());
        }

        let run = self
            .run_full_suite()
            .await
            .map_err(|err| Ending::new(Outcome::InfraError, err.to_string()))?;
        if run.cancelled {
            return Err(Ending::new(
                Outcome::Cancelled,
                "the run was cancelled during the checks",
            ));
        }
        let suite = full_suite_check(&self.baseline, &run);
        let suite_ok = suite.status == CheckStatus::Passed;
        self.checks.push(suite);
        self.checks.push(not_run(CheckStep::Lint));
        if !suite_ok {
            let mut answer = self.refusal_from_checks();
            if let Err(ToolError::RespondToModel(text)) = &mut answer.result
                && !run.excerpt.trim().is_empty()
            {
                text.push_str("\n\n");
                text.push_str(run.excerpt.trim_end());
            }
            return Ok(answer);
        }
        let text = format!(
            "Verified. {}",
            self.checks
                .iter()
                .filter(|c| c.status == CheckStatus::Passed)
                .map(|c| format!("{}: {}", c.step.as_str(), c.evidence))
                .collect::<Vec<_>>()
                .join("; ")
        );
        Ok(DoneAnswer {
            result: Ok(ToolOutput {
                summary: "verified: every check passed".to_string(),
                text,
                ..ToolOutput::default()
            }),
            verified: true,
        })
    }

    fn check_syntax(&self, changed: &[plumb_workspace::ChangedFile]) -> CheckReport {
        let mut problems = Vec::new();
        let mut parsed = 0usize;
        for file in changed {
            if matches!(file.status, ChangeKind::Deleted) {
                continue;
            }
            let path = self.workspace.root().join(&file.path);
            let Some(language) = Language::from_path(&path) else {
                continue;
            };
            let Ok(now) = std::fs::read_to_string(&path) else {
                continue;
            };
            parsed += 1;
            let found = syntax_problems(language, &now);
            let Some(first) = found.first() else {
                continue;
            };
            let before = self
                .workspace
                .baseline_text(&file.path)
                .ok()
                .flatten()
                .map(|text| syntax_problems(language, &text).len())
                .unwrap_or(0);
            if found.len() > before {
                problems.push(format!(
                    "{} line {}: {}",
                    file.path, first.line, first.message
                ));
            }
        }
        if problems.is_empty() {
            CheckReport {
                step: CheckStep::Syntax,
                status: CheckStatus::Passed,
                evidence: format!("{parsed} changed source files parse"),
            }
        } else {
            CheckReport {
                step: CheckStep::Syntax,
                status: CheckStatus::Failed,
                evidence: format!("new syntax errors: {}", problems.join("; ")),
            }
        }
    }

    fn refusal_from_checks(&self) -> DoneAnswer {
        let failed: Vec<String> = self
            .checks
            .iter()
            .filter(|c| c.status == CheckStatus::Failed)
            .map(|c| format!("{}: {}", c.step.as_str(), c.evidence))
            .collect();
        refuse(format!(
            "the checks failed, so you are not done. {} Fix this and call done again.",
            failed.join(" ")
        ))
    }
}

fn refuse(text: impl Into<String>) -> DoneAnswer {
    DoneAnswer {
        result: Err(ToolError::RespondToModel(text.into())),
        verified: false,
    }
}

fn not_run(step: CheckStep) -> CheckReport {
    not_run_because(step, LATER)
}

fn not_run_because(step: CheckStep, why: &str) -> CheckReport {
    CheckReport {
        step,
        status: CheckStatus::NotRun,
        evidence: why.to_string(),
    }
}

/// The full-suite step on counts: nothing that ran at baseline may fail, error, be skipped or go
/// missing, and a run whose summary is missing or whose exit code contradicts it is a failure.
pub(crate) fn full_suite_check(baseline: &TestCounts, run: &TestRun) -> CheckReport {
    let fail = |evidence: String| CheckReport {
        step: CheckStep::FullSuite,
        status: CheckStatus::Failed,
        evidence,
    };
    let Some(now) = run.counts else {
        return fail(format!("the suite did not run: {}", run.headline()));
    };
    if run.timed_out {
        return fail(format!("the suite hit the time limit: {}", run.headline()));
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
        CheckReport {
            step: CheckStep::FullSuite,
            status: CheckStatus::Passed,
            evidence: format!("{} (baseline: {})", now.summary(), baseline.summary()),
        }
    } else {
        fail(format!("{}: {}", run.headline(), problems.join("; ")))
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
            exit_code: Some(exit),
            timed_out: false,
            cancelled: false,
            duration: Duration::from_millis(10),
            excerpt: String::new(),
            limits_hit: Vec::new(),
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
            .map(|(c, exit)| full_suite_check(&baseline, &run_with(c, exit)).status)
            .collect();
        use CheckStatus::{Failed, Passed};
        assert_eq!(actual, vec![Passed, Failed, Failed, Failed, Failed, Failed]);
    }
}
