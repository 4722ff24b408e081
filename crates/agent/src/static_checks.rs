//! The ladder's steps that read the change without running anything: syntax and the tamper scan.

use plumb_context::syntax::{Language, syntax_problems};
use plumb_protocol::{CheckReport, CheckStatus, CheckStep};
use plumb_verify::tamper::{self, ChangeStatus, FileChange, TamperPolicy};
use plumb_workspace::{ChangeKind, ChangedFile};

use crate::done::report;
use crate::run::{Ending, Run};

impl Run {
    /// Every changed file with its baseline and current text, for the scans.
    pub(crate) fn file_changes(&self, changed: &[ChangedFile]) -> Result<Vec<FileChange>, Ending> {
        changed
            .iter()
            .map(|file| {
                let (status, before_path) = match &file.status {
                    ChangeKind::Added => (ChangeStatus::Added, None),
                    ChangeKind::Modified => (ChangeStatus::Modified, Some(file.path.clone())),
                    ChangeKind::Deleted => (ChangeStatus::Deleted, Some(file.path.clone())),
                    ChangeKind::Renamed { from } => (
                        ChangeStatus::Renamed { from: from.clone() },
                        Some(from.clone()),
                    ),
                };
                let before = match before_path {
                    Some(path) => self.workspace.baseline_text(&path).map_err(Ending::infra)?,
                    None => None,
                };
                let after = match file.status {
                    ChangeKind::Deleted => None,
                    _ => self
                        .workspace
                        .tree()
                        .read_text(&file.path, plumb_tools::MAX_READ_BYTES)
                        .ok(),
                };
                Ok(FileChange {
                    status,
                    path: file.path.clone(),
                    before,
                    after,
                })
            })
            .collect()
    }

    pub(crate) fn check_syntax(&self, changed: &[ChangedFile]) -> CheckReport {
        let mut problems = Vec::new();
        let mut parsed = 0usize;
        for file in changed {
            if matches!(file.status, ChangeKind::Deleted) {
                continue;
            }
            let Some(language) = Language::from_path(std::path::Path::new(&file.path)) else {
                continue;
            };
            // A link or special file is the tamper scan's to judge; only regular files parse here.
            let Ok(now) = self
                .workspace
                .tree()
                .read_text(&file.path, plumb_tools::MAX_READ_BYTES)
            else {
                continue;
            };
            parsed += 1;
            let found = syntax_problems(language, &now);
            let Some(first) = found.first() else {
                continue;
            };
            let before = self
                .workspace
                .baseline_text(&file.path)
                .ok()
                .flatten()
                .map(|text| syntax_problems(language, &text).len())
                .unwrap_or(0);
            if found.len() > before {
                problems.push(format!(
                    "{} line {}: {}",
                    file.path, first.line, first.message
                ));
            }
        }
        if problems.is_empty() {
            report(
                CheckStep::Syntax,
                CheckStatus::Passed,
                format!("{parsed} changed source files parse"),
            )
        } else {
            report(
                CheckStep::Syntax,
                CheckStatus::Failed,
                format!("new syntax errors: {}", problems.join("; ")),
            )
        }
    }

    /// Flags for a person; a flag of a kind `tamper_block` names fails the step.
    pub(crate) fn check_tamper(&mut self, changes: &[FileChange]) -> CheckReport {
        let flags = tamper::scan(changes);
        let policy = TamperPolicy {
            block: self.tamper_block.clone(),
        };
        let blocking: Vec<String> = policy
            .blocking(&flags)
            .iter()
            .map(|flag| flag.detail.clone())
            .collect();
        self.flags = flags.iter().map(|flag| flag.detail.clone()).collect();
        if !blocking.is_empty() {
            report(
                CheckStep::Tamper,
                CheckStatus::Failed,
                format!(
                    "{} (blocked by tamper_block in plumb.toml): leave existing tests and test settings as they were",
                    blocking.join("; ")
                ),
            )
        } else if flags.is_empty() {
            report(
                CheckStep::Tamper,
                CheckStatus::Passed,
                "no existing test, test setting or skip marker changed",
            )
        } else {
            report(
                CheckStep::Tamper,
                CheckStatus::Flagged,
                format!("a person must look: {}", self.flags.join("; ")),
            )
        }
    }
}
