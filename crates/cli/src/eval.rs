//! `plumb eval`: a task set through the same engine as `plumb fix`, scored as SWE-bench does. This
//! file turns the flags into a [`plumb_eval::runner::Plan`] and the CLI's own settings, models and
//! sandboxes into a [`plumb_eval::runner::Engine`]; `eval_progress.rs` draws the progress bar.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use plumb_config::{Config, FlagSetting};
use plumb_eval::report::{self, SummaryMeta};
use plumb_eval::runner::{self, Engine, ModelChoice, Plan};
use plumb_eval::tasks::{self, LoadOptions};
use plumb_model::ModelClient;
use plumb_protocol::Provenance;
use plumb_sandbox::Sandbox;
use tokio_util::sync::CancellationToken;

use crate::args::{EvalArgs, EvalCommand, EvalRunArgs, SandboxArg};
use crate::screen::{one_line, say};
use crate::{Failure, eval_progress, setup};

pub(crate) async fn run(args: EvalArgs, overrides: &[String]) -> Result<i32, Failure> {
    match args.command {
        Some(EvalCommand::Import(import)) => crate::eval_import::run(import),
        Some(EvalCommand::Compare(compare)) => crate::eval_import::compare(compare),
        None => run_set(args.run, overrides).await,
    }
}

async fn run_set(args: EvalRunArgs, overrides: &[String]) -> Result<i32, Failure> {
    let Some(tasks_file) = args.tasks.clone() else {
        return Err(Failure::bad_input(
            "no task set given; run `plumb eval TASKS.jsonl --model SPEC` (or `plumb eval import …`, `plumb eval compare …`)",
        ));
    };
    let Some(model_text) = args.model.clone() else {
        return Err(Failure::bad_input(
            "no model given; pass --model SPEC (a model spec, `oracle`, or `script:FOLDER`)",
        ));
    };
    let filter = args
        .filter
        .as_deref()
        .map(regex::Regex::new)
        .transpose()
        .map_err(|err| {
            Failure::bad_input(format!("--filter is not a regular expression: {err}"))
        })?;
    let loaded = tasks::load(
        &tasks_file,
        &LoadOptions {
            repos_dir: args.repos.clone(),
        },
    )
    .map_err(|err| Failure::bad_input(err.to_string()))?;
    for problem in &loaded.problems {
        say!(
            "plumb: skipped a record: {}",
            one_line(&problem.to_string())
        );
    }
    let mut tasks = loaded.tasks;
    if let Some(filter) = &filter {
        tasks.retain(|t| filter.is_match(&t.instance_id));
    }
    if tasks.is_empty() {
        return Err(Failure::bad_input(format!(
            "{} holds no task to run{}; check the file and --filter",
            tasks_file.display(),
            if loaded.problems.is_empty() {
                ""
            } else {
                " (every record had a problem, listed above)"
            }
        )));
    }
    let flags = flag_settings(&args, &model_text);
    let model = ModelChoice::parse(&model_text);
    let model_label = model.label();
    let total_tasks = tasks.len();
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| default_out(&tasks_file, &model));
    // Git runs in the task folders with index and tree paths under `out`: a relative `--out`
    // would name a different place from there.
    let out = std::path::absolute(&out).map_err(|err| {
        Failure::bad_input(format!(
            "--out {}: {err}; name another folder",
            out.display()
        ))
    })?;
    let engine = Arc::new(CliEngine {
        overrides: overrides.to_vec(),
        flags,
        // One package cache for the whole eval: what one task's setup fetched, the next finds.
        toolcache: out.join(".toolcache"),
        max_rounds: None,
    });
    // A model that cannot connect at all (a missing key, a local model not installed) is the
    // user's to fix before any task runs.
    if let ModelChoice::Spec(spec) = &model {
        let base = setup::load_config(None, overrides.to_vec(), engine.flags.clone())?;
        setup::connect_model(spec, &base.config)?;
    }
    let plan = Plan {
        tasks,
        model,
        k: args.k.max(1),
        // On the queue, the workers of this process (0: only other machines').
        jobs: if args.db.is_some() {
            args.jobs
        } else {
            args.jobs.max(1)
        },
        out: out.clone(),
        retry_errors: args.retry_errors,
        keep_trees: args.keep_trees,
    };
    let cancel = CancellationToken::new();
    cancel_on_ctrl_c(cancel.clone());
    let progress = Arc::new(eval_progress::Bar::new());
    say!("plumb eval: {} → {}", tasks_file.display(), out.display());
    let outcome = match &args.db {
        Some(db) => {
            let choice = crate::eval_queue::QueueChoice {
                db: db.clone(),
                queue: args.queue.clone(),
                max_rounds: args.max_rounds,
                overrides: overrides.to_vec(),
            };
            crate::eval_queue::run(plan, choice, progress.clone(), cancel).await?
        }
        None => runner::run(plan, engine, progress.clone(), cancel)
            .await
            .map_err(Failure::infra)?,
    };
    progress.finish();
    let meta = SummaryMeta {
        tasks_file: tasks_file.display().to_string(),
        model: model_label.clone(),
        k: args.k.max(1),
        total_tasks,
        command: std::env::args().collect::<Vec<_>>().join(" "),
        settings: overrides.to_vec(),
    };
    let summary = write_reports(&out, &meta, args.predictions.as_deref(), &model_label)?;
    if let Some(db) = &args.db {
        // The results are on disk whatever happens here: a store that refuses is a warning.
        if let Err(failure) = crate::eval_queue::keep_report(db, &out).await {
            say!(
                "plumb eval: the report was not kept for the web page: {}",
                failure.message
            );
        }
    }
    for line in eval_progress::summary_lines(&outcome.results, &summary.reviews) {
        say!("{line}");
    }
    say!(
        "summary: {}\nreport:  {}",
        out.join("summary.json").display(),
        out.join("report.html").display()
    );
    if outcome.cancelled {
        say!("plumb eval: stopped; run the same command again to resume where it stopped");
        return Ok(130);
    }
    let errors = outcome
        .results
        .iter()
        .filter(|r| matches!(r.status, plumb_eval::AttemptStatus::InfraError { .. }))
        .count();
    if errors > 0 {
        say!(
            "plumb eval: {errors} attempts ended with an infrastructure error; they are not counted, run again with --retry-errors"
        );
        return Ok(3);
    }
    Ok(0)
}

