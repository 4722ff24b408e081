//! Answering `done`: the harness runs the check ladder itself and never takes the model's word
//! (docs/contracts.md §5). Steps, cheapest first, each with a status and evidence for the report:
//!
//! 1. syntax — every changed file parses (against its baseline, so a file that was already broken
//!    does not block);
//! 2. tamper — existing tests changed, test configuration changed, skip markers added: flags for a
//!    person, blocking where `tamper_block` in plumb.toml says;
//! 3. reproduce — the new or changed tests, on the baseline source plus only the test changes, must
//!    fail (or error): proof the tests show the bug;
//! 4. pass — the same tests pass on the patched tree, none skipped;
//! 5. full suite — nothing that passed at baseline fails, errors, is skipped or goes missing;
//! 6. lint — no new diagnostics in changed files compared with the baseline.
//!
//! Steps 3–5 run with the baseline's test configuration: a conftest, plugin or setting the agent
//! added or changed is left out of the trees they judge (`test_checks`, `judged`), and stays a
//! tamper flag for a person.
//!
//! The first failing step ends the ladder (the later ones are `not_run`, saying why) and is a note
//! back to the model naming exactly what failed.

use plumb_context::templates::render;
use plumb_protocol::{CheckReport, CheckStatus, CheckStep};
use plumb_tools::ToolOutput;
use plumb_verify::tamper::{FileChange, Nested, TestSetupFiles};
use plumb_workspace::ChangedFile;
use serde::Serialize;

use super::cx::{Cx, DoneAnswer, Ladder, refuse};
use super::static_checks::{file_changes, setup_files};
use super::test_checks::TestSteps;
use crate::ending::Ending;

/// The ladder's steps after the syntax check, in order.
const LATER_STEPS: [CheckStep; 5] = [
    CheckStep::Tamper,
    CheckStep::Reproduce,
    CheckStep::Pass,
    CheckStep::FullSuite,
    CheckStep::Lint,
];

impl Ladder {
    /// Runs the checks. `Err` ends the run (an infrastructure failure or a cancel).
    pub(crate) async fn answer(&mut self, cx: &mut Cx<'_>) -> Result<DoneAnswer, Ending> {
        self.done_count += 1;
        self.checks.clear();
        self.flags.clear();
        let changed = cx.workspace.changed_files().map_err(Ending::workspace)?;
        if changed.is_empty() {
            return Ok(refuse(said(&Said::NothingChanged)?));
        }
        if let Err(err) = cx.workspace.patch() {
            if err.is_infra() || err.is_budget() {
                return Err(Ending::workspace(err));
            }
            return Ok(refuse(err.to_string()));
        }
        let changes = file_changes(cx.workspace, &changed)?;
        let setup = setup_files(cx.workspace, &changes)?;
        let nested = self.nested(cx)?;

        let mut tests = TestSteps::new(&changes, &setup);
        let detail = self
            .run_steps(cx, &changed, (&changes, &nested, &setup), &mut tests)
            .await;
        tests.clean_up(cx.workspace.deadline());
        let detail = detail?;
        let done: Vec<CheckStep> = self.checks.iter().map(|c| c.step).collect();
        for step in LATER_STEPS {
            if !done.contains(&step) {
                self.checks.push(CheckReport {
                    step,
                    status: CheckStatus::NotRun,
                    evidence: "an earlier step failed".to_string(),
                });
            }
        }
        if self.checks.iter().any(|c| c.status == CheckStatus::Failed) {
            return Ok(refuse(self.refusal_from_checks(&detail)?));
        }
        let text = said(&Said::Verified {
            checks: self
                .checks
                .iter()
                .map(|c| ShownCheck {
                    step: c.step.as_str(),
                    status: status_word(c.status),
                    evidence: &c.evidence,
                })
                .collect(),
        })?;
        Ok(DoneAnswer {
            result: Ok(ToolOutput {
                summary: "verified: every check passed".to_string(),
                text,
                ..ToolOutput::default()
            }),
            verified: true,
        })
    }

