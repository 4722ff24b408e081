//! `plumb mcp --server URL`: the same tools, run by a `plumb serve` instead of on this machine.
//! `coding_task` packs the caller's repository as `plumb fix` would copy it, uploads it, starts a
//! task, and hands the task's events on as progress notes until its run has ended; the result is
//! the run's report and the server's stored diff, whose SHA-256 the server's approval checks.
//! Nothing here approves: the person approves on the server (its web page or API), then applies
//! the patch. The caller is held to the same rules as with the local engine — `repo` inside
//! `mcp.allowed_roots`, limits only tighter (the server clamps `max_rounds` and `max_usd` to its
//! own again), no field it does not know.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use plumb_mcp::types::{
    CancelAnswer, CodingTaskArgs, DiffKind, RunDiff, RunState, RunStatus, RunsList, RunsListArgs,
    TaskResult,
};
use plumb_mcp::{Backend, ProgressNote, ToolFailure};
use plumb_protocol::{Event, FinalReport};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::api::{Api, ApiFailure, DiffView, TaskView, settled};
use super::gate::Gate;
use super::lock;
use super::runs::progress_line;
use super::upload::pack;
use crate::Failure;

/// How long a task asked to cancel may take to end (its worker hears it within seconds).
const CANCEL_GRACE: Duration = Duration::from_secs(120);
/// Broken event streams in a row before the call gives up.
const MAX_STREAM_FAILURES: u32 = 5;

/// A task this process started and is following.
struct Following {
    repo: String,
    round: u32,
    message: String,
}

pub(crate) struct RemoteBackend {
    api: Api,
    gate: Gate,
    following: Mutex<BTreeMap<String, Following>>,
}

impl RemoteBackend {
    pub(crate) fn new(server: &str, token: &str, gate: Gate) -> Result<RemoteBackend, Failure> {
        Ok(RemoteBackend {
            api: Api::new(server, token)?,
            gate,
            following: Mutex::new(BTreeMap::new()),
        })
    }

    /// The body of `POST /api/tasks` for an upload, with only the fields the caller gave.
    fn task_request(upload: &str, args: &CodingTaskArgs) -> Result<Value, ToolFailure> {
        let mut body = Map::new();
        body.insert("repo".into(), json!({"kind": "upload", "id": upload}));
        body.insert("ticket".into(), json!(args.ticket));
        if let Some(model) = &args.model {
            body.insert("model".into(), json!(model));
        }
        if let Some(rounds) = args.max_rounds {
            if rounds == 0 {
                return Err(ToolFailure::BadInput(
                    "max_rounds is 0; give at least 1, or leave it out for the server's limit"
                        .into(),
                ));
            }
            body.insert("max_rounds".into(), json!(rounds));
        }
        if let Some(budget) = &args.budget {
            if budget.seconds.is_some() || budget.tokens.is_some() {
                return Err(ToolFailure::BadInput(
                    "budget.seconds and budget.tokens: a task on plumb serve takes a dollar budget only (budget.usd); the server's own limits bound its time and tokens, so leave them out".into(),
                ));
            }
            if let Some(usd) = budget.usd {
                if !(usd.is_finite() && usd > 0.0) {
                    return Err(ToolFailure::BadInput(format!(
                        "budget.usd is {usd}; give a positive number of dollars, or leave it out"
                    )));
                }
                body.insert("max_usd".into(), json!(usd));
            }
        }
        if let Some(command) = &args.test_command {
            body.insert("test_command".into(), json!(command));
        }
        Ok(Value::Object(body))
    }

