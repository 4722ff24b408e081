//! Writing a commit's tree out: into a check tree ([`Workspace::materialize`]), or as the copy
//! itself ([`Workspace::rollback`]).
//!
//! A rollback first tries to change only what differs (`restore.rs`); whenever that cannot be
//! done (the copy cannot be staged in time, its ignore rules are not the target's, anything
//! fails), it falls back to what never depends on what the copy holds: the commit is checked out
//! into a fresh folder beside the copy (git writes there and reads nothing of the old copy), ignored build
//! output is moved over from the old copy (one `rename` per ignored name, judged by the target's
//! own `.gitignore` files, so an agent's `.gitignore` keeps nothing), the fresh folder takes the
//! copy's place, HEAD moves, and the old copy is removed for as long as the deadline allows
//! (`discard.rs`). Lock files a killed git left in the shadow dir are removed first. The checkout
//! and the ref update run without the run's deadline (only git's own time limit): their cost is
//! the target commit's size, never what the agent left; moving the ignored output and removing
//! the old copy stop at the deadline, and the rollback has succeeded all the same.

use std::ffi::OsString;
use std::fs;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};

use crate::discard::{discard_tree, remove_within, set_aside};
use crate::error::WorkspaceError;
use crate::git::clear_locks;
use crate::ids::CommitId;
use crate::reader::open_under;
use crate::run_dir::ensure_empty;
use crate::stage::rules;
use crate::workspace::{BRANCH_REF, SHADOW_EXCLUDE, Workspace};

/// Where a rollback checks the target out before it takes the copy's place.
const NEXT_DIR: &str = "work.next";

impl Workspace {
    /// Makes the copy `commit`'s tree exactly and moves HEAD there: files of the commit as it
    /// stored them, nothing else but ignored build output (e.g. `__pycache__/`), which stays;
    /// every `.git`, FIFO and file the commit lacks is gone. Commits after `commit` become
    /// unreachable unless [`Workspace::keep_ref`] kept them. See the module's header for why this
    /// always succeeds whatever the copy holds.
    pub fn rollback(&self, commit: &CommitId) -> Result<(), WorkspaceError> {
        let mut unbounded = self.clone();
        unbounded.set_deadline(None);
        unbounded.ensure_commit(commit)?;
        clear_locks(self.git.git_dir());
        let deadline = self.deadline();
        // Only what differs, when the copy can be staged in time and nothing in it asks for more.
        if let Ok(staged) = self.stage()
            && self.restore_in_place(&staged, commit, deadline).is_ok()
        {
            unbounded.git.run(&[
                "update-ref",
                "--end-of-options",
                BRANCH_REF,
                commit.as_str(),
            ])?;
            return Ok(());
        }
        let next = self.run_dir.join(NEXT_DIR);
        // A rollback that failed before left it: set aside at once, removed while time allows.
        discard_tree(&next, deadline).map_err(|e| WorkspaceError::io("remove", &next, e))?;
        unbounded.checkout_into(commit, &next)?;
        // Best effort: without it, build output is made again by the next build.
        let _ = move_ignored(&self.root, &next, deadline);
        let old = set_aside(&self.root)
            .map_err(|e| WorkspaceError::io("move aside the workspace", &self.root, e))?;
        if let Err(err) = fs::rename(&next, &self.root) {
            let _ = fs::rename(&old, &self.root);
            return Err(WorkspaceError::io("put in place", &self.root, err));
        }
        unbounded.git.run(&[
            "update-ref",
            "--end-of-options",
            BRANCH_REF,
            commit.as_str(),
        ])?;
        let _ = remove_within(&old, deadline);
        Ok(())
    }

    /// Writes the tree of `commit` into `dest` (a new or empty folder outside the copy), leaving the
    /// copy, HEAD and the shadow index alone. The check ladder uses it to run the new tests against
    /// the baseline source. Bounded by the deadline.
    pub fn materialize(&self, commit: &CommitId, dest: &Path) -> Result<(), WorkspaceError> {
        self.ensure_commit(commit)?;
        self.checkout_into(commit, dest)
    }

