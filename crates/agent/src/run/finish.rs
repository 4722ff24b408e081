//! The end of a run: the verified patch on success; otherwise the attempt kept as a ref (and as
//! `attempt.diff`) and the workspace rolled back to the baseline. The report, the patch and the
//! journal are written last.
//!
//! The finish has time of its own: until the run's deadline, and at least [`GRACE`] from when it
//! starts (a run ended by its wall clock still stages its last state, keeps it and rolls back).
//! The last state is staged within the first half of that time; when it cannot be (past the
//! workspace's limits, out of time), the last checkpoint is the attempt and the report says so.
//! The rollback itself never depends on what the copy holds (`plumb_workspace`'s `rollback.rs`).

use std::time::{Duration, Instant};

use plumb_protocol::{Event, FinalReport, Outcome};
use plumb_workspace::{CHANGE_FILE, ChangeRecord, CommitId, Patch};

use super::Run;
use crate::ending::{Ending, elapsed_ms};

/// The kind of a flag naming a test that was flaky at the baseline.
const FLAKY_KIND: &str = "flaky_baseline";

/// The least time the finish has after the run's wall clock ran out: a run with a budget of N s
/// ends within N + 30 s.
const GRACE: Duration = Duration::from_secs(30);

/// What the rollback kept, and what the report should add about it.
struct Kept {
    attempt_ref: Option<String>,
    /// Sentences for the report's reason (the last state not staged, the diff not written).
    notes: Vec<String>,
}

impl Run {
    pub(super) async fn finish(mut self, mut ending: Ending) -> FinalReport {
        let finish_by = self.workspace.deadline().map(|deadline| {
            let now = Instant::now();
            deadline.max(now + GRACE)
        });
        // The last state is staged in the first half of the finish's time; the rest keeps it.
        self.workspace
            .set_deadline(finish_by.map(|by| by.checked_sub(GRACE / 2).unwrap_or(by)));
        // Who cancelled the run goes into the report's reason.
        if ending.outcome == Outcome::Cancelled
            && let Some(reason) = self.asked.inbox.cancel_reason()
        {
            ending.reason = format!("{} ({})", ending.reason, reason.words());
        }
        let mut patch = (String::new(), String::new());
        let mut attempt_ref = None;
        let mut change = None;
        if ending.outcome == Outcome::Success {
            match self.workspace.patch() {
                Ok(made) => match self.change_record(made) {
                    Ok((p, record)) => {
                        patch = (p.text, p.sha256);
                        change = Some(record);
                    }
                    Err(err) => {
                        ending = Ending::new(
                            Outcome::InfraError,
                            format!("the patch could not be made: {err}"),
                        );
                    }
                },
                Err(err) if err.is_budget() => {
                    ending = Ending::new(
                        Outcome::BudgetExceeded,
                        format!("the verified change could not be made into a patch: {err}"),
                    );
                }
                Err(err) => {
                    ending = Ending::new(
                        Outcome::InfraError,
                        format!("the patch could not be made: {err}"),
                    );
                }
            }
        }
        if ending.outcome != Outcome::Success {
            match self.roll_back(finish_by).await {
                Ok(kept) => {
                    attempt_ref = kept.attempt_ref;
                    for note in kept.notes {
                        ending.reason = format!("{}; {note}", ending.reason);
                    }
                }
                Err(text) => {
                    ending = Ending::new(
                        Outcome::InfraError,
                        format!("{} (and the rollback failed: {text})", ending.reason),
                    );
                }
            }
        }
        self.timings.total_ms = elapsed_ms(self.started);
        self.timings.commands_ms += self.tester.commands_ms();
        let flaky = self.baseline.flaky.iter().map(|id| {
            (
                FLAKY_KIND.to_owned(),
                format!("{id}: flaky at baseline (failed, then passed); not counted"),
            )
        });
        let (flag_kinds, flags) = self.ladder.flags.iter().cloned().chain(flaky).unzip();
        let report = FinalReport {
            run_id: self.asked.run_id.clone(),
            repo: self.asked.repo_label.clone(),
            title: self
                .asked
                .ticket
                .lines()
                .map(str::trim)
                .find(|line| !line.is_empty())
                .unwrap_or_default()
                .to_string(),
            outcome: ending.outcome,
            rounds: self.round,
            patch: patch.0,
            patch_sha256: patch.1,
            journal: self.emitter.journal_path().display().to_string(),
            checks: self.ladder.checks.clone(),
            flags,
            flag_kinds,
            // A review belongs to the patch it read, and only a success keeps its patch.
            review: (ending.outcome == Outcome::Success)
                .then(|| self.reviewer.last().cloned())
                .flatten(),
            reviews: self.reviewer.steps().to_vec(),
            usage: self.usage,
            timings: self.timings,
            sandbox: self.tester.sandbox().kind(),
            reason: ending.reason,
            workspace: self.asked.run_dir.display().to_string(),
            attempt_ref,
            settings: self.asked.settings.settings.clone(),
            ignored_settings: self.asked.settings.ignored.clone(),
            helpers: self.helper_states.clone(),
        };
        self.write_artifacts(&report, change.as_ref());
        self.emit(Event::RunFinished {
            outcome: report.outcome,
            report: Box::new(report.clone()),
        })
        .await;
        // The journal is the record of the run; losing its tail is worth a line on stderr, not a
        // different outcome.
        if let Err(err) = self.emitter.close().await {
            // The error may quote a path; shown as text, never interpreted by the terminal.
            let err = err.to_string();
            eprintln!(
                "plumb: the journal could not be completed: {}",
                plumb_protocol::display::for_screen(&err)
            );
        }
        report
    }