    /// Runs the steps in order until one fails; returns the test output worth showing the model
    /// about the failure.
    async fn run_steps(
        &mut self,
        cx: &mut Cx<'_>,
        changed: &[ChangedFile],
        (changes, nested, setup): (&[FileChange], &[Nested], &TestSetupFiles),
        tests: &mut TestSteps,
    ) -> Result<String, Ending> {
        for step in std::iter::once(CheckStep::Syntax).chain(LATER_STEPS) {
            let (report, excerpt) = match step {
                CheckStep::Syntax => (self.check_syntax(cx, changed), String::new()),
                CheckStep::Tamper => (self.check_tamper(changes, nested, setup), String::new()),
                CheckStep::Reproduce => self.check_reproduce(cx, changes, tests).await?,
                CheckStep::Pass => self.check_pass(cx, tests).await?,
                CheckStep::FullSuite => self.check_full_suite(cx, tests).await?,
                CheckStep::Lint => (self.check_lint(cx, changes).await?, String::new()),
                CheckStep::Review | CheckStep::Approval => continue,
            };
            let failed = report.status == CheckStatus::Failed;
            self.checks.push(report);
            if failed {
                return Ok(excerpt);
            }
        }
        Ok(String::new())
    }

    /// The note back to the model naming the steps that failed, with the test output worth
    /// showing about them.
    fn refusal_from_checks(&self, detail: &str) -> Result<String, Ending> {
        let failed: Vec<String> = self
            .checks
            .iter()
            .filter(|c| c.status == CheckStatus::Failed)
            .map(|c| format!("{}: {}", c.step.as_str(), c.evidence))
            .collect();
        said(&Said::Failed {
            failed,
            detail: detail.trim_end(),
        })
    }
}

/// What the ladder answers `done` (template `ladder/answer.md`).
#[derive(Serialize)]
#[serde(tag = "case", rename_all = "snake_case")]
enum Said<'a> {
    NothingChanged,
    Failed {
        /// Each failed step as "step: evidence".
        failed: Vec<String>,
        /// The test output worth showing about the failure ("" for none).
        detail: &'a str,
    },
    Verified {
        checks: Vec<ShownCheck<'a>>,
    },
}

/// One step of a verified answer.
#[derive(Serialize)]
struct ShownCheck<'a> {
    step: &'a str,
    status: &'a str,
    evidence: &'a str,
}

/// The answer's text; a template that fails is plumb's own bug, which ends the run as one.
fn said(said: &Said<'_>) -> Result<String, Ending> {
    let mut text = render("ladder/answer.md", said).map_err(Ending::infra)?;
    if text.ends_with('\n') {
        text.pop();
    }
    Ok(text)
}

fn status_word(status: CheckStatus) -> &'static str {
    match status {
        CheckStatus::Passed => "passed",
        CheckStatus::Failed => "failed",
        CheckStatus::Flagged => "flagged",
        CheckStatus::NotRun => "not run",
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn text(answer: &Said<'_>) -> String {
        said(answer).unwrap_or_else(|_| panic!("the ladder's answer did not render"))
    }

    #[test]
    fn the_answers_read_as_the_model_is_told_them() {
        assert_eq!(
            text(&Said::NothingChanged),
            "you have not changed any file, so the ticket is not resolved. Make the fix (and a test that shows it), then call done."
        );
        let failed = || vec!["pass: 1 failed".to_string(), "lint: 2 new".to_string()];
        assert_eq!(
            text(&Said::Failed {
                failed: failed(),
                detail: "E assert 1 == 2\n  at t.py:3",
            }),
            "the checks failed, so you are not done. pass: 1 failed lint: 2 new Fix this and call done again.\n\nE assert 1 == 2\n  at t.py:3"
        );
        assert_eq!(
            text(&Said::Failed {
                failed: failed(),
                detail: "",
            }),
            "the checks failed, so you are not done. pass: 1 failed lint: 2 new Fix this and call done again."
        );
        let check = |step, status, evidence| ShownCheck {
            step,
            status,
            evidence,
        };
        assert_eq!(
            text(&Said::Verified {
                checks: vec![
                    check("syntax", "passed", "2 files parse"),
                    check("tamper", "flagged", "a test changed\nsee the diff"),
                ],
            }),
            "Verified. syntax passed: 2 files parse; tamper flagged: a test changed\nsee the diff"
        );
    }
}
