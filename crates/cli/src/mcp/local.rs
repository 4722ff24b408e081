//! The MCP tools' [`Backend`] on this machine: `coding_task` runs a ticket as `plumb fix` does —
//! the same settings, sandbox, ladder and review, a run folder `plumb apply` finds — and hands
//! back the verified diff. A model the caller names may not send the code somewhere the user's
//! settings do not (an `openai-compat:` URL of its own) nor read a script from outside the
//! allowed folders.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use plumb_agent::RunSpec;
use plumb_agent::input::CancelReason;
use plumb_config::{Config, FlagSetting};
use plumb_mcp::types::{
    Budget, CancelAnswer, CodingTaskArgs, RunDiff, RunStatus, RunsList, RunsListArgs, TaskResult,
};
use plumb_mcp::{Backend, ProgressNote, ToolFailure};
use plumb_model::ModelSpec;
use plumb_protocol::Event;
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use super::gate::Gate;
use super::lock;
use super::runs::{self as mcp_runs, Live};
use crate::launch::{self, Prepared};
use crate::screen::{one_line, say};
use crate::{Failure, prune, setup};

/// The engine on this machine behind the MCP tools.
pub(super) struct LocalBackend {
    /// The user's `-c` overrides given to `plumb mcp`.
    overrides: Vec<String>,
    gate: Gate,
    runs_dir: PathBuf,
    /// The runs this server started that have not ended.
    live: Arc<Mutex<BTreeMap<String, Live>>>,
    /// Woken each time a run ends.
    ended: Arc<Notify>,
}

impl LocalBackend {
    pub(super) fn new(overrides: Vec<String>, gate: Gate, runs_dir: PathBuf) -> LocalBackend {
        LocalBackend {
            overrides,
            gate,
            runs_dir,
            live: Arc::new(Mutex::new(BTreeMap::new())),
            ended: Arc::new(Notify::new()),
        }
    }

    /// A model the caller names may not send the code where the user's settings do not, nor
    /// read a script from outside the allowed folders.
    fn check_model(&self, text: &str, config: &Config) -> Result<(), ToolFailure> {
        let spec =
            ModelSpec::parse(text).map_err(|err| ToolFailure::BadInput(format!("model: {err}")))?;
        match spec {
            ModelSpec::OpenAiCompat { .. }
                if text.trim() != config.model.trim()
                    && text.trim() != config.review.model.trim() =>
            {
                Err(ToolFailure::BadInput(format!(
                    "model {text} names a server address of the caller's choosing, which could send the repository's code anywhere; name one of the user's models (openai:MODEL, anthropic:MODEL, ollama:MODEL, local) or leave model out for the user's setting ({})",
                    config.model
                )))
            }
            ModelSpec::Script(path) => {
                let inside = path
                    .canonicalize()
                    .map(|resolved| self.gate.roots.contains(&resolved))
                    .unwrap_or(false);
                if inside {
                    Ok(())
                } else {
                    Err(ToolFailure::BadInput(format!(
                        "model {text}: the script must be a file inside the folders this plumb mcp may take ({})",
                        self.gate.roots.text()
                    )))
                }
            }
            _ => Ok(()),
        }
    }
}

#[async_trait]
impl Backend for LocalBackend {
    /// Cancels every run still going and waits until each has ended (rolled back, reported).
    async fn close(&self) {
        loop {
            let notified = self.ended.notified();
            {
                let live = lock(&self.live);
                if live.is_empty() {
                    return;
                }
                for run in live.values() {
                    run.submitter.cancel(CancelReason::Caller);
                }
            }
            notified.await;
        }
    }

