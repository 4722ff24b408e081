//! The change as a commit on a new local branch. A private index file (in the run folder) is
//! filled from `HEAD`, the approved patch is applied to it (`git apply --cached`), and the tree it
//! makes is committed with `HEAD` as parent. Those steps write only objects nothing refers to yet;
//! the one write the user can see is the branch itself. So: `applied.json` says `applying` (with
//! the branch and commit), then `update-ref` creates the branch only if it does not exist (a zero
//! old value), then the record says `applied`; a failure after the branch was made deletes it
//! (only while it still points at plumb's commit) before it is reported. The checked-out branch,
//! the repository's index and the working tree are never written. Undo is the same the other way:
//! `undoing`, the branch deleted while it points at that commit, `undone`; a failure puts the
//! branch back.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::branch_name::check_branch_name;
use super::faults::{Faults, NoFaults, Step};
use super::record::{Applied, HomeState, Records};
use super::{ChangeRecord, Destination, HomeError, check_patch, now_ms, refuse_if_home};
use crate::error::WorkspaceError;
use crate::git::Git;

/// Who the commit is by: the user's git identity, or plumb's when they have none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub name: String,
    pub email: String,
}

/// The branch to make: its name, the commit's message and author.
#[derive(Debug, Clone, Copy)]
pub struct NewBranch<'a> {
    pub name: &'a str,
    pub message: &'a str,
    pub identity: &'a Identity,
}

/// What `commit_on_branch` made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchCommit {
    pub applied: Applied,
    pub commit: String,
}

/// Commits the approved patch (`patch_path`, whose SHA-256 must be `approved_sha`) on the new
/// branch `branch.name` of the repository at `record.repo`, parent `HEAD`; returns the record
/// (also written as `applied.json`).
pub fn commit_on_branch(
    record: &ChangeRecord,
    patch_path: &Path,
    approved_sha: &str,
    branch: &NewBranch<'_>,
    run_dir: &Path,
) -> Result<BranchCommit, HomeError> {
    commit_on_branch_with(record, patch_path, approved_sha, branch, run_dir, &NoFaults)
}

/// [`commit_on_branch`] with a fault-injection seam.
#[doc(hidden)]
pub fn commit_on_branch_with(
    record: &ChangeRecord,
    patch_path: &Path,
    approved_sha: &str,
    branch: &NewBranch<'_>,
    run_dir: &Path,
    faults: &dyn Faults,
) -> Result<BranchCommit, HomeError> {
    let name = branch.name;
    check_branch_name(name).map_err(|rule| HomeError::BadBranchName {
        name: name.to_string(),
        rule,
    })?;
    let records = Records::lock(run_dir, faults)?;
    refuse_if_home(&records, run_dir)?;
    check_patch(patch_path, approved_sha, &record.patch_sha256)?;
    let repo = Repository::open(&record.repo, run_dir, faults)?;
    let refname = format!("refs/heads/{name}");
    if repo.points_at(&refname)?.is_some() {
        return Err(HomeError::BranchExists {
            name: name.to_string(),
        });
    }
    let commit = repo.commit(record, patch_path, branch, run_dir)?;
    let mut applied = Applied {
        repo: record.repo.clone(),
        patch_sha256: record.patch_sha256.clone(),
        destination: Destination::Branch {
            name: name.to_string(),
            commit: commit.clone(),
        },
        files: record.files.clone(),
        at_ms: now_ms(),
        state: HomeState::Applying,
        slots: Vec::new(),
    };
    records.write(&applied)?;
    if let Err(err) = repo.create(&refname, &commit) {
        let _ = records.restore();
        return Err(match repo.points_at(&refname) {
            Ok(Some(_)) => HomeError::BranchExists {
                name: name.to_string(),
            },
            _ => HomeError::BranchNotCreated {
                name: name.to_string(),
                detail: git_detail(&err),
            },
        });
    }
    applied.state = HomeState::Applied;
    applied.at_ms = now_ms();
    if let Err(cause) = records.write(&applied) {
        return Err(match repo.delete(&refname, &commit) {
            Ok(()) => {
                let _ = records.restore();
                HomeError::Reverted {
                    cause: Box::new(cause),
                    back: "the branch is deleted again",
                }
            }
            Err(_) => HomeError::BranchLeft {
                cause: Box::new(cause),
                name: name.to_string(),
                run: super::record::run_name(run_dir),
            },
        });
    }
    Ok(BranchCommit { applied, commit })
}

