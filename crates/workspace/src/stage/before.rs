//! The tree a staging starts from: what it held (a tracked file stays tracked when a new rule
//! ignores it, as in git) and its top `.gitmodules`, which the next state keeps whatever the copy
//! holds (see `stage/mod.rs`).

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{FileType, Mode, OFlags};

use super::objects::{self, Oid, TreeEntry, TreeMode};
use super::rules;

/// The tree staging starts from.
pub(crate) enum Before {
    /// The first staging (the baseline): nothing tracked yet, and the top `.gitmodules` is the
    /// repository's own.
    Nothing,
    /// A commit's tree, as `git ls-tree -r -z --full-tree` lists it.
    Tree(Tracked),
}

/// The paths a tree holds, and its top `.gitmodules` entries.
pub(crate) struct Tracked {
    pub(super) files: HashSet<Vec<u8>>,
    pub(super) folders: HashSet<Vec<u8>>,
    pub(super) top_gitmodules: Vec<TreeEntry>,
}

impl Tracked {
    /// Reads `git ls-tree -r -z --full-tree` output; `None` when it is not that.
    pub(crate) fn parse(listing: &[u8]) -> Option<Tracked> {
        let mut tracked = Tracked {
            files: HashSet::new(),
            folders: HashSet::new(),
            top_gitmodules: Vec::new(),
        };
        for record in listing.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let tab = record.iter().position(|b| *b == b'\t')?;
            let (meta, path) = (record.get(..tab)?, record.get(tab + 1..)?);
            let mut fields = meta.split(|b| *b == b' ');
            let mode = std::str::from_utf8(fields.next()?).ok()?;
            let _kind = fields.next()?;
            let id = parse_oid(fields.next()?)?;
            let mut end = 0;
            while let Some(slash) = path.get(end..)?.iter().position(|b| *b == b'/') {
                end += slash;
                tracked.folders.insert(path.get(..end)?.to_vec());
                end += 1;
            }
            if !path.contains(&b'/')
                && rules::is_gitmodules_name(OsStr::from_bytes(path))
                && let Some(mode) = TreeMode::from_octal(mode)
            {
                tracked.top_gitmodules.push(TreeEntry {
                    name: path.to_vec(),
                    mode,
                    id,
                });
            }
            tracked.files.insert(path.to_vec());
        }
        Some(tracked)
    }
}

/// The entry a top `.gitmodules` would stage as now (never stored): its mode and blob id, or
/// `None` when it is neither a regular file of a sane length nor a link.
pub(super) fn current_entry(
    dir: &OwnedFd,
    name: &OsStr,
    kind: FileType,
    mode: u32,
) -> Option<(TreeMode, Oid)> {
    use std::io::Read;
    const MAX: u64 = 1 << 20;
    match kind {
        FileType::Symlink => {
            let target = rustix::fs::readlinkat(dir.as_fd(), name, Vec::new()).ok()?;
            Some((TreeMode::Symlink, objects::blob_id(target.as_bytes())))
        }
        FileType::RegularFile => {
            let fd = rustix::fs::openat(
                dir.as_fd(),
                name,
                OFlags::RDONLY
                    | OFlags::NOFOLLOW
                    | OFlags::NONBLOCK
                    | OFlags::NOCTTY
                    | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok()?;
            let file = std::fs::File::from(fd);
            if !file.metadata().ok()?.is_file() {
                return None;
            }
            let mut bytes = Vec::new();
            file.take(MAX + 1).read_to_end(&mut bytes).ok()?;
            if bytes.len() as u64 > MAX {
                return None;
            }
            let exec = mode & 0o100 != 0;
            Some((
                if exec {
                    TreeMode::Executable
                } else {
                    TreeMode::Regular
                },
                objects::blob_id(&bytes),
            ))
        }
        _ => None,
    }
}

fn parse_oid(hex: &[u8]) -> Option<Oid> {
    if hex.len() != 40 {
        return None;
    }
    let mut id = [0u8; 20];
    for (byte, pair) in id.iter_mut().zip(hex.chunks(2)) {
        let text = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(text, 16).ok()?;
    }
    Some(id)
}