/// `summary.json` and `report.html` from every result under `out` (earlier runs' included), and
/// the predictions file when asked for. Returns the summary written.
fn write_reports(
    out: &Path,
    meta: &SummaryMeta,
    predictions: Option<&Path>,
    model_label: &str,
) -> Result<report::Summary, Failure> {
    let failed = |err: report::ReportError| Failure::infra(err.to_string());
    let results = report::collect(out).map_err(failed)?;
    let summary = report::summarize(&results, meta.k, meta);
    report::write_summary(out, &summary).map_err(failed)?;
    report::write_html(out, &summary, &results).map_err(failed)?;
    if let Some(path) = predictions {
        report::write_predictions(path, &results, model_label).map_err(failed)?;
    }
    Ok(summary)
}

/// `./plumb-eval/<tasks file stem>-<model>`.
fn default_out(tasks_file: &Path, model: &ModelChoice) -> PathBuf {
    let stem = tasks_file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tasks".to_owned());
    let label = match model {
        ModelChoice::ScriptDir(_) => "script".to_owned(),
        other => other.label(),
    };
    PathBuf::from("plumb-eval").join(plumb_eval::task::folder_name(&format!("{stem}-{label}")))
}

fn flag_settings(args: &EvalRunArgs, model: &str) -> Vec<FlagSetting> {
    let mut flags = Vec::new();
    if let Some(sandbox) = args.sandbox {
        let name = match sandbox {
            SandboxArg::Bwrap => "bwrap",
            SandboxArg::Gvisor => "gvisor",
            SandboxArg::None => "none",
        };
        flags.push(FlagSetting::text("--sandbox", "sandbox", name));
    }
    if let Some(n) = args.max_rounds {
        flags.push(FlagSetting::integer(
            "--max-rounds",
            "limits.max_rounds",
            i64::from(n),
        ));
    }
    if !matches!(
        ModelChoice::parse(model),
        ModelChoice::Oracle | ModelChoice::ScriptDir(_)
    ) {
        flags.push(FlagSetting::text("--model", "model", model));
    }
    flags
}

/// The CLI's settings, model clients and sandboxes, for each task (of `plumb eval`, or of an
/// eval's attempt a worker took from the queue).
pub(crate) struct CliEngine {
    pub overrides: Vec<String>,
    pub flags: Vec<FlagSetting>,
    pub toolcache: PathBuf,
    /// A round limit that may only lower the settings' (an eval's, on a worker).
    pub max_rounds: Option<u32>,
}

impl Engine for CliEngine {
    fn settings(&self, tree: &Path) -> Result<(Config, Provenance), String> {
        setup::load_config(Some(tree), self.overrides.clone(), self.flags.clone())
            .map(|mut loaded| {
                if let Some(rounds) = self.max_rounds {
                    let limits = &mut loaded.config.limits;
                    limits.max_rounds = limits.max_rounds.min(rounds);
                }
                (loaded.config, loaded.provenance)
            })
            .map_err(|failure| failure.message)
    }

    fn connect(&self, spec: &str, config: &Config) -> Result<Box<dyn ModelClient>, String> {
        setup::connect_model(spec, config).map_err(|failure| failure.message)
    }

    fn sandbox(&self, config: &Config, scratch: PathBuf) -> Result<Box<dyn Sandbox>, String> {
        setup::build_sandbox(config, scratch, self.toolcache.clone())
            .map_err(|failure| failure.message)
    }
}

/// The first Ctrl-C stops the eval cleanly: running attempts are cancelled (and run again next
/// time), finished ones keep their results; a second one stops at once.
fn cancel_on_ctrl_c(cancel: CancellationToken) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            say!("plumb eval: stopping (press Ctrl-C again to stop at once)");
            cancel.cancel();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });
}