/// Deletes the branch an apply made, if it still points at plumb's commit and is not checked
/// out; a branch already gone is recorded as undone.
pub(crate) fn delete_branch(
    records: &Records<'_>,
    applied: &Applied,
    (name, commit): (&str, &str),
    run_dir: &Path,
    faults: &dyn Faults,
) -> Result<Applied, HomeError> {
    let repo = Repository::open(&applied.repo, run_dir, faults)?;
    let refname = format!("refs/heads/{name}");
    let mut undone = Applied {
        state: HomeState::Undone,
        at_ms: now_ms(),
        ..applied.clone()
    };
    match repo.points_at(&refname)? {
        None => {
            records.write(&undone)?;
            return Ok(undone);
        }
        Some(at) if at != commit => {
            return Err(HomeError::BranchMoved {
                name: name.to_string(),
                commit: commit.to_string(),
            });
        }
        Some(_) => {}
    }
    if repo.checked_out()?.as_deref() == Some(refname.as_str()) {
        return Err(HomeError::BranchCheckedOut {
            name: name.to_string(),
        });
    }
    records.write(&Applied {
        state: HomeState::Undoing,
        ..undone.clone()
    })?;
    if repo.delete(&refname, commit).is_err() {
        let _ = records.restore();
        return Err(HomeError::BranchMoved {
            name: name.to_string(),
            commit: commit.to_string(),
        });
    }
    undone.at_ms = now_ms();
    if let Err(cause) = records.write(&undone) {
        if applied.state != HomeState::Applied {
            // Finishing an interrupted apply: the record still says it is under way.
            return Err(cause);
        }
        return Err(match repo.create(&refname, commit) {
            Ok(()) => {
                let _ = records.restore();
                HomeError::Reverted {
                    cause: Box::new(cause),
                    back: "the branch is back",
                }
            }
            Err(_) => cause,
        });
    }
    Ok(undone)
}

/// The user's repository, for the few git commands a branch needs.
struct Repository<'a> {
    git: Git,
    faults: &'a dyn Faults,
    path: PathBuf,
}

impl<'a> Repository<'a> {
    /// The git repository whose top folder is `repo`.
    fn open(repo: &Path, run_dir: &Path, faults: &'a dyn Faults) -> Result<Self, HomeError> {
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
        Ok(Self {
            git,
            faults,
            path: repo.to_path_buf(),
        })
    }