    async fn coding_task(
        &self,
        args: CodingTaskArgs,
        progress: mpsc::UnboundedSender<ProgressNote>,
        cancel: CancellationToken,
    ) -> Result<TaskResult, ToolFailure> {
        let (repo, permit) = self.gate.admit(&args)?;
        let mut flags = Vec::new();
        if let Some(model) = &args.model {
            flags.push(FlagSetting::text("coding_task's model", "model", model));
        }
        if let Some(command) = &args.test_command {
            flags.push(FlagSetting::text(
                "coding_task's test_command",
                "test_command",
                command,
            ));
        }
        let user = setup::load_config(Some(&repo), self.overrides.clone(), Vec::new())
            .map_err(bad_input)?;
        if let Some(model) = &args.model {
            self.check_model(model, &user.config)?;
        }
        let mut loaded =
            setup::load_config(Some(&repo), self.overrides.clone(), flags).map_err(bad_input)?;
        tighten(&mut loaded.config.limits, &args)?;
        let config = loaded.config;
        let model = setup::connect_model(&config.model, &config).map_err(bad_input)?;
        let test_command = args
            .test_command
            .as_deref()
            .map(plumb_verify::parse_command)
            .transpose()
            .map_err(|err| ToolFailure::BadInput(format!("test_command: {err}")))?;
        let Prepared {
            run_id,
            runs_dir,
            run_dir,
            lock: lock_file,
            sandbox,
            reviewer,
        } = launch::prepare(&config, None).map_err(bad_input)?;
        let keep = config.runs.clone();
        let (submitter, inbox) = plumb_agent::input::channel();
        let title = args
            .ticket
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
            .to_owned();
        lock(&self.live).insert(
            run_id.clone(),
            Live {
                submitter: submitter.clone(),
                repo: repo.display().to_string(),
                title,
                round: 0,
                message: "starting".into(),
            },
        );
        let _ = progress.send(ProgressNote {
            round: 0,
            message: format!("run {run_id} started on {}", repo.display()),
        });
        let (observer, events) = mpsc::channel(256);
        let forwarder = tokio::spawn(forward_events(
            events,
            progress,
            self.live.clone(),
            run_id.clone(),
        ));
        let spec = RunSpec {
            repo_label: repo.display().to_string(),
            repo,
            ticket: args.ticket.clone(),
            model,
            reviewer,
            config,
            test_command,
            sandbox,
            run_id: run_id.clone(),
            run_dir,
            journal_path: None,
            inbox,
            observer: Some(observer),
            expect_base_tree: None,
            fail_to_pass: Vec::new(),
            setup_cache: None,
            settings: loaded.provenance,
        };
        // The run goes on in a task of its own: if the call's future is dropped (the client gone)
        // the run still ends through its cancel, rolled back, instead of being cut off.
        let (live, ended) = (self.live.clone(), self.ended.clone());
        let finished_id = run_id.clone();
        let engine = tokio::spawn(async move {
            let result = plumb_agent::run(spec).await;
            let _ = forwarder.await;
            drop(lock_file);
            drop(permit);
            for line in prune::prune(&runs_dir, &finished_id, &keep).lines(&keep) {
                say!("plumb mcp: {}", one_line(&line));
            }
            lock(&live).remove(&finished_id);
            ended.notify_waiters();
            result
        });
        let watcher_submitter = submitter;
        let result = tokio::select! {
            joined = engine => joined,
            () = cancel.cancelled() => {
                watcher_submitter.cancel(CancelReason::Caller);
                // Ends soon: the run rolls back at its next step.
                return self.wait_ended(&run_id).await;
            }
        };
        match result {
            Ok(Ok(report)) => Ok(TaskResult::from_report(&report)),
            Ok(Err(error)) => Err(match error {
                plumb_agent::RunError::BadInput(message) => ToolFailure::BadInput(message),
                plumb_agent::RunError::Infra(message) => ToolFailure::Infra(message),
            }),
            Err(join) => Err(ToolFailure::Infra(format!(
                "the run {run_id} stopped: {join}"
            ))),
        }
    }

    async fn status(&self, run: &str) -> Result<RunStatus, ToolFailure> {
        mcp_runs::check_id(run)?;
        if let Some(live) = lock(&self.live).get(run) {
            return Ok(live.status(run));
        }
        mcp_runs::finished_status(&self.runs_dir, run)
    }

    async fn diff(&self, run: &str) -> Result<RunDiff, ToolFailure> {
        mcp_runs::check_id(run)?;
        if lock(&self.live).contains_key(run) {
            return Err(ToolFailure::BadInput(format!(
                "run {run} is still going, so it has no diff yet; ask again when coding_task returns, or see its step with coding_task_status"
            )));
        }
        mcp_runs::finished_diff(&self.runs_dir, run)
    }

    async fn cancel(&self, run: &str) -> Result<CancelAnswer, ToolFailure> {
        mcp_runs::check_id(run)?;
        if let Some(live) = lock(&self.live).get(run) {
            live.submitter.cancel(CancelReason::Caller);
            return Ok(CancelAnswer {
                run_id: run.to_owned(),
                cancelled: true,
                message: "the run is told to stop; it ends cancelled, its copy rolled back".into(),
            });
        }
        let status = mcp_runs::finished_status(&self.runs_dir, run)?;
        Ok(CancelAnswer {
            run_id: run.to_owned(),
            cancelled: false,
            message: format!(
                "run {run} has already ended ({}); there is nothing to cancel",
                status.outcome.unwrap_or_default()
            ),
        })
    }

    async fn runs(&self, args: RunsListArgs) -> Result<RunsList, ToolFailure> {
        let limit = args.limit.unwrap_or(20).max(1) as usize;
        let mut runs: Vec<RunStatus> = lock(&self.live)
            .iter()
            .map(|(id, live)| live.status(id))
            .collect();
        runs.extend(mcp_runs::finished(&self.runs_dir));
        runs.sort_by(|a, b| b.run_id.cmp(&a.run_id));
        runs.dedup_by(|a, b| a.run_id == b.run_id);
        runs.truncate(limit);
        Ok(RunsList { runs })
    }
}

