//! The runs `plumb mcp` answers about: the live ones it started (their latest step) and the
//! finished ones in the runs folder (their report, patch or failed attempt), read as `plumb
//! runs` and `plumb show` read them; and a run's events in the words of a progress note.

use std::path::Path;

use plumb_agent::input::Submitter;
use plumb_mcp::ToolFailure;
use plumb_mcp::types::{DiffKind, RunDiff, RunState, RunStatus, apply_command};
use plumb_protocol::{Event, FinalReport, Outcome};

use crate::home::{ATTEMPT_FILE, PATCH_FILE};
use crate::screen::one_line;

/// A run this server started that has not ended.
pub(crate) struct Live {
    pub submitter: Submitter,
    pub repo: String,
    pub title: String,
    pub round: u32,
    /// The last step, in a line.
    pub message: String,
}

impl Live {
    pub(crate) fn status(&self, run_id: &str) -> RunStatus {
        RunStatus {
            run_id: run_id.to_owned(),
            state: RunState::Running,
            repo: self.repo.clone(),
            title: self.title.clone(),
            rounds: self.round,
            message: self.message.clone(),
            outcome: None,
            patch_sha256: None,
        }
    }
}

/// A run id as plumb makes them, or a message saying what one looks like.
pub(crate) fn check_id(run: &str) -> Result<(), ToolFailure> {
    if crate::prune::run_time(run).is_some() {
        Ok(())
    } else {
        Err(ToolFailure::BadInput(format!(
            "{run:?} is not a run id (they look like r19a2b3c4d5e-0a1b2c); runs_list lists them"
        )))
    }
}

/// The report of a finished run of `runs_dir`.
pub(crate) fn report(runs_dir: &Path, run: &str) -> Result<FinalReport, ToolFailure> {
    let path = runs_dir.join(run).join("report.json");
    let text = std::fs::read_to_string(&path).map_err(|_| {
        ToolFailure::BadInput(format!(
            "there is no finished run {run} in {}; runs_list lists them",
            runs_dir.display()
        ))
    })?;
    serde_json::from_str(&text).map_err(|err| {
        ToolFailure::Infra(format!(
            "the report {} cannot be read: {err}",
            path.display()
        ))
    })
}

pub(crate) fn finished_status(runs_dir: &Path, run: &str) -> Result<RunStatus, ToolFailure> {
    report(runs_dir, run).map(|report| RunStatus::finished(&report))
}

/// The verified patch of a finished run, or its failed attempt's diff.
pub(crate) fn finished_diff(runs_dir: &Path, run: &str) -> Result<RunDiff, ToolFailure> {
    let report = report(runs_dir, run)?;
    let verified = report.outcome == Outcome::Success && !report.patch_sha256.is_empty();
    let (kind, file) = if verified {
        (DiffKind::VerifiedPatch, PATCH_FILE)
    } else {
        (DiffKind::FailedAttempt, ATTEMPT_FILE)
    };
    let patch = match std::fs::read_to_string(runs_dir.join(run).join(file)) {
        Ok(text) => text,
        // The report holds the verified patch too; a failed run may have kept no attempt.
        Err(_) if verified => report.patch.clone(),
        Err(_) => String::new(),
    };
    let kind = if patch.is_empty() {
        DiffKind::None
    } else {
        kind
    };
    Ok(RunDiff {
        run_id: run.to_owned(),
        outcome: report.outcome.as_str().to_owned(),
        kind,
        patch,
        patch_sha256: if verified {
            report.patch_sha256.clone()
        } else {
            String::new()
        },
        apply_command: verified.then(|| apply_command(run, &report.patch_sha256)),
    })
}

/// Every finished run of `runs_dir` (folders with a readable report), in no particular order.
pub(crate) fn finished(runs_dir: &Path) -> Vec<RunStatus> {
    let Ok(entries) = std::fs::read_dir(runs_dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| check_id(name).is_ok())
        .filter_map(|name| finished_status(runs_dir, &name).ok())
        .collect()
}

/// A run's event as a progress line: its round when the event has one, and the line the
/// terminal's progress shows for it (the same words as `plumb fix`).
pub(crate) fn progress_line(event: &Event) -> Option<(Option<u32>, String)> {
    let round = match event {
        Event::ModelRequest { round, .. }
        | Event::ModelReply { round, .. }
        | Event::CandidateTried { round, .. }
        | Event::ToolStarted { round, .. }
        | Event::ToolFinished { round, .. }
        | Event::Note { round, .. } => Some(*round),
        _ => None,
    };
    let line = match event {
        // The model's own turns are not steps; the tool they call is.
        Event::ModelRequest { .. } | Event::ModelReply { .. } | Event::ToolStarted { .. } => {
            return None;
        }
        Event::ToolFinished {
            name, ok, summary, ..
        } => {
            let mark = if *ok { "→" } else { "✗" };
            format!("{} {mark} {}", one_line(name), one_line(summary))
        }
        other => crate::progress::render(other)?,
    };
    // The terminal's lines without their "plumb: " and each continuation line joined on.
    let line = line.strip_prefix("plumb: ").unwrap_or(&line);
    let joined: Vec<&str> = line
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    Some((round, one_line(&joined.join("; ")).into_owned()))
}
