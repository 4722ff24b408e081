//! Pruning the run folders of finished runs (`runs.keep`, `runs.keep_workspaces`), after each run.
//!
//! Every run holds an exclusive `flock` on `run.lock` in its folder from just after the folder
//! is made until the process ends; the kernel drops it however the process ends (a SIGKILL too), so
//! a lock that can be taken means the run is over. The pruner takes a folder's lock before it
//! touches the folder, so two plumbs never prune the same folder and never one that still runs.
//!
//! Only folders named like a run id (`r<hex ms>-<6 hex>`) that hold `run.lock` or `report.json`
//! (a run of a plumb from before the lock) are candidates; anything else in the runs folder, links
//! included, is never touched. Candidates are ordered newest first by the time in their id, the
//! run that just ended among them; it is always kept. Past `runs.keep` a folder is removed; past
//! `runs.keep_workspaces` it keeps only its files (report, journal, patch) and loses its folders (the
//! workspace copy and shadow git, the check trees, the sandbox's scratch). Either setting at 0 keeps
//! everything it governs.

use std::fs::{self, File};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use plumb_config::Runs;
use rustix::fs::{FlockOperation, flock};

use crate::Failure;

/// The lock file in every run folder.
pub(crate) const LOCK_FILE: &str = "run.lock";
/// What a finished run of any plumb version leaves.
const REPORT_FILE: &str = "report.json";

/// A run folder's lock, held while the value lives.
pub(crate) struct RunLock {
    _file: File,
}

/// Locks `run_dir` (just made) as a run that is going.
pub(crate) fn lock_run(run_dir: &Path) -> Result<RunLock, Failure> {
    let path = run_dir.join(LOCK_FILE);
    let file = File::create(&path).map_err(|err| {
        Failure::infra(format!(
            "could not create the run's lock file {}: {err}",
            path.display()
        ))
    })?;
    flock(&file, FlockOperation::NonBlockingLockExclusive).map_err(|err| {
        Failure::infra(format!(
            "could not lock the run folder {}: {err}",
            run_dir.display()
        ))
    })?;
    Ok(RunLock { _file: file })
}

/// What a pruning did, for one line on stderr.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Pruned {
    pub removed: usize,
    pub emptied: usize,
    /// Folders that could not be removed, each a sentence.
    pub failures: Vec<String>,
}

impl Pruned {
    /// The lines to print: nothing when nothing happened.
    pub(crate) fn lines(&self, runs: &Runs) -> Vec<String> {
        let mut lines = Vec::new();
        if self.removed > 0 || self.emptied > 0 {
            lines.push(format!(
                "plumb: pruned old runs: {} folders removed (runs.keep = {}), {} kept without their workspace (runs.keep_workspaces = {})",
                self.removed, runs.keep, self.emptied, runs.keep_workspaces
            ));
        }
        lines.extend(self.failures.iter().map(|f| format!("plumb: {f}")));
        lines
    }
}

/// Prunes the finished runs in `runs_dir` by `runs`; `current` (the run that just ended) stays.
/// Never fails: what cannot be removed is named in [`Pruned::failures`].
pub(crate) fn prune(runs_dir: &Path, current: &str, runs: &Runs) -> Pruned {
    let mut pruned = Pruned::default();
    if runs.keep == 0 && runs.keep_workspaces == 0 {
        return pruned;
    }
    let mut candidates = candidates(runs_dir);
    candidates.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
    let mut finished = 0usize;
    for (_, name) in candidates {
        let dir = runs_dir.join(&name);
        if name == current {
            finished += 1;
            continue;
        }
        // Held until this folder is done with; a run still going holds it.
        let Some(_lock) = take_lock(&dir) else {
            continue;
        };
        finished += 1;
        let place = finished - 1;
        // A change still applied keeps its run: `plumb undo` needs the bytes saved there.
        if runs.keep > 0 && place >= runs.keep && !holds_an_apply(&dir) {
            match remove_all(&dir) {
                Ok(()) => pruned.removed += 1,
                Err(err) => pruned.failures.push(format!(
                    "could not remove the old run folder {}: {err}; remove it by hand",
                    dir.display()
                )),
            }
        } else if runs.keep_workspaces > 0 && place >= runs.keep_workspaces {
            match remove_folders(&dir) {
                Ok(true) => pruned.emptied += 1,
                Ok(false) => {}
                Err(err) => pruned.failures.push(format!(
                    "could not remove the workspace of the old run {}: {err}; remove it by hand",
                    dir.display()
                )),
            }
        }
    }
    pruned
}

