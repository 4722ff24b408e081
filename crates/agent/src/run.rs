//! The `Run` state machine: `prepare`, then `round` until an ending, then `finish`.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use plumb_context::prompt::{self, Turn};
use plumb_protocol::{
    CheckReport, Event, LoggedMessage, Message, Outcome, TestCounts, Timings, ToolCall, Usage,
};
use plumb_tools::shorten::shorten;
use plumb_tools::{DONE_TOOL, EDITED_LINES_HEADER, Registry, ToolContext, ToolError};
use plumb_verify::tamper::TamperPolicy;
use plumb_verify::{TestCommand, TestResults};
use plumb_workspace::{CommitId, Workspace};

use crate::RunSpec;
use crate::figures;
use crate::journal::Journal;
use crate::phase_check::report_explanation;
use crate::phases::{self, CheckVerdict, PhaseCheck, Phases, TestVerdict};
use crate::stuck::{Answered, StuckDetector};

/// The test tool: it runs commands, but a rerun with no file changed gives the same answer.
const RUN_TESTS_TOOL: &str = "run_tests";

/// The ending when the wall-clock budget of `secs` seconds ran out.
fn wall_clock_ending(secs: u64) -> Ending {
    Ending::new(
        Outcome::BudgetExceeded,
        format!("the wall-clock budget ({secs} s) ran out"),
    )
}

/// Why the rounds stopped.
pub(crate) struct Ending {
    pub outcome: Outcome,
    pub reason: String,
}

impl Ending {
    pub(crate) fn new(outcome: Outcome, reason: impl Into<String>) -> Self {
        Self {
            outcome,
            reason: reason.into(),
        }
    }

    /// plumb itself failed (git, the sandbox, the disk).
    pub(crate) fn infra(err: impl std::fmt::Display) -> Self {
        Self::new(Outcome::InfraError, err.to_string())
    }
}

/// One run of the loop. Built by [`Run::prepare`], consumed by [`Run::execute`].
pub struct Run {
    pub(crate) spec: RunSpec,
    pub(crate) workspace: Workspace,
    pub(crate) journal: Journal,
    pub(crate) registry: Registry,
    pub(crate) test_command: TestCommand,
    /// What the setup command made, kept for check trees (`setup_cache.rs`).
    pub(crate) setup_snapshot: Option<std::path::PathBuf>,
    pub(crate) baseline: TestCounts,
    pub(crate) head: Vec<Message>,
    pub(crate) turns: Vec<Turn>,
    pub(crate) round: u32,
    pub(crate) usage: Usage,
    pub(crate) timings: Timings,
    pub(crate) started: Instant,
    pub(crate) stuck: StuckDetector,
    pub(crate) last_checkpoint: CommitId,
    /// True when a command ran since the last checkpoint, so files may have changed unreported.
    pub(crate) unsaved: bool,
    /// The checks of the last `done`, for the report.
    pub(crate) checks: Vec<CheckReport>,
    /// Per-test outcomes of the baseline run, when the runner reports them.
    pub(crate) baseline_results: Option<TestResults>,
    /// Tests that failed at baseline and passed when run again: counted neither way.
    pub(crate) flaky: BTreeSet<String>,
    /// Tamper flags of the last `done`, for a person.
    /// Tamper flags of the last `done`: (kind, detail).
    pub(crate) flags: Vec<(String, String)>,
    /// Which tamper kinds block (the defaults, `tamper_block`, `tamper_unblock`).
    pub(crate) tamper_policy: TamperPolicy,
    /// The tests the last `done` targeted, and those of them that failed on the baseline source.
    pub(crate) target_tests: Vec<String>,
    pub(crate) reproduce_failing: Vec<String>,
    /// How many times the model said `done` (names the folders the checks use).
    pub(crate) done_count: u32,
    /// Whether `checks/baseline` in the run folder holds the baseline tree (written once, for lint).
    pub(crate) baseline_view_ready: bool,
    /// The small-model helpers in effect (on by default for the embedded model).
    pub(crate) helpers: plumb_config::HelpersInEffect,
    /// Tool results kept in full in requests; compaction lowers it when the context overflows.
    pub(crate) keep_full: usize,
    /// What the last model request cost, to stop before one that would pass the cost budget.
    pub(crate) last_request_usd: f64,
    /// How many times a tool changed files or ran commands: a read repeated at the same count
    /// would get the same answer.
    pub(crate) changes: u32,
    /// The guided-phases helper: a failing test first, then the fix.
    pub(crate) phases: Phases,
}

