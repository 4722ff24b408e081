//! `plumb eval --db URL`: an eval's attempts as tasks on the service's job queue, so `plumb
//! worker`s on several machines run them, and `--jobs N` local workers in this process beside
//! them (0: only other workers). Each attempt is a stored task of the tenant `eval`, titled by the
//! eval (its output folder), the task and the attempt; its result comes back as the task's report
//! and is written into `--out` as a local attempt's would be, so the reports are the same. Each
//! task's starting tree is made here once and stored packed beside its attempts, so a worker needs
//! nothing of this machine. Run the same command again and it resumes: attempts with a result in
//! `--out` are skipped, attempts already in the store are waited for rather than queued twice.
//! Once the eval has written its reports, they are kept in the store too (`keep_report`), so the
//! web page of `plumb serve` lists them for a person signed in as the tenant `eval`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use plumb_eval::runner::{self, Outcome, Plan, Progress, QUEUED_ATTEMPT_KIND, QueuedAttempt};
use plumb_eval::{AttemptResult, AttemptStatus, Task};
use plumb_store::{
    ArtefactName, NewTask, QueueSettings, Store, TaskRecord, TaskState, run_worker, worker_id,
};
use tokio_util::sync::CancellationToken;

use crate::task_engine::EngineRunner;
use crate::worker::host_name;
use crate::{Failure, store_url};

/// The tenant an eval's attempts belong to.
const EVAL_TENANT: &str = "eval";
/// How often the store is read for attempts that ended.
const POLL: Duration = Duration::from_millis(500);
/// A task's starting tree may hold this much (as a local eval allows).
const MAX_TREE_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// The most a packed tree may take in the store.
const MAX_PACKED_BYTES: u64 = 512 * 1024 * 1024;

/// How the eval reaches the queue.
pub(crate) struct QueueChoice {
    pub db: String,
    pub queue: Option<String>,
    /// The eval's `--max-rounds`, carried to the workers.
    pub max_rounds: Option<u32>,
    pub overrides: Vec<String>,
}

/// An attempt waiting in the store.
struct Pending {
    task: Arc<Task>,
    attempt: u32,
    task_dir: PathBuf,
}

/// Runs `plan` through the queue in `choice.db`; what it did, as the local runner says it.
pub(crate) async fn run(
    plan: Plan,
    choice: QueueChoice,
    progress: Arc<dyn Progress>,
    cancel: CancellationToken,
) -> Result<Outcome, Failure> {
    let (store, _) = store_url::open(Some(&choice.db)).await?;
    let queue_settings = QueueSettings {
        name: choice
            .queue
            .clone()
            .unwrap_or_else(|| QueueSettings::default().name),
        ..QueueSettings::default()
    };
    let mut queue = store
        .job_queue(&queue_settings)
        .await
        .map_err(|error| Failure::infra(format!("the job queue: {error}")))?;
    let eval = eval_id(&plan.out);
    let model = plan.model.label();
    let mut outcome = Outcome::default();
    let mut pending: BTreeMap<String, Pending> = BTreeMap::new();
    // The packed trees the attempts waited for name, removed once every one is in.
    let mut trees: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for task in plan.tasks {
        let task = Arc::new(task);
        let task_dir = plan.out.join(task.folder_name());
        // Packed and stored once per task, when one of its attempts goes on the queue.
        let mut tree: Option<String> = None;
        for attempt in 1..=plan.k.max(1) {
            match runner::finished_result(&task_dir, attempt) {
                Some(done) if !(plan.retry_errors && runner::is_infra(&done)) => {
                    outcome.results.push(done);
                    outcome.skipped += 1;
                    continue;
                }
                _ => {}
            }
            let mut queued = QueuedAttempt {
                kind: QUEUED_ATTEMPT_KIND.to_owned(),
                eval: eval.clone(),
                task: (*task).clone(),
                attempt,
                model: model.clone(),
                max_rounds: choice.max_rounds,
                tree: None,
            };
            let id = match find_attempt(&store, &queued, plan.retry_errors).await? {
                Some(found) => {
                    // Queued by an earlier run of this eval, with the tree it stored.
                    if let Some(tree) = found.spec["tree"].as_str() {
                        trees.insert(tree.to_owned());
                    }
                    found.id
                }
                None => {
                    if tree.is_none() {
                        let id = store_tree(&store, &task, &plan.out).await?;
                        trees.insert(id.clone());
                        tree = Some(id);
                    }
                    queued.tree.clone_from(&tree);
                    queue_attempt(&store, &mut queue, &queue_settings, &queued).await?
                }
            };
            pending.insert(
                id,
                Pending {
                    task: Arc::clone(&task),
                    attempt,
                    task_dir: task_dir.clone(),
                },
            );
        }
    }
    progress.planned(pending.len() + outcome.skipped, outcome.skipped);

    let shutdown = cancel.child_token();
    let workers = start_workers(&store, &queue_settings, &choice, plan.jobs, &shutdown)?;
    let waited = wait(
        &store,
        &mut pending,
        progress.as_ref(),
        &cancel,
        &mut outcome,
    )
    .await;
    shutdown.cancel();
    for worker in workers {
        let _ = worker.await;
    }
    // Every attempt collected: their packed trees are no longer needed (an eval stopped early
    // keeps them for the run that resumes it).
    if waited.is_ok() && pending.is_empty() {
        for id in &trees {
            let _ = store.delete_upload(EVAL_TENANT, id).await;
        }
    }
    store.close().await;
    waited?;
    outcome.cancelled = cancel.is_cancelled();
    outcome
        .results
        .sort_by(|a, b| (&a.instance_id, a.attempt).cmp(&(&b.instance_id, b.attempt)));
    Ok(outcome)
}

