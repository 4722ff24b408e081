//! One round: the helpers shape the request, the model answers (the context compacted when it no
//! longer fits), the choosing helper may sample other replies and pick one, and each tool call of
//! the reply runs (`call.rs`).

use std::time::Instant;

use plumb_context::prompt::{self, Turn};
use plumb_context::size::prompt_size;
use plumb_protocol::{Event, LoggedMessage, ModelReply, Outcome};

use super::Run;
use super::handle::{ChoiceContext, parts_of};
use crate::ending::{Ending, elapsed_ms};
use crate::policy::Chosen;

impl Run {
    /// One round: ask the model, run what it asks for. `Some` ends the run.
    pub(super) async fn round(&mut self) -> Option<Ending> {
        if let Some(ending) = self.limits_reached() {
            return Some(ending);
        }
        self.round += 1;
        let round = self.round;
        let asked = Instant::now();
        let (reply, request) = match self.ask().await {
            Ok(asked) => asked,
            Err(ending) => {
                self.timings.model_ms += elapsed_ms(asked);
                return Some(ending);
            }
        };
        let mut reply = reply;
        self.normalise_reply(&mut reply);
        let first = Chosen {
            reply,
            duration_ms: elapsed_ms(asked),
        };
        let chosen = match self.choose_reply(&request, first).await {
            Ok(chosen) => chosen,
            Err(ending) => return Some(ending),
        };
        let Chosen {
            mut reply,
            duration_ms,
        } = chosen;
        // Why the chosen reply's call cannot be used: a helper may have picked a sample over the
        // first reply, so this is asked of the reply the round goes on with (normalising again
        // changes nothing).
        let malformed = self.normalise_reply(&mut reply);
        self.timings.model_ms += duration_ms;
        self.usage.add(&reply.usage);
        self.last_request_usd = reply.usage.usd;
        self.emit(Event::ModelReply {
            round,
            reply: reply.clone(),
            duration_ms,
        })
        .await;
        if reply.exhausted {
            return Some(Ending::new(
                Outcome::ModelStopped,
                "the model had nothing more to say before the checks passed",
            ));
        }
        self.turns.push(Turn::Assistant {
            content: reply.content.clone(),
            tool_calls: reply.tool_calls.clone(),
        });
        if reply.tool_calls.is_empty() {
            let note = match malformed {
                Some(why) => format!("Your reply's tool call could not be used: {why}."),
                None => "Your reply had no tool call. Call exactly one tool; call done when you are finished.".to_string(),
            };
            self.turns.push(Turn::Note(note.clone()));
            self.emit(Event::Note { round, text: note }).await;
            return self.count_failure("(no tool call)", &serde_json::Value::Null);
        }
        for call in &reply.tool_calls {
            if let Some(ending) = self.call_tool(call).await {
                return Some(ending);
            }
        }
        if self.unsaved
            && let Err(err) = self.checkpoint(&format!("round {round}")).await
        {
            return Some(err);
        }
        None
    }

    /// Sends the request as the helpers shape it, its history fitted to its budget first
    /// (`compact.rs`); a request that no longer fits the context window compacts the history
    /// and is sent again.
    async fn ask(&mut self) -> Result<(ModelReply, plumb_model::ModelRequest), Ending> {
        loop {
            let shape = self.policies.shape_request().map_err(Ending::infra)?;
            let tools = self.registry.specs().map_err(Ending::infra)?;
            let head = prompt_size(&self.head, &tools, shape.next_step.as_deref()).total;
            self.keep_shown = self.fit_history(head).await?;
            let messages = prompt::build_messages(&self.head, &self.turns, self.keep_shown);
            let size = prompt_size(&messages, &tools, shape.next_step.as_deref());
            // Every message in full: the journal writer keeps only what is new.
            self.emit(Event::ModelRequest {
                round: self.round,
                shared: 0,
                messages: messages.iter().cloned().map(LoggedMessage::sent).collect(),
                size: Some(size),
            })
            .await;
            let request = plumb_model::ModelRequest {
                messages,
                tools,
                allowed_tools: shape.allowed_tools,
                next_step: shape.next_step,
            };
            let reply = tokio::select! {
                reply = self.model.complete(&request) => reply,
                () = self.asked.cancel.cancelled() => {
                    return Err(Ending::cancelled("while the model was thinking"));
                }
            };
            match reply {
                Ok(reply) => return Ok((reply, request)),
                Err(plumb_model::ModelError::ContextWindowExceeded(why)) => {
                    let Some(message) = self.compact()? else {
                        return Err(Ending::new(
                            Outcome::InfraError,
                            format!(
                                "the request no longer fits the model's context window even after compaction: {why}"
                            ),
                        ));
                    };
                    self.emit(Event::Warning { message }).await;
                }
                Err(err) => {
                    return Err(Ending::new(
                        Outcome::InfraError,
                        format!("the model failed: {err}"),
                    ));
                }
            }
        }
    }

    /// The reply this round goes on with: the model's, unless a helper chooses among samples.
    async fn choose_reply(
        &mut self,
        request: &plumb_model::ModelRequest,
        first: Chosen,
    ) -> Result<Chosen, Ending> {
        let Some(index) = self.policies.chooser() else {
            return Ok(first);
        };
        let (chooser, others) = self.policies.one_and_others(index);
        let mut handle = ChoiceContext::new(
            parts_of!(self),
            self.model.as_ref(),
            &self.registry,
            self.helpers,
            others,
        );
        chooser.choose_reply(&mut handle, request, first).await
    }
}
