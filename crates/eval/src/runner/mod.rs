//! The batch runner: every task of a set, `k` attempts each, up to `jobs` at a time, each attempt
//! with its own run folder and sandbox, through the same `plumb_agent::run` that `plumb fix` uses.
//!
//! Resumable: an attempt's `result.json` is written last, so a second run into the same `--out`
//! skips attempts that have one — except infrastructure errors with `retry_errors`. A cancelled
//! attempt (Ctrl-C) writes none and is run again next time. The front end supplies what is its
//! own ([`Engine`]: settings, model clients, sandboxes) and shows progress ([`Progress`]).

mod attempt;
mod queued;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use plumb_config::Config;
use plumb_model::ModelClient;
use plumb_protocol::Provenance;
use plumb_sandbox::Sandbox;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::result::{AttemptResult, AttemptStatus};

use crate::task::Task;

pub use attempt::{RESULT_FILE, attempt_dir};
pub use queued::{QUEUED_ATTEMPT_KIND, QueuedAttempt, run_attempt};

/// What the front end provides.
pub trait Engine: Send + Sync {
    /// The settings for a task whose starting tree is `tree`: the user's, `-c`, and the tree's own
    /// `plumb.toml` as far as it only tightens them. An error is a sentence (the task is bad).
    fn settings(&self, tree: &Path) -> Result<(Config, Provenance), String>;
    /// A client for the model spec `spec` (not `oracle`, not a script folder).
    fn connect(&self, spec: &str, config: &Config) -> Result<Box<dyn ModelClient>, String>;
    /// The sandbox of `config`, with `scratch` for its own files.
    fn sandbox(&self, config: &Config, scratch: PathBuf) -> Result<Box<dyn Sandbox>, String>;
}

/// Which model plays the tasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelChoice {
    /// Each task's gold patch ([`crate::oracle`]).
    Oracle,
    /// `script:DIR` with DIR a folder: the script of a task is `DIR/<task folder name>.jsonl`; a
    /// task without one gets an empty script (the model has nothing to say).
    ScriptDir(PathBuf),
    /// Any other model spec, connected by the [`Engine`].
    Spec(String),
}

impl ModelChoice {
    /// From `--model`: `oracle`, `script:FOLDER`, or a spec.
    pub fn parse(spec: &str) -> Self {
        if spec == "oracle" {
            return Self::Oracle;
        }
        if let Some(path) = spec.strip_prefix("script:")
            && Path::new(path).is_dir()
        {
            return Self::ScriptDir(PathBuf::from(path));
        }
        Self::Spec(spec.to_owned())
    }

    /// The name results and predictions carry.
    pub fn label(&self) -> String {
        match self {
            Self::Oracle => "oracle".to_owned(),
            Self::ScriptDir(dir) => format!("script:{}", dir.display()),
            Self::Spec(spec) => spec.clone(),
        }
    }
}

/// What to run.
pub struct Plan {
    pub tasks: Vec<Task>,
    pub model: ModelChoice,
    /// Attempts per task (`-k`), at least 1.
    pub k: u32,
    /// Attempts at a time (`--jobs`), at least 1.
    pub jobs: usize,
    pub out: PathBuf,
    /// Run attempts that ended with an infrastructure error again.
    pub retry_errors: bool,
    /// Keep each attempt's workspace and scoring tree (by default removed once scored; the journal,
    /// report, patch and test log stay).
    pub keep_trees: bool,
}

/// Shown as the eval goes.
pub trait Progress: Send + Sync {
    /// Before the first attempt: how many attempts in all, and how many are already done.
    fn planned(&self, total: usize, already_done: usize);
    fn started(&self, instance_id: &str, attempt: u32);
    fn finished(&self, result: &AttemptResult);
}

/// What the eval did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Every attempt with a result, the earlier ones included.
    pub results: Vec<AttemptResult>,
    /// Attempts run now.
    pub ran: usize,
    /// Attempts skipped because an earlier eval finished them.
    pub skipped: usize,
    /// Ctrl-C stopped the eval before every attempt ran.
    pub cancelled: bool,
}