/// The file a worker's run folder holds: which stored task and attempt it runs.
pub(crate) const TASK_FILE: &str = "task.json";

/// Removes the folders of service runs whose process died mid-run (a killed worker or server):
/// a run folder with [`TASK_FILE`], no report and a lock no process holds. Their task was given
/// to another attempt by the store; their workspace is of no use. A person's own runs (no task
/// file) are left to [`prune`]. Returns the folders removed and the failures, each a sentence.
pub(crate) fn remove_abandoned(runs_dir: &Path) -> (usize, Vec<String>) {
    let mut removed = 0;
    let mut failures = Vec::new();
    for (_, name) in candidates(runs_dir) {
        let dir = runs_dir.join(&name);
        if !dir.join(TASK_FILE).is_file() || dir.join(REPORT_FILE).is_file() {
            continue;
        }
        let Some(_lock) = take_lock(&dir) else {
            continue;
        };
        match remove_all(&dir) {
            Ok(()) => removed += 1,
            Err(err) => failures.push(format!(
                "could not remove the abandoned run folder {}: {err}",
                dir.display()
            )),
        }
    }
    (removed, failures)
}

/// The run folders of `runs_dir` with the time in their id.
fn candidates(runs_dir: &Path) -> Vec<(u64, String)> {
    let Ok(entries) = fs::read_dir(runs_dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let time = run_time(&name)?;
            // `file_type` does not follow links: a link named like a run is not one.
            let is_dir = entry.file_type().ok()?.is_dir();
            let path = entry.path();
            let is_run = path.join(LOCK_FILE).is_file() || path.join(REPORT_FILE).is_file();
            (is_dir && is_run).then_some((time, name))
        })
        .collect()
}

/// The milliseconds in a run id `r<hex>-<6 hex>` (see `plumb_agent::new_run_id`).
pub(crate) fn run_time(name: &str) -> Option<u64> {
    let (time, salt) = name.strip_prefix('r')?.split_once('-')?;
    let salt_ok = salt.len() == 6 && salt.bytes().all(|b| b.is_ascii_hexdigit());
    let time_ok = !time.is_empty() && time.bytes().all(|b| b.is_ascii_hexdigit());
    if !(salt_ok && time_ok) {
        return None;
    }
    u64::from_str_radix(time, 16).ok()
}

/// The lock of a finished run: `None` while its run holds it. A folder from before the lock has
/// none; its `report.json` says the run ended, and an empty lock file is left to stand in.
fn take_lock(dir: &Path) -> Option<File> {
    let path = dir.join(LOCK_FILE);
    let file = if path.is_file() {
        File::open(&path).ok()?
    } else {
        // A folder with neither file was dropped by `candidates`; one just made by a run that has
        // not locked it yet has no report either.
        if !dir.join(REPORT_FILE).is_file() {
            return None;
        }
        File::create(&path).ok()?
    };
    flock(&file, FlockOperation::NonBlockingLockExclusive).ok()?;
    Some(file)
}

/// Removes `dir` and everything in it, making folders the run's commands closed (`chmod 000`)
/// writable first. Links are removed, never followed.
fn remove_all(dir: &Path) -> std::io::Result<()> {
    if fs::remove_dir_all(dir).is_ok() {
        return Ok(());
    }
    open_up(dir);
    fs::remove_dir_all(dir)
}

/// Whether the run's change was brought home (or is half home) and not undone.
fn holds_an_apply(dir: &Path) -> bool {
    crate::home::read_applied(dir)
        .ok()
        .flatten()
        .is_some_and(|applied| applied.state != plumb_workspace::HomeState::Undone)
}

/// Removes every folder directly in `dir`, keeping its files and the bytes an apply saved for
/// its undo; true when there was one.
fn remove_folders(dir: &Path) -> std::io::Result<bool> {
    let mut removed = false;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() && entry.file_name() != plumb_workspace::SAVED_DIR {
            remove_all(&entry.path())?;
            removed = true;
        }
    }
    Ok(removed)
}

