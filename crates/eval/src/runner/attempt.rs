//! One attempt at one task: the starting tree, the settings, the model, plumb's run, the score,
//! and `result.json` last. Every way it can end is an [`AttemptResult`] except a cancelled one,
//! which leaves no result so that the next eval runs it again.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use plumb_agent::input::CancelReason;
use plumb_agent::{RunError, RunSpec, new_run_id};
use plumb_model::{ModelClient, ScriptModel};
use plumb_protocol::{FinalReport, Outcome};
use plumb_verify::TestCommand;
use tokio_util::sync::CancellationToken;

use super::{Engine, ModelChoice};
use crate::env::{EnvError, starting_tree};
use crate::result::{AttemptResult, AttemptStatus, RESULT_VERSION};
use crate::score::{ScoreInput, score};
use crate::task::Task;

/// The attempt's record, written last.
pub const RESULT_FILE: &str = "result.json";
/// The run's folder inside the attempt's (journal, report, patch, workspace).
const RUN_DIR: &str = "run";
/// An archive's content may not pass this (the default of `limits.max_copy_bytes`).
const MAX_TREE_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// What every attempt shares.
pub(super) struct Shared {
    pub model: ModelChoice,
    /// `OUT/.setup-cache`: one snapshot per repository, setup command and manifests.
    pub setup_cache: PathBuf,
    pub keep_trees: bool,
    pub engine: Arc<dyn Engine>,
}

/// `TASK_DIR/attempt-N`.
pub fn attempt_dir(task_dir: &Path, attempt: u32) -> PathBuf {
    task_dir.join(format!("attempt-{attempt}"))
}

/// The result an earlier eval left, if it is whole and of this version.
pub(crate) fn read_result(dir: &Path) -> Option<AttemptResult> {
    let text = std::fs::read_to_string(dir.join(RESULT_FILE)).ok()?;
    serde_json::from_str::<AttemptResult>(&text)
        .ok()
        .filter(|r| r.v == RESULT_VERSION)
}

/// Why an attempt stopped before it had a score.
enum Stop {
    BadTask(String),
    Infra(String),
    Cancelled,
}

impl From<EnvError> for Stop {
    fn from(err: EnvError) -> Self {
        match err {
            EnvError::BadTask(m) => Stop::BadTask(m),
            EnvError::Infra(m) => Stop::Infra(m),
        }
    }
}

/// Runs attempt `attempt` of `task`; `None` when it was cancelled. `tree_lock` is held while the
/// task's starting tree is made, so attempts of one task never make it twice.
pub(super) async fn run(
    shared: &Shared,
    task: &Task,
    attempt: u32,
    task_dir: &Path,
    tree_lock: &tokio::sync::Mutex<()>,
    cancel: &CancellationToken,
) -> Option<AttemptResult> {
    let started = Instant::now();
    let dir = attempt_dir(task_dir, attempt);
    let mut result = AttemptResult::empty(
        &task.instance_id,
        attempt,
        task.language.clone(),
        shared.model.label(),
    );
    let ended = match fresh_dir(&dir) {
        Ok(()) => steps(shared, task, &dir, tree_lock, cancel, &mut result).await,
        Err(message) => Err(Stop::Infra(message)),
    };
    match ended {
        Ok(()) => {}
        // However a cancelled attempt ended (a test run cut short reads as a broken baseline), it
        // says nothing about the task: no result, so the next eval runs it again.
        Err(_) if cancel.is_cancelled() => return None,
        Err(Stop::Cancelled) => return None,
        Err(Stop::BadTask(message)) => {
            result.reason.clone_from(&message);
            result.status = AttemptStatus::BadTask { message };
        }
        Err(Stop::Infra(message)) => {
            result.reason.clone_from(&message);
            result.status = AttemptStatus::InfraError { message };
        }
    }
    result.wall_ms = started.elapsed().as_millis() as u64;
    if let Err(message) = write_result(&dir, &result) {
        result.reason = message.clone();
        result.status = AttemptStatus::InfraError { message };
    }
    Some(result)
}

