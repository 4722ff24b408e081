//! What a setup command changed in a workspace, kept so that the next workspace of the same task
//! can have it without running the command again (`plumb eval`'s setup cache).
//!
//! [`Stamps::of`] notes every entry of the tree (size, modification time, kind) before the setup;
//! [`save_changes`] copies the entries the setup made or changed into a cache folder, with the old
//! workspace's path and the entries it removed in `snapshot.json`; [`restore_changes`] puts them
//! into a new workspace. A setup writes absolute paths into what it makes (a virtual
//! environment's scripts, an editable install's `.pth` file), so on restore every occurrence of the
//! old workspace's path in a text file or a link target is replaced by the new one's — as conda
//! relocates an environment. Binary files are copied as they are.
//!
//! Both directions are confined: only regular files, folders and links are copied (a FIFO or a
//! device the setup made is left out), a link is copied as a link and never followed, and nothing
//! is written through a link: an entry whose path passes through a link in the new workspace is
//! refused, and an existing file or link at the target is removed first.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file in a snapshot folder that describes it.
const META_FILE: &str = "snapshot.json";
/// The folder in a snapshot folder holding the entries.
const FILES_DIR: &str = "files";
/// A file longer than this is copied without relocating paths in it.
const MAX_RELOCATED_BYTES: u64 = 16 * 1024 * 1024;

/// One entry's stamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    kind: Kind,
    size: u64,
    mtime_ns: i128,
    ino: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    Link,
    Other,
}

/// Every entry of a tree, by path relative to its root.
#[derive(Debug, Default)]
pub struct Stamps(BTreeMap<PathBuf, Stamp>);

#[derive(Debug, Serialize, Deserialize)]
struct Meta {
    /// The workspace the entries were saved from.
    root: PathBuf,
    /// Entries the setup removed.
    removed: Vec<PathBuf>,
    /// How many entries the snapshot holds.
    entries: usize,
}

/// What [`restore_changes`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restored {
    pub entries: usize,
    pub relocated: usize,
}

impl Stamps {
    /// Stamps every entry under `root` (links not followed).
    pub fn of(root: &Path) -> io::Result<Stamps> {
        let mut stamps = BTreeMap::new();
        walk(root, Path::new(""), &mut |rel, meta| {
            stamps.insert(rel.to_path_buf(), stamp(meta));
        })?;
        Ok(Stamps(stamps))
    }
}

fn stamp(meta: &fs::Metadata) -> Stamp {
    let kind = if meta.file_type().is_symlink() {
        Kind::Link
    } else if meta.is_dir() {
        Kind::Dir
    } else if meta.is_file() {
        Kind::File
    } else {
        Kind::Other
    };
    Stamp {
        kind,
        size: meta.len(),
        mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        ino: meta.ino(),
    }
}

/// Calls `visit` for every entry below `root` (depth first, parents first), never following a
/// link.
fn walk(root: &Path, rel: &Path, visit: &mut dyn FnMut(&Path, &fs::Metadata)) -> io::Result<()> {
    for entry in fs::read_dir(root.join(rel))? {
        let entry = entry?;
        let rel = rel.join(entry.file_name());
        let meta = fs::symlink_metadata(root.join(&rel))?;
        visit(&rel, &meta);
        if meta.is_dir() {
            walk(root, &rel, visit)?;
        }
    }
    Ok(())
}

