//! The engine behind `plumb worker`: runs a claimed task as `plumb fix` runs a ticket — the same
//! settings, sandbox, ladder and review — with the run's events written to the store as they
//! happen, the task's state following the run (running, checking, reviewing), and the patch, the
//! report, the journal and a `git bundle` of the change kept as the attempt's artefacts. The run
//! ends awaiting a person's approval of the diff's SHA-256; nothing is applied here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::future::BoxFuture;
use plumb_agent::input::{CancelReason, Inbox};
use plumb_agent::{FinalReport, RunSpec, new_run_id};
use plumb_config::FlagSetting;
use plumb_model::http::ApiKey;
use plumb_protocol::{Event, Outcome};
use plumb_store::{
    ArtefactName, AttemptEnd, Claim, RunContext, RunFigures, SecretKey, Stop, StopCause, Store,
    TaskRunner, TaskState, TenantLimits, retry_transient,
};
use plumb_workspace::intake::UrlPolicy;
use plumb_workspace::{BundleRequest, Identity, bundle_change};
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use plumb_server::{RepoSource, TaskRequest};

use crate::screen::{one_line, say};
use crate::task_source;
use crate::{prune, setup};

/// The most of a journal kept in the store.
const MAX_JOURNAL_BYTES: u64 = 64 << 20;

/// Runs tasks with plumb's engine under the worker's settings (`-c` given to `plumb worker`).
pub(crate) struct EngineRunner {
    pub overrides: Vec<String>,
    /// Which git URLs a task may name, and the clone's caps.
    pub url_policy: UrlPolicy,
    /// Opens tenants' own model keys (none: a tenant that keeps keys cannot run here).
    pub secret_key: Option<SecretKey>,
}

impl TaskRunner for EngineRunner {
    fn run(&self, run: RunContext) -> BoxFuture<'static, AttemptEnd> {
        let overrides = self.overrides.clone();
        let url_policy = self.url_policy.clone();
        let secret_key = self.secret_key.clone();
        Box::pin(async move {
            if plumb_eval::runner::QueuedAttempt::is_one(&run.task.spec) {
                return crate::eval_task::run(&run, overrides).await;
            }
            run_task(&run, overrides, &url_policy, secret_key.as_ref())
                .await
                .unwrap_or_else(|reason| refused(&run, reason))
        })
    }
}

