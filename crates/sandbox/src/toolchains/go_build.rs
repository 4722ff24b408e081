//! Go's build cache, warm but private. Without one, every `go test` compiles the project's
//! dependencies and computes vet's facts for every standard package it imports again: 17.7 s
//! for a one-file module with testify vendored, 1.2 s with the cache warm. The ladder runs the
//! tests five to eight times a task, so a cold cache cost ~100 s of the oracle's ~110 s per
//! imported Go task.
//!
//! A cache shared between commands is not an option: one the agent runs could plant an entry
//! (a compiled package, a cached test result) that a later judged run loads. So the cache has
//! a seed, `go/build` in the toolchain cache, which only a command with the network writes (the
//! setup phase the user allowed, as for the module cache), and every offline command gets its
//! own copy of the seed, made here before it starts and removed after it: what it writes there
//! reaches no other command. The copy takes regular files only, each opened without following
//! links, so a link planted in the seed cannot pull a host file into it. A seed over
//! [`MAX_SEED_BYTES`] is not copied: the command starts with an empty cache, as before.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tempfile::TempDir;

/// The largest seed copied for a command; a cache of a few projects is tens of megabytes.
pub(crate) const MAX_SEED_BYTES: u64 = 512 * 1024 * 1024;

/// Go's cache holds two levels (`ab/abcdef…-d`); anything deeper is not Go's and not copied.
const MAX_DEPTH: usize = 4;

/// The seed's place in the toolchain cache.
pub(crate) fn seed_dir(cache: &Path) -> PathBuf {
    cache.join("go/build")
}

/// One command's copy of the seed, removed when the last clone is dropped (after the command).
#[derive(Debug, Clone)]
pub(crate) struct PrivateCopy(Arc<TempDir>);

impl PrivateCopy {
    pub(crate) fn path(&self) -> &Path {
        self.0.path()
    }
}

impl PartialEq for PrivateCopy {
    fn eq(&self, other: &Self) -> bool {
        self.path() == other.path()
    }
}

impl Eq for PrivateCopy {}

/// A private copy of the seed of `cache` in a folder beside it (`<cache>.private/`, outside the
/// cache, which offline commands see read-only), or `None` when there is no seed, it is empty,
/// too big, or cannot be copied: the command then builds with an empty cache of its own.
pub(crate) fn private_copy(cache: &Path) -> Option<PrivateCopy> {
    let seed = seed_dir(cache);
    let meta = fs::symlink_metadata(&seed).ok()?;
    if !meta.is_dir() || fs::read_dir(&seed).ok()?.next().is_none() {
        return None;
    }
    let mut parent = cache.as_os_str().to_owned();
    parent.push(".private");
    let parent = PathBuf::from(parent);
    fs::create_dir_all(&parent).ok()?;
    let dir = tempfile::Builder::new()
        .prefix("go-build-")
        .tempdir_in(&parent)
        .ok()?;
    let mut budget = MAX_SEED_BYTES;
    copy_tree(&seed, dir.path(), 0, &mut budget).ok()?;
    Some(PrivateCopy(Arc::new(dir)))
}

/// Copies the folders and regular files below `from` into `to` (which exists), within `budget`
/// bytes; links, devices and the like are left out.
fn copy_tree(from: &Path, to: &Path, depth: usize, budget: &mut u64) -> io::Result<()> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            fs::create_dir(&target)?;
            copy_tree(&entry.path(), &target, depth + 1, budget)?;
        } else if kind.is_file() {
            copy_file(&entry.path(), &target, budget)?;
        }
    }
    Ok(())
}

/// Copies one file, opened without following a link and checked to be a regular file once
/// open (it may have been swapped since the folder was listed).
fn copy_file(from: &Path, to: &Path, budget: &mut u64) -> io::Result<()> {
    let mut source = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(from)?;
    let meta = source.metadata()?;
    if !meta.is_file() {
        return Ok(());
    }
    if meta.len() > *budget {
        return Err(io::Error::other(
            "the Go build cache seed is too big to copy",
        ));
    }
    let mut dest = File::options().write(true).create_new(true).open(to)?;
    let copied = io::copy(&mut io::Read::take(&mut source, *budget), &mut dest)?;
    *budget -= copied;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn files_below(dir: &Path) -> Vec<String> {
        let mut found = Vec::new();
        for entry in walk(dir) {
            found.push(
                entry
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
        }
        found.sort();
        found
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for entry in fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
        out
    }

    #[test]
    fn a_command_gets_a_copy_of_the_seed_without_its_links_and_the_copy_goes_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("toolcache");
        let seed = seed_dir(&cache);
        fs::create_dir_all(seed.join("ab")).unwrap();
        fs::write(seed.join("ab/abc-d"), "compiled").unwrap();
        fs::write(seed.join("README"), "go's").unwrap();
        fs::write(dir.path().join("secret"), "host file").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), seed.join("ab/link-d")).unwrap();

        let copy = private_copy(&cache).unwrap();
        let path = copy.path().to_path_buf();
        fs::write(path.join("ab/new-a"), "written by the command").unwrap();
        let actual = (
            path.starts_with(dir.path().join("toolcache.private")),
            files_below(&path),
            fs::read_to_string(path.join("ab/abc-d")).unwrap(),
            files_below(&seed),
        );
        drop(copy);

        let expected = (
            true,
            vec![
                "README".to_owned(),
                "ab/abc-d".to_owned(),
                "ab/new-a".to_owned(),
            ],
            "compiled".to_owned(),
            vec![
                "README".to_owned(),
                "ab/abc-d".to_owned(),
                "ab/link-d".to_owned(),
            ],
        );
        assert_eq!(actual, expected);
        assert!(!path.exists(), "the copy outlived its command");
    }

    #[test]
    fn no_seed_an_empty_one_or_a_linked_one_gives_no_copy() {
        let dir = tempfile::tempdir().unwrap();
        let none = dir.path().join("none");
        let empty = dir.path().join("empty");
        fs::create_dir_all(seed_dir(&empty)).unwrap();
        let linked = dir.path().join("linked");
        fs::create_dir_all(linked.join("go")).unwrap();
        fs::create_dir_all(dir.path().join("elsewhere/ab")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), seed_dir(&linked)).unwrap();

        let actual = [&none, &empty, &linked].map(|cache| private_copy(cache).is_some());

        assert_eq!(actual, [false, false, false]);
    }
}