/// An empty attempt folder: what an interrupted attempt left is removed.
fn fresh_dir(dir: &Path) -> Result<(), String> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)
            .map_err(|err| format!("could not clear {}: {err}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|err| format!("could not create {}: {err}", dir.display()))
}

async fn steps(
    shared: &Shared,
    task: &Task,
    dir: &Path,
    tree_lock: &tokio::sync::Mutex<()>,
    cancel: &CancellationToken,
    result: &mut AttemptResult,
) -> Result<(), Stop> {
    let tree = {
        let _made_once = tree_lock.lock().await;
        let task_dir = dir.parent().unwrap_or(dir);
        starting_tree(task, task_dir, MAX_TREE_BYTES)?
    };
    let (mut config, settings) = shared.engine.settings(&tree).map_err(Stop::BadTask)?;
    if let Some(setup) = &task.setup_command {
        config.setup_command = Some(setup.clone());
    }
    let test_command = test_command(task, &config, &tree)?;
    let model = model(shared, task, &tree, dir, &config)?;
    let reviewer = match config.review.model.trim() {
        "" => None,
        spec => Some(
            shared
                .engine
                .connect(spec, &config)
                .map_err(|err| Stop::BadTask(format!("review.model: {err}")))?,
        ),
    };
    let run_dir = dir.join(RUN_DIR);
    std::fs::create_dir_all(&run_dir)
        .map_err(|err| Stop::Infra(format!("could not create {}: {err}", run_dir.display())))?;
    let sandbox = shared
        .engine
        .sandbox(&config, run_dir.join("sandbox"))
        .map_err(Stop::Infra)?;
    let limits = plumb_tools::sandbox_limits(&config);
    let spec = RunSpec {
        repo_label: format!("{} ({})", task.instance_id, tree.display()),
        repo: tree.clone(),
        ticket: task.problem_statement.clone(),
        model,
        reviewer,
        config: config.clone(),
        test_command: Some(test_command.clone()),
        sandbox,
        run_id: new_run_id(),
        run_dir: run_dir.clone(),
        journal_path: None,
        inbox: plumb_agent::input::following(cancel, CancelReason::EvalStopped).1,
        observer: None,
        expect_base_tree: None,
        // The task's FAIL_TO_PASS tests come with its test patch, which the agent never sees.
        fail_to_pass: Vec::new(),
        settings,
        setup_cache: Some(plumb_agent::SetupCache {
            dir: shared.setup_cache.clone(),
            scope: repo_scope(task),
        }),
    };
    let run_started = Instant::now();
    let report = plumb_agent::run(spec).await.map_err(|err| match err {
        RunError::BadInput(m) => Stop::BadTask(m),
        RunError::Infra(m) => Stop::Infra(m),
    });
    result.run_ms = run_started.elapsed().as_millis() as u64;
    let report = report?;
    if cancel.is_cancelled() {
        return Err(Stop::Cancelled);
    }
    take_report(result, &report);
    if report.outcome == Outcome::InfraError {
        return Err(Stop::Infra(report.reason.clone()));
    }
    let score_started = Instant::now();
    let sandbox = shared
        .engine
        .sandbox(&config, dir.join("score-sandbox"))
        .map_err(Stop::Infra)?;
    // The setup's result as the run saved it, for the scoring tree (none without a setup).
    let snapshot = config.setup_command.as_deref().and_then(|command| {
        let cache = plumb_agent::SetupCache {
            dir: shared.setup_cache.clone(),
            scope: repo_scope(task),
        };
        plumb_agent::setup_snapshot_dir(&cache, command, &tree)
    });
    if let Some(dir) = &snapshot
        && !plumb_workspace::has_snapshot(dir)
    {
        return Err(Stop::Infra(format!(
            "the setup's result was not kept in {}, so the attempt cannot be scored; see the run's warnings",
            dir.display()
        )));
    }
    let scored = score(ScoreInput {
        task,
        base_tree: &tree,
        patch: &report.patch,
        test_command: &test_command,
        attempt_dir: dir,
        sandbox: sandbox.as_ref(),
        limits,
        cancel,
        setup_snapshot: snapshot.as_deref(),
    })
    .await;
    if cancel.is_cancelled() {
        return Err(Stop::Cancelled);
    }
    result.score = Some(scored.map_err(|err| Stop::Infra(err.to_string()))?);
    if let Some(kept) = report.attempt_ref.as_deref().filter(|_| !result.verified()) {
        let diff = plumb_workspace::Workspace::open(&run_dir.join("workspace"))
            .and_then(|workspace| workspace.kept_diff(kept));
        // A diff that cannot be read (binary, not UTF-8) is left unscored; the run's own verdict stands.
        if let Some(diff) = diff.ok().filter(|d| !d.trim().is_empty()) {
            let unverified = dir.join("unverified");
            std::fs::create_dir_all(&unverified).map_err(|err| {
                Stop::Infra(format!("could not create {}: {err}", unverified.display()))
            })?;
            let scored = score(ScoreInput {
                task,
                base_tree: &tree,
                patch: &diff,
                test_command: &test_command,
                attempt_dir: &unverified,
                sandbox: sandbox.as_ref(),
                limits: plumb_tools::sandbox_limits(&config),
                cancel,
                setup_snapshot: snapshot.as_deref(),
            })
            .await;
            if cancel.is_cancelled() {
                return Err(Stop::Cancelled);
            }
            result.unverified_score = Some(scored.map_err(|err| Stop::Infra(err.to_string()))?);
        }
    }
    result.score_ms = score_started.elapsed().as_millis() as u64;
    if !shared.keep_trees {
        for kept in [
            run_dir.join("workspace"),
            dir.join("score").join("tree"),
            dir.join("unverified").join("score").join("tree"),
        ] {
            let _ = std::fs::remove_dir_all(kept);
        }
    }
    Ok(())
}

/// What the attempts of one repository share in the setup cache: the repository's path.
fn repo_scope(task: &Task) -> String {
    match &task.repo {
        crate::task::RepoSource::Git(p)
        | crate::task::RepoSource::Archive(p)
        | crate::task::RepoSource::Folder(p) => p.display().to_string(),
    }
}

/// The task's test command, else the settings', else the one plumb detects on the tree.
fn test_command(
    task: &Task,
    config: &plumb_config::Config,
    tree: &Path,
) -> Result<TestCommand, Stop> {
    let text = task.test_command.as_ref().or(config.test_command.as_ref());
    if let Some(text) = text {
        return plumb_verify::parse_command(text)
            .map_err(|err| Stop::BadTask(format!("test_command of {}: {err}", task.instance_id)));
    }
    plumb_verify::detect(tree).ok_or_else(|| {
        Stop::BadTask(format!(
            "plumb could not tell how to run the tests of {}; give the task a test_command",
            task.instance_id
        ))
    })
}

/// The model for this attempt.
fn model(
    shared: &Shared,
    task: &Task,
    tree: &Path,
    dir: &Path,
    config: &plumb_config::Config,
) -> Result<Box<dyn ModelClient>, Stop> {
    match &shared.model {
        ModelChoice::Oracle => {
            let patch = task.patch.as_deref().ok_or_else(|| {
                Stop::BadTask(format!(
                    "{} has no gold patch, so the oracle has nothing to play",
                    task.instance_id
                ))
            })?;
            let (model, script) =
                crate::oracle::model(&task.instance_id, tree, patch, task.test_patch.as_deref())
                    .map_err(|err| Stop::BadTask(err.to_string()))?;
            std::fs::write(dir.join("oracle.jsonl"), script).map_err(|err| {
                Stop::Infra(format!("could not write the oracle's script: {err}"))
            })?;
            Ok(Box::new(model))
        }
        ModelChoice::ScriptDir(folder) => {
            let path = folder.join(format!("{}.jsonl", task.folder_name()));
            if path.is_file() {
                ScriptModel::load(&path)
                    .map(|m| Box::new(m) as Box<dyn ModelClient>)
                    .map_err(|err| Stop::BadTask(err.to_string()))
            } else {
                let name = format!("script:{}", path.display());
                Ok(Box::new(ScriptModel::from_turns(name, Vec::new())))
            }
        }
        ModelChoice::Spec(spec) => shared.engine.connect(spec, config).map_err(Stop::Infra),
    }
}

/// The run's figures into the result.
fn take_report(result: &mut AttemptResult, report: &FinalReport) {
    result.outcome = Some(report.outcome);
    result.reason.clone_from(&report.reason);
    result.patch.clone_from(&report.patch);
    result.patch_sha256.clone_from(&report.patch_sha256);
    result.rounds = report.rounds;
    result.usage = report.usage;
    result.timings = Some(report.timings);
    result.flags.clone_from(&report.flags);
    result.flag_kinds.clone_from(&report.flag_kinds);
    result.reviews.clone_from(&report.reviews);
    result.journal.clone_from(&report.journal);
    result.run_dir.clone_from(&report.workspace);
}

/// `result.json`, written to a temporary name and renamed, so a half-written one never exists.
pub(super) fn write_result(dir: &Path, result: &AttemptResult) -> Result<(), String> {
    let text = serde_json::to_string_pretty(result)
        .map_err(|err| format!("could not write the result as JSON: {err}"))?;
    let partial = dir.join("result.json.partial");
    std::fs::write(&partial, text)
        .and_then(|()| std::fs::rename(&partial, dir.join(RESULT_FILE)))
        .map_err(|err| format!("could not write {}: {err}", dir.join(RESULT_FILE).display()))
}
