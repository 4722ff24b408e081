//! One tool call: the helpers may refuse it or rewrite its arguments, then it runs (or `done`
//! runs the ladder), the helpers may add to its answer or undo its write, and the answer goes into
//! the history, shortened for the model and whole in the journal. A failed action counts toward
//! "stuck"; a read repeated with nothing changed is answered from the earlier round.

use std::time::Instant;

use plumb_context::prompt::{self, Turn};
use plumb_protocol::{Event, ToolCall};
use plumb_tools::shorten::shorten;
use plumb_tools::{DONE_TOOL, ToolContext, ToolError, ToolOutput};

use super::Run;
use super::handle::parts_of;
use super::stuck::Answered;
use crate::ending::{Ending, elapsed_ms};
use crate::policy::{Gate, ToolOutcome};

/// The test tool: it runs commands, but a rerun with no file changed gives the same answer.
const RUN_TESTS_TOOL: &str = "run_tests";

/// The tools whose answer depends only on the files: asked again with nothing changed, they
/// would answer the same.
const READ_ONLY: [&str; 4] = ["search_code", "read_file", "list_files", RUN_TESTS_TOOL];

impl Run {
    /// Runs one tool call (or answers `done`) and records its result.
    pub(super) async fn call_tool(&mut self, call: &ToolCall) -> Option<Ending> {
        let round = self.round;
        self.emit(Event::ToolStarted {
            round,
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        })
        .await;
        let started = Instant::now();
        let mut line_limit = self.asked.config.limits.tool_output_lines;
        let mut verified = false;
        let mut ran = false;
        let gate = self.policies.before_tool(call);
        // The helpers after the tool see the call as it ran: a rewrite may have sent it elsewhere.
        let rewritten = match &gate {
            Gate::Rewrite { arguments, .. } => Some(ToolCall {
                arguments: arguments.clone(),
                ..call.clone()
            }),
            Gate::Run | Gate::Refuse(_) | Gate::Fail(_) => None,
        };
        let result = match gate {
            Gate::Fail(why) => return Some(Ending::infra(why)),
            Gate::Refuse(note) => Err(ToolError::RespondToModel(note)),
            _ if call.name == DONE_TOOL => match self.answer_done().await {
                Ok(done) => {
                    verified = done.verified;
                    done.result
                }
                Err(ending) => return Some(ending),
            },
            gate => {
                if let Some(earlier) = self.repeated_read(call) {
                    Err(ToolError::RespondToModel(format!(
                        "you already called {} with these same arguments in round {earlier}, and no file has changed since, so the answer is the one you got then. Take the next step instead (read a file it pointed to, add a test, or edit).",
                        call.name
                    )))
                } else if let serde_json::Value::String(raw) = &call.arguments {
                    // Arguments that arrived as text and could not be repaired: nothing runs.
                    let why = plumb_model::textcall::repair_arguments(raw)
                        .err()
                        .unwrap_or_else(|| "they are not one JSON object".to_string());
                    Err(ToolError::RespondToModel(format!(
                        "the arguments of your `{}` call could not be used: {why}. Nothing was done; send the arguments as one JSON object.",
                        call.name
                    )))
                } else {
                    let (result, limit) = self.run_tool(call, gate).await;
                    line_limit = limit;
                    ran = true;
                    result
                }
            }
        };
        let duration_ms = elapsed_ms(started);
        self.timings.tools_ms += duration_ms;
        if let Err(ending) = self.count_change(call).await {
            return Some(ending);
        }
        let mut outcome = match result {
            Ok(out) => {
                self.timings.commands_ms += out.command_time.as_millis() as u64;
                if out.changed {
                    self.changes += 1;
                }
                ToolOutcome {
                    ok: true,
                    ran,
                    text: out.text,
                    summary: out.summary,
                    changed: out.changed,
                    ..ToolOutcome::default()
                }
            }
            Err(ToolError::RespondToModel(text)) => ToolOutcome {
                ok: false,
                ran,
                summary: text.lines().next().unwrap_or_default().to_string(),
                text,
                ..ToolOutcome::default()
            },
            Err(ToolError::Infra(text)) => {
                return Some(Ending::new(plumb_protocol::Outcome::InfraError, text));
            }
        };
        if let Err(ending) = self
            .after_tool(rewritten.as_ref().unwrap_or(call), &mut outcome)
            .await
        {
            return Some(ending);
        }
        let output = if outcome.ok {
            outcome.text
        } else {
            format!("Error: {}", outcome.text)
        };
        let shown = shorten(&output, line_limit).text;
        self.turns.push(Turn::ToolResult {
            call_id: call.id.clone(),
            text: shown,
            one_line: format!("{}: {}", call.name, outcome.summary),
            failed: !outcome.ok,
        });
        self.emit(Event::ToolFinished {
            round,
            call_id: call.id.clone(),
            name: call.name.clone(),
            ok: outcome.ok && (call.name != DONE_TOOL || verified),
            summary: outcome.summary,
            output,
            duration_ms,
        })
        .await;
        if outcome.changed
            && let Err(ending) = self
                .checkpoint(&format!("{} round {round}", call.name))
                .await
        {
            return Some(ending);
        }
        if verified {
            return Some(Ending::new(
                plumb_protocol::Outcome::Success,
                "the model said done and every check passed",
            ));
        }
        if !outcome.ok || call.name == DONE_TOOL {
            return self.count_failure(&call.name, &call.arguments);
        }
        self.stuck.succeeded();
        None
    }

