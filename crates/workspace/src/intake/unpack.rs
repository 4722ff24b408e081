//! Writing an archive's entries under the destination: the rules every entry name must pass, and
//! the writer that creates regular files and folders only, counting the bytes it writes against
//! the caps.
//!
//! Names: `/` and `\` both separate parts (zips made on Windows use `\`); empty and `.` parts are
//! dropped; a leading separator, a drive (`C:`), `..`, a `.git` part (in any letter case), a
//! control character or an over-long name is refused; a path may occur once, and never under a
//! path that is a file.
//!
//! Writes: every folder on the way is opened relative to the destination's descriptor with
//! `O_NOFOLLOW | O_DIRECTORY`, and every file is made with `O_CREAT | O_EXCL | O_NOFOLLOW`, so
//! nothing is written through a link or over an existing entry even if one appeared. A file's
//! mode is 0755 when the archive gave it any executable bit and 0644 otherwise, set explicitly so
//! the umask cannot change it.
//!
//! Caps: content is copied in chunks, and a chunk that would take the file past
//! `max_file_bytes`, the archive past `max_total_bytes`, or the unpacked bytes past `max_ratio`
//! times the compressed bytes they came from is not written: a bomb leaves at most the cap on disk.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use super::archive::ArchiveCaps;
use super::error::{EntryRule, IntakeError};

/// The longest part of a path Linux file systems take.
const MAX_PART_BYTES: usize = 255;
/// The longest path `PATH_MAX` allows.
const MAX_PATH_BYTES: usize = 4096;
/// Bytes copied per read.
const CHUNK: usize = 64 * 1024;

/// An entry name as its parts, or why it is refused; `Ok(None)` for the archive's own top (`./`).
pub(crate) fn entry_parts(name: &[u8]) -> Result<Option<Vec<Vec<u8>>>, EntryRule> {
    let has_control = match std::str::from_utf8(name) {
        Ok(text) => text.chars().any(char::is_control),
        // Not UTF-8: judge the bytes (C0 and DEL; C1 needs a decoding there is none of).
        Err(_) => name.iter().any(|b| *b < 0x20 || *b == 0x7f),
    };
    if has_control {
        return Err(EntryRule::ControlChar);
    }
    if matches!(name.first(), Some(b'/' | b'\\')) {
        return Err(EntryRule::Absolute);
    }
    if name.len() > MAX_PATH_BYTES {
        return Err(EntryRule::NameTooLong);
    }
    let mut parts: Vec<Vec<u8>> = Vec::new();
    for part in name.split(|b| *b == b'/' || *b == b'\\') {
        match part {
            b"" | b"." => {}
            b".." => return Err(EntryRule::ParentDir),
            _ if part.eq_ignore_ascii_case(b".git") => return Err(EntryRule::GitDir),
            [drive, b':', ..] if parts.is_empty() && drive.is_ascii_alphabetic() => {
                return Err(EntryRule::Absolute);
            }
            _ if part.len() > MAX_PART_BYTES => return Err(EntryRule::NameTooLong),
            _ => parts.push(part.to_vec()),
        }
    }
    Ok((!parts.is_empty()).then_some(parts))
}

/// Byte counts the ratio cap compares with: how many compressed bytes the current entry and the
/// whole archive have come from so far.
pub(crate) trait Compressed {
    fn entry(&self) -> Option<u64>;
    fn total(&self) -> u64;
}

/// What was seen at a path, for duplicates and files used as folders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    File,
    /// `explicit`: the archive has an entry for the folder, not only entries inside it.
    Dir {
        explicit: bool,
    },
}

/// The writer of one unpack. See the module header.
pub(crate) struct Unpacker<'c> {
    caps: &'c ArchiveCaps,
    root: OwnedFd,
    dest: PathBuf,
    seen: HashMap<Vec<u8>, Seen>,
    tops: BTreeSet<Vec<u8>>,
    /// The last folder opened, by its parts, so consecutive files in one folder open it once.
    open_dir: Option<(Vec<Vec<u8>>, OwnedFd)>,
    pub(crate) entries: u64,
    pub(crate) files: u64,
    pub(crate) bytes: u64,
    buf: Vec<u8>,
}

