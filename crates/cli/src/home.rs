//! Bringing a run's change home and back, from its run folder: `plumb apply RUN --sha SHA
//! [--branch NAME]` (the SHA-256 the person gives is their approval), `plumb undo RUN`, `plumb
//! runs` and `plumb show RUN`. `plumb fix` uses [`bring_home`] after its own question. Never a push,
//! never a remote: plumb-workspace's `home/` writes only the user's files or one new local branch.

use std::path::{Path, PathBuf};

use plumb_protocol::{FinalReport, Outcome};
use plumb_workspace::{
    APPLIED_FILE, Applied, CHANGE_FILE, ChangeRecord, Destination, HomeError, HomeState, Identity,
    NewBranch,
};

use crate::args::{ApplyArgs, RunIdArgs, RunsArgs};
use crate::screen::{self, one_line, say, say_out};
use crate::{Failure, setup};

/// The patch file of a run folder.
pub(crate) const PATCH_FILE: &str = "patch.diff";
/// The failed attempt's diff, kept when the run rolled back.
pub(crate) const ATTEMPT_FILE: &str = "attempt.diff";

/// `plumb apply RUN --sha SHA [--branch NAME]`.
pub(crate) fn apply(args: ApplyArgs, overrides: &[String]) -> Result<i32, Failure> {
    let message = apply_run(&args.run_id, &args.sha, args.branch.as_deref(), overrides)?;
    say!("{message}");
    Ok(0)
}

/// Brings the change of run `run_id` home if `sha` is its patch's SHA-256; the sentence to print.
/// `plumb apply`, and `plumb serve` approving a task whose repository is a folder on its machine.
pub(crate) fn apply_run(
    run_id: &str,
    sha: &str,
    branch: Option<&str>,
    overrides: &[String],
) -> Result<String, Failure> {
    if let Some(name) = branch {
        check_branch(name)?;
    }
    let run = RunFolder::find(run_id, overrides)?;
    let _lock = run.lock()?;
    let report = run.report()?;
    if report.outcome != Outcome::Success || report.patch_sha256.is_empty() {
        return Err(Failure::bad_input(format!(
            "run {} ended {} without a verified patch, so there is nothing to apply; plumb show {} prints its attempt",
            run_id,
            report.outcome.as_str(),
            run_id
        )));
    }
    let given = sha.trim().to_ascii_lowercase();
    if given != report.patch_sha256 {
        return Err(home_failure(HomeError::ShaMismatch {
            given,
            actual: report.patch_sha256,
        }));
    }
    bring_home(&run.dir, &report, &given, branch)
}

/// `--branch NAME` checked by git's rules for a branch name, before anything runs or is written.
pub(crate) fn check_branch(name: &str) -> Result<(), Failure> {
    plumb_workspace::check_branch_name(name).map_err(|rule| {
        home_failure(HomeError::BadBranchName {
            name: name.to_string(),
            rule,
        })
    })
}

/// Applies the run's approved patch (`approved_sha`) to the repository, or commits it on the new
/// branch `branch`; the sentence to print on success. A change already home (or half home, after
/// an interruption) is refused by plumb-workspace, which reads the record under the run's lock.
pub(crate) fn bring_home(
    run_dir: &Path,
    report: &FinalReport,
    approved_sha: &str,
    branch: Option<&str>,
) -> Result<String, Failure> {
    let record: ChangeRecord = read_json(&run_dir.join(CHANGE_FILE)).map_err(|why| {
        Failure::bad_input(format!(
            "run {} has no record of the files its change touches ({why}); it was made by an older plumb, so apply {} by hand with git apply",
            report.run_id,
            run_dir.join(PATCH_FILE).display()
        ))
    })?;
    let patch = run_dir.join(PATCH_FILE);
    match branch {
        None => {
            let applied = plumb_workspace::apply_to_tree(&record, &patch, approved_sha, run_dir)
                .map_err(home_failure)?;
            Ok(format!(
                "applied to {} ({} files); undo with: plumb undo {}",
                applied.repo.display(),
                applied.files.len(),
                report.run_id
            ))
        }
        Some(name) => {
            let message = format!(
                "{}\n\nMade by plumb (run {}), approved by its patch's SHA-256 {}.\n",
                if report.title.is_empty() {
                    "plumb: the verified change"
                } else {
                    &report.title
                },
                report.run_id,
                approved_sha
            );
            let identity = identity(&record.repo);
            let new = NewBranch {
                name,
                message: &message,
                identity: &identity,
            };
            let made =
                plumb_workspace::commit_on_branch(&record, &patch, approved_sha, &new, run_dir)
                    .map_err(home_failure)?;
            Ok(format!(
                "committed on the new branch {name} ({}) in {}; your checked-out branch, index and files are unchanged; undo with: plumb undo {}",
                made.commit.get(..12).unwrap_or(&made.commit),
                record.repo.display(),
                report.run_id
            ))
        }
    }
}