    /// `read-tree` and `checkout-index` of `commit` into `dest` with a private index.
    fn checkout_into(&self, commit: &CommitId, dest: &Path) -> Result<(), WorkspaceError> {
        ensure_empty(dest)?;
        fs::create_dir_all(dest).map_err(|e| WorkspaceError::io("create the folder", dest, e))?;
        let dest = dest
            .canonicalize()
            .map_err(|e| WorkspaceError::io("resolve the folder", dest, e))?;
        if dest.starts_with(&self.root) {
            return Err(WorkspaceError::RunDirInsideSource {
                run_dir: dest,
                source_dir: self.root.clone(),
            });
        }
        let index = self
            .run_dir
            .join(format!("materialize-{}.index", std::process::id()));
        let git = self.git.with_work_tree(dest);
        let result = git
            .run_with_index(&["read-tree", "--end-of-options", commit.as_str()], &index)
            .and_then(|_| git.run_with_index(&["checkout-index", "--all", "--force"], &index));
        let _ = fs::remove_file(&index);
        let mut lock = index.into_os_string();
        lock.push(".lock");
        let _ = fs::remove_file(lock);
        result.map(|_| ())
    }
}

/// One folder both trees have, for [`move_ignored`].
struct Both {
    rel: PathBuf,
    parent: Option<usize>,
    all_ignored: bool,
    level: rules::Level,
}

/// Moves every name of `old` that the rules of `new` ignore and `new` does not have into `new`,
/// in the folders both have, until `deadline`.
fn move_ignored(old: &Path, new: &Path, deadline: Option<Instant>) -> std::io::Result<()> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let path_flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let old_root = rustix::fs::open(old, path_flags, Mode::empty())?;
    let new_root = rustix::fs::open(new, path_flags, Mode::empty())?;
    let exclude = rules::exclude(new, SHADOW_EXCLUDE);
    let mut folders = vec![Both {
        rel: PathBuf::new(),
        parent: None,
        all_ignored: false,
        level: None,
    }];
    let mut index = 0;
    let mut seen = 0u64;
    while index < folders.len() {
        let rel = folders
            .get(index)
            .map(|f| f.rel.clone())
            .unwrap_or_default();
        let all_ignored = folders.get(index).is_some_and(|f| f.all_ignored);
        let (Ok(from), Ok(to)) = (
            open_under(&old_root, &rel, flags),
            open_under(&new_root, &rel, flags),
        ) else {
            index += 1;
            continue;
        };
        if !all_ignored && let Some(folder) = folders.get_mut(index) {
            folder.level = rules::level(&to, &new.join(&rel));
        }
        for name in names(&from)? {
            seen += 1;
            if seen.is_multiple_of(256) && deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(());
            }
            if rules::is_git_name(&name) {
                continue;
            }
            let Ok(stat) = rustix::fs::statat(&from, &name, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            let is_dir = FileType::from_raw_mode(stat.st_mode) == FileType::Directory;
            let ignored = all_ignored
                || rules::ignored(
                    std::iter::successors(Some(index), |i| folders.get(*i).and_then(|f| f.parent))
                        .filter_map(|i| folders.get(i).map(|f| &f.level)),
                    &exclude,
                    &new.join(&rel).join(&name),
                    is_dir,
                );
            match rustix::fs::statat(&to, &name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(there) => {
                    if is_dir && FileType::from_raw_mode(there.st_mode) == FileType::Directory {
                        folders.push(Both {
                            rel: rel.join(&name),
                            parent: Some(index),
                            all_ignored: ignored,
                            level: None,
                        });
                    }
                }
                Err(rustix::io::Errno::NOENT) if ignored => {
                    let _ = rustix::fs::renameat_with(
                        from.as_fd(),
                        &name,
                        to.as_fd(),
                        &name,
                        RenameFlags::NOREPLACE,
                    );
                }
                Err(_) => {}
            }
        }
        index += 1;
    }
    Ok(())
}

/// The names in the folder open at `dir`.
fn names(dir: &OwnedFd) -> std::io::Result<Vec<OsString>> {
    let mut names = Vec::new();
    let mut listing = rustix::fs::Dir::read_from(dir)?;
    while let Some(entry) = listing.read() {
        let name = entry?.file_name().to_bytes().to_vec();
        if name != b"." && name != b".." {
            names.push(std::ffi::OsStr::from_bytes(&name).to_os_string());
        }
    }
    Ok(names)
}
