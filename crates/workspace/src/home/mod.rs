//! Bringing an approved change home, and taking it back out: the only code in plumb that writes to
//! the user's repository. Every write is bound to two things: the SHA-256 of the diff a person
//! approved (checked again right before writing), and the bytes each touched file had when the run
//! started (recorded at the run's end as a [`ChangeRecord`]). A file the user changed since is never
//! overwritten: the apply is refused and says which files.
//!
//! - `tree.rs`: the change into the working tree (`git apply`, checked before and after), and its undo
//!   from the bytes saved just before;
//! - `branch.rs`: the change as a commit on a new local branch, built with a private index, so the
//!   checked-out branch, the index and the working tree stay as they are; and its undo;
//! - `state.rs`: what a path holds, walked without following links.
//!
//! Never a push, never a remote: nothing here talks to anything but the local git and the disk.

mod branch;
mod state;
mod tree;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::diff::{ChangeKind, ChangedFile, Entry, EntryMode};
use crate::error::WorkspaceError;
use crate::workspace::Workspace;

pub use branch::{BranchCommit, Identity, commit_on_branch, delete_branch};
pub use state::{FileKind, FileState};
pub use tree::{apply_to_tree, undo_in_tree};

/// The file a run folder keeps its [`ChangeRecord`] in.
pub const CHANGE_FILE: &str = "change.json";
/// The file a run folder keeps its [`Applied`] record in once the change was brought home.
pub const APPLIED_FILE: &str = "applied.json";
/// The folder of a run that holds the bytes the touched files had just before an apply.
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

/// The record of an apply, kept in the run folder for `plumb undo`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    pub repo: PathBuf,
    pub patch_sha256: String,
    pub destination: Destination,
    pub files: Vec<Touched>,
    /// Milliseconds since the epoch.
    pub at_ms: u64,
    /// Set once `plumb undo` reversed it.
    #[serde(default)]
    pub undone: bool,
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
        "after git apply, {} did not hold what the approved change holds; plumb put back every file as it was",
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
    #[error(
        "the branch name {name:?} is not valid in git ({detail}); choose another with --branch"
    )]
    BadBranchName { name: String, detail: String },
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
            HomeError::Io { .. } | HomeError::AppliedDifferently { .. } => true,
            HomeError::Git(err) => err.is_infra(),
            _ => false,
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

/// Writes `value` as pretty JSON to `path` through a temporary file and a rename, so a reader
/// never sees half of it.
pub fn write_record<T: Serialize>(path: &Path, value: &T) -> Result<(), HomeError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|err| HomeError::write(path, std::io::Error::other(err.to_string())))?;
    let temporary = path.with_extension("json.tmp");
    std::fs::write(&temporary, text).map_err(|err| HomeError::write(&temporary, err))?;
    std::fs::rename(&temporary, path).map_err(|err| HomeError::write(path, err))
}