/// `plumb undo RUN`: also finishes an apply or undo that was interrupted.
pub(crate) fn undo(args: RunIdArgs, overrides: &[String]) -> Result<i32, Failure> {
    let message = undo_run(&args.run_id, overrides)?;
    say!("{message}");
    Ok(0)
}

/// Undoes what an apply of run `run_id` brought home; the sentence to print.
pub(crate) fn undo_run(run_id: &str, overrides: &[String]) -> Result<String, Failure> {
    let run = RunFolder::find(run_id, overrides)?;
    let _lock = run.lock()?;
    let undone =
        plumb_workspace::undo(&run.dir, &run.dir.join(PATCH_FILE)).map_err(home_failure)?;
    Ok(match &undone.destination {
        Destination::WorkingTree => format!(
            "undone: the {} files are back as they were",
            undone.files.len()
        ),
        Destination::Branch { name, .. } => format!("undone: the branch {name} is deleted"),
    })
}

/// `plumb runs`: newest first.
pub(crate) fn runs(args: RunsArgs, overrides: &[String]) -> Result<i32, Failure> {
    let dir = runs_dir(overrides)?;
    let mut rows: Vec<(String, FinalReport, Option<Applied>)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if !is_run_id(&name) || !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let Ok(report) = read_json::<FinalReport>(&entry.path().join("report.json")) else {
                continue;
            };
            let applied = read_applied(&entry.path()).ok().flatten();
            rows.push((name, report, applied));
        }
    }
    rows.sort_by(|a, b| b.0.cmp(&a.0));
    if args.json {
        for (id, report, applied) in &rows {
            let row = serde_json::json!({
                "run_id": id,
                "repo": report.repo,
                "title": report.title,
                "outcome": report.outcome.as_str(),
                "patch_sha256": report.patch_sha256,
                "applied": applied.as_ref().filter(|a| a.state == HomeState::Applied).map(where_to),
                "apply_state": applied.as_ref().map(|a| a.state.as_str()),
            });
            screen::json_out(&row.to_string());
        }
        return Ok(0);
    }
    if rows.is_empty() {
        say!("no runs in {}", dir.display());
        return Ok(0);
    }
    say_out!(
        "{:<20}  {:<15}  {:<12}  {:<22}  {:<30}  ticket",
        "run",
        "outcome",
        "sha256",
        "applied",
        "repository"
    );
    for (id, report, applied) in rows {
        let sha = report.patch_sha256.get(..12).unwrap_or("-");
        let state = match &applied {
            None => "-".to_string(),
            Some(a) if a.state == HomeState::Applied => where_to(a),
            Some(a) => a.state.as_str().to_string(),
        };
        // Fields from the run folder (the ticket's title above all) stay on their row.
        say_out!(
            "{id:<20}  {:<15}  {:<12}  {:<22}  {:<30}  {}",
            report.outcome.as_str(),
            one_line(sha),
            cut(&one_line(&state), 22),
            cut(&one_line(&report.repo), 30),
            cut(&one_line(&report.title), 60)
        );
    }
    Ok(0)
}

/// `plumb show RUN`: the verified patch, or the failed attempt's diff.
pub(crate) fn show(args: RunIdArgs, overrides: &[String]) -> Result<i32, Failure> {
    let run = RunFolder::find(&args.run_id, overrides)?;
    let report = run.report()?;
    let (file, what) = if report.outcome == Outcome::Success {
        (PATCH_FILE, "verified patch")
    } else {
        (ATTEMPT_FILE, "failed attempt")
    };
    let path = run.dir.join(file);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            // Byte for byte to a pipe or file (`| git apply`), escaped at a terminal.
            screen::patch_out(&text).map_err(|err| {
                Failure::infra(format!("could not write the {what} to stdout: {err}"))
            })?;
            say!(
                "run {}: {} ({}), {what}{}",
                args.run_id,
                report.outcome.as_str(),
                report.reason,
                report
                    .attempt_ref
                    .as_deref()
                    .map(|r| format!(", kept as {r}"))
                    .unwrap_or_default()
            );
            Ok(0)
        }
        // A kept attempt whose diff could not be written: the report's reason says why.
        Err(_) if report.outcome != Outcome::Success => {
            Err(Failure::bad_input(match &report.attempt_ref {
                Some(kept) => format!(
                    "run {} ended {} and its attempt is kept as {kept} in the run's workspace, but it has no attempt.diff to show ({})",
                    args.run_id,
                    report.outcome.as_str(),
                    report.reason
                ),
                None => format!(
                    "run {} ended {} with no change kept, so it has no attempt to show ({})",
                    args.run_id,
                    report.outcome.as_str(),
                    report.reason
                ),
            }))
        }
        Err(err) => Err(Failure::infra(format!(
            "could not read {}: {err}",
            path.display()
        ))),
    }
}