/// Keeps the eval's `summary.json` and `report.html` (written in `out`) in the store, under the
/// tenant `eval`, for the web page of `plumb serve`; a later run of the same eval replaces them.
pub(crate) async fn keep_report(db: &str, out: &Path) -> Result<(), Failure> {
    let read = |name: &str| {
        std::fs::read(out.join(name))
            .map_err(|error| Failure::infra(format!("{}: {error}", out.join(name).display())))
    };
    let summary = String::from_utf8_lossy(&read("summary.json")?).into_owned();
    let html = read("report.html")?;
    let title = out
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| out.display().to_string());
    let (store, _) = store_url::open(Some(db)).await?;
    store
        .put_eval_report(EVAL_TENANT, &eval_id(out), &title, &summary, &html)
        .await
        .map_err(|error| Failure::infra(format!("the store: {error}")))
}

/// The eval's id: from its output folder, so the same command finds its attempts again.
fn eval_id(out: &std::path::Path) -> String {
    let digest = plumb_workspace::sha256_hex(out.display().to_string().as_bytes());
    format!("e{}", digest.get(..16).unwrap_or(&digest))
}

/// The stored task of `queued` an earlier run of this eval queued, unless it was cancelled, or
/// failed and errors are retried.
async fn find_attempt(
    store: &Store,
    queued: &QueuedAttempt,
    retry_errors: bool,
) -> Result<Option<TaskRecord>, Failure> {
    let found = store
        .task_titled(EVAL_TENANT, &queued.title())
        .await
        .map_err(|error| Failure::infra(error.to_string()))?;
    Ok(found.filter(|task| {
        let again = task.state == TaskState::Cancelled
            || (retry_errors
                && (task.state == TaskState::Failed
                    || task.outcome.as_deref() == Some("infra_error")));
        !again
    }))
}

/// A new stored task for `queued`, on the queue.
async fn queue_attempt(
    store: &Store,
    queue: &mut plumb_store::JobQueue,
    settings: &QueueSettings,
    queued: &QueuedAttempt,
) -> Result<String, Failure> {
    let infra = |error: plumb_store::StoreError| Failure::infra(error.to_string());
    let spec = serde_json::to_value(queued)
        .map_err(|error| Failure::infra(format!("the attempt's request: {error}")))?;
    let new = NewTask {
        tenant: EVAL_TENANT.to_owned(),
        queue: settings.name.clone(),
        title: queued.title(),
        spec,
        max_attempts: 2,
    };
    let task = store.create_task(&new).await.map_err(infra)?;
    queue.push(&task.id).await.map_err(infra)?;
    Ok(task.id)
}

/// The task's starting tree, made here and stored packed (an upload of the tenant `eval`); its
/// id.
async fn store_tree(store: &Store, task: &Task, out: &Path) -> Result<String, Failure> {
    let scratch = out.join(".queue-trees").join(task.folder_name());
    let packed = {
        let (task, scratch) = (task.clone(), scratch.clone());
        tokio::task::spawn_blocking(move || pack(&task, &scratch))
            .await
            .map_err(|error| Failure::infra(format!("packing a tree stopped: {error}")))?
    };
    let _ = std::fs::remove_dir_all(&scratch);
    let bytes = packed?;
    let kept = store
        .put_upload(EVAL_TENANT, &bytes)
        .await
        .map_err(|error| Failure::infra(format!("storing {}'s tree: {error}", task.instance_id)))?;
    Ok(kept.id)
}