/// What a phase check tells the model.
pub(crate) struct PhaseReport {
    pub(crate) text: String,
    /// Where in `text` the output of the failing run with the fix is, when it failed.
    pub(crate) failure: Option<std::ops::Range<usize>>,
}

impl Run {
    /// Runs rounds until an ending, then finishes: the final report.
    ///
    /// The wall-clock budget ends the run wherever it is: a round still going when it runs out
    /// (a model request, a command, a file operation on the blocking pool) is dropped, which kills
    /// a command's process group, and the run finishes as budget-exceeded, rolled back.
    pub async fn execute(mut self) -> plumb_protocol::FinalReport {
        let limit = self.spec.config.limits.wall_clock_secs;
        let deadline = (limit > 0)
            .then(|| tokio::time::Instant::from_std(self.started + Duration::from_secs(limit)));
        let ending = loop {
            let ending = match deadline {
                Some(deadline) => tokio::select! {
                    ending = self.round() => ending,
                    () = tokio::time::sleep_until(deadline) => Some(wall_clock_ending(limit)),
                },
                None => self.round().await,
            };
            if let Some(ending) = ending {
                break ending;
            }
        };
        self.finish(ending).await
    }

    /// One round: ask the model, run what it asks for. `Some` ends the run.
    async fn round(&mut self) -> Option<Ending> {
        if let Some(ending) = self.limits_reached() {
            return Some(ending);
        }
        self.round += 1;
        let round = self.round;
        let asked = Instant::now();
        let (reply, request) = loop {
            let messages = prompt::build_messages(&self.head, &self.turns, self.keep_full);
            // Every message in full: the journal writer keeps only what is new.
            self.emit(Event::ModelRequest {
                round,
                shared: 0,
                messages: messages.iter().cloned().map(LoggedMessage::sent).collect(),
            })
            .await;
            let request = plumb_model::ModelRequest {
                messages,
                tools: self.registry.specs(),
                allowed_tools: self.phases.allowed_tools(),
                next_step: self.phases.next_step(),
            };
            let reply = tokio::select! {
                reply = self.spec.model.complete(&request) => reply,
                () = self.spec.cancel.cancelled() => {
                    return Some(Ending::new(Outcome::Cancelled, "the run was cancelled while the model was thinking"));
                }
            };
            match reply {
                Err(plumb_model::ModelError::ContextWindowExceeded(why)) => {
                    let Some(message) = self.compact() else {
                        return Some(Ending::new(
                            Outcome::InfraError,
                            format!(
                                "the request no longer fits the model's context window even after compaction: {why}"
                            ),
                        ));
                    };
                    self.emit(Event::Warning { message }).await;
                }
                other => break (other, request),
            }
        };
        let mut reply = match reply {
            Ok(reply) => reply,
            Err(err) => {
                self.timings.model_ms += elapsed_ms(asked);
                return Some(Ending::new(
                    Outcome::InfraError,
                    format!("the model failed: {err}"),
                ));
            }
        };
        let malformed = self.normalise_reply(&mut reply);
        let (reply, duration_ms) = match self
            .choose_candidate(&request, reply, elapsed_ms(asked))
            .await
        {
            Ok(chosen) => chosen,
            Err(ending) => return Some(ending),
        };
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
            self.emit(Event::Note {
                round,
                text: note.to_string(),
            })
            .await;
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

    fn limits_reached(&self) -> Option<Ending> {
        let limits = &self.spec.config.limits;
        if self.spec.cancel.is_cancelled() {
            return Some(Ending::new(Outcome::Cancelled, "the run was cancelled"));
        }
        let max_rounds = self.spec.config.max_rounds();
        if self.round >= max_rounds {
            return Some(Ending::new(
                Outcome::RoundLimit,
                format!("the round limit ({max_rounds}) was reached before the checks passed"),
            ));
        }
        if limits.wall_clock_secs > 0
            && self.started.elapsed() >= Duration::from_secs(limits.wall_clock_secs)
        {
            return Some(wall_clock_ending(limits.wall_clock_secs));
        }
        let tokens = self.usage.input_tokens + self.usage.output_tokens;
        if limits.max_tokens > 0 && tokens >= limits.max_tokens {
            return Some(Ending::new(
                Outcome::BudgetExceeded,
                format!("the token budget ({}) ran out", limits.max_tokens),
            ));
        }
        if limits.max_usd > 0.0 && self.usage.usd >= limits.max_usd {
            return Some(Ending::new(
                Outcome::BudgetExceeded,
                format!("the cost budget (${:.2}) ran out", limits.max_usd),
            ));
        }
        // Requests grow round by round, so the last one's cost is a floor for the next one's.
        if limits.max_usd > 0.0 && self.usage.usd + self.last_request_usd > limits.max_usd {
            return Some(Ending::new(
                Outcome::BudgetExceeded,
                format!(
                    "the next request would pass the cost budget (${:.2}): ${:.4} spent, and the last request alone cost ${:.4}",
                    limits.max_usd, self.usage.usd, self.last_request_usd
                ),
            ));
        }
        None
    }

    /// Runs one tool call (or answers `done`) and records its result.
    async fn call_tool(&mut self, call: &ToolCall) -> Option<Ending> {
        let round = self.round;
        self.emit(Event::ToolStarted {
            round,
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        })
        .await;
        let started = Instant::now();
        let (result, verified, line_limit) = if let Some(note) = self.phases.refusal(call) {
            (
                Err(ToolError::RespondToModel(note)),
                false,
                self.spec.config.limits.tool_output_lines,
            )
        } else if call.name == DONE_TOOL {
            match self.answer_done().await {
                Ok(done) => (
                    done.result,
                    done.verified,
                    self.spec.config.limits.tool_output_lines,
                ),
                Err(ending) => return Some(ending),
            }
        } else if let Some(earlier) = self.repeated_read(call) {
            (
                Err(ToolError::RespondToModel(format!(
                    "you already called {} with these same arguments in round {earlier}, and no file has changed since, so the answer is the one you got then. Take the next step instead (read a file it pointed to, add a test, or edit).",
                    call.name
                ))),
                false,
                self.spec.config.limits.tool_output_lines,
            )
        } else if let serde_json::Value::String(raw) = &call.arguments {
            // Arguments that arrived as text and could not be repaired: nothing runs.
            let why = plumb_model::textcall::repair_arguments(raw)
                .err()
                .unwrap_or_else(|| "they are not one JSON object".to_string());
            (
                Err(ToolError::RespondToModel(format!(
                    "the arguments of your `{}` call could not be used: {why}. Nothing was done; send the arguments as one JSON object.",
                    call.name
                ))),
                false,
                self.spec.config.limits.tool_output_lines,
            )
        } else {
            let ctx = self.tool_context();
            let limit = self
                .registry
                .get(&call.name)
                .map(|tool| tool.output_line_limit(&ctx))
                .unwrap_or(self.spec.config.limits.tool_output_lines);
            // An edit of lines that only an undone edit wrote means the lines that edit replaced.
            let rebased = self.phases.rebase_on_undone(call);
            let arguments = rebased.as_ref().map_or(&call.arguments, |(args, _)| args);
            let result = self
                .registry
                .call(&ctx, &call.name, arguments)
                .await
                .map(|mut out| {
                    if let Some((_, note)) = &rebased {
                        out.text = format!("{note}{}", out.text);
                    }
                    out
                })
                .map_err(|err| match err {
                    // An edit that could not be made, of the file the figure trace names.
                    ToolError::RespondToModel(text) => ToolError::RespondToModel(format!(
                        "{text}{}",
                        self.phases.after_failed_edit(call).unwrap_or_default()
                    )),
                    other => other,
                });
            (result, false, limit)
        };
        let duration_ms = elapsed_ms(started);
        self.timings.tools_ms += duration_ms;
        let runs_commands = call.name == DONE_TOOL
            || self
                .registry
                .get(&call.name)
                .is_some_and(|tool| tool.runs_commands());
        self.unsaved |= runs_commands;
        if call.name == RUN_TESTS_TOOL {
            // A test run usually changes no file: when the checkpoint after it is the one before,
            // running the same tests again would give the same answer.
            let before = self.last_checkpoint.clone();
            if let Err(ending) = self.checkpoint(&format!("run_tests round {round}")).await {
                return Some(ending);
            }
            if self.last_checkpoint != before {
                self.changes += 1;
            }
        } else if runs_commands {
            self.changes += 1;
        }
        let (mut ok, mut output, summary, changed) = match result {
            Ok(out) => {
                self.timings.commands_ms += out.command_time.as_millis() as u64;
                if out.changed {
                    self.changes += 1;
                }
                (true, out.text, out.summary, out.changed)
            }
            Err(ToolError::RespondToModel(text)) => {
                let summary = text.lines().next().unwrap_or_default().to_string();
                (false, format!("Error: {text}"), summary, false)
            }
            Err(ToolError::Infra(text)) => {
                return Some(Ending::new(Outcome::InfraError, text));
            }
        };
        if ok && let Some(check) = self.phases.check_after(call) {
            match self.run_phase_check(&check).await {
                Ok((mut verdict, PhaseReport { text, failure })) => {
                    let mut report = text;
                    let mut check = check;
                    if let Some(test_file) = self.phases.figure_search(&check, verdict) {
                        match self.search_figures(&test_file).await {
                            Ok(figures::FigureSearch::Found(found)) => {
                                // The failing output is of an assert that is gone now: its
                                // traceback would cost the next round some 450 tokens (~4 s
                                // for the embedded model) and tell the model nothing more.
                                if let Some(range) = failure
                                    && let Some(excerpt) = report.get(range.clone())
                                {
                                    let short = figures::replaced_failure(excerpt);
                                    report.replace_range(range, &short);
                                }
                                // The edit's answer ends with the lines of the version that
                                // was just replaced; the note shows the kept one. Both cost the
                                // next round (which is usually `done`) some 150 tokens.
                                if let Some(at) = output.find(EDITED_LINES_HEADER) {
                                    output.truncate(at);
                                    output.push_str(figures::KEPT_VERSION_BELOW);
                                }
                                report.push_str(&figures::note(&found, &test_file));
                                // The kept version is the model's test now, judged both ways.
                                check = PhaseCheck::BothWays(test_file);
                                verdict = CheckVerdict {
                                    now: TestVerdict::Passes,
                                    original: Some(TestVerdict::Fails),
                                    same_failure: false,
                                    broke_old: false,
                                };
                            }
                            Ok(figures::FigureSearch::NoneShowed(tries)) => {
                                report.push_str(&figures::none_showed(tries));
                            }
                            Ok(figures::FigureSearch::NotTried) => {}
                            Err(ending) => return Some(ending),
                        }
                    }
                    let mut shown = self.phases.shown_after(&check, verdict);
                    let mut undo = self.phases.undoes(&check, verdict);
                    let mut unconfirmed = false;
                    if let Some((test_file, example)) = self.phases.probe_after(&check, verdict) {
                        match self.probe_fix(&test_file, &example).await {
                            Ok(search) => {
                                report.push_str(&figures::probe_note(&search).unwrap_or_default());
                                report.push('\n');
                                unconfirmed =
                                    matches!(search, figures::FigureSearch::NoneShowed(_));
                            }
                            Err(ending) => return Some(ending),
                        }
                    }
                    // A fix undone before any was kept: the first time, the figure trace finds
                    // the line that makes the ticket's figure, named from then on.
                    let fix_undone =
                        unconfirmed || (undo && matches!(check, PhaseCheck::Existing(_)));
                    if fix_undone
                        && let Some((test_file, example, source_file)) = self.phases.trace_with()
                    {
                        match self.trace_figures(&test_file, &example, &source_file).await {
                            Ok(pointer) => self.phases.point_at(pointer.as_ref()),
                            Err(ending) => return Some(ending),
                        }
                    }
                    let sentence = if unconfirmed {
                        undo = true;
                        shown = None;
                        self.phases.reject_unconfirmed()
                    } else {
                        let mut sentence = self.phases.record(&check, verdict).to_string();
                        if undo && let Some(pointer) = self.phases.pointer() {
                            // A line of its own: lines past 500 characters are cut in what the
                            // model is shown, and a long path or line of code can get there.
                            sentence.push('\n');
                            sentence.push_str(pointer);
                        }
                        sentence
                    };
                    output.push_str(&report);
                    output.push_str(&sentence);
                    output.push_str(shown.as_deref().unwrap_or_default());
                    if undo {
                        self.phases.remember_undone(call);
                        // The checkpoint before this call is the code as it was before the edit.
                        if let Err(err) = self.workspace.rollback(&self.last_checkpoint) {
                            return Some(Ending::infra(format!(
                                "could not undo an edit that broke the tests: {err}"
                            )));
                        }
                        // Undone, it counts as a failed action: the same breaking edit sent
                        // again and again ends the run as stuck. The `Error:` start also marks
                        // it refused, so the embedded model samples again rather than repeat it.
                        // The tool's own text shows the edited lines, which are gone again: a
                        // model shown them went on editing them.
                        ok = false;
                        let path = phases::written_path(call).unwrap_or("the file");
                        output = format!(
                            "Error: plumb undid this edit of {path}: the file is as it was before it (why is below).{}{sentence}{}",
                            report,
                            shown.as_deref().unwrap_or_default()
                        );
                        if let Some(note) = self.name_note(call, path, &report) {
                            // A line of its own: long lines are cut in what the model is shown.
                            output.push('\n');
                            output.push_str(&note);
                        }
                    }
                    if let Some(explained) = report_explanation(&check, verdict, &report) {
                        output.push(' ');
                        output.push_str(&explained);
                    }
                }
                Err(ending) => return Some(ending),
            }
        }
        let shown = shorten(&output, line_limit).text;
        self.turns.push(Turn::ToolResult {
            call_id: call.id.clone(),
            text: shown,
            one_line: format!("{}: {summary}", call.name),
        });
        self.emit(Event::ToolFinished {
            round,
            call_id: call.id.clone(),
            name: call.name.clone(),
            ok: ok && (call.name != DONE_TOOL || verified),
            summary,
            output,
            duration_ms,
        })
        .await;
        if changed
            && let Err(ending) = self
                .checkpoint(&format!("{} round {round}", call.name))
                .await
        {
            return Some(ending);
        }
        if verified {
            return Some(Ending::new(
                Outcome::Success,
                "the model said done and every check passed",
            ));
        }
        let failed = !ok || call.name == DONE_TOOL;
        if failed {
            return self.count_failure(&call.name, &call.arguments);
        }
        self.stuck.succeeded();
        None
    }

    /// What a tool needs from the run: the workspace, the sandbox, the settings.
    pub(crate) fn tool_context(&self) -> ToolContext<'_> {
        ToolContext {
            workspace: &self.workspace,
            sandbox: self.spec.sandbox.as_ref(),
            config: &self.spec.config,
            test_command: Some(&self.test_command),
            cancel: &self.spec.cancel,
            helpers: self.helpers,
        }
    }

