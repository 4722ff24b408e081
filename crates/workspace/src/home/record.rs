//! `applied.json`: the record of a change brought home, which always says what the user's files
//! (or branch) hold. It is written before the first byte reaches the user's repository
//! (`applying`: each touched path holds its old bytes or its new ones), again once every path holds
//! the new ones (`applied`), and the same way for an undo (`undoing`, then `undone`). An apply or
//! undo that fails puts the files back first, then the record as it was; a crash anywhere leaves a
//! record whose state covers what the files hold, and `plumb undo` finishes an interrupted one.
//!
//! One record file, replaced whole (a temporary file, `fsync`, a rename, the folder's `fsync`), so
//! a reader sees the old record or the new one, never half of one. While a process reads or writes
//! it, it holds an exclusive lock on `home.lock` in the run folder: two applies or undos of one run
//! never interleave.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, flock};
use serde::{Deserialize, Serialize};

use super::faults::{Faults, Step};
use super::state::FileState;
use super::{Destination, HomeError, Touched};

/// The file a run folder keeps its [`Applied`] record in once the change was brought home.
pub const APPLIED_FILE: &str = "applied.json";
/// The lock held while a change is brought home or taken back.
const LOCK_FILE: &str = "home.lock";

/// Where a change brought home stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HomeState {
    /// Being brought home: each touched path holds its old bytes or its new ones (a branch: not
    /// made yet, or made at the recorded commit).
    Applying,
    /// Every touched path holds the new bytes (the branch points at the recorded commit).
    Applied,
    /// Being taken back: each path holds its new bytes or its old ones.
    Undoing,
    /// Every touched path holds its old bytes again (the branch is gone).
    Undone,
}

impl HomeState {
    pub fn as_str(self) -> &'static str {
        match self {
            HomeState::Applying => "applying",
            HomeState::Applied => "applied",
            HomeState::Undoing => "undoing",
            HomeState::Undone => "undone",
        }
    }
}

/// One side of a touched path, as saved in the run's `applied/` folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blob {
    /// The kind and SHA-256 the path holds on this side.
    pub state: FileState,
    /// The file in `applied/` holding its bytes (a link's target).
    pub name: String,
    /// Its permission bits (a link has none worth keeping).
    pub mode: u32,
}

/// One path a change touches, and what it holds before and after (`None`: nothing). A rename is
/// two slots: its old path (something, then nothing) and its new one (nothing, then something).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slot {
    pub path: String,
    pub before: Option<Blob>,
    pub after: Option<Blob>,
    /// The folders above `path` the apply makes for it (they did not exist), outermost first:
    /// the ones taking the change back removes again, when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub made: Vec<String>,
}

/// The record of an apply, kept in the run folder for `plumb undo`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "OnDisk")]
pub struct Applied {
    pub repo: PathBuf,
    pub patch_sha256: String,
    pub destination: Destination,
    pub files: Vec<Touched>,
    /// Milliseconds since the epoch of the last change of state.
    pub at_ms: u64,
    pub state: HomeState,
    /// Each touched path and where its two sides are saved (empty for a branch, and in records
    /// of a plumb from before the states, whose undo reads `applied/saved.json`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slots: Vec<Slot>,
}

/// A record as it may be on disk: a plumb from before the states wrote `undone: bool`.
#[derive(Deserialize)]
struct OnDisk {
    repo: PathBuf,
    patch_sha256: String,
    destination: Destination,
    files: Vec<Touched>,
    at_ms: u64,
    #[serde(default)]
    state: Option<HomeState>,
    #[serde(default)]
    undone: bool,
    #[serde(default)]
    slots: Vec<Slot>,
}

impl From<OnDisk> for Applied {
    fn from(disk: OnDisk) -> Self {
        let state = disk.state.unwrap_or(if disk.undone {
            HomeState::Undone
        } else {
            HomeState::Applied
        });
        Applied {
            repo: disk.repo,
            patch_sha256: disk.patch_sha256,
            destination: disk.destination,
            files: disk.files,
            at_ms: disk.at_ms,
            state,
            slots: disk.slots,
        }
    }
}