async fn run_task(
    run: &RunContext,
    overrides: Vec<String>,
    url_policy: &UrlPolicy,
    secret_key: Option<&SecretKey>,
) -> Result<AttemptEnd, String> {
    let spec: TaskRequest = serde_json::from_value(run.task.spec.clone())
        .map_err(|error| format!("the task's request is not one plumb reads: {error}"))?;
    if spec.ticket.trim().is_empty() {
        return Err("the ticket is empty; give the ticket's text".to_owned());
    }
    let mut flags = Vec::new();
    if let Some(model) = &spec.model {
        flags.push(FlagSetting::text("model", "model", model));
    }
    if let Some(command) = &spec.test_command {
        flags.push(FlagSetting::text("test_command", "test_command", command));
    }
    // The run's folder comes from the worker's own settings; the repository's settings, read
    // once its source is here, can only tighten them.
    let worker_config = setup::load_config(None, overrides.clone(), flags.clone())
        .map_err(|failure| failure.message)?
        .config;
    let run_id = new_run_id();
    let runs_dir = setup::runs_dir(&worker_config).map_err(|failure| failure.message)?;
    // Runs of this machine's workers that died mid-run (their tasks went to other attempts).
    let (_, failures) = prune::remove_abandoned(&runs_dir);
    for failure in failures {
        say!("plumb worker: {}", one_line(&failure));
    }
    let run_dir = runs_dir.join(&run_id);
    std::fs::create_dir_all(&run_dir).map_err(|error| {
        format!(
            "could not create the run folder {}: {error}",
            run_dir.display()
        )
    })?;
    let _lock = prune::lock_run(&run_dir).map_err(|failure| failure.message)?;
    let marker = serde_json::json!({"task": run.claim.task_id, "attempt": run.claim.attempt});
    std::fs::write(run_dir.join(prune::TASK_FILE), marker.to_string()).map_err(|error| {
        format!(
            "could not write the run's task file in {}: {error}",
            run_dir.display()
        )
    })?;
    let fetched = Fetched(run_dir.join("source"));
    let repo = task_source::prepare(
        &spec.repo,
        &run.task.tenant,
        &run.store,
        &fetched.0,
        url_policy,
    )
    .await?;
    let mut loaded =
        setup::load_config(Some(&repo), overrides, flags).map_err(|failure| failure.message)?;
    // A task may ask for fewer rounds than the worker allows, never more.
    if let Some(rounds) = spec.max_rounds {
        let limits = &mut loaded.config.limits;
        limits.max_rounds = limits.max_rounds.min(rounds);
    }
    // Likewise dollars: the worker's 0 is no budget, so the task's is taken whole.
    if let Some(usd) = spec.max_usd {
        let limits = &mut loaded.config.limits;
        limits.max_usd = if limits.max_usd > 0.0 {
            limits.max_usd.min(usd)
        } else {
            usd
        };
    }
    let tenant = &run.task.tenant;
    let limits = retry_transient(run.lease, || run.store.tenant_limits(tenant))
        .await
        .map_err(|error| error.to_string())?;
    apply_tenant_limits(&mut loaded.config.limits, &limits);
    let config = loaded.config;
    let keys = tenant_keys(run, secret_key).await?;
    let model = setup::connect_model_with_keys(&config.model, &config, &keys)
        .map_err(|failure| failure.message)?;
    let reviewer = if config.review.model.trim().is_empty() {
        None
    } else {
        Some(
            setup::connect_model_with_keys(&config.review.model, &config, &keys)
                .map_err(|failure| format!("review.model: {}", failure.message))?,
        )
    };
    let test_command = spec
        .test_command
        .as_deref()
        .map(plumb_verify::parse_command)
        .transpose()
        .map_err(|error| format!("test_command: {error}"))?;
    let sandbox = setup::build_sandbox(&config, run_dir.join("sandbox"), run_dir.join("toolcache"))
        .map_err(|failure| failure.message)?;
    // Every write of the run rides out a database that is away for less than the lease.
    retry_transient(run.lease, || {
        run.store.advance(&run.claim, TaskState::Running)
    })
    .await
    .map_err(|error| error.to_string())?;
    let (observer, events) = mpsc::channel(256);
    let forward = tokio::spawn(forward_events(
        run.store.clone(),
        run.claim.clone(),
        run.lease,
        events,
    ));
    let (source, kept_run_dir) = (repo.clone(), run_dir.clone());
    let (inbox, relay) = relay_stop(&run.stop);
    let run_spec = RunSpec {
        repo_label: repo_label(&spec.repo),
        repo,
        ticket: spec.ticket.clone(),
        model,
        reviewer,
        config,
        test_command,
        sandbox,
        run_id,
        run_dir,
        journal_path: None,
        inbox,
        observer: Some(observer),
        expect_base_tree: None,
        fail_to_pass: Vec::new(),
        setup_cache: None,
        settings: loaded.provenance,
    };
    let result = plumb_agent::run(run_spec).await;
    drop(relay);
    // The forwarder ends when the run drops its sender: every event is stored before the end.
    let state = forward.await.unwrap_or(TaskState::Running);
    let report = match result {
        Ok(report) => report,
        Err(error) => {
            let outcome = match error {
                plumb_agent::RunError::BadInput(_) => "bad_input",
                plumb_agent::RunError::Infra(_) => "infra_error",
            };
            return Ok(AttemptEnd {
                state: ended_state(run),
                outcome: outcome.to_owned(),
                reason: Some(error.to_string()),
                diff_sha256: None,
            });
        }
    };
    keep_artefacts(&run.store, &run.claim, run.lease, &report).await;
    if report.outcome != Outcome::Success {
        return Ok(AttemptEnd {
            state: ended_state(run),
            outcome: outcome_name(report.outcome),
            reason: Some(report.reason.clone()),
            diff_sha256: None,
        });
    }
    match make_bundle(run, source, kept_run_dir, &report).await {
        Ok(bundle) => {
            let _ = retry_transient(run.lease, || {
                run.store
                    .put_artefact(&run.claim, ArtefactName::Bundle, &bundle)
            })
            .await;
        }
        // The diff and the patch stand without it; the task's events say why it is missing.
        Err(reason) => {
            let body = serde_json::json!({
                "type": "warning",
                "message": format!("no git bundle of the change: {reason}"),
            });
            let _ = retry_transient(run.lease, || {
                run.store.append_event(&run.claim, "warning", &body)
            })
            .await;
        }
    }
    // A verified change reaches a person only through the ladder's states.
    if state == TaskState::Running {
        retry_transient(run.lease, || {
            run.store.advance(&run.claim, TaskState::Checking)
        })
        .await
        .map_err(|error| error.to_string())?;
    }
    Ok(AttemptEnd {
        state: TaskState::AwaitingApproval,
        outcome: outcome_name(report.outcome),
        reason: None,
        diff_sha256: Some(report.patch_sha256.clone()),
    })
}