    /// The round of an identical earlier read-only call whose answer is still shown in full and
    /// nothing has changed since. One the history has shrunk to a line may be made again.
    fn repeated_read(&mut self, call: &ToolCall) -> Option<u32> {
        const READ_ONLY: [&str; 4] = ["search_code", "read_file", "list_files", RUN_TESTS_TOOL];
        if !READ_ONLY.contains(&call.name.as_str()) {
            return None;
        }
        let results = self
            .turns
            .iter()
            .filter(|t| matches!(t, Turn::ToolResult { .. }))
            .count();
        let now = Answered {
            round: self.round,
            result: results,
            changes: self.changes,
        };
        let earlier = self.stuck.repeated_read(&call.name, &call.arguments, now)?;
        if earlier.result < prompt::shrunk_before(results, self.keep_full) {
            self.stuck.forget_read(&call.name, &call.arguments, now);
            return None;
        }
        Some(earlier.round)
    }

    fn count_failure(&mut self, tool: &str, args: &serde_json::Value) -> Option<Ending> {
        let repeats = self.stuck.failed(tool, args);
        let limit = self.spec.config.limits.stuck_repeats.max(1);
        (repeats >= limit).then(|| {
            Ending::new(
                Outcome::Stuck,
                format!("the same failed action ({tool}) came {repeats} times in a row"),
            )
        })
    }

    /// Commits the workspace if it changed since the last checkpoint.
    pub(crate) async fn checkpoint(&mut self, label: &str) -> Result<(), Ending> {
        let commit = self
            .workspace
            .checkpoint(label)
            .map_err(|err| Ending::new(Outcome::InfraError, format!("checkpoint failed: {err}")))?;
        self.unsaved = false;
        if commit != self.last_checkpoint {
            self.last_checkpoint = commit.clone();
            self.emit(Event::Checkpoint {
                label: label.to_string(),
                commit: commit.to_string(),
            })
            .await;
        }
        Ok(())
    }

    /// Sends an event to the journal and to the observer, if any.
    pub(crate) async fn emit(&self, event: Event) {
        if let Some(observer) = &self.spec.observer {
            let _ = observer.send(event.clone()).await;
        }
        self.journal.write(event).await;
    }
}

pub(crate) fn elapsed_ms(since: Instant) -> u64 {
    since.elapsed().as_millis() as u64
}