/// A run folder's record while its lock is held: read once, written through [`Records::write`],
/// and put back as it was by [`Records::restore`] when an apply is refused after it began.
pub(crate) struct Records<'a> {
    run_dir: &'a Path,
    faults: &'a dyn Faults,
    /// The record's bytes as they were when the lock was taken (`None`: there was none).
    first: Option<Vec<u8>>,
    _lock: File,
}

impl<'a> Records<'a> {
    /// Locks the run folder's records; refused while another plumb holds them.
    pub(crate) fn lock(run_dir: &'a Path, faults: &'a dyn Faults) -> Result<Self, HomeError> {
        let path = run_dir.join(LOCK_FILE);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|err| HomeError::write(&path, err))?;
        flock(&file, FlockOperation::NonBlockingLockExclusive).map_err(|_| HomeError::Busy {
            run: run_name(run_dir),
        })?;
        let record = run_dir.join(APPLIED_FILE);
        let first = match std::fs::read(&record) {
            Ok(bytes) => Some(bytes),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => return Err(HomeError::io(&record, err)),
        };
        Ok(Self {
            run_dir,
            faults,
            first,
            _lock: file,
        })
    }

    /// The record as it was when the lock was taken.
    pub(crate) fn current(&self) -> Result<Option<Applied>, HomeError> {
        let Some(bytes) = &self.first else {
            return Ok(None);
        };
        let path = self.run_dir.join(APPLIED_FILE);
        serde_json::from_slice(bytes)
            .map(Some)
            .map_err(|err| HomeError::io(&path, std::io::Error::other(err.to_string())))
    }

    /// Writes `applied` as the record.
    pub(crate) fn write(&self, applied: &Applied) -> Result<(), HomeError> {
        let path = self.run_dir.join(APPLIED_FILE);
        self.faults
            .before(&Step::Record(applied.state.as_str()))
            .map_err(|err| HomeError::write(&path, err))?;
        write_record(&path, applied)
    }

    /// Puts the record back as it was when the lock was taken (none: removed).
    pub(crate) fn restore(&self) -> Result<(), HomeError> {
        let path = self.run_dir.join(APPLIED_FILE);
        self.faults
            .before(&Step::Record("as it was"))
            .map_err(|err| HomeError::write(&path, err))?;
        match &self.first {
            Some(bytes) => write_bytes(&path, bytes),
            None => match std::fs::remove_file(&path) {
                Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                    Err(HomeError::write(&path, err))
                }
                _ => sync_dir(&path),
            },
        }
    }
}

/// The run's id, as its folder is named: for messages and temporary names.
pub(crate) fn run_name(run_dir: &Path) -> String {
    run_dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Writes `value` as pretty JSON to `path` through a temporary file and a rename, so a reader
/// never sees half of it; the bytes and the rename reach the disk before it returns.
pub fn write_record<T: Serialize>(path: &Path, value: &T) -> Result<(), HomeError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|err| HomeError::write(path, std::io::Error::other(err.to_string())))?;
    write_bytes(path, text.as_bytes())
}

fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), HomeError> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    let written = File::create(&temporary)
        .and_then(|mut file| {
            file.write_all(bytes)?;
            file.sync_all()
        })
        .map_err(|err| HomeError::write(&temporary, err));
    if let Err(err) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(err);
    }
    std::fs::rename(&temporary, path).map_err(|err| HomeError::write(path, err))?;
    sync_dir(path)
}

/// Makes a rename or removal in `path`'s folder reach the disk.
pub(crate) fn sync_dir(path: &Path) -> Result<(), HomeError> {
    match path.parent() {
        Some(dir) => sync_folder(dir),
        None => Ok(()),
    }
}

/// Makes the renames and removals in the folder `dir` reach the disk.
pub(crate) fn sync_folder(dir: &Path) -> Result<(), HomeError> {
    File::open(dir)
        .and_then(|dir| dir.sync_all())
        .map_err(|err| HomeError::write(dir, err))
}