/// A run's folder, found by its id.
struct RunFolder {
    id: String,
    dir: PathBuf,
}

impl RunFolder {
    fn find(run_id: &str, overrides: &[String]) -> Result<Self, Failure> {
        let runs = runs_dir(overrides)?;
        if !is_run_id(run_id) {
            return Err(Failure::bad_input(format!(
                "{run_id:?} is not a run id (they look like r19a2b3c4d5e-0a1b2c); plumb runs lists them"
            )));
        }
        let dir = runs.join(run_id);
        if !dir.join("report.json").is_file() {
            return Err(Failure::bad_input(format!(
                "there is no finished run {run_id} in {}; plumb runs lists them",
                runs.display()
            )));
        }
        Ok(Self {
            id: run_id.to_string(),
            dir,
        })
    }

    /// The run's lock, so no pruning removes the folder while its change goes home or back;
    /// refused while the run's own `plumb fix` (or a pruning) holds it.
    fn lock(&self) -> Result<std::fs::File, Failure> {
        let path = self.dir.join(crate::prune::LOCK_FILE);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|err| Failure::infra(format!("could not open {}: {err}", path.display())))?;
        rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).map_err(
            |_| {
                Failure::bad_input(format!(
                    "run {} is in use: its plumb fix is still going (asking at a terminal?) or plumb is pruning it; try again once that ends",
                    self.id
                ))
            },
        )?;
        Ok(file)
    }

    fn report(&self) -> Result<FinalReport, Failure> {
        read_json(&self.dir.join("report.json")).map_err(|why| {
            Failure::infra(format!(
                "the report of {} cannot be read: {why}",
                self.dir.display()
            ))
        })
    }
}

fn runs_dir(overrides: &[String]) -> Result<PathBuf, Failure> {
    let loaded = setup::load_config(None, overrides.to_vec(), Vec::new())?;
    setup::runs_dir(&loaded.config)
}

/// `r<hex>-<6 hex>`, as `plumb_agent::new_run_id` makes them: nothing that could leave the runs folder.
fn is_run_id(name: &str) -> bool {
    crate::prune::run_time(name).is_some()
}

/// The run's `applied.json`, if its change was ever brought home.
pub(crate) fn read_applied(run_dir: &Path) -> Result<Option<Applied>, Failure> {
    let path = run_dir.join(APPLIED_FILE);
    if !path.exists() {
        return Ok(None);
    }
    read_json(&path)
        .map(Some)
        .map_err(|why| Failure::infra(format!("{} cannot be read: {why}", path.display())))
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|err| format!("{}: {err}", path.display()))?;
    serde_json::from_str(&text).map_err(|err| format!("{}: {err}", path.display()))
}

/// Where an applied change went, in a few words.
fn where_to(applied: &Applied) -> String {
    match &applied.destination {
        Destination::WorkingTree => "working tree".to_string(),
        Destination::Branch { name, .. } => format!("branch {name}"),
    }
}

/// The user's git identity in `repo` (their own settings), or plumb's when they have none.
fn identity(repo: &Path) -> Identity {
    let read = |key: &str| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(["config", "--get", key])
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
            .filter(|value| !value.is_empty())
    };
    Identity {
        name: read("user.name").unwrap_or_else(|| "plumb".to_string()),
        email: read("user.email").unwrap_or_else(|| "plumb@localhost".to_string()),
    }
}

fn home_failure(err: HomeError) -> Failure {
    if err.is_infra() {
        Failure::infra(err.to_string())
    } else {
        Failure::bad_input(err.to_string())
    }
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max - 1).collect();
    format!("{kept}…")
}
