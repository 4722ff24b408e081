//! Harness time per round: full `plumb_agent::run`s with the scripted model, no sandbox and a
//! fresh run folder each time, on one fixture.
//!
//! harness time = `total_ms − commands_ms` of the report (the baseline tests, every `run_tests`
//! and the final check's suite are commands, so they are taken out); per round = that / rounds.
//! Every run must end in `success`. The journal then says where the harness time went: its
//! timestamps split the run into the workspace copy, the baseline tests' overhead, the first prompt
//! (notes and repo map), model, tools (their commands excluded), the checkpoints after edits, the
//! round ends (the round's closing checkpoint, the next request's messages, journal writes) and the
//! end (patch, report); what is left is shown as unaccounted.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use plumb_agent::{RunSpec, new_run_id, read_journal};
use plumb_config::Config;
use plumb_model::ScriptModel;
use plumb_protocol::{Event, FinalReport, Outcome, SandboxKind};
use plumb_sandbox::NoSandbox;
use tokio::runtime::Runtime;

use crate::measure::Samples;

/// Target: harness time per round under this many ms.
pub const PER_ROUND_TARGET_MS: f64 = 20.0;

/// A task to run: a repository, a ticket and the script that plays the model.
pub struct Case {
    pub repo: PathBuf,
    pub ticket: String,
    pub script: PathBuf,
}

/// The parts of the harness time, in the order they happen.
pub const PARTS: [&str; 9] = [
    "workspace prepare (copy + shadow git baseline)",
    "baseline tests, harness overhead beyond the command",
    "first prompt (notes, repo map)",
    "model (scripted)",
    "tools, their commands excluded (`done`'s checks included)",
    "checkpoints after edits (tool end → checkpoint event)",
    "round ends: checkpoint, next request, journal (→ next model request)",
    "finish (patch, report)",
    "unaccounted (harness time less the parts above)",
];
/// Index of the round-end part in [`PARTS`].
pub const ROUND_ENDS: usize = 6;
/// The parts before the first round.
const PREPARE_PARTS: usize = 3;

/// What the runs measured.
pub struct HarnessResult {
    /// `total_ms − commands_ms` of each run.
    pub harness: Samples,
    pub per_round: Samples,
    /// Per round once prepared: the harness time less the first three parts, over the rounds.
    pub per_round_after_prepare: Samples,
    pub prepare: Samples,
    pub total: Samples,
    pub commands: Samples,
    pub rounds: u32,
    pub outcome: Outcome,
    /// Checkpoints that committed a change (the baseline not counted), in the last run.
    pub commits: usize,
    /// One sample set per entry of [`PARTS`].
    pub parts: Vec<Samples>,
}

/// Runs `case` `runs` times with run folders under `home/runs`.
pub fn measure(case: &Case, runs: usize, home: &Path, rt: &Runtime) -> Result<HarnessResult> {
    let mut result = HarnessResult {
        harness: Samples::default(),
        per_round: Samples::default(),
        per_round_after_prepare: Samples::default(),
        prepare: Samples::default(),
        total: Samples::default(),
        commands: Samples::default(),
        rounds: 0,
        outcome: Outcome::InfraError,
        commits: 0,
        parts: vec![Samples::default(); PARTS.len()],
    };
    for _ in 0..runs.max(1) {
        let (report, started_ms) = run_once(case, home, rt)?;
        if report.outcome != Outcome::Success {
            bail!(
                "the run on {} ended with {} ({}); the benchmark needs a verified patch; see {}",
                case.repo.display(),
                report.outcome.as_str(),
                report.reason,
                report.journal
            );
        }
        let t = &report.timings;
        let rounds = f64::from(report.rounds.max(1));
        let harness = t.total_ms as f64 - t.commands_ms as f64;
        let (parts, commits) = split(&report, started_ms, harness)?;
        result.harness.push(harness);
        result.per_round.push(harness / rounds);
        let prepared: f64 = parts.iter().take(PREPARE_PARTS).sum();
        result
            .per_round_after_prepare
            .push((harness - prepared) / rounds);
        result.prepare.push(t.prepare_ms as f64);
        result.total.push(t.total_ms as f64);
        result.commands.push(t.commands_ms as f64);
        for (samples, value) in result.parts.iter_mut().zip(parts) {
            samples.push(value);
        }
        result.rounds = report.rounds;
        result.outcome = report.outcome;
        result.commits = commits;
    }
    Ok(result)
}