    /// Runs a tool of the registry, with the arguments a helper rewrote them to; returns its
    /// result and how many lines of it the model is shown.
    async fn run_tool(
        &mut self,
        call: &ToolCall,
        gate: Gate,
    ) -> (Result<ToolOutput, ToolError>, usize) {
        let context = ToolContext {
            workspace: &self.workspace,
            sandbox: self.tester.sandbox(),
            config: &self.asked.config,
            test_command: Some(self.tester.command()),
            cancel: &self.asked.cancel,
            helpers: self.helpers,
            ticket: &self.asked.ticket,
            tag_cache: self.asked.tag_cache.as_deref(),
        };
        let limit = self
            .registry
            .get(&call.name)
            .map(|tool| tool.output_line_limit(&context))
            .unwrap_or(self.asked.config.limits.tool_output_lines);
        let (arguments, note) = match gate {
            Gate::Rewrite { arguments, note } => (arguments, Some(note)),
            Gate::Run | Gate::Refuse(_) | Gate::Fail(_) => (call.arguments.clone(), None),
        };
        let result = self
            .registry
            .call(&context, &call.name, &arguments)
            .await
            .map(|mut out| {
                if let Some(note) = &note {
                    out.text = format!("{note}{}", out.text);
                }
                out
            });
        (result, limit)
    }

    /// Counts what a call may have changed. A tool that runs commands in the workspace is
    /// checkpointed at once: the checkpoint is where the workspace's limits are checked after
    /// every command (a command that filled the tree ends the run before anything reads it), and
    /// a test run asked again with nothing changed is then known for a repeat. `done` runs its
    /// commands in check trees; the round's end checkpoints after it.
    async fn count_change(&mut self, call: &ToolCall) -> Result<(), Ending> {
        let runs_commands = self
            .registry
            .get(&call.name)
            .is_some_and(|tool| tool.runs_commands());
        self.unsaved |= runs_commands || call.name == DONE_TOOL;
        if call.name == DONE_TOOL {
            self.changes += 1;
            return Ok(());
        }
        if !runs_commands {
            return Ok(());
        }
        let before = self.last_checkpoint.clone();
        self.checkpoint(&format!("{} round {}", call.name, self.round))
            .await?;
        if call.name != RUN_TESTS_TOOL || self.last_checkpoint != before {
            self.changes += 1;
        }
        Ok(())
    }

    /// The helpers after a tool: each may add to what the model is told, or undo the write.
    async fn after_tool(
        &mut self,
        call: &ToolCall,
        outcome: &mut ToolOutcome,
    ) -> Result<(), Ending> {
        let mut parts = parts_of!(self);
        self.policies.after_tool(&mut parts, call, outcome).await
    }

    /// The round of an identical earlier read-only call whose answer is still shown in full and
    /// nothing has changed since. One the history has shrunk to a line, or whose view of a file a
    /// later result replaced, may be made again.
    fn repeated_read(&mut self, call: &ToolCall) -> Option<u32> {
        if !READ_ONLY.contains(&call.name.as_str()) {
            return None;
        }
        let results = self
            .turns
            .iter()
            .filter(|t| matches!(t, Turn::ToolResult { .. }))
            .count();
        // Counted from the start of the run, so a summary taking results out does not move them.
        let now = Answered {
            round: self.round,
            result: self.results_dropped + results,
            changes: self.changes,
        };
        let earlier = self.stuck.repeated_read(&call.name, &call.arguments, now)?;
        let whole = prompt::shown_whole(&self.turns, self.keep_shown);
        let in_turns = earlier.result.checked_sub(self.results_dropped);
        if !in_turns
            .and_then(|at| whole.get(at).copied())
            .unwrap_or(false)
        {
            self.stuck.forget_read(&call.name, &call.arguments, now);
            return None;
        }
        Some(earlier.round)
    }

    pub(super) fn count_failure(&mut self, tool: &str, args: &serde_json::Value) -> Option<Ending> {
        let repeats = self.stuck.failed(tool, args);
        let limit = self.asked.config.limits.stuck_repeats.max(1);
        (repeats >= limit).then(|| {
            Ending::new(
                plumb_protocol::Outcome::Stuck,
                format!("the same failed action ({tool}) came {repeats} times in a row"),
            )
        })
    }
}
