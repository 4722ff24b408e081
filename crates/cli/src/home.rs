//! Bringing a run's change home and back, from its run folder: `plumb apply RUN --sha SHA
//! [--branch NAME]` (the SHA-256 the person gives is their approval), `plumb undo RUN`, `plumb
//! runs` and `plumb show RUN`. `plumb fix` uses [`bring_home`] after its own question. Never a push,
//! never a remote: plumb-workspace's `home/` writes only the user's files or one new local branch.

use std::path::{Path, PathBuf};

use plumb_protocol::{FinalReport, Outcome};
use plumb_workspace::{
    APPLIED_FILE, Applied, CHANGE_FILE, ChangeRecord, Destination, HomeError, Identity,
};

use crate::args::{ApplyArgs, RunIdArgs, RunsArgs};
use crate::{Failure, setup};

/// The patch file of a run folder.
pub(crate) const PATCH_FILE: &str = "patch.diff";
/// The failed attempt's diff, kept when the run rolled back.
pub(crate) const ATTEMPT_FILE: &str = "attempt.diff";

/// `plumb apply RUN --sha SHA [--branch NAME]`.
pub(crate) fn apply(args: ApplyArgs, overrides: &[String]) -> Result<i32, Failure> {
    let run = RunFolder::find(&args.run_id, overrides)?;
    let report = run.report()?;
    if report.outcome != Outcome::Success || report.patch_sha256.is_empty() {
        return Err(Failure::bad_input(format!(
            "run {} ended {} without a verified patch, so there is nothing to apply; plumb show {} prints its attempt",
            args.run_id,
            report.outcome.as_str(),
            args.run_id
        )));
    }
    let given = args.sha.trim().to_ascii_lowercase();
    if given != report.patch_sha256 {
        return Err(home_failure(HomeError::ShaMismatch {
            given,
            actual: report.patch_sha256,
        }));
    }
    let message = bring_home(&run.dir, &report, &given, args.branch.as_deref())?;
    eprintln!("{message}");
    Ok(0)
}

/// Applies the run's approved patch (`approved_sha`) to the repository, or commits it on the new
/// branch `branch`; the sentence to print on success.
pub(crate) fn bring_home(
    run_dir: &Path,
    report: &FinalReport,
    approved_sha: &str,
    branch: Option<&str>,
) -> Result<String, Failure> {
    if let Some(applied) = read_applied(run_dir)?.filter(|a| !a.undone) {
        return Err(Failure::bad_input(format!(
            "run {} is already applied ({}); plumb undo {} first to apply it again",
            report.run_id,
            where_to(&applied),
            report.run_id
        )));
    }
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
            let made = plumb_workspace::commit_on_branch(
                &record,
                &patch,
                approved_sha,
                name,
                &message,
                &identity(&record.repo),
                run_dir,
            )
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

/// `plumb undo RUN`.
pub(crate) fn undo(args: RunIdArgs, overrides: &[String]) -> Result<i32, Failure> {
    let run = RunFolder::find(&args.run_id, overrides)?;
    let Some(applied) = read_applied(&run.dir)? else {
        return Err(Failure::bad_input(format!(
            "run {} was never applied, so there is nothing to undo",
            args.run_id
        )));
    };
    if applied.undone {
        return Err(Failure::bad_input(format!(
            "run {} was already undone",
            args.run_id
        )));
    }
    let done = match &applied.destination {
        Destination::WorkingTree => {
            plumb_workspace::undo_in_tree(&applied, &run.dir, &run.dir.join(PATCH_FILE)).map(|()| {
                format!(
                    "undone: the {} files are back as they were",
                    applied.files.len()
                )
            })
        }
        Destination::Branch { name, .. } => plumb_workspace::delete_branch(&applied, &run.dir)
            .map(|()| format!("undone: the branch {name} is deleted")),
    };
    eprintln!("{}", done.map_err(home_failure)?);
    Ok(0)
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
                "applied": applied.as_ref().filter(|a| !a.undone).map(where_to),
            });
            println!("{row}");
        }
        return Ok(0);
    }
    if rows.is_empty() {
        eprintln!("no runs in {}", dir.display());
        return Ok(0);
    }
    println!(
        "{:<20}  {:<15}  {:<12}  {:<22}  {:<30}  ticket",
        "run", "outcome", "sha256", "applied", "repository"
    );
    for (id, report, applied) in rows {
        let sha = report.patch_sha256.get(..12).unwrap_or("-");
        let state = match &applied {
            None => "-".to_string(),
            Some(a) if a.undone => "undone".to_string(),
            Some(a) => where_to(a),
        };
        println!(
            "{id:<20}  {:<15}  {sha:<12}  {:<22}  {:<30}  {}",
            report.outcome.as_str(),
            cut(&state, 22),
            cut(&report.repo, 30),
            cut(&report.title, 60)
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
            print!("{text}");
            eprintln!(
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
        Ok(Self { dir })
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
