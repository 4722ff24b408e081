//! The baseline: the project's tests on the untouched copy, run once before the first round (a
//! suite that does not run there is bad input), tests that fail and then pass found flaky, and
//! the one way every test command of the run is started and timed ([`Run::run_counted`]).

use std::path::Path;

use plumb_protocol::Event;
use plumb_tools::{TestRun, ToolError, run_test_command, sandbox_limits};
use plumb_verify::TestOutcome;

use crate::RunError;
use crate::run::Run;

impl Run {
    /// Runs the test command (narrowed to `tests` when given) in `workdir` in the sandbox, and
    /// counts its time as command time. The baseline and every ladder step come through here.
    pub(crate) async fn run_counted(
        &mut self,
        workdir: &Path,
        tests: &[String],
    ) -> Result<TestRun, ToolError> {
        let run = run_test_command(
            self.spec.sandbox.as_ref(),
            workdir,
            &self.test_command,
            tests,
            sandbox_limits(&self.spec.config),
            &self.spec.cancel,
        )
        .await?;
        self.timings.commands_ms += run.duration.as_millis() as u64;
        Ok(run)
    }

    pub(crate) async fn run_baseline_tests(&mut self) -> Result<(), RunError> {
        let root = self.workspace.root().to_path_buf();
        let run = self
            .run_counted(&root, &[])
            .await
            .map_err(|err| match err {
                ToolError::Infra(text) => RunError::Infra(text),
                ToolError::RespondToModel(text) => RunError::BadInput(text),
            })?;
        self.emit(Event::BaselineTests {
            counts: run.counts.unwrap_or_default(),
            exit_code: run.exit_code,
            duration_ms: run.duration.as_millis() as u64,
        })
        .await;
        match run.counts {
            Some(counts) if !run.timed_out && counts.total() > 0 => {
                self.baseline = counts;
                self.baseline_results = run.results;
                self.find_flaky().await
            }
            _ => Err(RunError::BadInput(format!(
                "the test command did not run on the untouched repository: {}. Fix the project's test setup or pass --test-cmd with a command that runs its tests",
                run.headline()
            ))),
        }
    }

    /// Runs the tests that failed at baseline once more; those that pass now are flaky and count
    /// neither for nor against the fix.
    pub(crate) async fn find_flaky(&mut self) -> Result<(), RunError> {
        let Some(results) = &self.baseline_results else {
            return Ok(());
        };
        let failing: Vec<String> = results
            .tests
            .iter()
            .filter(|(_, o)| matches!(o, TestOutcome::Failed | TestOutcome::Error))
            .map(|(id, _)| id.clone())
            .collect();
        if failing.is_empty() {
            return Ok(());
        }
        let root = self.workspace.root().to_path_buf();
        let again = self
            .run_tests_in(&root, &failing)
            .await
            .map_err(|ending| RunError::Infra(ending.reason))?;
        if let Some(again) = again.results {
            self.flaky = failing
                .into_iter()
                .filter(|id| again.tests.get(id) == Some(&TestOutcome::Passed))
                .collect();
        }
        Ok(())
    }
}