    /// The commit `refname` points at, if it exists.
    fn points_at(&self, refname: &str) -> Result<Option<String>, HomeError> {
        match self
            .git
            .run_in_folder(&["rev-parse", "--verify", "--quiet", refname], &[], None)
        {
            Ok(out) => Ok(Some(out.text("rev-parse")?.to_string())),
            Err(WorkspaceError::Git { .. }) => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    /// The branch checked out, if any.
    fn checked_out(&self) -> Result<Option<String>, HomeError> {
        Ok(self
            .git
            .run_in_folder(&["symbolic-ref", "--quiet", "HEAD"], &[], None)
            .ok()
            .and_then(|out| out.text("symbolic-ref").ok().map(str::to_string)))
    }

    /// The commit of the patch on `HEAD`, made through a private index: objects only.
    fn commit(
        &self,
        record: &ChangeRecord,
        patch_path: &Path,
        branch: &NewBranch<'_>,
        run_dir: &Path,
    ) -> Result<String, HomeError> {
        let head = self
            .git
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
        let tree = self.tree_with_patch(&head, &index, record, patch_path);
        let _ = std::fs::remove_file(&index);
        let tree = tree?;
        let now = format!("{} +0000", now_ms() / 1000);
        let identity = branch.identity;
        let who = [
            ("GIT_AUTHOR_NAME", OsStr::new(&identity.name)),
            ("GIT_AUTHOR_EMAIL", OsStr::new(&identity.email)),
            ("GIT_COMMITTER_NAME", OsStr::new(&identity.name)),
            ("GIT_COMMITTER_EMAIL", OsStr::new(&identity.email)),
            ("GIT_AUTHOR_DATE", OsStr::new(&now)),
            ("GIT_COMMITTER_DATE", OsStr::new(&now)),
        ];
        self.run(
            "commit-tree",
            &["commit-tree", &tree, "-p", &head, "-F", "-"],
            &who,
            Some(branch.message.as_bytes()),
        )
    }

    /// The tree of `HEAD` with the patch applied, through the private index `index`.
    fn tree_with_patch(
        &self,
        head: &str,
        index: &Path,
        record: &ChangeRecord,
        patch_path: &Path,
    ) -> Result<String, HomeError> {
        let with_index = [("GIT_INDEX_FILE", index.as_os_str())];
        self.run("read-tree", &["read-tree", head], &with_index, None)?;
        let patch = patch_path.to_string_lossy();
        self.step("apply --cached")?;
        self.git
            .run_in_folder(
                &["apply", "--cached", "--whitespace=nowarn", "--", &patch],
                &with_index,
                None,
            )
            .map_err(|err| HomeError::NotOnHead {
                repo: record.repo.clone(),
                detail: git_detail(&err),
            })?;
        self.run("write-tree", &["write-tree"], &with_index, None)
    }

    /// Creates `refname` at `commit`, only if it does not exist (the zero old value).
    fn create(&self, refname: &str, commit: &str) -> Result<(), WorkspaceError> {
        self.faults
            .before(&Step::Git("update-ref"))
            .map_err(|err| self.injected(err))?;
        let zero = "0".repeat(commit.len());
        self.git
            .run_in_folder(
                &["update-ref", "-m", "plumb apply", refname, commit, &zero],
                &[],
                None,
            )
            .map(|_| ())
    }

    /// Deletes `refname` only while it points at `commit`.
    fn delete(&self, refname: &str, commit: &str) -> Result<(), WorkspaceError> {
        self.faults
            .before(&Step::Git("update-ref -d"))
            .map_err(|err| self.injected(err))?;
        self.git
            .run_in_folder(&["update-ref", "-d", refname, commit], &[], None)
            .map(|_| ())
    }

    /// A git command that writes objects or the private index; its trimmed stdout.
    fn run(
        &self,
        label: &'static str,
        args: &[&str],
        env: &[(&str, &OsStr)],
        input: Option<&[u8]>,
    ) -> Result<String, HomeError> {
        self.step(label)?;
        Ok(self
            .git
            .run_in_folder(args, env, input)?
            .text(label)?
            .to_string())
    }

    fn step(&self, label: &'static str) -> Result<(), HomeError> {
        self.faults
            .before(&Step::Git(label))
            .map_err(|err| HomeError::write(&self.path, err))
    }

    fn injected(&self, err: std::io::Error) -> WorkspaceError {
        WorkspaceError::Git {
            command: "update-ref".to_string(),
            status: "not run".to_string(),
            stderr: err.to_string(),
        }
    }
}

/// What git said, without the command line around it.
fn git_detail(err: &WorkspaceError) -> String {
    match err {
        WorkspaceError::Git { stderr, .. } => stderr.lines().next().unwrap_or_default().to_string(),
        other => other.to_string(),
    }
}
