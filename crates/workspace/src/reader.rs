//! The confined reader: the one way plumb reads a file of a tree it does not trust (the workspace
//! copy, a tree materialized for a check) for a model, a prompt or a report.
//!
//! Every read, in order:
//! 1. the path is confined as a model-given path is ([`crate::Workspace::resolve`]'s rules: no
//!    absolute path, no `..` or link that leads out, no `.git`), or, for a path a walk of the tree
//!    produced, checked to lie under the root;
//! 2. the entry is looked at without following it (`lstat`): anything that is not a regular file
//!    (a folder, a FIFO, a socket, a device, a link that survived step 1) is refused *before* it is
//!    opened, so a named pipe can never block the harness and a device is never touched;
//! 3. it is opened relative to the root with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`
//!    (falling back to `O_NOFOLLOW` where the kernel lacks `openat2`), always `O_NONBLOCK` and
//!    `O_NOCTTY`, and the opened file must be the same regular file `lstat` saw (a swap between
//!    the two is refused);
//! 4. at most `limit` bytes are read: a file larger than that is refused with its size, not read
//!    in part (a half file is a lie to whoever reads it).
//!
//! Crates that handle workspace content deny `std::fs::read*` and `File::open` through clippy's
//! `disallowed_methods` (their `clippy.toml`), so an unconfined read has to say why it is one.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags};

use crate::confine;
use crate::error::ConfineError;

/// A folder whose files are read through the checks above. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Tree {
    root: PathBuf,
}

/// What a path names, as far as reading it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryKind {
    File,
    Folder,
    /// A FIFO, a socket, a device, or a link (what step 2 refuses).
    Other(SpecialKind),
}

/// The kinds of entry that are never opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecialKind {
    Fifo,
    Socket,
    Device,
    Link,
}

impl SpecialKind {
    fn words(self) -> &'static str {
        match self {
            SpecialKind::Fifo => "a named pipe (FIFO)",
            SpecialKind::Socket => "a socket",
            SpecialKind::Device => "a device",
            SpecialKind::Link => "a symbolic link",
        }
    }
}

/// Why a file was not read. The `Display` text names the path as given and is meant for the model
/// as well as a person: it never says anything about the machine outside the tree.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Confine(#[from] ConfineError),

    #[error("there is no file called {path}")]
    Missing { path: String },

    #[error("{path} is a folder, not a file")]
    Folder { path: String },

    #[error("{path} is {}, not a regular file; only regular files can be read", kind.words())]
    Special { path: String, kind: SpecialKind },

    #[error(
        "{path} is {size} bytes, more than the {limit} bytes plumb reads of one file; search it with search_code instead"
    )]
    TooLarge { path: String, size: u64, limit: u64 },

    #[error("{path} is not UTF-8 text; plumb shows text files only")]
    NotText { path: String },

    #[error("{path} changed while it was being opened; try again")]
    Changed { path: String },

    #[error("{path} could not be read ({detail})")]
    Io { path: String, detail: String },
}

impl ReadError {
    /// True when the path does not name anything (as opposed to naming something unreadable).
    pub fn is_missing(&self) -> bool {
        matches!(self, ReadError::Missing { .. })
    }
}

impl Tree {
    /// The tree at `root`, which is canonicalised (it must exist).
    pub fn new(root: &Path) -> io::Result<Tree> {
        Ok(Tree {
            root: root.canonicalize()?,
        })
    }

    /// A tree whose root is already canonical (the workspace's).
    pub(crate) fn from_canonical(root: PathBuf) -> Tree {
        Tree { root }
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Confines a model-given path (see [`crate::Workspace::resolve`]).
    pub fn resolve(&self, user_path: &str) -> Result<PathBuf, ConfineError> {
        confine::resolve(&self.root, user_path)
    }

    /// The bytes of the file `user_path` names (a model-given or harness-chosen relative path), at
    /// most `limit` of them.
    pub fn read(&self, user_path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        let resolved = self.resolve(user_path)?;
        let rel = self.inside(&resolved, user_path)?;
        self.read_inside(&rel, user_path, limit)
    }

    /// The text of the file `user_path` names, at most `limit` bytes of UTF-8.
    pub fn read_text(&self, user_path: &str, limit: u64) -> Result<String, ReadError> {
        let bytes = self.read(user_path, limit)?;
        String::from_utf8(bytes).map_err(|_| ReadError::NotText {
            path: user_path.to_owned(),
        })
    }

    /// The bytes of `path`, a path a walk of this tree produced (absolute under the root, or
    /// relative to it). A walk does not follow links, so no component before the last is one;
    /// the open checks that again.
    pub fn read_entry(&self, path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
        let shown = self.shown(path);
        let rel = self.walked(path, &shown)?;
        self.read_inside(&rel, &shown, limit)
    }

    /// The text of a walked `path` (see [`Tree::read_entry`]).
    pub fn read_entry_text(&self, path: &Path, limit: u64) -> Result<String, ReadError> {
        let bytes = self.read_entry(path, limit)?;
        String::from_utf8(bytes).map_err(|_| ReadError::NotText {
            path: self.shown(path),
        })
    }

    /// A walked `path` relative to the root, `/`-separated (for messages and listings).
    pub fn shown(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        rel.to_string_lossy().replace('\\', "/")
    }

    /// `resolved` (from `confine::resolve`) relative to the root; the root itself is a folder.
    fn inside(&self, resolved: &Path, shown: &str) -> Result<PathBuf, ReadError> {
        match resolved.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => Err(ReadError::Folder {
                path: shown.to_owned(),
            }),
            Ok(rel) => Ok(rel.to_path_buf()),
            Err(_) => Err(ConfineError::Escapes {
                path: shown.to_owned(),
            }
            .into()),
        }
    }

