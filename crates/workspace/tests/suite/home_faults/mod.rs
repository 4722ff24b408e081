//! Bringing a change home is all or nothing, shown with a fault at every write in turn (not by
//! racing): for each step of an apply and of an undo, into the working tree and onto a branch,
//! the step fails (then the step and the next, the first of the putting back), or every step
//! from it on fails as a crash would. After each, the user's files are compared byte for byte
//! (mode, bytes, link targets, folders) with their state before, and `applied.json` with the
//! files; after a crash, `plumb undo` (with no fault) brings the files back to their old bytes.
//! `meddling.rs`: a write of the user's at the moment between plumb's check and its write.

mod branch;
mod meddling;
mod tree;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use plumb_workspace::{
    APPLIED_FILE, Applied, ChangeRecord, Faults, HomeError, HomeState, Step, apply_to_tree_with,
};

use super::home::{Run, four_kinds, run_on};
use super::{link, sample_repo, snapshot, write};

/// The repository and run of [`every_kind`], with the user's empty folder.
fn tree_prototype() -> Case {
    let case = Case::new(every_kind);
    fs::create_dir(case.repo.join("empty")).unwrap();
    case
}

/// A repository and a finished run of it: made once with git, then copied for each fault.
struct Case {
    _tmp: TempDir,
    /// The run that made the prototype (its folder holds the patch).
    _run: Option<Run>,
    repo: PathBuf,
    dir: PathBuf,
    record: ChangeRecord,
    patch: PathBuf,
    sha: String,
}

impl Case {
    fn new(edit: impl FnOnce(&Path)) -> Self {
        let tmp = TempDir::new().unwrap();
        let repo = sample_repo(tmp.path());
        let run = run_on(&repo, edit);
        Self {
            repo,
            dir: run.dir.clone(),
            record: run.record.clone(),
            patch: run.patch.clone(),
            sha: run.sha.clone(),
            _tmp: tmp,
            _run: Some(run),
        }
    }

    /// The repository and the run's patch in a fresh folder, every byte, mode and link as is.
    fn copy(&self) -> Self {
        let tmp = TempDir::new().unwrap();
        let repo = tmp.path().join("repo");
        let dir = tmp.path().join("r19a2b3c4d5e-0a1b2c");
        copy_tree(&self.repo, &repo);
        fs::create_dir(&dir).unwrap();
        let patch = dir.join("patch.diff");
        fs::copy(&self.patch, &patch).unwrap();
        // A change already brought home: its saved bytes, and its record for the copy.
        if self.dir.join("applied").is_dir() {
            copy_tree(&self.dir.join("applied"), &dir.join("applied"));
        }
        if let Some(mut applied) = record(self) {
            applied.repo = repo.clone();
            plumb_workspace::write_record(&dir.join(APPLIED_FILE), &applied).unwrap();
        }
        Self {
            record: ChangeRecord {
                repo: repo.clone(),
                ..self.record.clone()
            },
            repo,
            dir,
            patch,
            sha: self.sha.clone(),
            _tmp: tmp,
            _run: None,
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir(to).unwrap();
    fs::set_permissions(to, fs::metadata(from).unwrap().permissions()).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (source, dest) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&source).unwrap(), &dest).unwrap();
        } else if kind.is_dir() {
            copy_tree(&source, &dest);
        } else {
            fs::copy(&source, &dest).unwrap();
        }
    }
}

/// Which steps fail: those numbered in `fail`, and with `crash_from`, every step from that one
/// on (a process that died writes nothing more).
#[derive(Default)]
struct Injected {
    seen: RefCell<Vec<Step>>,
    fail: Vec<usize>,
    crash_from: Option<usize>,
}

impl Injected {
    fn failing(fail: &[usize]) -> Self {
        Self {
            fail: fail.to_vec(),
            ..Self::default()
        }
    }

    fn crashing_at(step: usize) -> Self {
        Self {
            crash_from: Some(step),
            ..Self::default()
        }
    }