/// One attempt to make.
struct Job {
    task: Arc<Task>,
    attempt: u32,
    task_dir: PathBuf,
    /// Shared by the attempts of one task: held while its starting tree is made.
    tree_lock: Arc<tokio::sync::Mutex<()>>,
}

/// Runs `plan`; attempts already finished in `plan.out` are read back, not run.
pub async fn run(
    plan: Plan,
    engine: Arc<dyn Engine>,
    progress: Arc<dyn Progress>,
    cancel: CancellationToken,
) -> Result<Outcome, String> {
    std::fs::create_dir_all(&plan.out)
        .map_err(|err| format!("could not create --out {}: {err}", plan.out.display()))?;
    let mut outcome = Outcome::default();
    let mut jobs = Vec::new();
    for task in plan.tasks {
        let task = Arc::new(task);
        let task_dir = plan.out.join(task.folder_name());
        let tree_lock = Arc::new(tokio::sync::Mutex::new(()));
        for attempt in 1..=plan.k.max(1) {
            let dir = attempt::attempt_dir(&task_dir, attempt);
            match attempt::read_result(&dir) {
                Some(done) if !(plan.retry_errors && is_infra(&done)) => {
                    outcome.results.push(done);
                    outcome.skipped += 1;
                }
                _ => jobs.push(Job {
                    task: Arc::clone(&task),
                    attempt,
                    task_dir: task_dir.clone(),
                    tree_lock: Arc::clone(&tree_lock),
                }),
            }
        }
    }
    progress.planned(jobs.len() + outcome.skipped, outcome.skipped);
    let gate = Arc::new(Semaphore::new(plan.jobs.max(1)));
    let shared = Arc::new(attempt::Shared {
        model: plan.model,
        setup_cache: plan.out.join(".setup-cache"),
        keep_trees: plan.keep_trees,
        engine,
    });
    let mut running = tokio::task::JoinSet::new();
    for job in jobs {
        let permit = tokio::select! {
            permit = Arc::clone(&gate).acquire_owned() => permit,
            () = cancel.cancelled() => break,
        };
        let Ok(permit) = permit else { break };
        if cancel.is_cancelled() {
            break;
        }
        let shared = Arc::clone(&shared);
        let progress = Arc::clone(&progress);
        let cancel = cancel.child_token();
        running.spawn(async move {
            progress.started(&job.task.instance_id, job.attempt);
            let result = attempt::run(
                &shared,
                &job.task,
                job.attempt,
                &job.task_dir,
                &job.tree_lock,
                &cancel,
            )
            .await;
            drop(permit);
            if let Some(result) = &result {
                progress.finished(result);
            }
            result
        });
    }
    while let Some(joined) = running.join_next().await {
        match joined {
            Ok(Some(result)) => {
                outcome.results.push(result);
                outcome.ran += 1;
            }
            Ok(None) => {}
            Err(err) => return Err(format!("an attempt's task failed: {err}")),
        }
    }
    outcome.cancelled = cancel.is_cancelled();
    outcome
        .results
        .sort_by(|a, b| (&a.instance_id, a.attempt).cmp(&(&b.instance_id, b.attempt)));
    Ok(outcome)
}

/// The result an earlier eval left for attempt `attempt` in `task_dir`, if it is whole and of this
/// version.
pub fn finished_result(task_dir: &Path, attempt: u32) -> Option<AttemptResult> {
    attempt::read_result(&attempt::attempt_dir(task_dir, attempt))
}

/// Writes `result` as the attempt's `result.json` under `task_dir` (an attempt run elsewhere).
pub fn keep_result(task_dir: &Path, result: &AttemptResult) -> Result<(), String> {
    let dir = attempt::attempt_dir(task_dir, result.attempt);
    std::fs::create_dir_all(&dir)
        .map_err(|err| format!("could not create {}: {err}", dir.display()))?;
    attempt::write_result(&dir, result)
}

/// Whether the attempt ended with an infrastructure error (run again with `retry_errors`).
pub fn is_infra(result: &AttemptResult) -> bool {
    matches!(result.status, AttemptStatus::InfraError { .. })
}