/// Copies what changed under `root` since `before` into the new folder `dest` (made through
/// `dest.partial` and a rename, so a half snapshot never exists). Returns the entries saved.
pub fn save_changes(root: &Path, before: &Stamps, dest: &Path) -> io::Result<usize> {
    let partial = dest.with_extension("partial");
    if partial.exists() {
        fs::remove_dir_all(&partial)?;
    }
    let files = partial.join(FILES_DIR);
    fs::create_dir_all(&files)?;
    let mut saved = 0usize;
    let mut failure = None;
    let mut seen = BTreeMap::new();
    walk(root, Path::new(""), &mut |rel, meta| {
        let now = stamp(meta);
        seen.insert(rel.to_path_buf(), ());
        if failure.is_some() || before.0.get(rel) == Some(&now) {
            return;
        }
        // A folder that existed keeps its place; only new folders and changed entries are copied.
        if now.kind == Kind::Dir && before.0.get(rel).is_some_and(|s| s.kind == Kind::Dir) {
            return;
        }
        let copied = copy_entry(&root.join(rel), &files.join(rel), now.kind);
        match copied {
            Ok(true) => saved += 1,
            Ok(false) => {}
            Err(err) => failure = Some(err),
        }
    })?;
    if let Some(err) = failure {
        let _ = fs::remove_dir_all(&partial);
        return Err(err);
    }
    let removed = before
        .0
        .keys()
        .filter(|rel| !seen.contains_key(*rel))
        .cloned()
        .collect();
    let meta = Meta {
        root: root.to_path_buf(),
        removed,
        entries: saved,
    };
    let text = serde_json::to_string(&meta).map_err(io::Error::other)?;
    fs::write(partial.join(META_FILE), text)?;
    match fs::rename(&partial, dest) {
        Ok(()) => Ok(saved),
        // Another run saved the same snapshot first: theirs is as good.
        Err(_) if dest.join(META_FILE).is_file() => {
            let _ = fs::remove_dir_all(&partial);
            Ok(saved)
        }
        Err(err) => Err(err),
    }
}

/// Copies one entry as what it is; `false` for a kind that is not copied.
fn copy_entry(from: &Path, to: &Path, kind: Kind) -> io::Result<bool> {
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent)?;
    }
    match kind {
        Kind::Dir => fs::create_dir_all(to).map(|()| true),
        Kind::Link => symlink(fs::read_link(from)?, to).map(|()| true),
        Kind::File => fs::copy(from, to).map(|_| true),
        Kind::Other => Ok(false),
    }
}

/// Whether `dir` holds a whole snapshot.
pub fn has_snapshot(dir: &Path) -> bool {
    dir.join(META_FILE).is_file()
}

/// Puts the snapshot in `dir` into the workspace `root`, relocating the old workspace's path to
/// `root`'s, and removes what the setup removed.
pub fn restore_changes(dir: &Path, root: &Path) -> io::Result<Restored> {
    let text = fs::read_to_string(dir.join(META_FILE))?;
    let meta: Meta = serde_json::from_str(&text).map_err(io::Error::other)?;
    let old = meta.root.as_os_str().as_encoded_bytes().to_vec();
    let new = root.as_os_str().as_encoded_bytes().to_vec();
    let files = dir.join(FILES_DIR);
    let mut restored = Restored {
        entries: 0,
        relocated: 0,
    };
    let mut failure = None;
    walk(&files, Path::new(""), &mut |rel, meta| {
        if failure.is_some() {
            return;
        }
        match restore_entry(&files.join(rel), root, rel, meta, &old, &new) {
            Ok(relocated) => {
                restored.entries += 1;
                restored.relocated += usize::from(relocated);
            }
            Err(err) => failure = Some(err),
        }
    })?;
    if let Some(err) = failure {
        return Err(err);
    }
    for rel in &meta.removed {
        if no_link_above(root, rel) {
            let target = root.join(rel);
            match fs::symlink_metadata(&target) {
                Ok(m) if m.is_dir() => fs::remove_dir_all(&target)?,
                Ok(_) => fs::remove_file(&target)?,
                Err(_) => {}
            }
        }
    }
    Ok(restored)
}

/// Restores one entry; `true` when the old path was replaced in it.
fn restore_entry(
    from: &Path,
    root: &Path,
    rel: &Path,
    meta: &fs::Metadata,
    old: &[u8],
    new: &[u8],
) -> io::Result<bool> {
    if !no_link_above(root, rel) {
        return Err(io::Error::other(format!(
            "{} lies under a link in the workspace; the setup's snapshot is not restored through it",
            rel.display()
        )));
    }
    let to = root.join(rel);
    if meta.is_dir() {
        if fs::symlink_metadata(&to).is_ok_and(|m| !m.is_dir()) {
            fs::remove_file(&to)?;
        }
        fs::create_dir_all(&to)?;
        return Ok(false);
    }
    if let Ok(existing) = fs::symlink_metadata(&to) {
        if existing.is_dir() {
            fs::remove_dir_all(&to)?;
        } else {
            fs::remove_file(&to)?;
        }
    }
    if meta.file_type().is_symlink() {
        let target = fs::read_link(from)?;
        let bytes = target.as_os_str().as_encoded_bytes();
        let (bytes, relocated) = relocate(bytes, old, new);
        let target = PathBuf::from(std::ffi::OsString::from(
            String::from_utf8_lossy(&bytes).into_owned(),
        ));
        symlink(target, &to)?;
        return Ok(relocated);
    }
    if meta.len() <= MAX_RELOCATED_BYTES {
        let bytes = fs::read(from)?;
        if !bytes.contains(&0) {
            let (bytes, relocated) = relocate(&bytes, old, new);
            if relocated {
                fs::write(&to, bytes)?;
                fs::set_permissions(&to, meta.permissions())?;
                return Ok(true);
            }
        }
    }
    fs::copy(from, &to)?;
    Ok(false)
}