    /// Hands the task's events on until its run has ended; asks the server to cancel it when the
    /// caller cancels, and then waits for its end (rolled back) a while.
    async fn follow(
        &self,
        task: &str,
        progress: &mpsc::UnboundedSender<ProgressNote>,
        cancel: &CancellationToken,
    ) -> Result<(), ToolFailure> {
        let mut after = 0_i64;
        let mut failures = 0_u32;
        let mut cancel_deadline: Option<tokio::time::Instant> = None;
        loop {
            let mut stream = match self.api.events(task, after).await {
                Ok(stream) => stream,
                Err(failure) if failure.status.is_none() && failures < MAX_STREAM_FAILURES => {
                    failures += 1;
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
                Err(failure) => return Err(failure.into()),
            };
            loop {
                let next = match cancel_deadline {
                    Some(deadline) => {
                        match tokio::time::timeout_at(deadline, stream.next()).await {
                            Ok(next) => next,
                            // It did not end in time; the result says where it is.
                            Err(_) => return Ok(()),
                        }
                    }
                    None => tokio::select! {
                        next = stream.next() => next,
                        () = cancel.cancelled() => {
                            self.ask_cancel(task).await;
                            let _ = progress.send(ProgressNote {
                                round: self.round_of(task),
                                message: format!("run {task}: cancel asked; it ends rolled back"),
                            });
                            cancel_deadline = Some(tokio::time::Instant::now() + CANCEL_GRACE);
                            continue;
                        }
                    },
                };
                match next {
                    Ok(Some(event)) => {
                        failures = 0;
                        after = event.seq;
                        if event.kind == "state" {
                            let state = event.body["state"].as_str().unwrap_or("").to_owned();
                            let _ = progress.send(ProgressNote {
                                round: self.round_of(task),
                                message: format!("run {task}: {}", state.replace('_', " ")),
                            });
                            if !state.is_empty() && settled(&state) {
                                return Ok(());
                            }
                        } else if let Ok(event) = serde_json::from_value::<Event>(event.body)
                            && let Some((round, message)) = progress_line(&event)
                        {
                            let round = self.note(task, round, &message);
                            let _ = progress.send(ProgressNote { round, message });
                        }
                    }
                    Ok(None) => break,
                    Err(_) if failures < MAX_STREAM_FAILURES => {
                        failures += 1;
                        break;
                    }
                    Err(broken) => return Err(ToolFailure::Infra(broken)),
                }
            }
            // The stream ended or broke: done if the run has, else pick up after the last event.
            let view: TaskView = self.api.get(&task_path(task), "the task").await?;
            if settled(&view.state) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    async fn ask_cancel(&self, task: &str) {
        // Already ended (409): nothing to stop. Any other failure shows in the result's state.
        let _: Result<Value, ApiFailure> = self
            .api
            .post(&format!("{}/cancel", task_path(task)), None, "the cancel")
            .await;
    }

    fn round_of(&self, task: &str) -> u32 {
        lock(&self.following).get(task).map_or(0, |run| run.round)
    }

    /// Keeps a followed task's last step; the round as it now stands.
    fn note(&self, task: &str, round: Option<u32>, message: &str) -> u32 {
        let mut following = lock(&self.following);
        match following.get_mut(task) {
            Some(run) => {
                run.round = run.round.max(round.unwrap_or(0));
                run.message = message.to_owned();
                run.round
            }
            None => round.unwrap_or(0),
        }
    }

    /// The tool's answer for a task whose run has ended: the run's report, with the server's
    /// stored diff (what its approval checks) and what a person does with it.
    async fn result(&self, task: &str, repo: &Path) -> Result<TaskResult, ToolFailure> {
        let view: TaskView = self.api.get(&task_path(task), "the task").await?;
        let report: Result<FinalReport, ApiFailure> = self
            .api
            .get(&format!("{}/report", task_path(task)), "the run's report")
            .await;
        let Ok(report) = report else {
            let outcome = view.outcome.clone().unwrap_or_else(|| view.state.clone());
            let reason = view
                .reason
                .clone()
                .unwrap_or_else(|| format!("the task is {}", view.state.replace('_', " ")));
            return Ok(TaskResult::without_report(
                task,
                &outcome,
                &reason,
                rounds(&view),
            ));
        };
        let mut result = TaskResult::from_report(&report);
        result.run_id = task.to_owned();
        if result.verified {
            let diff: DiffView = self
                .api
                .get(&format!("{}/diff", task_path(task)), "the task's diff")
                .await?;
            result.apply_command = Some(self.apply_command(task, &diff.sha256, repo));
            result.patch = diff.patch;
            result.patch_sha256 = diff.sha256;
        }
        Ok(result)
    }

    /// What a person runs after reading the diff: the server's approval, bound to the SHA-256,
    /// then the patch into their repository.
    fn apply_command(&self, task: &str, sha256: &str, repo: &Path) -> String {
        let base = self.api.base();
        format!(
            "curl -fsS -o /dev/null -H \"Authorization: Bearer $PLUMB_TOKEN\" -H 'Content-Type: application/json' -d '{{\"sha256\":\"{sha256}\"}}' {base}/api/tasks/{task}/approve && curl -fsS -H \"Authorization: Bearer $PLUMB_TOKEN\" {base}/api/tasks/{task}/patch | git -C {} apply",
            shell_quote(&repo.display().to_string())
        )
    }

    async fn status_of(&self, view: &TaskView) -> RunStatus {
        let going = !settled(&view.state);
        let (repo, round, message) = match lock(&self.following).get(&view.id) {
            Some(run) => (run.repo.clone(), run.round, run.message.clone()),
            None => (repo_of(view), rounds(view), String::new()),
        };
        let message = if going && !message.is_empty() {
            message
        } else {
            view.reason
                .clone()
                .unwrap_or_else(|| format!("the task is {}", view.state.replace('_', " ")))
        };
        let patch_sha256 = if holds_verified_diff(&view.state) {
            self.api
                .get::<DiffView>(&format!("{}/diff", task_path(&view.id)), "the task's diff")
                .await
                .ok()
                .map(|diff| diff.sha256)
        } else {
            None
        };
        RunStatus {
            run_id: view.id.clone(),
            state: if going {
                RunState::Running
            } else {
                RunState::Finished
            },
            repo,
            title: view.title.clone(),
            rounds: round.max(rounds(view)),
            message,
            outcome: view.outcome.clone(),
            patch_sha256,
        }
    }
}

#[async_trait]
impl Backend for RemoteBackend {
    async fn coding_task(
        &self,
        args: CodingTaskArgs,
        progress: mpsc::UnboundedSender<ProgressNote>,
        cancel: CancellationToken,
    ) -> Result<TaskResult, ToolFailure> {
        let (repo, _permit) = self.gate.admit(&args)?;
        let archive = pack(&repo, &progress).await?;
        let upload = self.api.upload(archive).await?;
        let body = Self::task_request(&upload, &args)?;
        let task: TaskView = self.api.post("/api/tasks", Some(&body), "the task").await?;
        lock(&self.following).insert(
            task.id.clone(),
            Following {
                repo: repo.display().to_string(),
                round: 0,
                message: "queued".into(),
            },
        );
        let _ = progress.send(ProgressNote {
            round: 0,
            message: format!(
                "run {} started on {} for {}",
                task.id,
                self.api.base(),
                repo.display()
            ),
        });
        let followed = self.follow(&task.id, &progress, &cancel).await;
        lock(&self.following).remove(&task.id);
        followed?;
        self.result(&task.id, &repo).await
    }

    async fn status(&self, run: &str) -> Result<RunStatus, ToolFailure> {
        check_task_id(run)?;
        let view: TaskView = self.api.get(&task_path(run), "the task").await?;
        Ok(self.status_of(&view).await)
    }

    async fn diff(&self, run: &str) -> Result<RunDiff, ToolFailure> {
        check_task_id(run)?;
        let view: TaskView = self.api.get(&task_path(run), "the task").await?;
        if !settled(&view.state) {
            return Err(ToolFailure::BadInput(format!(
                "task {run} is still going, so it has no diff yet; ask again when coding_task returns, or see its step with coding_task_status"
            )));
        }
        let outcome = view.outcome.clone().unwrap_or_else(|| view.state.clone());
        if !holds_verified_diff(&view.state) {
            return Ok(RunDiff {
                run_id: run.to_owned(),
                outcome,
                kind: DiffKind::None,
                patch: String::new(),
                patch_sha256: String::new(),
                apply_command: None,
            });
        }
        let diff: DiffView = self
            .api
            .get(&format!("{}/diff", task_path(run)), "the task's diff")
            .await?;
        let repo = lock(&self.following)
            .get(run)
            .map(|run| run.repo.clone())
            .unwrap_or_else(|| "REPO".to_owned());
        Ok(RunDiff {
            run_id: run.to_owned(),
            outcome,
            kind: DiffKind::VerifiedPatch,
            apply_command: Some(self.apply_command(run, &diff.sha256, Path::new(&repo))),
            patch: diff.patch,
            patch_sha256: diff.sha256,
        })
    }

    async fn cancel(&self, run: &str) -> Result<CancelAnswer, ToolFailure> {
        check_task_id(run)?;
        let asked: Result<TaskView, ApiFailure> = self
            .api
            .post(&format!("{}/cancel", task_path(run)), None, "the cancel")
            .await;
        match asked {
            Ok(_) => Ok(CancelAnswer {
                run_id: run.to_owned(),
                cancelled: true,
                message: "the task is told to stop; it ends cancelled, its copy rolled back".into(),
            }),
            Err(failure) if failure.code == "wrong_state" => Ok(CancelAnswer {
                run_id: run.to_owned(),
                cancelled: false,
                message: format!("task {run} has already ended; there is nothing to cancel"),
            }),
            Err(failure) => Err(failure.into()),
        }
    }

    async fn runs(&self, args: RunsListArgs) -> Result<RunsList, ToolFailure> {
        let limit = args.limit.unwrap_or(20).clamp(1, 100);
        let views = self.api.tasks(limit).await?;
        let mut runs = Vec::with_capacity(views.len());
        for view in &views {
            runs.push(self.status_of(view).await);
        }
        Ok(RunsList { runs })
    }

    /// Asks the server to cancel every task this process still follows, and waits (a while) for
    /// each to end, asking the server: the calls that followed them may be gone already.
    async fn close(&self) {
        let deadline = tokio::time::Instant::now() + CANCEL_GRACE;
        let tasks: Vec<String> = lock(&self.following).keys().cloned().collect();
        for task in &tasks {
            self.ask_cancel(task).await;
        }
        for task in &tasks {
            while tokio::time::Instant::now() < deadline {
                match self.api.get::<TaskView>(&task_path(task), "the task").await {
                    Ok(view) if !settled(&view.state) => {
                        tokio::time::sleep(Duration::from_millis(500)).await;
                    }
                    _ => break,
                }
            }
        }
    }
}

/// A task id as the server makes them; anything else never reaches a URL.
fn check_task_id(run: &str) -> Result<(), ToolFailure> {
    let fits = !run.is_empty()
        && run.len() <= 64
        && run
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if fits {
        Ok(())
    } else {
        Err(ToolFailure::BadInput(format!(
            "run {run:?} is not a task id; pass one coding_task or runs_list gave"
        )))
    }
}

fn task_path(task: &str) -> String {
    format!("/api/tasks/{task}")
}

/// States in which the server holds a verified diff.
fn holds_verified_diff(state: &str) -> bool {
    matches!(state, "awaiting_approval" | "approved")
}

fn rounds(view: &TaskView) -> u32 {
    view.rounds
        .and_then(|rounds| u32::try_from(rounds).ok())
        .unwrap_or(0)
}

/// Where a task's repository came from, in a line.
fn repo_of(view: &TaskView) -> String {
    let repo = view.request.as_ref().map(|request| &request["repo"]);
    match repo {
        Some(repo) => match repo["kind"].as_str() {
            Some("path") => repo["path"].as_str().unwrap_or("").to_owned(),
            Some("git") => repo["url"].as_str().unwrap_or("").to_owned(),
            Some("upload") => format!("upload {}", repo["id"].as_str().unwrap_or("")),
            _ => String::new(),
        },
        None => String::new(),
    }
}

/// A word for a POSIX shell, in single quotes unless it needs none.
fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_mcp::types::Budget;

    #[test]
    fn the_task_request_carries_only_what_the_caller_gave_and_refuses_what_a_server_cannot_take() {
        let args = CodingTaskArgs {
            repo: "/r".into(),
            ticket: "fix it".into(),
            max_rounds: Some(3),
            budget: Some(Budget {
                usd: Some(0.5),
                ..Budget::default()
            }),
            ..CodingTaskArgs::default()
        };
        let body = RemoteBackend::task_request("u1", &args).unwrap();
        assert_eq!(
            body,
            json!({"repo": {"kind": "upload", "id": "u1"}, "ticket": "fix it", "max_rounds": 3, "max_usd": 0.5})
        );
        let seconds = CodingTaskArgs {
            budget: Some(Budget {
                seconds: Some(60),
                ..Budget::default()
            }),
            ..args.clone()
        };
        let refused = RemoteBackend::task_request("u1", &seconds).unwrap_err();
        assert!(refused.message().contains("budget.usd"), "{refused:?}");
        let zero = CodingTaskArgs {
            max_rounds: Some(0),
            ..args
        };
        assert!(RemoteBackend::task_request("u1", &zero).is_err());
    }

    #[test]
    fn only_a_task_id_reaches_a_url() {
        assert!(check_task_id("t01HX3-abc_9").is_ok());
        for bad in ["", "../tenant", "t1?x=1", "t1/cancel", &"t".repeat(65)] {
            assert!(check_task_id(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_folder_is_quoted_for_the_shell_only_when_it_needs_it() {
        assert_eq!(shell_quote("/home/ann/billing"), "/home/ann/billing");
        assert_eq!(shell_quote("/tmp/it's here"), "'/tmp/it'\\''s here'");
    }
}