impl LocalBackend {
    /// The answer for a call whose caller cancelled it: the run's end, once it has ended.
    async fn wait_ended(&self, run_id: &str) -> Result<TaskResult, ToolFailure> {
        loop {
            let notified = self.ended.notified();
            if !lock(&self.live).contains_key(run_id) {
                break;
            }
            notified.await;
        }
        let report = mcp_runs::report(&self.runs_dir, run_id)?;
        Ok(TaskResult::from_report(&report))
    }
}

/// The caller's `max_rounds` and `budget`, each counted only where it is tighter.
fn tighten(limits: &mut plumb_config::Limits, args: &CodingTaskArgs) -> Result<(), ToolFailure> {
    if let Some(rounds) = args.max_rounds {
        if rounds == 0 {
            return Err(ToolFailure::BadInput(
                "max_rounds is 0; give at least 1, or leave it out for the user's limit".into(),
            ));
        }
        limits.max_rounds = limits.max_rounds.min(rounds);
    }
    let Some(Budget {
        seconds,
        tokens,
        usd,
    }) = &args.budget
    else {
        return Ok(());
    };
    // 0 is "no budget" in the user's settings: any budget of the caller's is tighter.
    let tighter = |user: u64, caller: u64| if user == 0 { caller } else { user.min(caller) };
    if let Some(seconds) = *seconds {
        if seconds == 0 {
            return Err(ToolFailure::BadInput(
                "budget.seconds is 0; give at least 1, or leave it out".into(),
            ));
        }
        limits.wall_clock_secs = tighter(limits.wall_clock_secs, seconds);
    }
    if let Some(tokens) = *tokens {
        if tokens == 0 {
            return Err(ToolFailure::BadInput(
                "budget.tokens is 0; give at least 1, or leave it out".into(),
            ));
        }
        limits.max_tokens = tighter(limits.max_tokens, tokens);
    }
    if let Some(usd) = *usd {
        if !(usd.is_finite() && usd > 0.0) {
            return Err(ToolFailure::BadInput(format!(
                "budget.usd is {usd}; give a positive number of dollars, or leave it out"
            )));
        }
        limits.max_usd = if limits.max_usd > 0.0 {
            limits.max_usd.min(usd)
        } else {
            usd
        };
    }
    Ok(())
}

/// Hands the run's events on as progress notes, and keeps the live run's step for
/// `coding_task_status`.
async fn forward_events(
    mut events: mpsc::Receiver<Event>,
    progress: mpsc::UnboundedSender<ProgressNote>,
    live: Arc<Mutex<BTreeMap<String, Live>>>,
    run_id: String,
) {
    while let Some(event) = events.recv().await {
        let Some((round, message)) = mcp_runs::progress_line(&event) else {
            continue;
        };
        let round = {
            let mut runs = lock(&live);
            match runs.get_mut(&run_id) {
                Some(run) => {
                    run.round = run.round.max(round.unwrap_or(0));
                    run.message = message.clone();
                    run.round
                }
                None => round.unwrap_or(0),
            }
        };
        let _ = progress.send(ProgressNote { round, message });
    }
}

fn bad_input(failure: Failure) -> ToolFailure {
    if failure.code == 3 {
        ToolFailure::Infra(failure.message)
    } else {
        ToolFailure::BadInput(failure.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> plumb_config::Limits {
        plumb_config::Limits::default()
    }

    #[test]
    fn a_callers_limits_only_tighten() {
        let mut user = limits();
        user.max_rounds = 10;
        user.max_usd = 1.0;
        let args = CodingTaskArgs {
            max_rounds: Some(50),
            budget: Some(Budget {
                seconds: Some(120),
                tokens: None,
                usd: Some(5.0),
            }),
            ..CodingTaskArgs::default()
        };
        tighten(&mut user, &args).unwrap();
        assert_eq!(
            (
                user.max_rounds,
                user.wall_clock_secs,
                user.max_usd,
                user.max_tokens
            ),
            (10, 120, 1.0, 0)
        );
        let lower = CodingTaskArgs {
            max_rounds: Some(3),
            budget: Some(Budget {
                seconds: Some(600),
                tokens: Some(1000),
                usd: Some(0.5),
            }),
            ..CodingTaskArgs::default()
        };
        tighten(&mut user, &lower).unwrap();
        assert_eq!(
            (
                user.max_rounds,
                user.wall_clock_secs,
                user.max_usd,
                user.max_tokens
            ),
            (3, 120, 0.5, 1000)
        );
    }

    #[test]
    fn zero_or_negative_limits_are_refused_with_the_field() {
        for (args, field) in [
            (
                CodingTaskArgs {
                    max_rounds: Some(0),
                    ..CodingTaskArgs::default()
                },
                "max_rounds",
            ),
            (
                CodingTaskArgs {
                    budget: Some(Budget {
                        usd: Some(-1.0),
                        ..Budget::default()
                    }),
                    ..CodingTaskArgs::default()
                },
                "budget.usd",
            ),
        ] {
            let err = tighten(&mut limits(), &args).unwrap_err();
            assert!(err.message().starts_with(field), "{err:?}");
        }
    }
}
