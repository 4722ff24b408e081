//! Scoring as SWE-bench does: the agent's patch and then the task's test patch on a fresh copy
//! of the base tree, the test command narrowed as the official eval script narrows it, run in
//! the sandbox with no network, its log read by the official parsers, and the verdict: resolved
//! only when every FAIL_TO_PASS and PASS_TO_PASS test passed.
//!
//! The steps of [`score`], each leaving its trace under `<attempt>/score/`:
//! 1. `tree/`: a fresh copy of the base tree ([`tree`]; never through a link);
//! 2. `patch.diff`: the agent's patch, applied with `git apply` ([`apply`]); an empty patch is
//!    not applied but still scored (SWE-bench's `empty_patch_ids`; the tests decide);
//! 3. `test_patch.diff`: the test patch's files put back to their base state, then the test
//!    patch applied on top ([`tree::reset_test_files`], as the eval script's `git checkout`);
//! 4. `test.log`: the test run ([`select`] builds the command), stdout then stderr;
//! 5. the verdict from the log ([`parse`], [`verdict`]).
//!
//! A patch that does not apply, a test command that cannot start (exit 126 or 127, or a program
//! the sandbox cannot find), a timeout: each is a [`Score`] with its reason. Only a failure of
//! the machine (the sandbox, git, the disk) or a cancel is a [`ScoreError`], which the runner
//! counts as an infrastructure error and never as unresolved.

mod apply;
mod files;
pub mod parse;
mod select;
mod tree;
mod verdict;

use std::path::{Path, PathBuf};

use plumb_sandbox::{CommandOutput, CommandSpec, Limits, Network, Sandbox};
use tokio_util::sync::CancellationToken;

use crate::result::Score;
use crate::task::Task;

use apply::{Applied, GitPlaces};
use select::Selection;

/// What [`score`] needs for one attempt.
pub struct ScoreInput<'a> {
    pub task: &'a Task,
    /// The tree at base_commit (read-only to the scorer; it is copied).
    pub base_tree: &'a Path,
    /// The agent's patch (may be empty).
    pub patch: &'a str,
    /// The task's test command, or the one detected on the base tree (see plumb_verify).
    pub test_command: &'a plumb_verify::TestCommand,
    /// `OUT/<task>/attempt-<n>/`: `score/` (the tree, the patches, `test.log`) goes under it.
    pub attempt_dir: &'a Path,
    pub sandbox: &'a dyn Sandbox,
    pub limits: Limits,
    pub cancel: &'a CancellationToken,
    /// What the task's setup command made (`plumb_workspace::save_changes`), put into the
    /// scoring tree before the patches, with paths moved to it: the tests need the installed
    /// environment, and an editable install must point at this tree's code.
    pub setup_snapshot: Option<&'a Path>,
}

/// Scoring could not reach a verdict, through no fault of the patch or the task.
#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    /// The sandbox, git or the disk failed, or the run was cancelled; a sentence.
    #[error("{0}")]
    Infra(String),
}

/// The scoring folder under the attempt folder.
pub const SCORE_DIR: &str = "score";
/// The log, relative to the attempt folder.
pub const TEST_LOG: &str = "score/test.log";