/// The verified change as a `git bundle` (one commit on `plumb/<task>` over the source's `HEAD`,
/// or over the run's baseline for a source without git); its bytes, or why there is none.
async fn make_bundle(
    run: &RunContext,
    source: PathBuf,
    run_dir: PathBuf,
    report: &FinalReport,
) -> Result<Vec<u8>, String> {
    let branch = format!("plumb/{}", run.claim.task_id);
    let title = if report.title.is_empty() {
        "plumb: the verified change"
    } else {
        &report.title
    };
    let message = format!(
        "{title}\n\nMade by plumb (task {}, attempt {}, run {}); the verified patch's SHA-256 is {}.\n",
        run.claim.task_id, run.claim.attempt, report.run_id, report.patch_sha256
    );
    let sha = report.patch_sha256.clone();
    tokio::task::spawn_blocking(move || {
        let scratch = run_dir.join("bundle-scratch");
        let out = run_dir.join("change.bundle");
        let identity = Identity {
            name: "plumb".to_owned(),
            email: "plumb@localhost".to_owned(),
        };
        let request = BundleRequest {
            source: &source,
            shadow: &run_dir
                .join(plumb_agent::WORKSPACE_DIR)
                .join(plumb_workspace::SHADOW_DIR),
            patch: &run_dir.join(crate::home::PATCH_FILE),
            patch_sha256: &sha,
            branch: &branch,
            message: &message,
            identity: &identity,
            scratch: &scratch,
            out: &out,
        };
        let made = bundle_change(&request).map_err(|error| error.to_string());
        let _ = std::fs::remove_dir_all(&scratch);
        made?;
        let bytes = std::fs::read(&out).map_err(|error| format!("{}: {error}", out.display()));
        let _ = std::fs::remove_file(&out);
        bytes
    })
    .await
    .map_err(|error| format!("the bundle's thread stopped: {error}"))?
}

/// A fetched source (a clone, an unpacked archive), removed when the run ends however it ends:
/// the run's workspace is its own copy.
struct Fetched(std::path::PathBuf);

