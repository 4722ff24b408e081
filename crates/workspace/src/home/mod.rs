//! Bringing an approved change home, and taking it back out: the only code in plumb that writes to
//! the user's repository. Every write is bound to two things: the SHA-256 of the diff a person
//! approved (checked again right before writing), and the bytes each touched file had when the run
//! started (recorded at the run's end as a [`ChangeRecord`]). A file the user changed since is never
//! overwritten: the apply is refused and says which files. It is all or nothing: a failure after
//! the first byte written puts every file back before it is reported, and `applied.json` always
//! says what the files hold.
//!
//! - `tree.rs`: the change into the working tree (the patch applied to a scratch copy, then each
//!   file moved in), and its undo, in the order of writes that keeps the record true;
//! - `swap.rs`: moving each touched path from one side to the other without ever writing over a
//!   byte the user wrote meanwhile, and back on a failure;
//! - `record.rs`: `applied.json` (`applying`, `applied`, `undoing`, `undone`) and the run's lock;
//! - `branch.rs`: the change as a commit on a new local branch, built with a private index, so the
//!   checked-out branch, the index and the working tree stay as they are; and its undo;
//! - `branch_name.rs`: git's rules for a branch name, each refusal naming its rule;
//! - `faults.rs`: the seam a test uses to make each write fail in turn;
//! - `state.rs`: what a path holds, walked without following links.
//!
//! Never a push, never a remote: nothing here talks to anything but the local git and the disk.

mod branch;
mod branch_name;
mod faults;
mod record;
mod state;
mod swap;
mod tree;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::diff::{ChangeKind, ChangedFile, Entry, EntryMode};
use crate::error::WorkspaceError;
use crate::workspace::Workspace;
use record::Records;

pub use branch::{BranchCommit, Identity, NewBranch, commit_on_branch, commit_on_branch_with};
pub use branch_name::{BranchNameError, check_branch_name};
#[doc(hidden)]
pub use faults::{Faults, NoFaults, Step};
pub use record::{APPLIED_FILE, Applied, Blob, HomeState, Slot, write_record};
pub use state::{FileKind, FileState};
pub use tree::{apply_to_tree, apply_to_tree_with};

/// The file a run folder keeps its [`ChangeRecord`] in.
pub const CHANGE_FILE: &str = "change.json";
/// The folder of a run that holds the bytes each touched path has on each side.
pub const SAVED_DIR: &str = "applied";

/// One file a change touches: where, and what it holds before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Touched {
    /// The path relative to the repository root, `/`-separated (a rename's new path).
    pub path: String,
    /// A rename's old path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// What the file held when the run started (at `from` for a rename); `None` for a new file.
    pub before: Option<FileState>,
    /// What the change leaves; `None` for a deleted file.
    pub after: Option<FileState>,
}

impl Touched {
    /// The path that holds `before`.
    pub fn before_path(&self) -> &str {
        self.from.as_deref().unwrap_or(&self.path)
    }
}

/// What a verified change needs to be brought home later: the repository it is for, the digest
/// of its diff and each touched file's bytes at the start. Written by the run beside `patch.diff`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeRecord {
    /// The user's folder the run copied.
    pub repo: PathBuf,
    pub patch_sha256: String,
    pub files: Vec<Touched>,
}

/// How a change was brought home.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "into", rename_all = "snake_case")]
pub enum Destination {
    /// Into the working tree; the touched files' earlier bytes are saved in the run's `applied/`.
    WorkingTree,
    /// As a commit on a new local branch.
    Branch { name: String, commit: String },
}