/// `bytes` with every `old` replaced by `new`, and whether there was one.
fn relocate(bytes: &[u8], old: &[u8], new: &[u8]) -> (Vec<u8>, bool) {
    if old.is_empty() || bytes.len() < old.len() {
        return (bytes.to_vec(), false);
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    let mut found = false;
    while at < bytes.len() {
        if bytes[at..].starts_with(old) {
            out.extend_from_slice(new);
            at += old.len();
            found = true;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    (out, found)
}

/// No folder on the way to `rel` under `root` is a link.
fn no_link_above(root: &Path, rel: &Path) -> bool {
    let mut at = root.to_path_buf();
    let parts: Vec<_> = rel.components().collect();
    parts
        .iter()
        .take(parts.len().saturating_sub(1))
        .all(|part| {
            at.push(part);
            !fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setup_is_saved_and_restored_into_another_workspace_with_its_paths_moved() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let a = tmp.path().join("a/work");
        let b = tmp.path().join("bb/work");
        for root in [&a, &b] {
            fs::create_dir_all(root.join("src")).expect("mkdir");
            fs::write(root.join("src/m.py"), "x = 1\n").expect("write");
            fs::write(root.join("gone.txt"), "old\n").expect("write");
        }
        let before = Stamps::of(&a).expect("stamps");
        // The "setup": a venv-like folder with the workspace's path in a script and a link.
        fs::create_dir_all(a.join(".venv/bin")).expect("mkdir");
        let script = format!("#!{}/.venv/bin/python\n", a.display());
        fs::write(a.join(".venv/bin/pytest"), &script).expect("write");
        symlink(a.join("src"), a.join(".venv/src-link")).expect("link");
        fs::remove_file(a.join("gone.txt")).expect("rm");
        let snap = tmp.path().join("cache/key");
        fs::create_dir_all(tmp.path().join("cache")).expect("mkdir");
        assert_eq!(save_changes(&a, &before, &snap).expect("save"), 4);

        let restored = restore_changes(&snap, &b).expect("restore");
        let actual = (
            restored,
            fs::read_to_string(b.join(".venv/bin/pytest")).expect("read"),
            fs::read_link(b.join(".venv/src-link")).expect("link"),
            b.join("gone.txt").exists(),
        );
        let expected = (
            Restored {
                entries: 4,
                relocated: 2,
            },
            format!("#!{}/.venv/bin/python\n", b.display()),
            b.join("src"),
            false,
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_link_in_the_new_workspace_is_replaced_never_written_through() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let a = tmp.path().join("a");
        let b = tmp.path().join("b");
        let outside = tmp.path().join("outside");
        for dir in [&a, &b, &outside] {
            fs::create_dir_all(dir).expect("mkdir");
        }
        let before = Stamps::of(&a).expect("stamps");
        fs::create_dir_all(a.join("lib")).expect("mkdir");
        fs::write(a.join("lib/x"), "data").expect("write");
        let snap = tmp.path().join("snap");
        save_changes(&a, &before, &snap).expect("save");
        symlink(&outside, b.join("lib")).expect("link");
        restore_changes(&snap, &b).expect("restore");
        // The link was replaced by the folder, and the file went into it, not through the link.
        let actual = (
            outside.join("x").exists(),
            fs::symlink_metadata(b.join("lib")).expect("lib").is_dir(),
            fs::read_to_string(b.join("lib/x")).expect("x"),
        );
        assert_eq!(actual, (false, true, "data".to_owned()));
    }
}