impl Drop for Fetched {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A tenant's limits lower the worker's own: rounds, and dollars per task (the worker's 0 is no
/// budget, so the tenant's is taken whole).
fn apply_tenant_limits(limits: &mut plumb_config::Limits, tenant: &TenantLimits) {
    if let Some(rounds) = tenant.max_rounds {
        let rounds = u32::try_from(rounds).unwrap_or(u32::MAX);
        limits.max_rounds = limits.max_rounds.min(rounds);
    }
    if let Some(usd) = tenant.max_usd {
        limits.max_usd = if limits.max_usd > 0.0 {
            limits.max_usd.min(usd)
        } else {
            usd
        };
    }
}

/// The tenant's own model keys, opened for this run's model clients. A tenant that keeps keys
/// never has its tasks run on the operator's keys because this worker cannot open them.
async fn tenant_keys(
    run: &RunContext,
    secret_key: Option<&SecretKey>,
) -> Result<BTreeMap<String, ApiKey>, String> {
    let tenant = &run.task.tenant;
    let stored = retry_transient(run.lease, || run.store.model_keys(tenant))
        .await
        .map_err(|error| error.to_string())?;
    if stored.is_empty() {
        return Ok(BTreeMap::new());
    }
    let Some(secret) = secret_key else {
        return Err(format!(
            "tenant {tenant} keeps its own model keys, and this worker has no secret key to open \
             them: start it with PLUMB_SECRET_KEY (or --secret-key-file) set as the server's"
        ));
    };
    let mut keys = BTreeMap::new();
    for record in stored {
        let provider = record.provider;
        let key = retry_transient(run.lease, || run.store.model_key(tenant, &provider, secret))
            .await
            .map_err(|error| error.to_string())?;
        if let Some(key) = key {
            keys.insert(provider, ApiKey::new(key.expose()));
        }
    }
    Ok(keys)
}

/// How a run names its repository in reports and lists.
fn repo_label(source: &RepoSource) -> String {
    match source {
        RepoSource::Path { path } => path.clone(),
        RepoSource::Git { url, rev: None } => url.clone(),
        RepoSource::Git {
            url,
            rev: Some(rev),
        } => format!("{url}#{rev}"),
        RepoSource::Upload { id } => format!("upload {id}"),
    }
}

/// How an attempt ends that could not run as asked (`reason` names what to change): failed, or
/// cancelled when the run was being cancelled anyway.
pub(crate) fn refused(run: &RunContext, reason: String) -> AttemptEnd {
    AttemptEnd {
        state: ended_state(run),
        outcome: "bad_input".to_owned(),
        reason: Some(reason),
        diff_sha256: None,
    }
}

/// The run's input channel, and a task that sends it a cancel saying why when the worker stops
/// the run; the task ends when the guard is dropped (the run is over, or its future was dropped).
fn relay_stop(stop: &Stop) -> (Inbox, DropGuard) {
    let (submitter, inbox) = plumb_agent::input::channel();
    let stop = stop.clone();
    let over = CancellationToken::new();
    let guard = over.clone().drop_guard();
    tokio::spawn(async move {
        tokio::select! {
            cause = stop.stopped() => {
                submitter.cancel(match cause {
                    StopCause::CancelRequested => CancelReason::Person,
                    StopCause::WorkerStopping => CancelReason::Stopping,
                    StopCause::Superseded => CancelReason::Superseded,
                });
            }
            () = over.cancelled() => {}
        }
    });
    (inbox, guard)
}

fn ended_state(run: &RunContext) -> TaskState {
    if run.stop.is_stopped() {
        TaskState::Cancelled
    } else {
        TaskState::Failed
    }
}

fn outcome_name(outcome: Outcome) -> String {
    serde_json::to_value(outcome)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{outcome:?}"))
}

/// Writes each event to the store as it comes and moves the task's state with the run: the
/// ladder's first check → checking, the review → reviewing, the next request to the model →
/// running. Returns the state it left the task in. A write is tried again while the database is
/// away, for up to `lease`.
async fn forward_events(
    store: Store,
    claim: Claim,
    lease: Duration,
    mut events: mpsc::Receiver<Event>,
) -> TaskState {
    let mut state = TaskState::Running;
    while let Some(event) = events.recv().await {
        let next = match &event {
            Event::Check { .. } => Some(TaskState::Checking),
            Event::Reviewed { .. } => Some(TaskState::Reviewing),
            Event::ModelRequest { .. } => Some(TaskState::Running),
            _ => None,
        };
        if let Some(next) = next.filter(|next| *next != state && state.may_become(*next))
            && retry_transient(lease, || store.advance(&claim, next))
                .await
                .is_ok()
        {
            state = next;
        }
        let Ok(body) = serde_json::to_value(&event) else {
            continue;
        };
        let kind = body["type"].as_str().unwrap_or("event").to_owned();
        // A stale attempt's events are refused; the run is being cancelled meanwhile.
        let _ = retry_transient(lease, || store.append_event(&claim, &kind, &body)).await;
    }
    state
}

/// The patch, the report and the journal, as the attempt's artefacts, and the run's figures on the
/// task (best effort: the run folder keeps them all).
async fn keep_artefacts(store: &Store, claim: &Claim, lease: Duration, report: &FinalReport) {
    let figures = RunFigures {
        rounds: i64::from(report.rounds),
        tokens: i64::try_from(report.usage.input_tokens + report.usage.output_tokens)
            .unwrap_or(i64::MAX),
        usd: report.usage.usd,
    };
    let _ = retry_transient(lease, || store.set_figures(claim, &figures)).await;
    let keep = |name: ArtefactName, bytes: Vec<u8>| async move {
        let _ = retry_transient(lease, || store.put_artefact(claim, name, &bytes)).await;
    };
    if !report.patch.is_empty() {
        keep(ArtefactName::Patch, report.patch.as_bytes().to_vec()).await;
    }
    if let Ok(json) = serde_json::to_vec_pretty(report) {
        keep(ArtefactName::Report, json).await;
    }
    if let Some(review) = &report.review
        && let Ok(json) = serde_json::to_vec_pretty(review)
    {
        keep(ArtefactName::Review, json).await;
    }
    let journal = Path::new(&report.journal);
    let small = std::fs::metadata(journal).is_ok_and(|meta| meta.len() <= MAX_JOURNAL_BYTES);
    if small && let Ok(bytes) = std::fs::read(journal) {
        keep(ArtefactName::Journal, bytes).await;
    }
}
