//! Writing blobs and trees into the shadow repository's object store, without git.
//!
//! Git's loose object format: `<type> <length>\0<content>`, compressed with zlib, stored at
//! `objects/<first two hex digits>/<other 38>` under the object's SHA-1. Staging writes objects
//! itself so that git never opens a file of the copy (see `stage/mod.rs`); git then reads these
//! objects like any other (`commit-tree`, `diff`, `checkout-index`).
//!
//! An object is hashed first and compressed only when the store lacks it, so an unchanged file
//! costs one read. A file is read through a descriptor plumb opened itself (never a FIFO or a
//! device: the caller checked), in chunks, with the deadline checked between chunks; a file whose
//! length is not the one `fstat` gave when it was opened (something wrote to it meanwhile) is
//! refused rather than stored half.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use flate2::Compression;
use flate2::write::ZlibEncoder;
use sha1::{Digest, Sha1};

/// A 20-byte SHA-1 object id.
pub(crate) type Oid = [u8; 20];

/// Files up to this long are hashed and compressed from one read held in memory.
const IN_MEMORY: u64 = 1 << 20;
/// How much of a larger file is read between two looks at the deadline.
const CHUNK: usize = 1 << 20;

/// Numbers the temporary files of this process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Why an object could not be written.
#[derive(Debug)]
pub(crate) enum ObjectError {
    /// The deadline passed.
    OutOfTime,
    /// The file's length changed while it was read.
    Changed,
    Io(io::Error),
}

impl From<io::Error> for ObjectError {
    fn from(err: io::Error) -> Self {
        ObjectError::Io(err)
    }
}

/// The kinds of entry a tree holds (plumb never writes a gitlink).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TreeMode {
    Regular,
    Executable,
    Symlink,
    Tree,
}

impl TreeMode {
    fn octal(self) -> &'static [u8] {
        match self {
            TreeMode::Regular => b"100644",
            TreeMode::Executable => b"100755",
            TreeMode::Symlink => b"120000",
            TreeMode::Tree => b"40000",
        }
    }

    /// The mode `git ls-tree` prints (`100644`, …), if it is one plumb writes.
    pub(crate) fn from_octal(text: &str) -> Option<TreeMode> {
        match text {
            "100644" => Some(TreeMode::Regular),
            "100755" => Some(TreeMode::Executable),
            "120000" => Some(TreeMode::Symlink),
            "040000" | "40000" => Some(TreeMode::Tree),
            _ => None,
        }
    }
}

/// One entry of a tree object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TreeEntry {
    pub(crate) name: Vec<u8>,
    pub(crate) mode: TreeMode,
    pub(crate) id: Oid,
}

/// The object store of one repository.
#[derive(Debug, Clone)]
pub(crate) struct Objects {
    dir: PathBuf,
}

impl Objects {
    pub(crate) fn new(git_dir: &Path) -> Objects {
        Objects {
            dir: git_dir.join("objects"),
        }
    }

    /// Stores `bytes` as a blob.
    pub(crate) fn write_blob(&self, bytes: &[u8]) -> io::Result<Oid> {
        self.write_object("blob", bytes)
    }

    /// Stores the open regular file `file`, `len` bytes long, as a blob.
    pub(crate) fn write_file(
        &self,
        file: &mut File,
        len: u64,
        deadline: Option<Instant>,
    ) -> Result<Oid, ObjectError> {
        if len <= IN_MEMORY {
            let mut bytes = Vec::with_capacity(len as usize);
            (&mut *file).take(len + 1).read_to_end(&mut bytes)?;
            if bytes.len() as u64 != len {
                return Err(ObjectError::Changed);
            }
            return Ok(self.write_object("blob", &bytes)?);
        }
        let mut hasher = Sha1::new();
        hasher.update(header("blob", len));
        stream(file, len, deadline, |chunk| {
            hasher.update(chunk);
            Ok(())
        })?;
        let id: Oid = hasher.finalize().into();
        if self.path_of(&id).exists() {
            return Ok(id);
        }
        file.seek(SeekFrom::Start(0))?;
        let (tmp, out) = self.temp_file()?;
        let written = (|| -> Result<Oid, ObjectError> {
            let mut encoder = ZlibEncoder::new(out, Compression::fast());
            let mut again = Sha1::new();
            encoder.write_all(&header("blob", len))?;
            again.update(header("blob", len));
            stream(file, len, deadline, |chunk| {
                again.update(chunk);
                encoder.write_all(chunk)
            })?;
            encoder.finish()?;
            let second: Oid = again.finalize().into();
            if second != id {
                return Err(ObjectError::Changed);
            }
            Ok(second)
        })();
        match written {
            Ok(id) => {
                self.install(&tmp, &id)?;
                Ok(id)
            }
            Err(err) => {
                let _ = std::fs::remove_file(&tmp);
                Err(err)
            }
        }
    }

    /// Stores a tree of `entries` (any order; sorted here as git sorts them). An empty tree is a
    /// valid object, and what an empty root stages to.
    pub(crate) fn write_tree(&self, entries: &mut [TreeEntry]) -> io::Result<Oid> {
        entries.sort_by_key(sort_key);
        let mut body = Vec::with_capacity(entries.len() * 40);
        for entry in entries.iter() {
            body.extend_from_slice(entry.mode.octal());
            body.push(b' ');
            body.extend_from_slice(&entry.name);
            body.push(0);
            body.extend_from_slice(&entry.id);
        }
        self.write_object("tree", &body)
    }

