//! The lint delta: diagnostics on changed files that are new compared with the baseline (`ruff
//! --select F` for Python, e.g. F821 undefined names; `cargo check`; `go vet`), where the tool is
//! present. Both sides run in the sandbox: the baseline in a materialized copy, the change in the
//! workspace; diagnostics are compared without line numbers, since lines shift.

use std::path::{Path, PathBuf};

use plumb_protocol::{CheckReport, CheckStatus, CheckStep};
use plumb_verify::lint::{self, Diagnostic, Linter};
use plumb_verify::tamper::{ChangeStatus, FileChange};

use super::cx::{Cx, Ladder, report};
use crate::ending::Ending;

impl Ladder {
    pub(crate) async fn check_lint(
        &mut self,
        cx: &mut Cx<'_>,
        changes: &[FileChange],
    ) -> Result<CheckReport, Ending> {
        let step = CheckStep::Lint;
        let changed: Vec<String> = changes
            .iter()
            .filter(|c| !matches!(c.status, ChangeStatus::Deleted))
            .map(|c| c.path.clone())
            .collect();
        let root = cx.workspace.root().to_path_buf();
        let linters = lint::linters_for(&changed, &root);
        if linters.is_empty() {
            return Ok(report(
                step,
                CheckStatus::NotRun,
                "no linter for these files on this machine (ruff for Python, cargo check for Rust, go vet for Go)",
            ));
        }
        let base = self.baseline_view(cx)?;
        let mut new = Vec::new();
        let mut ran = Vec::new();
        for linter in linters {
            let files: Vec<String> = changed
                .iter()
                .filter(|path| linter_takes(linter, path))
                .cloned()
                .collect();
            let before_files: Vec<String> = files
                .iter()
                .filter(|path| base.join(path).is_file())
                .cloned()
                .collect();
            // Ruff lints the files it is given: with none at baseline there is nothing to compare.
            // The others lint the whole package, so the baseline always runs.
            let before = if matches!(linter, Linter::Ruff(_)) && before_files.is_empty() {
                Ok(Vec::new())
            } else {
                lint(cx, linter, &base, &before_files).await?
            };
            let after = lint(cx, linter, &root, &files).await?;
            match (before, after) {
                (Ok(before), Ok(after)) => {
                    ran.push(linter.as_str());
                    new.extend(lint::new_diagnostics(&before, &after));
                }
                (Err(why), _) | (_, Err(why)) => {
                    return Ok(report(step, CheckStatus::NotRun, why));
                }
            }
        }
        if new.is_empty() {
            Ok(report(
                step,
                CheckStatus::Passed,
                format!("no new diagnostics ({})", ran.join(", ")),
            ))
        } else {
            let listed: Vec<String> = new
                .iter()
                .map(|d| format!("{}:{}: {} {}", d.path, d.line, d.code, d.message))
                .collect();
            Ok(report(
                step,
                CheckStatus::Failed,
                format!("new diagnostics in changed files: {}", listed.join("; ")),
            ))
        }
    }

    /// The baseline tree, written once per run into the run folder and kept: the baseline never
    /// changes after the setup phase, and writing a large tree at every `done` would cost more
    /// than the lint itself.
    fn baseline_view(&mut self, cx: &Cx<'_>) -> Result<PathBuf, Ending> {
        let dir = cx.tester.check_dir("baseline");
        if !self.baseline_view_ready {
            let _ = plumb_workspace::discard_tree(&dir, cx.workspace.deadline());
            cx.workspace
                .materialize(cx.workspace.baseline(), &dir)
                .map_err(Ending::workspace)?;
            self.baseline_view_ready = true;
        }
        Ok(dir)
    }
}

/// One linter run in the sandbox. The outer error ends the run; the inner one says why the
/// linter could not give an answer (the step is then not run, saying so).
async fn lint(
    cx: &mut Cx<'_>,
    linter: Linter,
    workdir: &Path,
    files: &[String],
) -> Result<Result<Vec<Diagnostic>, String>, Ending> {
    let argv = lint::lint_command(linter, files);
    let output = match cx.tester.run_command(argv, workdir).await {
        Ok(output) => output,
        Err(err) if err.is_infra() => return Err(Ending::infra(err)),
        Err(err) => return Ok(Err(format!("{} could not run: {err}", linter.as_str()))),
    };
    Ok(
        lint::parse_diagnostics(linter, workdir, &output.stdout, &output.stderr)
            .map_err(|why| format!("{} gave no answer plumb could read: {why}", linter.as_str())),
    )
}

fn linter_takes(linter: Linter, path: &str) -> bool {
    match linter {
        Linter::Ruff(_) => path.ends_with(".py") || path.ends_with(".pyi"),
        Linter::CargoCheck => path.ends_with(".rs"),
        Linter::GoVet => path.ends_with(".go"),
    }
}
