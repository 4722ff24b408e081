//! The end of a run: the verified patch on success; otherwise the attempt kept as a ref and the
//! workspace rolled back to the baseline. The report, the patch and the journal are written last.

use plumb_protocol::{Event, FinalReport, Outcome};
use plumb_workspace::{CHANGE_FILE, ChangeRecord, Patch};

use super::Run;
use crate::ending::{Ending, elapsed_ms};

/// The kind of a flag naming a test that was flaky at the baseline.
const FLAKY_KIND: &str = "flaky_baseline";

impl Run {
    pub(super) async fn finish(mut self, mut ending: Ending) -> FinalReport {
        let mut patch = (String::new(), String::new());
        let mut attempt_ref = None;
        let mut change = None;
        if ending.outcome == Outcome::Success {
            match self.change_record() {
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
            }
        }
        if ending.outcome != Outcome::Success {
            match self.roll_back().await {
                Ok(kept) => attempt_ref = kept,
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

    /// Keeps the last state as `refs/plumb/attempts/<run>` and resets to the baseline.
    async fn roll_back(&mut self) -> Result<Option<String>, String> {
        let attempt = self
            .workspace
            .checkpoint("attempt end")
            .map_err(|err| err.to_string())?;
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
        if let Some(kept) = &kept
            && let Ok(diff) = self.workspace.kept_diff(kept)
        {
            let _ = std::fs::write(self.asked.run_dir.join("attempt.diff"), diff);
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
        Ok(kept)
    }

    /// The verified patch, and what `plumb apply` needs to bring it home later: each touched
    /// file's bytes at the start and after the change.
    fn change_record(&self) -> Result<(Patch, ChangeRecord), String> {
        let patch = self.workspace.patch().map_err(|err| err.to_string())?;
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