    /// A walked path relative to the root, made only of plain names.
    fn walked(&self, path: &Path, shown: &str) -> Result<PathBuf, ReadError> {
        let rel = if path.is_absolute() {
            path.strip_prefix(&self.root)
                .map_err(|_| ConfineError::Escapes {
                    path: shown.to_owned(),
                })?
        } else {
            path
        };
        if rel.as_os_str().is_empty() {
            return Err(ReadError::Folder {
                path: shown.to_owned(),
            });
        }
        if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(ConfineError::Escapes {
                path: shown.to_owned(),
            }
            .into());
        }
        Ok(rel.to_path_buf())
    }

    fn root_fd(&self, shown: &str) -> Result<OwnedFd, ReadError> {
        rustix::fs::open(
            &self.root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|err| io_error(shown, err.into()))
    }

    /// The entry at `rel` under the open `root`, not following it.
    fn stat_under(
        &self,
        root: &OwnedFd,
        rel: &Path,
        shown: &str,
    ) -> Result<rustix::fs::Stat, ReadError> {
        rustix::fs::statat(root, rel, AtFlags::SYMLINK_NOFOLLOW).map_err(|err| {
            let err = io::Error::from(err);
            match err.kind() {
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => ReadError::Missing {
                    path: shown.to_owned(),
                },
                _ => io_error(shown, err),
            }
        })
    }

    fn read_inside(&self, rel: &Path, shown: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        // One open of the root for the look and the open: a search reads every file of the tree.
        let root = self.root_fd(shown)?;
        let before = self.stat_under(&root, rel, shown)?;
        match entry_kind(&before) {
            EntryKind::File => {}
            EntryKind::Folder => {
                return Err(ReadError::Folder {
                    path: shown.to_owned(),
                });
            }
            EntryKind::Other(kind) => {
                return Err(ReadError::Special {
                    path: shown.to_owned(),
                    kind,
                });
            }
        }
        let size = u64::try_from(before.st_size).unwrap_or(0);
        if size > limit {
            return Err(ReadError::TooLarge {
                path: shown.to_owned(),
                size,
                limit,
            });
        }
        let file = File::from(open_beneath(&root, rel).map_err(|err| io_error(shown, err))?);
        let now = file.metadata().map_err(|err| io_error(shown, err))?;
        if !now.file_type().is_file() || now.dev() != before.st_dev || now.ino() != before.st_ino {
            return Err(ReadError::Changed {
                path: shown.to_owned(),
            });
        }
        // Sized for the file as it was looked at (one more byte shows it grew past the limit), so
        // reading it does not grow and copy the buffer again and again.
        let expected = usize::try_from(size.saturating_add(1)).unwrap_or(0);
        let mut bytes = Vec::with_capacity(expected);
        file.take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|err| io_error(shown, err))?;
        if bytes.len() as u64 > limit {
            return Err(ReadError::TooLarge {
                path: shown.to_owned(),
                size: bytes.len() as u64,
                limit,
            });
        }
        Ok(bytes)
    }
}

/// Opens `rel` (plain names only) under `root` for reading, following no link anywhere on the way.
fn open_beneath(root: &OwnedFd, rel: &Path) -> io::Result<OwnedFd> {
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    open_under(root, rel, flags)
}

/// Opens `rel` (plain names only; empty for `root` itself) under `root` with `flags`, following
/// no link anywhere on the way: what a walk of an untrusted tree opens its folders with.
pub(crate) fn open_under(root: &OwnedFd, rel: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    if rel.as_os_str().is_empty() {
        return Ok(rustix::fs::openat(root, ".", flags, Mode::empty())?);
    }
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(root, rel, flags, Mode::empty(), resolve) {
        Ok(fd) => Ok(fd),
        // No openat2 here (kernels before 5.6, some sandboxes): walk the folders one by one without
        // following links, then open the last name with O_NOFOLLOW.
        Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => open_walking(root, rel, flags),
        Err(err) => Err(err.into()),
    }
}

