//! Answering `done`: the helpers hear of it, the workspace is checkpointed (the ladder judges the
//! tree as it is), and the check ladder (`ladder/`) runs; each check goes to the journal. A change
//! the ladder verified then goes to the reviewer (`review/`), which may send the run back once
//! with its notes.

use std::time::Instant;

use plumb_protocol::{Event, LoggedMessage};

use super::Run;
use crate::ending::{Ending, elapsed_ms};
use crate::ladder::{Cx, DoneAnswer, refuse};
use crate::review::Change;

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
        let answer = answer?;
        if answer.verified && self.reviewer.enabled() {
            return self.review(answer).await;
        }
        Ok(answer)
    }

    /// Has the verified change reviewed; a request for changes, while returns are left, turns the
    /// verified answer into a note with the reviewer's notes, and the loop goes on.
    async fn review(&mut self, verified: DoneAnswer) -> Result<DoneAnswer, Ending> {
        let patch = self.workspace.patch().map_err(Ending::workspace)?;
        let started = Instant::now();
        let change = Change {
            ticket: &self.asked.ticket,
            checks: &self.ladder.checks,
            flags: &self.ladder.flags,
            patch: &patch,
        };
        if let Some(review) = self.reviewer.not_reviewed(self.model.as_ref(), &change) {
            self.emit(Event::Reviewed {
                review: Box::new(review),
            })
            .await;
            return Ok(verified);
        }
        let prepared = self.reviewer.prepare(change).map_err(Ending::infra)?;
        // The reviewer's request is a model request like the fixer's: the journal keeps it, so
        // it says everything that was sent to a model.
        self.emit(Event::ModelRequest {
            round: self.round,
            shared: 0,
            messages: prepared
                .request
                .messages
                .iter()
                .cloned()
                .map(LoggedMessage::sent)
                .collect(),
            size: Some(plumb_context::size::prompt_size(
                &prepared.request.messages,
                &prepared.request.tools,
                None,
            )),
        })
        .await;
        let reviewed = self
            .reviewer
            .review(self.model.as_ref(), prepared, &self.asked.cancel)
            .await
            .ok_or_else(|| Ending::cancelled("while the reviewer was reading the change"))?;
        // A part of the model's time; each review's own wait is in the report's `reviews`.
        self.timings.model_ms += elapsed_ms(started);
        self.usage.add(&reviewed.usage);
        self.emit(Event::Reviewed {
            review: Box::new(reviewed.review),
        })
        .await;
        Ok(match reviewed.back_to_fixer {
            Some(note) => refuse(note),
            None => verified,
        })
    }
}
