//! Removing a tree the agent's commands may have filled (a replaced copy, a check tree) within
//! the run's time: the tree is first moved aside under a new name in the same folder (one
//! `rename`, so its place is free at once), then removed for as long as the deadline allows.
//! What is left when time runs out stays under that name (`.plumb-discarded-…`), which nothing
//! reads; pruning a run's folder (`runs.keep`) takes it with the rest.
//!
//! The removal never follows a link and never opens anything but folders: each folder is opened
//! beneath the tree's root without links (`openat2`), and names are removed relative to it, so a
//! process still running cannot turn the walk towards anything outside. No descriptor is held per
//! level, so no depth of tree runs out of them.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags};

use crate::reader::open_under;

/// Numbers the names trees are set aside under, within this process.
static ASIDE: AtomicU64 = AtomicU64::new(0);

/// The prefix of a tree set aside for removal.
pub const DISCARDED_PREFIX: &str = ".plumb-discarded-";

/// Moves `path` aside and removes it until `deadline`. `Ok(true)` when it is all gone, `Ok(false)`
/// when time ran out first (the rest stays set aside); a `path` that does not exist is gone.
pub fn discard_tree(path: &Path, deadline: Option<Instant>) -> io::Result<bool> {
    match std::fs::symlink_metadata(path) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(true),
        Err(err) => return Err(err),
        Ok(meta) if !meta.is_dir() => {
            std::fs::remove_file(path)?;
            return Ok(true);
        }
        Ok(_) => {}
    }
    let aside = set_aside(path)?;
    remove_within(&aside, deadline)
}

/// Renames the folder `path` to a new name beside it and returns that name.
pub(crate) fn set_aside(path: &Path) -> io::Result<PathBuf> {
    let parent = path
        .parent()
        .ok_or_else(|| io::Error::other("a root folder cannot be set aside"))?;
    let parent_fd = rustix::fs::open(
        parent,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other("a folder without a name cannot be set aside"))?;
    for _ in 0..64 {
        let n = ASIDE.fetch_add(1, Ordering::Relaxed);
        let aside = format!("{DISCARDED_PREFIX}{}-{n}", std::process::id());
        match rustix::fs::renameat_with(
            parent_fd.as_fd(),
            name,
            parent_fd.as_fd(),
            aside.as_str(),
            RenameFlags::NOREPLACE,
        ) {
            Ok(()) => return Ok(parent.join(aside)),
            Err(rustix::io::Errno::EXIST) => continue,
            Err(err) => return Err(err.into()),
        }
    }
    Err(io::Error::other("no free name to set a folder aside"))
}

/// Removes the folder `path` (set aside by the caller) until `deadline`; `Ok(false)` when time
/// ran out first.
pub(crate) fn remove_within(path: &Path, deadline: Option<Instant>) -> io::Result<bool> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::other("a root folder cannot be removed"));
    };
    let parent_fd = rustix::fs::open(
        parent,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let root = rustix::fs::openat(
        parent_fd.as_fd(),
        name,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut stack = vec![PathBuf::new()];
    let mut removed = 0u64;
    while let Some(rel) = stack.last().cloned() {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(false);
        }
        let dir = open_folder(&root, &rel)?;
        let mut inner = None;
        let mut listing = rustix::fs::Dir::read_from(&dir)?;
        while let Some(entry) = listing.read() {
            let entry = entry?;
            let entry_name = entry.file_name();
            if entry_name == c"." || entry_name == c".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => {
                    rustix::fs::statat(&dir, entry_name, AtFlags::SYMLINK_NOFOLLOW)
                        .map(|stat| FileType::from_raw_mode(stat.st_mode))?
                }
                kind => kind,
            };
            if kind == FileType::Directory {
                inner = Some(rel.join(std::ffi::OsStr::from_bytes(entry_name.to_bytes())));
                break;
            }
            rustix::fs::unlinkat(&dir, entry_name, AtFlags::empty())?;
            removed += 1;
            if removed.is_multiple_of(256) && deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(false);
            }
        }
        match inner {
            Some(inner) => stack.push(inner),
            None => {
                stack.pop();
                match (rel.parent(), rel.file_name()) {
                    (Some(up), Some(last)) => {
                        let up = open_folder(&root, up)?;
                        rustix::fs::unlinkat(&up, last, AtFlags::REMOVEDIR)?;
                    }
                    _ => {
                        drop(root);
                        rustix::fs::unlinkat(&parent_fd, name, AtFlags::REMOVEDIR)?;
                        return Ok(true);
                    }
                }
            }
        }
    }
    Ok(true)
}

/// Opens the folder `rel` beneath `root` to list and remove its names; one the agent made
/// unreadable is given its owner's permissions back first (its files are the agent's, and so ours).
fn open_folder(root: &OwnedFd, rel: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match open_under(root, rel, flags) {
        Err(err) if err.kind() == io::ErrorKind::PermissionDenied => {
            let owner = Mode::RWXU;
            match (rel.parent(), rel.file_name()) {
                (Some(up), Some(last)) => {
                    let up = open_under(root, up, flags)?;
                    rustix::fs::chmodat(&up, last, owner, AtFlags::empty())?;
                }
                _ => rustix::fs::chmodat(root, ".", owner, AtFlags::empty())?,
            }
            open_under(root, rel, flags)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{PermissionsExt, symlink};

    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_discarded_tree_is_gone_and_a_link_out_of_it_is_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep.txt"), "keep").unwrap();
        let tree = tmp.path().join("tree");
        std::fs::create_dir_all(tree.join("a/b/c")).unwrap();
        std::fs::write(tree.join("a/b/c/f"), "x").unwrap();
        std::fs::write(tree.join("a/g"), "y").unwrap();
        symlink(&outside, tree.join("a/out")).unwrap();
        rustix::fs::mkfifoat(rustix::fs::CWD, tree.join("a/pipe"), Mode::RUSR).unwrap();
        std::fs::create_dir(tree.join("locked")).unwrap();
        std::fs::set_permissions(tree.join("locked"), std::fs::Permissions::from_mode(0o0))
            .unwrap();

        let done = discard_tree(&tree, None).unwrap();

        let left: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let actual = (done, left, outside.join("keep.txt").exists());
        assert_eq!(actual, (true, vec!["outside".to_string()], true));
    }

    #[test]
    fn a_passed_deadline_leaves_the_tree_set_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join("tree");
        std::fs::create_dir_all(tree.join("a")).unwrap();
        std::fs::write(tree.join("a/f"), "x").unwrap();

        let done = discard_tree(&tree, Some(Instant::now())).unwrap();

        let left: Vec<bool> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| {
                e.unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with(DISCARDED_PREFIX)
            })
            .collect();
        assert_eq!((done, tree.exists(), left), (false, false, vec![true]));
    }
}