    fn write_object(&self, kind: &str, body: &[u8]) -> io::Result<Oid> {
        let head = header(kind, body.len() as u64);
        let mut hasher = Sha1::new();
        hasher.update(&head);
        hasher.update(body);
        let id: Oid = hasher.finalize().into();
        if self.path_of(&id).exists() {
            return Ok(id);
        }
        let (tmp, out) = self.temp_file()?;
        let written = (|| {
            let mut encoder = ZlibEncoder::new(out, Compression::fast());
            encoder.write_all(&head)?;
            encoder.write_all(body)?;
            encoder.finish().map(drop)
        })();
        match written.and_then(|()| self.install(&tmp, &id)) {
            Ok(()) => Ok(id),
            Err(err) => {
                let _ = std::fs::remove_file(&tmp);
                Err(err)
            }
        }
    }

    /// A new file in the object folder to write an object into before it gets its name.
    fn temp_file(&self) -> io::Result<(PathBuf, File)> {
        for _ in 0..16 {
            let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = self
                .dir
                .join(format!("tmp_obj_plumb_{}_{n}", std::process::id()));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o444)
                .open(&path)
            {
                Ok(file) => return Ok((path, file)),
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(err) => return Err(err),
            }
        }
        Err(io::Error::other("no free temporary object name"))
    }

    /// Gives the written temporary file its object name (an object already there has the same
    /// bytes, so either copy is fine).
    fn install(&self, tmp: &Path, id: &Oid) -> io::Result<()> {
        let path = self.path_of(id);
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder)?;
        }
        std::fs::rename(tmp, &path)?;
        let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444));
        Ok(())
    }

    fn path_of(&self, id: &Oid) -> PathBuf {
        let hex = to_hex(id);
        let (folder, rest) = hex.split_at(2);
        self.dir.join(folder).join(rest)
    }
}

/// The id git gives `bytes` as a blob (nothing is stored).
pub(crate) fn blob_id(bytes: &[u8]) -> Oid {
    let mut hasher = Sha1::new();
    hasher.update(header("blob", bytes.len() as u64));
    hasher.update(bytes);
    hasher.finalize().into()
}

/// `<kind> <len>\0`.
fn header(kind: &str, len: u64) -> Vec<u8> {
    format!("{kind} {len}\0").into_bytes()
}

/// Git's order of tree entries: by name, a folder's name as if it ended in `/`.
fn sort_key(entry: &TreeEntry) -> Vec<u8> {
    let mut key = entry.name.clone();
    if entry.mode == TreeMode::Tree {
        key.push(b'/');
    }
    key
}

/// Reads exactly `len` bytes of `file` in chunks, handing each to `each`; a file shorter or longer
/// than `len` is [`ObjectError::Changed`].
fn stream(
    file: &mut File,
    len: u64,
    deadline: Option<Instant>,
    mut each: impl FnMut(&[u8]) -> io::Result<()>,
) -> Result<(), ObjectError> {
    let mut buf = vec![0u8; CHUNK];
    let mut left = len;
    while left > 0 {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(ObjectError::OutOfTime);
        }
        let want = usize::try_from(left).unwrap_or(CHUNK).min(CHUNK);
        let Some(window) = buf.get_mut(..want) else {
            return Err(ObjectError::Changed);
        };
        let n = match file.read(window) {
            Ok(0) => return Err(ObjectError::Changed),
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err.into()),
        };
        each(window.get(..n).unwrap_or_default())?;
        left -= n as u64;
    }
    let mut one = [0u8; 1];
    if file.read(&mut one)? != 0 {
        return Err(ObjectError::Changed);
    }
    Ok(())
}

/// Lowercase hex of an id.
pub(crate) fn to_hex(id: &Oid) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use pretty_assertions::assert_eq;

    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn blobs_and_trees_are_the_objects_git_itself_makes() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("r");
        std::fs::create_dir(&repo).unwrap();
        git(&repo, &["init", "-q"]);
        let objects = Objects::new(&repo.join(".git"));
        let big: Vec<u8> = (0..3 * CHUNK + 7).map(|n| (n % 251) as u8).collect();
        let big_path = tmp.path().join("big");
        std::fs::write(&big_path, &big).unwrap();

        let small = objects.write_blob(b"hello\n").unwrap();
        let mut file = File::open(&big_path).unwrap();
        let large = objects
            .write_file(&mut file, big.len() as u64, None)
            .unwrap();
        let inner = objects
            .write_tree(&mut [TreeEntry {
                name: b"x.py".to_vec(),
                mode: TreeMode::Executable,
                id: small,
            }])
            .unwrap();
        // "a.b" sorts before the folder "a" (read as "a/"), and "a-" before it too.
        let root = objects
            .write_tree(&mut [
                TreeEntry {
                    name: b"a".to_vec(),
                    mode: TreeMode::Tree,
                    id: inner,
                },
                TreeEntry {
                    name: b"a.b".to_vec(),
                    mode: TreeMode::Regular,
                    id: large,
                },
                TreeEntry {
                    name: b"a-".to_vec(),
                    mode: TreeMode::Symlink,
                    id: small,
                },
            ])
            .unwrap();
        let actual = (
            git(&repo, &["cat-file", "-p", &to_hex(&small)]),
            git(&repo, &["cat-file", "-s", &to_hex(&large)]),
            git(&repo, &["ls-tree", "-r", &to_hex(&root)]),
            git(&repo, &["fsck", "--strict", "--no-dangling"]),
        );

        let expected = (
            "hello\n".to_string(),
            format!("{}\n", big.len()),
            format!(
                "120000 blob {small}\ta-\n100644 blob {large}\ta.b\n100755 blob {small}\ta/x.py\n",
                small = to_hex(&small),
                large = to_hex(&large)
            ),
            String::new(),
        );
        assert_eq!(actual, expected);
    }
}
