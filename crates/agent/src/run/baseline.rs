//! Measuring the baseline before the first round: the project's tests on the untouched copy (a
//! suite that does not run there is bad input), then the tests that failed once more — those
//! that pass now are flaky.

use plumb_protocol::Event;
use plumb_tools::ToolError;
use plumb_verify::TestOutcome;

use super::Run;
use crate::RunError;

impl Run {
    pub(super) async fn measure_baseline(&mut self) -> Result<(), RunError> {
        let root = self.workspace.root().to_path_buf();
        let run = self
            .tester
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
                self.baseline.counts = counts;
                self.baseline.results = run.results;
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
    async fn find_flaky(&mut self) -> Result<(), RunError> {
        let failing = self.baseline.failing_with_flaky();
        if failing.is_empty() {
            return Ok(());
        }
        let root = self.workspace.root().to_path_buf();
        let again = self
            .tester
            .run_tests_in(&root, &failing)
            .await
            .map_err(|ending| RunError::Infra(ending.reason))?;
        if let Some(again) = again.results {
            self.baseline.flaky = failing
                .into_iter()
                .filter(|id| again.tests.get(id) == Some(&TestOutcome::Passed))
                .collect();
        }
        Ok(())
    }
}