fn run_once(case: &Case, home: &Path, rt: &Runtime) -> Result<(FinalReport, u64)> {
    let run_id = new_run_id();
    let run_dir = home.join("runs").join(&run_id);
    std::fs::create_dir_all(&run_dir)?;
    let model = ScriptModel::load(&case.script)?;
    let config = Config {
        sandbox: SandboxKind::None,
        ..Config::default()
    };
    // The run's input channel starts its router on the runtime.
    let _runtime = rt.enter();
    let spec = RunSpec {
        repo_label: case.repo.display().to_string(),
        repo: case.repo.clone(),
        ticket: case.ticket.clone(),
        model: Box::new(model),
        reviewer: None,
        config,
        test_command: None,
        sandbox: Box::new(NoSandbox::new(run_dir.join("sandbox"))),
        run_id,
        run_dir,
        journal_path: None,
        inbox: plumb_agent::input::channel().1,
        observer: None,
        expect_base_tree: None,
        fail_to_pass: Vec::new(),
        setup_cache: None,
        settings: plumb_protocol::Provenance::default(),
    };
    let started_ms = epoch_ms();
    let report = rt
        .block_on(plumb_agent::run(spec))
        .with_context(|| format!("the run on {} could not start", case.repo.display()))?;
    Ok((report, started_ms))
}

/// The harness time of one run split into [`PARTS`], from the report and the journal's
/// timestamps (milliseconds, stamped as the writer receives each event); and the count of
/// checkpoints that committed a change.
fn split(report: &FinalReport, started_ms: u64, harness: f64) -> Result<(Vec<f64>, usize)> {
    let lines = read_journal(Path::new(&report.journal)).map_err(anyhow::Error::msg)?;
    let mut run_started = None;
    let mut baseline = None;
    let mut first_request = None;
    let mut finished = None;
    let (mut after_edits, mut round_ends, mut commits) = (0u64, 0u64, 0usize);
    let mut last_tool: Option<u64> = None;
    let mut last_step = 0u64;
    for line in &lines {
        let ts = line.ts;
        match &line.event {
            Event::RunStarted { .. } => run_started = Some(ts),
            Event::BaselineTests { duration_ms, .. } => baseline = Some((ts, *duration_ms)),
            Event::ModelRequest { .. } => {
                if first_request.is_none() {
                    first_request = Some(ts);
                } else {
                    round_ends += ts.saturating_sub(last_step);
                }
            }
            Event::ToolFinished { .. } => {
                last_tool = Some(ts);
                last_step = ts;
            }
            Event::Checkpoint { .. } => {
                if let Some(tool) = last_tool.take() {
                    after_edits += ts.saturating_sub(tool);
                    commits += 1;
                    last_step = ts;
                }
            }
            Event::RunFinished { .. } => finished = Some(ts),
            _ => {}
        }
    }
    let started = run_started.context("the journal has no run_started")?;
    let (baseline_ts, baseline_ms) = baseline.context("the journal has no baseline_tests")?;
    let first_request = first_request.context("the journal has no model_request")?;
    let finished = finished.context("the journal has no run_finished")?;
    let t = &report.timings;
    let gap = |from: u64, to: u64| to.saturating_sub(from) as f64;
    let mut parts = vec![
        gap(started_ms, started),
        gap(started, baseline_ts) - baseline_ms as f64,
        gap(baseline_ts, first_request),
        t.model_ms as f64,
        t.tools_ms as f64 - t.commands_ms.saturating_sub(baseline_ms) as f64,
        after_edits as f64,
        round_ends as f64,
        gap(last_step, finished),
    ];
    let known: f64 = parts.iter().sum();
    parts.push(harness - known);
    Ok((parts, commits))
}

fn epoch_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