impl<'c> Unpacker<'c> {
    pub(crate) fn new(caps: &'c ArchiveCaps, root: OwnedFd, dest: &Path) -> Unpacker<'c> {
        Unpacker {
            caps,
            root,
            dest: dest.to_path_buf(),
            seen: HashMap::new(),
            tops: BTreeSet::new(),
            open_dir: None,
            entries: 0,
            files: 0,
            bytes: 0,
            buf: vec![0; CHUNK],
        }
    }

    /// Counts one more entry of the archive against `max_entries`.
    pub(crate) fn count_entry(&mut self) -> Result<(), IntakeError> {
        self.entries += 1;
        if self.entries > self.caps.max_entries {
            return Err(IntakeError::TooManyEntries {
                limit: self.caps.max_entries,
            });
        }
        Ok(())
    }

    /// Records `parts` as a file or folder, refusing a second entry of one path or an entry under
    /// a file.
    pub(crate) fn claim(&mut self, parts: &[Vec<u8>], is_dir: bool) -> Result<(), EntryRule> {
        let mut key = Vec::new();
        let last = parts.len().saturating_sub(1);
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                key.push(b'/');
            }
            key.extend_from_slice(part);
            if i < last {
                match self.seen.get(&key) {
                    Some(Seen::File) => return Err(EntryRule::UnderFile),
                    Some(Seen::Dir { .. }) => {}
                    None => {
                        self.seen.insert(key.clone(), Seen::Dir { explicit: false });
                    }
                }
            }
        }
        let claimed = if is_dir {
            Seen::Dir { explicit: true }
        } else {
            Seen::File
        };
        match (self.seen.get(&key), claimed) {
            (None, _) | (Some(Seen::Dir { explicit: false }), Seen::Dir { .. }) => {
                self.seen.insert(key, claimed);
            }
            (Some(_), _) => return Err(EntryRule::Duplicate),
        }
        if let Some(top) = parts.first() {
            self.tops.insert(top.clone());
        }
        Ok(())
    }

    /// Makes the folder `parts` (and those above it).
    pub(crate) fn make_dir(&mut self, parts: &[Vec<u8>]) -> Result<(), IntakeError> {
        self.open_parent(parts, parts.len())
    }

    /// Writes the regular file `parts` from `content`, under the caps. `shown` names the entry in
    /// a refusal.
    pub(crate) fn write_file(
        &mut self,
        parts: &[Vec<u8>],
        executable: bool,
        content: &mut dyn Read,
        compressed: &dyn Compressed,
        shown: &str,
    ) -> Result<(), IntakeError> {
        let refuse = |rule| IntakeError::Entry {
            entry: shown.to_owned(),
            rule,
        };
        let Some(name) = parts.last() else {
            return Ok(());
        };
        self.open_parent(parts, parts.len().saturating_sub(1))?;
        let mode = if executable { 0o755 } else { 0o644 };
        let fd = rustix::fs::openat(
            self.parent_fd(),
            OsStr::from_bytes(name),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        )
        .map_err(|err| IntakeError::io("create", self.path_of(parts), err.into()))?;
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode))
            .map_err(|err| IntakeError::io("set the mode of", self.path_of(parts), err.into()))?;
        let mut out = File::from(fd);
        self.files += 1;
        let mut written: u64 = 0;
        loop {
            let n = match content.read(&mut self.buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => {
                    return Err(refuse(EntryRule::Damaged {
                        detail: super::shown(&err.to_string()),
                    }));
                }
            };
            let grown = n as u64;
            let file_after = written + grown;
            let total_after = self.bytes + grown;
            if file_after > self.caps.max_file_bytes {
                return Err(refuse(EntryRule::FileTooLarge {
                    limit: self.caps.max_file_bytes,
                    written,
                }));
            }
            if total_after > self.caps.max_total_bytes {
                return Err(refuse(EntryRule::TotalTooLarge {
                    limit: self.caps.max_total_bytes,
                    written: self.bytes,
                }));
            }
            let over_entry = compressed
                .entry()
                .is_some_and(|from| file_after > self.ratio_allowance(from));
            if over_entry || total_after > self.ratio_allowance(compressed.total()) {
                return Err(refuse(EntryRule::Ratio {
                    ratio: self.caps.max_ratio,
                    written,
                }));
            }
            let chunk = self.buf.get(..n).unwrap_or_default();
            out.write_all(chunk)
                .map_err(|source| IntakeError::io("write", self.path_of(parts), source))?;
            written = file_after;
            self.bytes = total_after;
        }
        Ok(())
    }

    /// How many unpacked bytes `compressed` bytes may become.
    fn ratio_allowance(&self, compressed: u64) -> u64 {
        compressed
            .saturating_mul(self.caps.max_ratio)
            .max(self.caps.ratio_floor_bytes)
    }

    /// The single top-level folder when the archive holds nothing else, otherwise the destination.
    pub(crate) fn root(&self) -> PathBuf {
        let mut tops = self.tops.iter();
        match (tops.next(), tops.next()) {
            (Some(top), None) if matches!(self.seen.get(top), Some(Seen::Dir { .. })) => {
                self.dest.join(OsStr::from_bytes(top))
            }
            _ => self.dest.clone(),
        }
    }

    fn path_of(&self, parts: &[Vec<u8>]) -> PathBuf {
        let mut path = self.dest.clone();
        for part in parts {
            path.push(OsStr::from_bytes(part));
        }
        path
    }

    /// Opens (making as needed) the folder of the first `depth` parts, each level relative to the
    /// one above without following a link, and keeps its descriptor in `open_dir`.
    fn open_parent(&mut self, parts: &[Vec<u8>], depth: usize) -> Result<(), IntakeError> {
        let wanted = parts.get(..depth).unwrap_or(parts);
        if matches!(&self.open_dir, Some((at, _)) if at.as_slice() == wanted) {
            return Ok(());
        }
        self.open_dir = None;
        let mut fd: Option<OwnedFd> = None;
        for (i, part) in wanted.iter().enumerate() {
            let name = OsStr::from_bytes(part);
            let at = fd.as_ref().unwrap_or(&self.root);
            let path = || self.path_of(parts.get(..=i).unwrap_or(parts));
            match rustix::fs::mkdirat(at, name, Mode::from_raw_mode(0o755)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(err) => return Err(IntakeError::io("create the folder", path(), err.into())),
            }
            let next = rustix::fs::openat(
                at,
                name,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|err| IntakeError::io("open the folder", path(), err.into()))?;
            fd = Some(next);
        }
        self.open_dir = fd.map(|fd| (wanted.to_vec(), fd));
        Ok(())
    }

    /// The descriptor `open_parent` left: the folder it opened, or the destination itself.
    fn parent_fd(&self) -> &OwnedFd {
        self.open_dir.as_ref().map_or(&self.root, |(_, fd)| fd)
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn parts(name: &str) -> Result<Option<Vec<String>>, EntryRule> {
        entry_parts(name.as_bytes()).map(|found| {
            found.map(|parts| {
                parts
                    .iter()
                    .map(|p| String::from_utf8_lossy(p).into_owned())
                    .collect()
            })
        })
    }

    #[test]
    fn entry_names_are_split_on_both_separators_and_held_to_the_rules() {
        let names = [
            "src/a.py",
            "./src//b.py",
            "win\\c.txt",
            "./",
            "../evil",
            "a/../../evil",
            "a\\..\\evil",
            "/etc/x",
            "\\\\server\\share\\x",
            "C:\\x",
            "c:x",
            "a/C:/x",
            ".git/config",
            "sub/.GIT/hooks/pre-commit",
            ".github/workflows/ci.yml",
            "a\nb",
            "bell\u{7}",
            "c1\u{85}",
        ];

        let actual: Vec<_> = names.iter().map(|name| parts(name)).collect();

        let ok = |parts: &[&str]| Ok(Some(parts.iter().map(|p| (*p).to_owned()).collect()));
        let expected = vec![
            ok(&["src", "a.py"]),
            ok(&["src", "b.py"]),
            ok(&["win", "c.txt"]),
            Ok(None),
            Err(EntryRule::ParentDir),
            Err(EntryRule::ParentDir),
            Err(EntryRule::ParentDir),
            Err(EntryRule::Absolute),
            Err(EntryRule::Absolute),
            Err(EntryRule::Absolute),
            Err(EntryRule::Absolute),
            ok(&["a", "C:", "x"]),
            Err(EntryRule::GitDir),
            Err(EntryRule::GitDir),
            ok(&[".github", "workflows", "ci.yml"]),
            Err(EntryRule::ControlChar),
            Err(EntryRule::ControlChar),
            Err(EntryRule::ControlChar),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn over_long_names_are_refused() {
        let long_part = format!("a/{}", "x".repeat(256));
        let long_path = "abc/".repeat(1100);

        let actual = (parts(&long_part), parts(&long_path));

        assert_eq!(
            actual,
            (Err(EntryRule::NameTooLong), Err(EntryRule::NameTooLong))
        );
    }
}
