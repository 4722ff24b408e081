//! Which names staging leaves out, as git would: the `.gitignore` files of the tree (each
//! folder's own, the deepest deciding first, the last matching line of a file deciding within
//! it), then plumb's own exclude list (build and test output). A `.gitignore` is read only when it
//! is a regular file (a link, a FIFO or a device named `.gitignore` counts as none, as git's
//! own check for links does), opened without following a link and without waiting, at most
//! [`MAX_RULES_BYTES`] of it.
//!
//! Names that are never content whatever the rules say: `.git` (with the spellings Windows and
//! macOS file systems take for it: any case, trailing dots or spaces, `git~1`), and at the top,
//! `.gitmodules` (the file git reads submodules from; see `stage/mod.rs`).

use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// A `.gitignore` longer than this is read as empty (git itself refuses ones over 100 MiB).
const MAX_RULES_BYTES: u64 = 1 << 20;

/// The rules of one folder (`None` when it has no `.gitignore` worth reading).
pub(crate) type Level = Option<Gitignore>;

/// plumb's exclude list, rooted at the top of the tree.
pub(crate) fn exclude(root: &Path, text: &str) -> Gitignore {
    let mut builder = GitignoreBuilder::new(root);
    for line in text.lines() {
        let _ = builder.add_line(None, line);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// The rules of the folder open at `dir` (its absolute path `abs`), from its `.gitignore`.
pub(crate) fn level(dir: &OwnedFd, abs: &Path) -> Level {
    let text = read_rules(dir)?;
    let mut builder = GitignoreBuilder::new(abs);
    for line in String::from_utf8_lossy(&text).lines() {
        // A malformed line is skipped, as git skips it.
        let _ = builder.add_line(None, line);
    }
    builder.build().ok()
}

/// Whether `abs` (a path inside the folder whose levels these are, a folder when `is_dir`) is
/// left out: `levels` from the deepest folder up, then `exclude`.
pub(crate) fn ignored<'a>(
    levels: impl Iterator<Item = &'a Level>,
    exclude: &Gitignore,
    abs: &Path,
    is_dir: bool,
) -> bool {
    for level in levels.flatten() {
        match level.matched(abs, is_dir) {
            Match::Ignore(_) => return true,
            Match::Whitelist(_) => return false,
            Match::None => {}
        }
    }
    exclude.matched(abs, is_dir).is_ignore()
}

/// `.git` as any file system git runs on may spell it.
pub(crate) fn is_git_name(name: &OsStr) -> bool {
    let bytes = name.as_bytes();
    if bytes.eq_ignore_ascii_case(b"git~1") {
        return true;
    }
    let trimmed = bytes
        .iter()
        .rposition(|b| *b != b'.' && *b != b' ')
        .and_then(|last| bytes.get(..=last))
        .unwrap_or_default();
    trimmed.eq_ignore_ascii_case(b".git")
}

/// `.gitmodules` in any case (what git reads on a case-insensitive file system).
pub(crate) fn is_gitmodules_name(name: &OsStr) -> bool {
    name.as_bytes().eq_ignore_ascii_case(b".gitmodules")
}

/// The bytes of the folder's `.gitignore` when it is a regular file of a sane length.
fn read_rules(dir: &OwnedFd) -> Option<Vec<u8>> {
    let stat = rustix::fs::statat(dir.as_fd(), ".gitignore", AtFlags::SYMLINK_NOFOLLOW).ok()?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile
        || u64::try_from(stat.st_size).unwrap_or(u64::MAX) > MAX_RULES_BYTES
    {
        return None;
    }
    let fd = rustix::fs::openat(
        dir.as_fd(),
        ".gitignore",
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let file = std::fs::File::from(fd);
    let now = file.metadata().ok()?;
    if !now.is_file() {
        return None;
    }
    let mut text = Vec::new();
    file.take(MAX_RULES_BYTES).read_to_end(&mut text).ok()?;
    Some(text)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn every_spelling_of_git_is_a_git_name_and_nothing_else() {
        let names = [
            ".git",
            ".GIT",
            ".Git.",
            ".git  ",
            "GIT~1",
            ".gitx",
            "git",
            ".gitignore",
            "x.git",
        ];
        let actual: Vec<(&str, bool)> = names
            .iter()
            .map(|n| (*n, is_git_name(OsStr::new(n))))
            .collect();
        let expected = vec![
            (".git", true),
            (".GIT", true),
            (".Git.", true),
            (".git  ", true),
            ("GIT~1", true),
            (".gitx", false),
            ("git", false),
            (".gitignore", false),
            ("x.git", false),
        ];
        assert_eq!(actual, expected);
    }
}
