//! The change as a commit on a new local branch. A private index file is filled from `HEAD`, the
//! approved patch is applied to it (`git apply --cached`), and the tree it makes is committed with
//! `HEAD` as parent; the branch is created only if it does not exist yet (`update-ref` with a zero
//! old value). The checked-out branch, the repository's index and the working tree are never read
//! for writing, nor written. Undo deletes the branch only while it still points at that commit.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::{Applied, ChangeRecord, Destination, HomeError, check_patch, now_ms, write_record};
use crate::error::WorkspaceError;
use crate::git::Git;

/// Who the commit is by: the user's git identity, or plumb's when they have none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub name: String,
    pub email: String,
}

/// What `commit_on_branch` made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchCommit {
    pub applied: Applied,
    pub commit: String,
}

/// Commits the approved patch (`patch_path`, whose SHA-256 must be `approved_sha`) on a new branch
/// `name` of the repository at `record.repo`, parent `HEAD`; returns the record (also written as
/// `applied.json`).
pub fn commit_on_branch(
    record: &ChangeRecord,
    patch_path: &Path,
    approved_sha: &str,
    name: &str,
    message: &str,
    identity: &Identity,
    run_dir: &Path,
) -> Result<BranchCommit, HomeError> {
    check_patch(patch_path, approved_sha, &record.patch_sha256)?;
    let git = repository(&record.repo, run_dir)?;
    let refname = branch_ref(&git, name)?;
    if git
        .run_in_folder(&["rev-parse", "--verify", "--quiet", &refname], &[], None)
        .is_ok()
    {
        return Err(HomeError::BranchExists {
            name: name.to_string(),
        });
    }
    let head = git
        .run_in_folder(
            &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
            &[],
            None,
        )
        .map_err(|_| HomeError::NoHead {
            repo: record.repo.clone(),
        })?
        .text("rev-parse")?
        .to_string();
    let index = run_dir.join("branch.index");
    let _ = std::fs::remove_file(&index);
    let with_index = [("GIT_INDEX_FILE", index.as_os_str())];
    git.run_in_folder(&["read-tree", &head], &with_index, None)?;
    let patch = patch_path.to_string_lossy();
    git.run_in_folder(
        &["apply", "--cached", "--whitespace=nowarn", "--", &patch],
        &with_index,
        None,
    )
    .map_err(|err| HomeError::NotOnHead {
        repo: record.repo.clone(),
        detail: git_detail(&err),
    })?;
    let tree = git
        .run_in_folder(&["write-tree"], &with_index, None)?
        .text("write-tree")?
        .to_string();
    let _ = std::fs::remove_file(&index);
    let now = format!("{} +0000", now_ms() / 1000);
    let who = [
        ("GIT_AUTHOR_NAME", OsStr::new(&identity.name)),
        ("GIT_AUTHOR_EMAIL", OsStr::new(&identity.email)),
        ("GIT_COMMITTER_NAME", OsStr::new(&identity.name)),
        ("GIT_COMMITTER_EMAIL", OsStr::new(&identity.email)),
        ("GIT_AUTHOR_DATE", OsStr::new(&now)),
        ("GIT_COMMITTER_DATE", OsStr::new(&now)),
    ];
    let commit = git
        .run_in_folder(
            &["commit-tree", &tree, "-p", &head, "-F", "-"],
            &who,
            Some(message.as_bytes()),
        )?
        .text("commit-tree")?
        .to_string();
    // The zero old value: the ref must not exist, so a branch made meanwhile is never overwritten.
    git.run_in_folder(
        &[
            "update-ref",
            "-m",
            "plumb apply",
            &refname,
            &commit,
            &"0".repeat(commit.len()),
        ],
        &[],
        None,
    )
    .map_err(|_| HomeError::BranchExists {
        name: name.to_string(),
    })?;
    let applied = Applied {
        repo: record.repo.clone(),
        patch_sha256: record.patch_sha256.clone(),
        destination: Destination::Branch {
            name: name.to_string(),
            commit: commit.clone(),
        },
        files: record.files.clone(),
        at_ms: now_ms(),
        undone: false,
    };
    write_record(&run_dir.join(super::APPLIED_FILE), &applied)?;
    Ok(BranchCommit { applied, commit })
}

/// Deletes the branch an apply made, if it still points at plumb's commit and is not checked out.
pub fn delete_branch(applied: &Applied, run_dir: &Path) -> Result<(), HomeError> {
    let Destination::Branch { name, commit } = &applied.destination else {
        return Ok(());
    };
    let git = repository(&applied.repo, run_dir)?;
    let refname = branch_ref(&git, name)?;
    let checked_out = git
        .run_in_folder(&["symbolic-ref", "--quiet", "HEAD"], &[], None)
        .ok()
        .and_then(|out| out.text("symbolic-ref").ok().map(str::to_string));
    if checked_out.as_deref() == Some(refname.as_str()) {
        return Err(HomeError::BranchCheckedOut { name: name.clone() });
    }
    git.run_in_folder(&["update-ref", "-d", &refname, commit], &[], None)
        .map_err(|_| HomeError::BranchMoved {
            name: name.clone(),
            commit: commit.clone(),
        })?;
    write_record(
        &run_dir.join(super::APPLIED_FILE),
        &Applied {
            undone: true,
            ..applied.clone()
        },
    )
}

/// The git repository whose top folder is `repo`.
fn repository(repo: &Path, run_dir: &Path) -> Result<Git, HomeError> {
    let home = run_dir.join(super::SAVED_DIR);
    std::fs::create_dir_all(&home).map_err(|err| HomeError::write(&home, err))?;
    let git = Git::new(PathBuf::new(), repo.to_path_buf(), home);
    let top = git
        .run_in_folder(&["rev-parse", "--show-toplevel"], &[], None)
        .ok()
        .and_then(|out| out.text("rev-parse").ok().map(PathBuf::from));
    let same = match (top, repo.canonicalize()) {
        (Some(top), Ok(repo)) => top.canonicalize().is_ok_and(|top| top == repo),
        _ => false,
    };
    if !same {
        return Err(HomeError::NotARepository {
            repo: repo.to_path_buf(),
        });
    }
    Ok(git)
}

/// `refs/heads/<name>`, when git accepts it as a branch name.
fn branch_ref(git: &Git, name: &str) -> Result<String, HomeError> {
    let refname = format!("refs/heads/{name}");
    let bad = |detail: String| HomeError::BadBranchName {
        name: name.to_string(),
        detail,
    };
    if name.starts_with('-') {
        return Err(bad("it starts with -".into()));
    }
    git.run_in_folder(&["check-ref-format", &refname], &[], None)
        .map_err(|_| bad("git check-ref-format refuses it".into()))?;
    Ok(refname)
}

/// What git said, without the command line around it.
fn git_detail(err: &WorkspaceError) -> String {
    match err {
        WorkspaceError::Git { stderr, .. } => stderr.lines().next().unwrap_or_default().to_string(),
        other => other.to_string(),
    }
}
