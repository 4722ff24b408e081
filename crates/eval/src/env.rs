//! The tree a task starts from, in `OUT/<task>/tree/`: the tree at `base_commit` and nothing else —
//! no `.git`, no later history (a copy with future commits hands the agent the gold fix through
//! `git log`). It is made once per task and shared by its attempts, which only read it: each run
//! copies it into its own workspace, and the scorer copies it again.
//!
//! The tree is written to `tree.partial/` and renamed when whole, so an interrupted eval never
//! leaves a half tree that a resumed one would take for the task's.

use std::path::{Path, PathBuf};

use plumb_workspace::{SourceTreeError, export_commit, unpack_archive};

use crate::task::{RepoSource, Task};

/// The folder of the tree under a task's folder.
pub const TREE_DIR: &str = "tree";

/// Why the starting tree could not be made.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    /// The task's repository or base commit is wrong: fix the task.
    #[error("{0}")]
    BadTask(String),
    /// The disk or git failed.
    #[error("{0}")]
    Infra(String),
}

impl From<SourceTreeError> for EnvError {
    fn from(err: SourceTreeError) -> Self {
        if err.is_infra() {
            Self::Infra(err.to_string())
        } else {
            Self::BadTask(err.to_string())
        }
    }
}

/// The task's starting tree under `task_dir`, made if it is not there yet. `max_bytes` caps an
/// archive's content (`limits.max_copy_bytes`).
pub fn starting_tree(task: &Task, task_dir: &Path, max_bytes: u64) -> Result<PathBuf, EnvError> {
    let tree = task_dir.join(TREE_DIR);
    if tree.is_dir() {
        return Ok(tree);
    }
    if let RepoSource::Folder(folder) = &task.repo {
        // Already the tree at its base commit; the run's copy leaves out any `.git` in it.
        return folder.canonicalize().map_err(|err| {
            EnvError::BadTask(format!(
                "the repo folder {} of {} cannot be opened: {err}",
                folder.display(),
                task.instance_id
            ))
        });
    }
    let partial = task_dir.join("tree.partial");
    let scratch = task_dir.join("tree.scratch");
    for dir in [&partial, &scratch] {
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(|err| {
                EnvError::Infra(format!("could not remove {}: {err}", dir.display()))
            })?;
        }
    }
    let made = match &task.repo {
        RepoSource::Git(repo) => {
            let commit = task.base_commit.as_deref().ok_or_else(|| {
                EnvError::BadTask(format!(
                    "{} names a git repository but no base_commit; give the commit to start from",
                    task.instance_id
                ))
            })?;
            export_commit(repo, commit, &partial, &scratch).map(|_| ())
        }
        RepoSource::Archive(archive) => unpack_archive(archive, &partial, max_bytes),
        RepoSource::Folder(_) => Ok(()),
    };
    let _ = std::fs::remove_dir_all(&scratch);
    if let Err(err) = made {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(err.into());
    }
    std::fs::rename(&partial, &tree).map_err(|err| {
        EnvError::Infra(format!(
            "could not move {} to {}: {err}",
            partial.display(),
            tree.display()
        ))
    })?;
    Ok(tree)
}
