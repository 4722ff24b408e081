//! An eval's attempt taken from the job queue (`plumb eval --db`): run and scored on this worker
//! exactly as `plumb eval` runs one attempt on its own machine, under the worker's settings and
//! sandbox; the attempt's result (`result.json`) and patch are stored as the attempt's artefacts
//! and the task ends `scored`. The task's starting tree comes from the store (packed by the eval),
//! so the worker needs nothing of the machine the eval was started on.

use std::path::PathBuf;
use std::sync::Arc;

use plumb_config::FlagSetting;
use plumb_eval::runner::{ModelChoice, QueuedAttempt, run_attempt};
use plumb_store::{ArtefactName, AttemptEnd, RunContext, TaskState, retry_transient};

use crate::eval::CliEngine;
use crate::setup;

/// Runs the queued attempt of `run`; how it ended.
pub(crate) async fn run(run: &RunContext, overrides: Vec<String>) -> AttemptEnd {
    run_queued(run, overrides)
        .await
        .unwrap_or_else(|reason| crate::task_engine::refused(run, reason))
}

async fn run_queued(run: &RunContext, overrides: Vec<String>) -> Result<AttemptEnd, String> {
    let queued: QueuedAttempt = serde_json::from_value(run.task.spec.clone())
        .map_err(|error| format!("the eval's attempt is not one plumb reads: {error}"))?;
    let model = ModelChoice::parse(&queued.model);
    let mut flags = Vec::new();
    if let ModelChoice::Spec(spec) = &model {
        flags.push(FlagSetting::text("model", "model", spec));
    }
    let worker_config = setup::load_config(None, overrides.clone(), flags.clone())
        .map_err(|failure| failure.message)?
        .config;
    let runs_dir = setup::runs_dir(&worker_config).map_err(|failure| failure.message)?;
    // Beside the runs: one folder per eval, one per worker process in it, so two processes on one
    // machine never share a task's starting tree.
    let work = runs_dir
        .parent()
        .map_or_else(|| runs_dir.join("eval"), |state| state.join("eval-work"));
    let eval_dir = work
        .join(plumb_eval::task::folder_name(&queued.eval))
        .join(format!("p{}", std::process::id()));
    let engine = Arc::new(CliEngine {
        overrides,
        flags,
        toolcache: work.join(".toolcache"),
        max_rounds: queued.max_rounds,
    });
    retry_transient(run.lease, || {
        run.store.advance(&run.claim, TaskState::Running)
    })
    .await
    .map_err(|error| error.to_string())?;
    let mut task = queued.task.clone();
    let task_dir: PathBuf = eval_dir.join(task.folder_name());
    if let Some(upload) = &queued.tree {
        task.repo = plumb_eval::RepoSource::Archive(
            fetch_tree(run, upload, &eval_dir.join("trees")).await?,
        );
    }
    let result = run_attempt(
        model,
        eval_dir.join(".setup-cache"),
        engine,
        &task,
        queued.attempt,
        &task_dir,
        &run.stop.token(),
    )
    .await;
    let Some(result) = result else {
        return Ok(AttemptEnd {
            state: TaskState::Cancelled,
            outcome: "cancelled".to_owned(),
            reason: Some("the attempt was cancelled before it was scored".to_owned()),
            diff_sha256: None,
        });
    };
    let json = serde_json::to_vec_pretty(&result).map_err(|error| error.to_string())?;
    retry_transient(run.lease, || {
        run.store
            .put_artefact(&run.claim, ArtefactName::Report, &json)
    })
    .await
    .map_err(|error| format!("the attempt's result could not be stored: {error}"))?;
    if !result.patch.is_empty() {
        let patch = result.patch.as_bytes();
        let _ = retry_transient(run.lease, || {
            run.store
                .put_artefact(&run.claim, ArtefactName::Patch, patch)
        })
        .await;
    }
    let outcome = match &result.status {
        plumb_eval::AttemptStatus::Finished if result.resolved() => "resolved",
        plumb_eval::AttemptStatus::Finished => "unresolved",
        plumb_eval::AttemptStatus::BadTask { .. } => "bad_task",
        plumb_eval::AttemptStatus::InfraError { .. } => "infra_error",
    };
    Ok(AttemptEnd {
        state: TaskState::Scored,
        outcome: outcome.to_owned(),
        reason: (!result.reason.is_empty()).then(|| result.reason.clone()),
        diff_sha256: None,
    })
}

/// The task's packed starting tree from the store, as a file under `dir` named by its upload
/// (kept for the other attempts of the task on this worker).
async fn fetch_tree(
    run: &RunContext,
    upload: &str,
    dir: &std::path::Path,
) -> Result<PathBuf, String> {
    let name = plumb_eval::task::folder_name(upload);
    let path = dir.join(format!("{name}.tar.gz"));
    if path.is_file() {
        return Ok(path);
    }
    let (_, bytes) = retry_transient(run.lease, || run.store.upload(&run.task.tenant, upload))
        .await
        .map_err(|error| format!("the task's starting tree (upload {upload}): {error}"))?;
    std::fs::create_dir_all(dir).map_err(|error| format!("{}: {error}", dir.display()))?;
    // Written aside and renamed, so a half-written file is never taken for the tree.
    let partial = dir.join(format!("{name}.tar.gz.partial"));
    std::fs::write(&partial, &bytes).map_err(|error| format!("{}: {error}", partial.display()))?;
    std::fs::rename(&partial, &path).map_err(|error| format!("{}: {error}", path.display()))?;
    Ok(path)
}
