//! Answering `done`: the helpers hear of it, the workspace is checkpointed (the ladder judges the
//! tree as it is), and the check ladder (`ladder/`) runs; each check goes to the journal.

use std::time::Instant;

use plumb_protocol::Event;

use super::Run;
use crate::ending::{Ending, elapsed_ms};
use crate::ladder::{Cx, DoneAnswer};

impl Run {
    /// Runs the checks. `Err` ends the run (an infrastructure failure or a cancel).
    pub(super) async fn answer_done(&mut self) -> Result<DoneAnswer, Ending> {
        let started = Instant::now();
        self.policies.at_done();
        self.checkpoint(&format!("checks {}", self.ladder.done_count + 1))
            .await?;
        let mut cx = Cx {
            workspace: &self.workspace,
            tester: &mut self.tester,
            baseline: &self.baseline,
            fail_to_pass: &self.asked.fail_to_pass,
        };
        let answer = self.ladder.answer(&mut cx).await;
        self.timings.checks_ms += elapsed_ms(started);
        for check in self.ladder.checks.clone() {
            self.emit(Event::Check { check }).await;
        }
        answer
    }
}