/// Why a change could not be brought home or taken back; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum HomeError {
    #[error(
        "the SHA-256 given ({given}) is not the one of this run's patch ({actual}); approve the diff you were shown by its SHA-256"
    )]
    ShaMismatch { given: String, actual: String },
    #[error(
        "the run's patch file no longer has the SHA-256 it was approved with ({expected}, now {actual}); nothing was applied"
    )]
    PatchChanged { expected: String, actual: String },
    #[error(
        "{} changed since the run started, so plumb applied nothing; the patch is in {patch}: merge it by hand, or run plumb fix again",
        list(files)
    )]
    ChangedSinceStart { files: Vec<String>, patch: PathBuf },
    #[error(
        "{} changed since plumb applied the change, so plumb undid nothing; reverse it by hand with git apply -R {patch}",
        list(files)
    )]
    ChangedSinceApply { files: Vec<String>, patch: PathBuf },
    #[error("{path} is not a plain path inside the repository; plumb writes only there")]
    BadPath { path: String },
    #[error("{path} lies under {link}, a link; plumb writes nothing through a link")]
    UnderALink { path: String, link: String },
    #[error("{path} is not a file (a folder or a device); plumb changes only files and links")]
    NotAFile { path: String },
    #[error(
        "{path} is a submodule (another repository's commit); apply that part of the patch by hand"
    )]
    Submodule { path: String },
    #[error("git apply could not apply the patch to {repo}: {detail}; nothing was changed")]
    DoesNotApply { repo: PathBuf, detail: String },
    #[error(
        "git apply made {} differ from what the verified change holds, so plumb changed nothing",
        list(files)
    )]
    AppliedDifferently { files: Vec<String> },
    #[error(
        "{repo} is not the top folder of a git repository, so --branch has no repository to commit in; run without --branch to apply to the files"
    )]
    NotARepository { repo: PathBuf },
    #[error(
        "{repo} has no commit yet (HEAD is unborn), so there is nothing to branch from; commit once first, or run without --branch"
    )]
    NoHead { repo: PathBuf },
    #[error("the branch name {name:?} is refused: {rule}; choose another name with --branch")]
    BadBranchName { name: String, rule: BranchNameError },
    #[error("git could not create the branch {name} ({detail}); choose another name with --branch")]
    BranchNotCreated { name: String, detail: String },
    #[error("a branch named {name} already exists; choose another name with --branch")]
    BranchExists { name: String },
    #[error(
        "the change does not apply to HEAD of {repo} ({detail}): it was made on your uncommitted files; commit them first, or apply without --branch"
    )]
    NotOnHead { repo: PathBuf, detail: String },
    #[error(
        "branch {name} no longer points at plumb's commit {commit}, so plumb left it alone; delete it yourself if you no longer want it"
    )]
    BranchMoved { name: String, commit: String },
    #[error("branch {name} is checked out; switch to another branch first, then undo")]
    BranchCheckedOut { name: String },
    #[error(
        "another plumb is applying or undoing run {run} right now; wait for it to end, then try again"
    )]
    Busy { run: String },
    #[error(
        "run {run} is already applied ({destination}); plumb undo {run} first to apply it again"
    )]
    AlreadyApplied { run: String, destination: String },
    #[error(
        "run {run} was interrupted while plumb was {doing} it, so each file it touches holds its old bytes or its new ones; plumb undo {run} puts them all back"
    )]
    Interrupted { run: String, doing: &'static str },
    #[error("run {run} was never applied, so there is nothing to undo")]
    NeverApplied { run: String },
    #[error("run {run} was already undone")]
    AlreadyUndone { run: String },
    #[error("{cause}; plumb put things back as they were: {back}")]
    Reverted {
        cause: Box<HomeError>,
        back: &'static str,
    },
    #[error(
        "{cause}; putting back {} failed too, so each may hold the old bytes or the new; plumb undo {run} finishes (the bytes it needs are saved in the run folder)",
        list(left)
    )]
    PartlyDone {
        cause: Box<HomeError>,
        left: Vec<String>,
        run: String,
    },
    #[error(
        "{cause}; deleting the branch {name} again failed too, so it may exist; plumb undo {run} deletes it"
    )]
    BranchLeft {
        cause: Box<HomeError>,
        name: String,
        run: String,
    },
    #[error(
        "{path} changed while plumb was writing it; plumb kept what it found there as {} and wrote nothing over it",
        aside.display()
    )]
    LeftAside { path: String, aside: PathBuf },
    #[error(
        "{} is not what plumb saved there (its SHA-256 differs), so plumb wrote nothing from it",
        file.display()
    )]
    SavedChanged { file: PathBuf },
    #[error("could not {doing} {}: {source}", path.display())]
    Io {
        doing: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Git(#[from] WorkspaceError),
}

impl HomeError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        HomeError::Io {
            doing: "read",
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn write(path: &Path, source: std::io::Error) -> Self {
        HomeError::Io {
            doing: "write",
            path: path.to_path_buf(),
            source,
        }
    }

    /// True when the disk or git failed, not the user's input or their tree's state.
    pub fn is_infra(&self) -> bool {
        match self {
            HomeError::Io { .. }
            | HomeError::AppliedDifferently { .. }
            | HomeError::PartlyDone { .. }
            | HomeError::BranchLeft { .. }
            | HomeError::SavedChanged { .. } => true,
            HomeError::Reverted { cause, .. } => cause.is_infra(),
            HomeError::Git(err) => err.is_infra(),
            HomeError::ShaMismatch { .. }
            | HomeError::PatchChanged { .. }
            | HomeError::ChangedSinceStart { .. }
            | HomeError::ChangedSinceApply { .. }
            | HomeError::BadPath { .. }
            | HomeError::UnderALink { .. }
            | HomeError::NotAFile { .. }
            | HomeError::Submodule { .. }
            | HomeError::DoesNotApply { .. }
            | HomeError::NotARepository { .. }
            | HomeError::NoHead { .. }
            | HomeError::BadBranchName { .. }
            | HomeError::BranchNotCreated { .. }
            | HomeError::BranchExists { .. }
            | HomeError::NotOnHead { .. }
            | HomeError::BranchMoved { .. }
            | HomeError::BranchCheckedOut { .. }
            | HomeError::Busy { .. }
            | HomeError::AlreadyApplied { .. }
            | HomeError::Interrupted { .. }
            | HomeError::NeverApplied { .. }
            | HomeError::AlreadyUndone { .. }
            | HomeError::LeftAside { .. } => false,
        }
    }
}

fn list(files: &[String]) -> String {
    match files {
        [one] => one.clone(),
        many => format!("{} files ({})", many.len(), many.join(", ")),
    }
}

impl Workspace {
    /// The touched files of a change, as a [`ChangeRecord`] keeps them: each side's kind and the
    /// SHA-256 of its bytes, read from what the shadow git stores.
    pub fn touched(&self, files: &[ChangedFile]) -> Result<Vec<Touched>, HomeError> {
        files
            .iter()
            .map(|file| {
                let side = |entry: &Option<Entry>| -> Result<Option<FileState>, HomeError> {
                    let Some(entry) = entry else {
                        return Ok(None);
                    };
                    let kind = match entry.mode {
                        EntryMode::Regular => FileKind::Regular,
                        EntryMode::Executable => FileKind::Executable,
                        EntryMode::Symlink => FileKind::Symlink,
                        EntryMode::Gitlink => {
                            return Err(HomeError::Submodule {
                                path: file.path.clone(),
                            });
                        }
                    };
                    let bytes = self.blob_bytes(&entry.id)?;
                    Ok(Some(FileState::of_bytes(kind, &bytes)))
                };
                Ok(Touched {
                    path: file.path.clone(),
                    from: match &file.status {
                        ChangeKind::Renamed { from } => Some(from.clone()),
                        _ => None,
                    },
                    before: side(&file.before)?,
                    after: side(&file.after)?,
                })
            })
            .collect()
    }
}

/// The patch file must still be the approved one (and the one the run recorded): its SHA-256 is
/// checked right before anything is written, whichever way the change goes home.
pub(crate) fn check_patch(
    patch_path: &Path,
    approved: &str,
    recorded: &str,
) -> Result<(), HomeError> {
    let bytes = std::fs::read(patch_path).map_err(|err| HomeError::io(patch_path, err))?;
    let actual = crate::diff::sha256_hex(&bytes);
    if actual != approved || actual != recorded {
        return Err(HomeError::PatchChanged {
            expected: approved.to_string(),
            actual,
        });
    }
    Ok(())
}

/// Milliseconds since the epoch, for records.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Refuses to bring a change home again while the record says it is home, or half home.
pub(crate) fn refuse_if_home(records: &Records<'_>, run_dir: &Path) -> Result<(), HomeError> {
    let run = record::run_name(run_dir);
    let Some(current) = records.current()? else {
        return Ok(());
    };
    match current.state {
        HomeState::Undone => Ok(()),
        HomeState::Applied => Err(HomeError::AlreadyApplied {
            run,
            destination: match &current.destination {
                Destination::WorkingTree => "working tree".to_string(),
                Destination::Branch { name, .. } => format!("branch {name}"),
            },
        }),
        HomeState::Applying => Err(HomeError::Interrupted {
            run,
            doing: "applying",
        }),
        HomeState::Undoing => Err(HomeError::Interrupted {
            run,
            doing: "undoing",
        }),
    }
}

/// Takes back the change of the run in `run_dir`, as its `applied.json` says it went home: the
/// working tree's files back to their old bytes (`patch_path` is named in a refusal), or the branch
/// deleted. An apply or undo that was interrupted is finished toward the old state. Returns the
/// record as it is now.
pub fn undo(run_dir: &Path, patch_path: &Path) -> Result<Applied, HomeError> {
    undo_with(run_dir, patch_path, &NoFaults)
}

/// [`undo`] with a fault-injection seam.
#[doc(hidden)]
pub fn undo_with(
    run_dir: &Path,
    patch_path: &Path,
    faults: &dyn Faults,
) -> Result<Applied, HomeError> {
    let records = Records::lock(run_dir, faults)?;
    let run = record::run_name(run_dir);
    let Some(applied) = records.current()? else {
        return Err(HomeError::NeverApplied { run });
    };
    match (applied.state, &applied.destination) {
        (HomeState::Undone, _) => Err(HomeError::AlreadyUndone { run }),
        (_, Destination::WorkingTree) => {
            tree::undo_in_tree(&records, &applied, run_dir, patch_path, faults)
        }
        (_, Destination::Branch { name, commit }) => {
            branch::delete_branch(&records, &applied, (name, commit), run_dir, faults)
        }
    }
}