/// Scores one attempt's patch; see the module header for the steps.
pub async fn score(input: ScoreInput<'_>) -> Result<Score, ScoreError> {
    let places = Places::new(input.attempt_dir);
    fresh_folder(&places.root).await?;
    let (base, tree) = (input.base_tree.to_path_buf(), places.tree.clone());
    blocking(move || tree::copy(&base, &tree)).await?;
    if let Some(snapshot) = input.setup_snapshot {
        let (snapshot, tree) = (snapshot.to_path_buf(), places.tree.clone());
        blocking(move || {
            let mode = plumb_workspace::RestoreMode::Overwrite;
            std::fs::canonicalize(&tree)
                .and_then(|tree| plumb_workspace::restore_changes(&snapshot, &tree, mode))
                .map(drop)
                .map_err(|err| {
                    format!("could not put the setup's output into the scoring tree: {err}")
                })
        })
        .await?;
    }
    let tree = std::fs::canonicalize(&places.tree).map_err(|err| {
        infra(format!(
            "could not resolve {}: {err}",
            places.tree.display()
        ))
    })?;
    stop_if_cancelled(input.cancel)?;

    let empty_patch = input.patch.trim().is_empty();
    let not_applied = |reason: String| Score {
        resolved: false,
        empty_patch,
        applied: false,
        reason,
        tests: Vec::new(),
        log: TEST_LOG.to_owned(),
    };
    if !empty_patch {
        let patch_file = places.root.join("patch.diff");
        if let Applied::No(why) = apply_file(&places, &tree, &patch_file, input.patch).await? {
            let reason = format!("the patch does not apply: {why}");
            write_log(&places.log, &format!("{reason}\n")).await?;
            return Ok(not_applied(reason));
        }
    }
    if let Some(test_patch) = input
        .task
        .test_patch
        .as_deref()
        .filter(|p| !p.trim().is_empty())
    {
        let (base, at, patch) = (
            input.base_tree.to_path_buf(),
            tree.clone(),
            test_patch.to_owned(),
        );
        blocking(move || {
            // A Rust source file holds its own unit tests next to the code: putting it back
            // would undo the fix, so it is left as the patch made it (see `already_applied`).
            let reset: Vec<_> = files::files(&patch)
                .into_iter()
                .filter(|file| !holds_code_and_tests(file))
                .collect();
            tree::reset_test_files(&reset, &base, &at)
        })
        .await?;
        let patch_file = places.root.join("test_patch.diff");
        let applied = match apply_file(&places, &tree, &patch_file, test_patch).await? {
            Applied::No(why) => {
                let git = GitPlaces {
                    home: &places.git_home,
                    no_git_dir: &places.no_git_dir,
                };
                if apply::already_applied(&tree, &patch_file, &git)
                    .await
                    .map_err(infra)?
                {
                    Applied::Yes
                } else {
                    Applied::No(why)
                }
            }
            yes => yes,
        };
        if let Applied::No(why) = applied {
            let reason = if empty_patch {
                format!("the test patch does not apply to the base tree: {why}")
            } else {
                format!("the test patch does not apply on top of the patch: {why}")
            };
            write_log(&places.log, &format!("{reason}\n")).await?;
            return Ok(not_applied(reason));
        }
    }
    stop_if_cancelled(input.cancel)?;

    let selection = select::select(input.test_command, input.task, &tree);
    let spec = CommandSpec {
        argv: selection.argv.clone(),
        workdir: tree,
        env: selection.env.clone(),
        limits: input.limits,
        network: Network::Off,
    };
    let run = input.sandbox.run(&spec, input.cancel).await;
    let output = match run {
        Ok(output) => output,
        Err(err) if err.is_infra() => return Err(infra(err.to_string())),
        Err(err) => {
            let reason = format!("the test command could not start in the sandbox: {err}");
            write_log(&places.log, &format!("$ {}\n{reason}\n", shown(&spec.argv))).await?;
            return Ok(not_started(input.task, empty_patch, reason));
        }
    };
    if output.cancelled {
        return Err(infra("the scoring run was cancelled".to_owned()));
    }
    write_log(&places.log, &log_text(&spec.argv, &output)).await?;
    Ok(judged(input.task, empty_patch, &selection, &output))
}

/// The verdict on a run that happened.
fn judged(task: &Task, empty_patch: bool, selection: &Selection, output: &CommandOutput) -> Score {
    let text = format!("{}\n{}", output.stdout, output.stderr);
    let found = selection
        .format
        .map(|format| parse::parse(format, &text))
        .unwrap_or_default();
    let judged = verdict::judge(task, &found);
    let mut notes: Vec<String> = Vec::new();
    if let Some(code @ (126 | 127)) = output.exit_code {
        notes.push(format!(
            "the test command could not start in the sandbox (exit {code}: {})",
            if code == 127 {
                "command not found"
            } else {
                "not executable"
            }
        ));
    }
    if output.timed_out {
        notes.push(format!(
            "the test run was stopped at its time limit ({} s)",
            output.duration.as_secs()
        ));
    }
    if selection.format.is_none() {
        notes.push(format!(
            "SWE-bench has no log parser for `{}`, so no test can be read from its log",
            shown(&selection.argv)
        ));
    }
    if empty_patch && !judged.resolved {
        notes.push("the patch is empty".to_owned());
    }
    notes.push(judged.reason);
    Score {
        resolved: judged.resolved,
        empty_patch,
        applied: true,
        reason: notes.join("; "),
        tests: judged.tests,
        log: TEST_LOG.to_owned(),
    }
}