fn open_walking(root: &OwnedFd, rel: &Path, flags: OFlags) -> io::Result<OwnedFd> {
    let mut names: Vec<&std::ffi::OsStr> = rel.iter().collect();
    let last = names
        .pop()
        .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    let mut dir = rustix::fs::openat(
        root,
        ".",
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    for name in names {
        dir = rustix::fs::openat(
            &dir,
            name,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
    }
    Ok(rustix::fs::openat(&dir, last, flags, Mode::empty())?)
}

fn entry_kind(stat: &rustix::fs::Stat) -> EntryKind {
    use rustix::fs::FileType;
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => EntryKind::File,
        FileType::Directory => EntryKind::Folder,
        FileType::Fifo => EntryKind::Other(SpecialKind::Fifo),
        FileType::Socket => EntryKind::Other(SpecialKind::Socket),
        FileType::CharacterDevice | FileType::BlockDevice | FileType::Unknown => {
            EntryKind::Other(SpecialKind::Device)
        }
        FileType::Symlink => EntryKind::Other(SpecialKind::Link),
    }
}

/// An I/O failure, named by the path as given and the error's kind only (its text could hold a
/// host path).
fn io_error(shown: &str, err: io::Error) -> ReadError {
    ReadError::Io {
        path: shown.to_owned(),
        detail: err.kind().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use pretty_assertions::assert_eq;

    use super::*;

    fn tree() -> (tempfile::TempDir, tempfile::TempDir, Tree) {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "host secret").unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/app.py"), "print(1)\n").unwrap();
        let tree = Tree::new(dir.path()).unwrap();
        (dir, outside, tree)
    }

    fn make_fifo(path: &Path) {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            path,
            rustix::fs::FileType::Fifo,
            Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
    }

    #[test]
    fn reads_a_file_and_refuses_what_is_not_one() {
        let (dir, outside, tree) = tree();
        symlink(outside.path().join("secret"), dir.path().join("out")).unwrap();
        symlink("src/app.py", dir.path().join("inside_link")).unwrap();
        symlink(outside.path(), dir.path().join("out_dir")).unwrap();
        make_fifo(&dir.path().join("pipe"));
        let actual: Vec<String> = [
            "src/app.py",
            "inside_link",
            "out",
            "out_dir/secret",
            "pipe",
            "src",
            "missing.py",
            "../x",
        ]
        .iter()
        .map(|path| match tree.read_text(path, 1024) {
            Ok(text) => format!("ok {text:?}"),
            Err(err) => err.to_string(),
        })
        .collect();
        let expected = vec![
            "ok \"print(1)\\n\"".to_owned(),
            "ok \"print(1)\\n\"".to_owned(),
            "out leads outside the project folder; you can only use files inside the project folder".to_owned(),
            "out_dir/secret leads outside the project folder; you can only use files inside the project folder".to_owned(),
            "pipe is a named pipe (FIFO), not a regular file; only regular files can be read".to_owned(),
            "src is a folder, not a file".to_owned(),
            "there is no file called missing.py".to_owned(),
            "../x leads outside the project folder; you can only use files inside the project folder".to_owned(),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_walked_entry_is_never_followed_or_opened_when_special() {
        let (dir, outside, tree) = tree();
        symlink(outside.path().join("secret"), dir.path().join("src/out.py")).unwrap();
        make_fifo(&dir.path().join("src/pipe.py"));
        let actual: Vec<String> = ["src/app.py", "src/out.py", "src/pipe.py"]
            .iter()
            .map(
                |rel| match tree.read_entry_text(&dir.path().join(rel), 1024) {
                    Ok(text) => format!("ok {text:?}"),
                    Err(err) => err.to_string(),
                },
            )
            .collect();
        let expected = vec![
            "ok \"print(1)\\n\"".to_owned(),
            "src/out.py is a symbolic link, not a regular file; only regular files can be read"
                .to_owned(),
            "src/pipe.py is a named pipe (FIFO), not a regular file; only regular files can be read"
                .to_owned(),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_file_over_the_limit_is_refused_with_its_size() {
        let (dir, _outside, tree) = tree();
        std::fs::write(dir.path().join("big.txt"), "x".repeat(100)).unwrap();
        let actual = tree.read("big.txt", 99).unwrap_err().to_string();
        assert_eq!(
            actual,
            "big.txt is 100 bytes, more than the 99 bytes plumb reads of one file; search it with search_code instead"
        );
    }

    #[test]
    fn the_fallback_open_follows_no_link() {
        let (dir, outside, tree) = tree();
        symlink(outside.path(), dir.path().join("via")).unwrap();
        let root = tree.root_fd("x").unwrap();
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK;
        let through_dir = open_walking(&root, Path::new("via/secret"), flags).is_err();
        let ok = open_walking(&root, Path::new("src/app.py"), flags).is_ok();
        assert_eq!((through_dir, ok), (true, true));
        drop(dir);
    }
}
