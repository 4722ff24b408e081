//! The `Run` state machine (ARCHITECTURE.md, "No god loop"): [`Run::prepare`] (`prepare.rs`), then
//! rounds until an ending (`round.rs`, each tool call in `call.rs`, `done` in `done.rs`, the
//! limits in `limits.rs`), then [`Run::finish`] (`finish.rs`). In the words of the article's
//! twenty lines of Python:
//!
//! ```text
//! loop {
//!     if a limit is reached { stop }
//!     reply = ask the model (the helpers shape the request and may choose among samples)
//!     for each tool call in reply {
//!         result = run it (the helpers may refuse it before, or undo it after)
//!         if it was `done` and every check passed { stop: success }
//!     }
//! }
//! ```
//!
//! The helpers are [`Policies`] the loop calls at named points (`policy.rs`); it never names one.
//! Everything a helper may do to the run goes through the narrow handle of `handle.rs`.

mod baseline;
mod call;
mod compact;
mod done;
mod finish;
mod handle;
mod head;
mod limits;
mod prepare;
mod reply;
mod round;
mod setup;
mod stuck;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use plumb_config::{Config, HelpersInEffect};
use plumb_context::prompt::Turn;
use plumb_model::ModelClient;
use plumb_protocol::{HelperState, Message, Provenance, Timings, Usage};
use plumb_tools::Registry;
use plumb_workspace::{CommitId, Workspace, WorkspaceError};
use tokio_util::sync::CancellationToken;

use crate::baseline::Baseline;
use crate::emitter::Emitter;
use crate::ending::Ending;
use crate::facts::Briefing;
use crate::input::Inbox;
use crate::ladder::Ladder;
use crate::policy::Policies;
use crate::review::Reviewer;
use crate::setup_cache::SetupCache;
use crate::tester::Tester;

/// What the front end asked for, as far as the loop keeps it.
struct Asked {
    repo_label: String,
    /// The user's folder the workspace was copied from.
    repo: PathBuf,
    ticket: String,
    config: Config,
    run_id: String,
    run_dir: PathBuf,
    /// Cancelled with the run (`inbox.token()`), for the parts that take a token.
    cancel: CancellationToken,
    /// The run's input channel: why it was cancelled, when it was.
    inbox: Inbox,
    fail_to_pass: Vec<String>,
    settings: Provenance,
    setup_cache: Option<SetupCache>,
    /// The repository's tag cache file in plumb's cache folder, named by the user's folder (the
    /// workspace is a new copy each run), where `plumb map` keeps it too.
    tag_cache: Option<PathBuf>,
}

/// One run of the loop. Built by [`Run::prepare`], given its helpers, run by [`Run::execute`].
pub struct Run {
    asked: Asked,
    model: Box<dyn ModelClient>,
    workspace: Workspace,
    emitter: Emitter,
    registry: Registry,
    tester: Tester,
    baseline: Baseline,
    /// The rules and the first message, then the rounds.
    head: Vec<Message>,
    turns: Vec<Turn>,
    /// Tool results kept in full in requests; compaction lowers it when the context overflows.
    keep_full: usize,
    /// Tool results the last request showed in full: `keep_full`, or fewer when the history's
    /// budget made the oldest of them shrink early.
    keep_shown: usize,
    /// What bounds the history (`limits.prompt_share` of the model's window, less each
    /// request's head; `limits.history_tokens`).
    history_limits: plumb_context::compaction::HistoryLimits,
    /// Rounds a summary stands for, and tool results it took out of `turns`: positions counted
    /// from the start of the run are this many ahead of positions in `turns`.
    rounds_summarised: u32,
    results_dropped: usize,
    /// What the first message showed, for the helpers (the source file up front, its test…).
    briefing: Briefing,
    round: u32,
    usage: Usage,
    timings: Timings,
    started: Instant,
    /// What the last model request cost, to stop before one that would pass the cost budget.
    last_request_usd: f64,
    stuck: stuck::StuckDetector,
    /// How many times a tool changed files or ran commands: a read repeated at the same count
    /// would get the same answer.
    changes: u32,
    last_checkpoint: CommitId,
    /// True when a command ran since the last checkpoint, so files may have changed unreported.
    unsaved: bool,
    /// Why the copy's state could not be staged, when a limit of the workspace refused it: the
    /// finish keeps the last checkpoint as the attempt without trying again.
    unstageable: Option<String>,
    ladder: Ladder,
    reviewer: Reviewer,
    /// The helpers' settings as the tools and the prompt read them.
    helpers: HelpersInEffect,
    policies: Policies,
    /// Which helpers are on for this run and why, and why the others are not.
    helper_states: Vec<HelperState>,
}

impl Run {
    /// Runs rounds until an ending, then finishes: the final report.
    ///
    /// The wall-clock budget ends the run wherever it is: a round still going when it runs out
    /// (a model request, a command, a file operation on the blocking pool) is dropped, which kills
    /// a command's process group, and the run finishes as budget-exceeded, rolled back.
    pub async fn execute(mut self) -> plumb_protocol::FinalReport {
        let limit = self.asked.config.limits.wall_clock_secs;
        let deadline = (limit > 0)
            .then(|| tokio::time::Instant::from_std(self.started + Duration::from_secs(limit)));
        let ending = loop {
            let ending = match deadline {
                Some(deadline) => tokio::select! {
                    ending = self.round() => ending,
                    () = tokio::time::sleep_until(deadline) => Some(limits::wall_clock_ending(limit)),
                },
                None => self.round().await,
            };
            if let Some(ending) = ending {
                break ending;
            }
        };
        self.finish(ending).await
    }

    /// Sends an event to the journal and to the observer, if any.
    async fn emit(&self, event: plumb_protocol::Event) {
        self.emitter.emit(event).await;
    }

    /// Commits the workspace if it changed since the last checkpoint. Past the workspace's limits
    /// or the wall clock the run ends over budget.
    async fn checkpoint(&mut self, label: &str) -> Result<(), Ending> {
        let commit = self.workspace.checkpoint(label).map_err(|err| {
            if matches!(
                err,
                WorkspaceError::TooManyFiles { .. } | WorkspaceError::TooManyBytes { .. }
            ) {
                self.unstageable = Some(err.to_string());
            }
            if err.is_budget() {
                Ending::workspace(err)
            } else {
                Ending::infra(format!("checkpoint failed: {err}"))
            }
        })?;
        self.unsaved = false;
        if commit != self.last_checkpoint {
            self.last_checkpoint = commit.clone();
            self.emit(plumb_protocol::Event::Checkpoint {
                label: label.to_string(),
                commit: commit.to_string(),
            })
            .await;
        }
        Ok(())
    }
}