    fn steps(&self) -> Vec<Step> {
        self.seen.borrow().clone()
    }
}

impl Faults for Injected {
    fn before(&self, step: &Step) -> io::Result<()> {
        let number = self.seen.borrow().len();
        self.seen.borrow_mut().push(step.clone());
        if self.fail.contains(&number) || self.crash_from.is_some_and(|from| number >= from) {
            return Err(io::Error::other(format!(
                "injected fault at step {number} ({step})"
            )));
        }
        Ok(())
    }
}

/// Every kind of change: a file changed, one added in new folders, one added in a folder the
/// user has (empty, so git knows nothing of it), one deleted, one renamed, a link retargeted, an
/// executable bit dropped.
fn every_kind(root: &Path) {
    four_kinds(root);
    write(root, "new/deep/file.py", "DEEP = 1\n");
    write(root, "empty/file.py", "FILLED = 1\n");
    fs::remove_file(root.join("link.txt")).unwrap();
    link(root, "link.txt", "src/app.py");
    fs::set_permissions(
        root.join("run.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
}

/// The user's tree outside `.git`, byte for byte: each file's mode and SHA-256, each link's
/// target, each folder.
fn files(repo: &Path) -> BTreeMap<String, String> {
    snapshot(repo)
        .into_iter()
        .filter(|(path, _)| path != "." && !path.starts_with(".git/"))
        .map(|(path, value)| {
            let kept = if path.ends_with('/') {
                "/".to_string()
            } else if value.starts_with("->") {
                value
            } else {
                let parts: Vec<&str> = value.split(' ').collect();
                format!("{} {}", parts[0], parts[parts.len() - 1])
            };
            (path, kept)
        })
        .collect()
}

fn record(run: &Case) -> Option<Applied> {
    let text = fs::read_to_string(run.dir.join(APPLIED_FILE)).ok()?;
    Some(serde_json::from_str(&text).unwrap())
}

fn record_bytes(run: &Case) -> Option<Vec<u8>> {
    fs::read(run.dir.join(APPLIED_FILE)).ok()
}

/// A file plumb moved aside or wrote under a temporary name beside its path.
fn is_plumbs(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.starts_with(".plumb-") && (name.ends_with(".old") || name.ends_with(".new"))
}

/// Whether `now` is a state a record of `state` covers: all old bytes, all new bytes, or, while
/// under way, each path one or the other (folders aside; a path moved aside by the step that was
/// cut short counts when a file beside it holds one of its sides).
fn covers(
    state: Option<HomeState>,
    now: &BTreeMap<String, String>,
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> bool {
    match state {
        None | Some(HomeState::Undone) => now == before,
        Some(HomeState::Applied) => now == after,
        Some(HomeState::Applying | HomeState::Undoing) => {
            let asides: Vec<(&str, &String)> = now
                .iter()
                .filter(|(path, _)| is_plumbs(path) && path.ends_with(".old"))
                .map(|(path, value)| (path.rsplit_once('/').map_or("", |(dir, _)| dir), value))
                .collect();
            let paths: std::collections::BTreeSet<&String> = now
                .keys()
                .chain(before.keys())
                .chain(after.keys())
                .filter(|path| !path.ends_with('/'))
                .collect();
            paths.into_iter().all(|path| {
                let held = now.get(path);
                if is_plumbs(path) {
                    return held.is_some_and(|value| {
                        before.values().any(|v| v == value) || after.values().any(|v| v == value)
                    });
                }
                let (old, new) = (before.get(path), after.get(path));
                if held == old || held == new {
                    return true;
                }
                let dir = path.rsplit_once('/').map_or("", |(dir, _)| dir);
                held.is_none()
                    && asides
                        .iter()
                        .any(|(d, value)| *d == dir && (Some(*value) == old || Some(*value) == new))
            })
        }
    }
}

fn apply(run: &Case, faults: &dyn Faults) -> Result<Applied, HomeError> {
    apply_to_tree_with(&run.record, &run.patch, &run.sha, &run.dir, faults)
}