/// Gives the owner every right on each folder under `dir` (not following links), so it can be
/// emptied.
fn open_up(dir: &Path) {
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let Ok(meta) = fs::symlink_metadata(&folder) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let mode = meta.permissions().mode() | 0o700;
        let _ = fs::set_permissions(&folder, fs::Permissions::from_mode(mode));
        if let Ok(entries) = fs::read_dir(&folder) {
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(entry.path());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use pretty_assertions::assert_eq;

    use super::*;

    /// A finished run folder of a run that started at `ms`: its files and a workspace.
    fn finished(runs: &Path, ms: u64, lock: bool) -> String {
        let name = format!("r{ms:x}-00000{}", ms % 10);
        let dir = runs.join(&name);
        fs::create_dir_all(dir.join("workspace/work")).unwrap();
        fs::write(dir.join("workspace/work/app.py"), "X = 1\n").unwrap();
        fs::write(dir.join(REPORT_FILE), "{}").unwrap();
        fs::write(dir.join("journal.jsonl"), "").unwrap();
        if lock {
            fs::write(dir.join(LOCK_FILE), "").unwrap();
        }
        name
    }

    /// Each entry of `runs`: a folder's name with "+ws" when it has its workspace, or what else
    /// it is.
    fn state(runs: &Path) -> BTreeMap<String, String> {
        fs::read_dir(runs)
            .unwrap()
            .flatten()
            .map(|e| {
                let kind = e.file_type().unwrap();
                let what = if kind.is_symlink() {
                    "link"
                } else if e.path().join("workspace").is_dir() {
                    "+ws"
                } else if kind.is_dir() {
                    "files"
                } else {
                    "file"
                };
                (e.file_name().into_string().unwrap(), what.to_string())
            })
            .collect()
    }

    #[test]
    fn old_runs_go_the_newest_keep_their_workspace_and_a_running_one_stays() {
        let tmp = tempfile::tempdir().unwrap();
        let runs = tmp.path();
        let names: Vec<String> = (1..=5).map(|i| finished(runs, 1000 + i, true)).collect();
        // A finished run of a plumb from before the lock.
        finished(runs, 900, false);
        let current = finished(runs, 2000, true);
        // A run still going: another process holds its lock (here this one).
        let going = finished(runs, 1500, true);
        let held = File::open(runs.join(&going).join(LOCK_FILE)).unwrap();
        flock(&held, FlockOperation::NonBlockingLockExclusive).unwrap();
        // A folder being made right now: no lock yet, no report.
        let starting = format!("r{:x}-000000", 2500);
        fs::create_dir(runs.join(&starting)).unwrap();
        fs::create_dir(runs.join("notes")).unwrap();
        fs::write(runs.join("notes/keep.txt"), "mine").unwrap();
        std::os::unix::fs::symlink(runs.join("notes"), runs.join("r1-000000")).unwrap();
        // A workspace whose commands closed a folder.
        let closed = runs.join(&names[0]).join("workspace/work/closed");
        fs::create_dir(&closed).unwrap();
        fs::set_permissions(&closed, fs::Permissions::from_mode(0o000)).unwrap();

        let pruned = prune(
            runs,
            &current,
            &Runs {
                keep: 4,
                keep_workspaces: 2,
            },
        );
        let actual = (pruned, state(runs));

        let expected_state: BTreeMap<String, String> = [
            (current, "+ws"),
            (going, "+ws"),
            (names[4].clone(), "+ws"),
            (names[3].clone(), "files"),
            (names[2].clone(), "files"),
            (starting, "files"),
            ("notes".to_string(), "files"),
            ("r1-000000".to_string(), "link"),
        ]
        .into_iter()
        .map(|(k, v)| (k, v.to_string()))
        .collect();
        let expected = (
            Pruned {
                removed: 3,
                emptied: 2,
                failures: Vec::new(),
            },
            expected_state,
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn zero_keeps_everything() {
        let tmp = tempfile::tempdir().unwrap();
        let runs = tmp.path();
        let old = finished(runs, 1000, true);
        let current = finished(runs, 2000, true);

        let pruned = prune(
            runs,
            &current,
            &Runs {
                keep: 0,
                keep_workspaces: 0,
            },
        );
        let actual = (pruned, state(runs));

        let expected = (
            Pruned::default(),
            [(old, "+ws".to_string()), (current, "+ws".to_string())]
                .into_iter()
                .collect(),
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn only_run_ids_are_run_names() {
        let actual: Vec<Option<u64>> = [
            "r1a2b-0f0f0f",
            "r1a2b-0f0f0",
            "x1a2b-0f0f0f",
            "r-000000",
            "rzz-000000",
        ]
        .iter()
        .map(|n| run_time(n))
        .collect();
        assert_eq!(actual, vec![Some(0x1a2b), None, None, None, None]);
    }
}
