//! Keeping the history within its budget (`plumb_context::compaction`): before each request, a
//! history over budget has its older rounds summarised by the model (a request of its own, in
//! the journal as a `model_request` and a `compacted` line, which `plumb replay` gives back), and
//! the rounds kept show fewer whole results while they still do not fit. A request the model
//! says does not fit its window shrinks the same way without asking it ([`Run::compact`]).

use std::time::Instant;

use plumb_context::compaction::{self, SummaryRequest};
use plumb_context::prompt::Turn;
use plumb_context::size::prompt_size;
use plumb_protocol::{Event, LoggedMessage};

use super::Run;
use crate::ending::{Ending, elapsed_ms};

impl Run {
    /// Fits the history into its budget before a request whose head takes `head` tokens:
    /// summarises the older rounds when they are worth it, then returns how many results the
    /// request shows whole (at most `keep_full`). With no budget (a model of unknown window and
    /// no `limits.history_tokens`), `keep_full`.
    pub(super) async fn fit_history(&mut self, head: u64) -> Result<usize, Ending> {
        let Some(budget) = self.history_limits.budget(head) else {
            return Ok(self.keep_full);
        };
        if let Some(older) = compaction::to_summarise(&self.turns, self.keep_full, budget) {
            self.summarise(older, budget).await?;
        }
        Ok(compaction::keep_within(&self.turns, self.keep_full, budget))
    }

    /// Replaces the first `older` turns by a summary: the model's, or plumb's own list of the
    /// calls when the model's answer cannot be used (the run goes on either way, with a warning).
    async fn summarise(&mut self, older: usize, budget: u64) -> Result<(), Ending> {
        let before = self.history_shown(budget);
        let SummaryRequest { messages, tool } =
            compaction::summary_request(&self.asked.ticket, &self.turns[..older])
                .map_err(Ending::infra)?;
        self.emit(Event::ModelRequest {
            round: self.round,
            shared: 0,
            messages: messages.iter().cloned().map(LoggedMessage::sent).collect(),
            size: Some(prompt_size(&messages, std::slice::from_ref(&tool), None)),
        })
        .await;
        let request = plumb_model::ModelRequest {
            messages,
            allowed_tools: Some(vec![tool.name.clone()]),
            tools: vec![tool],
            next_step: None,
        };
        let asked = Instant::now();
        let reply = tokio::select! {
            reply = self.model.complete(&request) => reply,
            () = self.asked.cancel.cancelled() => {
                return Err(Ending::cancelled("while the model was summarising earlier rounds"));
            }
        };
        self.timings.model_ms += elapsed_ms(asked);
        let (summary, reply, unused) = match reply {
            Ok(reply) => {
                self.usage.add(&reply.usage);
                match compaction::read_summary(&reply) {
                    Ok(summary) => (summary, Some(reply), None),
                    Err(why) => (String::new(), Some(reply), Some(why)),
                }
            }
            Err(err) => (
                String::new(),
                None,
                Some(format!("the model failed: {err}")),
            ),
        };
        let by_model = unused.is_none();
        let summary = if by_model {
            summary
        } else {
            compaction::fallback_summary(&self.turns[..older])
        };
        self.replace_older(older, &summary)?;
        if let Some(why) = unused {
            self.emit(Event::Warning {
                message: format!(
                    "the model's summary of the earlier rounds could not be used ({why}); plumb's list of the calls made in them stands in for it"
                ),
            })
            .await;
        }
        self.emit(Event::Compacted {
            round: self.round,
            replaced_turns: u32::try_from(older).unwrap_or(u32::MAX),
            summary,
            by_model,
            reply: reply.filter(|_| by_model),
            history_before: before,
            history_after: self.history_shown(budget),
        })
        .await;
        Ok(())
    }

    /// The history's tokens as a request under `budget` shows it.
    fn history_shown(&self, budget: u64) -> u64 {
        let keep = compaction::keep_within(&self.turns, self.keep_full, budget);
        compaction::history_tokens(&self.turns, keep)
    }

    /// Puts the summary turn in place of the first `older` turns and keeps the counts that
    /// follow positions in the history right.
    fn replace_older(&mut self, older: usize, summary: &str) -> Result<(), Ending> {
        let replaced: Vec<Turn> = self.turns.drain(..older).collect();
        self.rounds_summarised += compaction::rounds_in(&replaced);
        self.results_dropped += replaced
            .iter()
            .filter(|turn| matches!(turn, Turn::ToolResult { .. }))
            .count();
        let turn =
            compaction::summary_turn(summary, self.rounds_summarised).map_err(Ending::infra)?;
        self.turns.insert(0, turn);
        Ok(())
    }

    /// Makes the next request smaller after the model said it does not fit: first only the last
    /// tool result stays in full, then the oldest half of the rounds is replaced by plumb's own
    /// list of the calls made in them (the model cannot be asked: its window is what overflowed).
    /// Returns a sentence for the journal, or `None` when nothing is left to drop.
    pub(super) fn compact(&mut self) -> Result<Option<String>, Ending> {
        if self.keep_full > 1 {
            self.keep_full = 1;
            return Ok(Some(
                "the request did not fit the model's context window; only the last tool result is kept in full now".into(),
            ));
        }
        let replies: Vec<usize> = self
            .turns
            .iter()
            .enumerate()
            .filter(|(_, turn)| matches!(turn, Turn::Assistant { .. }))
            .map(|(index, _)| index)
            .collect();
        // Keep at least the latest round; cut at a round boundary so every kept result has its call.
        if replies.len() < 2 {
            return Ok(None);
        }
        let cut = replies[replies.len() / 2];
        let summary = compaction::fallback_summary(&self.turns[..cut]);
        self.replace_older(cut, &summary)?;
        Ok(Some(format!(
            "the request did not fit the model's context window; {cut} earlier turns were replaced by a summary"
        )))
    }
}