/// The task's starting tree packed as a `.tar.gz`, its bytes.
fn pack(task: &Task, scratch: &Path) -> Result<Vec<u8>, Failure> {
    let tree = plumb_eval::env::starting_tree(task, scratch, MAX_TREE_BYTES)
        .map_err(|error| Failure::bad_input(format!("{}: {error}", task.instance_id)))?;
    let archive = scratch.join("tree.tar.gz");
    plumb_workspace::pack_tree(&tree, &archive, MAX_TREE_BYTES)
        .map_err(|error| Failure::bad_input(format!("{}: {error}", task.instance_id)))?;
    let bytes = std::fs::read(&archive)
        .map_err(|error| Failure::infra(format!("{}: {error}", archive.display())))?;
    if bytes.len() as u64 > MAX_PACKED_BYTES {
        return Err(Failure::bad_input(format!(
            "{}'s starting tree packs to {} MB, more than the {} MB a task may take through the \
             store; run that task without --db",
            task.instance_id,
            bytes.len() >> 20,
            MAX_PACKED_BYTES >> 20
        )));
    }
    Ok(bytes)
}

/// `jobs` workers in this process on the eval's queue.
fn start_workers(
    store: &Store,
    queue: &QueueSettings,
    choice: &QueueChoice,
    jobs: usize,
    shutdown: &CancellationToken,
) -> Result<Vec<tokio::task::JoinHandle<plumb_store::Result<()>>>, Failure> {
    let runner = Arc::new(EngineRunner {
        overrides: choice.overrides.clone(),
        url_policy: plumb_workspace::intake::UrlPolicy::default(),
        secret_key: crate::secret_key::load(None)?,
    });
    Ok((0..jobs)
        .map(|_| {
            let mut settings = plumb_store::WorkerSettings::new(worker_id(&host_name()));
            settings.queue = queue.clone();
            tokio::spawn(run_worker(
                store.clone(),
                settings,
                runner.clone(),
                shutdown.clone(),
            ))
        })
        .collect())
}

/// Reads the store until every pending attempt ended (or the eval is stopped), keeping each
/// result in `--out`.
async fn wait(
    store: &Store,
    pending: &mut BTreeMap<String, Pending>,
    progress: &dyn Progress,
    cancel: &CancellationToken,
    outcome: &mut Outcome,
) -> Result<(), Failure> {
    let mut started: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    while !pending.is_empty() && !cancel.is_cancelled() {
        let ids: Vec<String> = pending.keys().cloned().collect();
        for id in ids {
            let Ok(task) = store.task(EVAL_TENANT, &id).await else {
                // The database is away for a moment, or the task is gone: read again later.
                continue;
            };
            let Some(item) = pending.get(&id) else {
                continue;
            };
            if task.state != TaskState::Queued && started.insert(id.clone()) {
                progress.started(&item.task.instance_id, item.attempt);
            }
            if !task.state.is_final() {
                continue;
            }
            let Some(item) = pending.remove(&id) else {
                continue;
            };
            let Some(result) = collect(store, &task, &item).await? else {
                continue;
            };
            runner::keep_result(&item.task_dir, &result).map_err(Failure::infra)?;
            progress.finished(&result);
            outcome.results.push(result);
            outcome.ran += 1;
        }
        tokio::select! {
            () = cancel.cancelled() => {}
            () = tokio::time::sleep(POLL) => {}
        }
    }
    Ok(())
}

/// The result of an attempt's task that ended: the one its worker stored, or an infrastructure
/// error saying why it has none; `None` for a cancelled one (run again next time).
async fn collect(
    store: &Store,
    task: &TaskRecord,
    item: &Pending,
) -> Result<Option<AttemptResult>, Failure> {
    if task.state == TaskState::Cancelled {
        return Ok(None);
    }
    let stored = store
        .artefact(EVAL_TENANT, &task.id, ArtefactName::Report)
        .await
        .map_err(|error| Failure::infra(error.to_string()))?;
    if task.state == TaskState::Scored
        && let Some(stored) = stored
        && let Ok(result) = serde_json::from_slice::<AttemptResult>(&stored.content)
    {
        return Ok(Some(result));
    }
    let message = format!(
        "the queue's task {} ended {} without a result: {}",
        task.id,
        task.state,
        task.reason.as_deref().unwrap_or("no reason given")
    );
    let mut result = AttemptResult::empty(
        &item.task.instance_id,
        item.attempt,
        item.task.language.clone(),
        serde_json::from_value::<QueuedAttempt>(task.spec.clone())
            .map(|queued| queued.model)
            .unwrap_or_default(),
    );
    result.reason.clone_from(&message);
    result.status = AttemptStatus::InfraError { message };
    Ok(Some(result))
}