    /// Keeps the last state as `refs/plumb/attempts/<run>` (and `attempt.diff`) and resets to
    /// the baseline. The last state is the copy as it is now, or the last checkpoint when it
    /// cannot be staged (the notes say why).
    async fn roll_back(&mut self, finish_by: Option<Instant>) -> Result<Kept, String> {
        let mut notes = Vec::new();
        let attempt = match self.last_state() {
            Ok(commit) => commit,
            // The reason already says why: a workspace limit ended the run.
            Err(_) if self.unstageable.is_some() => {
                notes.push("the attempt kept is the last checkpoint before that".to_string());
                self.last_checkpoint.clone()
            }
            Err(why) => {
                notes.push(format!(
                    "the last state could not be staged ({why}), so the attempt kept is the last checkpoint"
                ));
                self.last_checkpoint.clone()
            }
        };
        self.workspace.set_deadline(finish_by);
        let kept = if &attempt != self.workspace.baseline() {
            Some(
                self.workspace
                    .keep_ref(&format!("attempts/{}", self.asked.run_id), &attempt)
                    .map_err(|err| err.to_string())?,
            )
        } else {
            None
        };
        // Kept beside the report too, so `plumb show` has it after the workspace is pruned.
        if let Some(kept) = &kept {
            let written = self
                .workspace
                .kept_diff(kept)
                .map_err(|err| err.to_string())
                .and_then(|diff| {
                    std::fs::write(self.asked.run_dir.join("attempt.diff"), diff)
                        .map_err(|err| err.to_string())
                });
            if let Err(why) = written {
                notes.push(format!(
                    "the attempt is kept as {kept}, but its diff could not be written ({why})"
                ));
            }
        }
        let baseline = self.workspace.baseline().clone();
        self.workspace
            .rollback(&baseline)
            .map_err(|err| err.to_string())?;
        self.emit(Event::RolledBack {
            to_commit: baseline.to_string(),
            attempt_ref: kept.clone(),
        })
        .await;
        Ok(Kept {
            attempt_ref: kept,
            notes,
        })
    }

    /// The copy's state now as a checkpoint, unless a workspace limit already refused it.
    fn last_state(&mut self) -> Result<CommitId, String> {
        if let Some(why) = &self.unstageable {
            return Err(why.clone());
        }
        self.workspace
            .checkpoint("attempt end")
            .map_err(|err| err.to_string())
    }

    /// The verified patch, and what `plumb apply` needs to bring it home later: each touched
    /// file's bytes at the start and after the change.
    fn change_record(&self, patch: Patch) -> Result<(Patch, ChangeRecord), String> {
        let files = self
            .workspace
            .touched(&patch.files)
            .map_err(|err| err.to_string())?;
        let record = ChangeRecord {
            repo: self.asked.repo.clone(),
            patch_sha256: patch.sha256.clone(),
            files,
        };
        Ok((patch, record))
    }

    /// `report.json` and, on success, `patch.diff` and `change.json` beside the journal, for
    /// later commands (`plumb apply`, `plumb runs`, `plumb show`; a failed attempt's diff is
    /// `attempt.diff`, written at the rollback).
    fn write_artifacts(&self, report: &FinalReport, change: Option<&ChangeRecord>) {
        let dir = &self.asked.run_dir;
        if let Ok(json) = serde_json::to_string_pretty(report) {
            let _ = std::fs::write(dir.join("report.json"), json);
        }
        if !report.patch.is_empty() {
            let _ = std::fs::write(dir.join("patch.diff"), &report.patch);
        }
        if let Some(change) = change {
            let _ = plumb_workspace::write_record(&dir.join(CHANGE_FILE), change);
        }
    }
}