/// The score of a run that never started: every named test missing.
fn not_started(task: &Task, empty_patch: bool, reason: String) -> Score {
    Score {
        resolved: false,
        empty_patch,
        applied: true,
        reason,
        tests: verdict::judge(task, &parse::StatusMap::new()).tests,
        log: TEST_LOG.to_owned(),
    }
}

/// The paths of one attempt's scoring folder.
struct Places {
    root: PathBuf,
    tree: PathBuf,
    log: PathBuf,
    git_home: PathBuf,
    no_git_dir: PathBuf,
}

impl Places {
    fn new(attempt_dir: &Path) -> Places {
        let root = attempt_dir.join(SCORE_DIR);
        Places {
            tree: root.join("tree"),
            log: attempt_dir.join(TEST_LOG),
            git_home: root.join("git-home"),
            // Named and never created: git finds no repository (see `apply.rs`).
            no_git_dir: root.join("no-git-dir"),
            root,
        }
    }
}

/// Removes what an earlier try of this attempt left in the scoring folder (never following a
/// link), and makes it anew.
async fn fresh_folder(root: &Path) -> Result<(), ScoreError> {
    let at = root.to_path_buf();
    blocking(move || {
        match at.symlink_metadata() {
            Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&at),
            Ok(_) => std::fs::remove_file(&at),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(err),
        }
        .and_then(|()| std::fs::create_dir_all(&at))
        .map_err(|err| format!("could not make {} afresh: {err}", at.display()))
    })
    .await
}

/// Writes `patch` (with the final newline `git apply` needs) to `file` and applies it.
async fn apply_file(
    places: &Places,
    tree: &Path,
    file: &Path,
    patch: &str,
) -> Result<Applied, ScoreError> {
    let mut text = patch.to_owned();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    tokio::fs::write(file, text)
        .await
        .map_err(|err| infra(format!("could not write {}: {err}", file.display())))?;
    let git = GitPlaces {
        home: &places.git_home,
        no_git_dir: &places.no_git_dir,
    };
    apply::apply(tree, file, &git).await.map_err(infra)
}

/// A file of the test patch that is code with its tests inside (a Rust file outside a tests
/// folder), not a test file SWE-bench's eval script would put back to its base version.
fn holds_code_and_tests(file: &files::PatchFile) -> bool {
    let path = file
        .target
        .as_deref()
        .or(file.source.as_deref())
        .unwrap_or_default();
    path.ends_with(".rs") && !plumb_verify::tamper::is_test_file(path)
}

/// The log: the command, stdout, stderr, and how the run ended.
fn log_text(argv: &[String], output: &CommandOutput) -> String {
    let mut text = format!("$ {}\n", shown(argv));
    for (name, dropped) in [
        ("stdout", output.stdout_truncated_bytes),
        ("stderr", output.stderr_truncated_bytes),
    ] {
        if dropped > 0 {
            text.push_str(&format!(
                "# the first {dropped} bytes of {name} were dropped (output cap)\n"
            ));
        }
    }
    text.push_str(&output.stdout);
    if !output.stdout.is_empty() && !output.stdout.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&output.stderr);
    if !output.stderr.is_empty() && !output.stderr.ends_with('\n') {
        text.push('\n');
    }
    let ended = match (output.exit_code, output.signal) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "no exit code".to_owned(),
    };
    let timed_out = if output.timed_out {
        ", stopped at its time limit"
    } else {
        ""
    };
    text.push_str(&format!(
        "# {ended} after {:.1} s{timed_out}\n",
        output.duration.as_secs_f64()
    ));
    text
}

async fn write_log(path: &Path, text: &str) -> Result<(), ScoreError> {
    tokio::fs::write(path, text)
        .await
        .map_err(|err| infra(format!("could not write {}: {err}", path.display())))
}

fn shown(argv: &[String]) -> String {
    plumb_verify::TestCommand {
        argv: argv.to_vec(),
        runner: plumb_verify::Runner::Other,
    }
    .display()
}

fn stop_if_cancelled(cancel: &CancellationToken) -> Result<(), ScoreError> {
    if cancel.is_cancelled() {
        return Err(infra("the scoring run was cancelled".to_owned()));
    }
    Ok(())
}

/// File work off the async threads.
async fn blocking<F>(work: F) -> Result<(), ScoreError>
where
    F: FnOnce() -> Result<(), String> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| infra(format!("a file task of the scorer failed: {err}")))?
        .map_err(infra)
}

fn infra(message: String) -> ScoreError {
    ScoreError::Infra(message)
}
