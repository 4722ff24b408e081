//! A rollback in place: only what differs from the target is touched, so an undo on a large
//! copy costs its change, not the copy (and unchanged files keep their times, which build tools go
//! by). `rollback.rs` tries it first and falls back to a fresh checkout when anything here cannot
//! be done, so nothing in this module needs to succeed for the rollback to.
//!
//! Steps: the copy is staged (`stage/`, within the deadline); git lists what differs between the
//! target's tree and that one (`diff --raw --no-renames`, two trees: git reads no file of the
//! copy); the strays staging met (every `.git`, FIFOs, sockets and devices that are not ignored)
//! and the files the target lacks are removed; the target's blobs come from one
//! `git cat-file --batch` and are written by plumb. Every write goes through folders opened beneath
//! the copy without following links (`openat2`): a folder on the way that is anything else is
//! removed and made again, and a name is removed before it is written (`O_EXCL`, no link
//! followed).
//!
//! What is ignored stays, so the copy's view of what is ignored must be the target's: a
//! `.gitignore` that differs from the target's, or one that ignores itself (rules the staged tree
//! does not show), sends the rollback to the fresh checkout, which judges by the target's rules. So
//! does a top `.gitmodules` the agent touched.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Instant;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use crate::discard::remove_within;
use crate::ids::CommitId;
use crate::reader::open_under;
use crate::stage::Staged;
use crate::workspace::Workspace;

/// Why the rollback in place gave way to a fresh checkout (never shown: the fallback succeeds).
pub(crate) struct NotInPlace;

/// Any failure here means "check out afresh instead".
fn no<E>(_: E) -> NotInPlace {
    NotInPlace
}

/// One path that differs: what the target holds there (`None`: nothing).
struct Differs {
    path: Vec<u8>,
    target: Option<(u32, String)>,
    /// Whether the copy holds something there that staging saw.
    current: bool,
}

impl Workspace {
    /// Makes the copy `commit`'s tree by changing only what differs (see the module header).
    pub(crate) fn restore_in_place(
        &self,
        staged: &Staged,
        commit: &CommitId,
        deadline: Option<Instant>,
    ) -> Result<(), NotInPlace> {
        if staged.hidden_rules
            || staged.kept_out.iter().any(|k| {
                matches!(
                    k.kind,
                    crate::KeptOutKind::GitmodulesAdded
                        | crate::KeptOutKind::GitmodulesChanged
                        | crate::KeptOutKind::GitmodulesDeleted
                )
            })
        {
            return Err(NotInPlace);
        }
        let out = self
            .git
            .run(&[
                "diff",
                "--raw",
                "-z",
                "--no-renames",
                "--no-abbrev",
                "--no-ext-diff",
                commit.as_str(),
                &staged.tree,
                "--",
            ])
            .map_err(no)?;
        let differs = parse(&out.stdout).ok_or(NotInPlace)?;
        if differs.iter().any(|d| {
            Path::new(OsStr::from_bytes(&d.path)).file_name() == Some(OsStr::new(".gitignore"))
        }) {
            return Err(NotInPlace);
        }
        let blobs = self.blobs(&differs)?;
        let root = rustix::fs::open(
            &self.root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(no)?;
        let at = |path: &[u8]| Path::new(OsStr::from_bytes(path)).to_path_buf();
        for stray in &staged.strays {
            remove(&root, &self.root, stray, deadline).map_err(no)?;
        }
        for gone in differs.iter().filter(|d| d.current) {
            remove(&root, &self.root, &at(&gone.path), deadline).map_err(no)?;
        }
        for folder in &staged.empty_folders {
            remove_empty_folder(&root, folder);
        }
        for file in &differs {
            if let Some((mode, id)) = &file.target {
                let bytes = blobs.get(id.as_str()).ok_or(NotInPlace)?;
                let rel = at(&file.path);
                // A folder where the file goes: what it held was removed above, or is ignored.
                remove(&root, &self.root, &rel, deadline).map_err(no)?;
                write(&root, &rel, *mode, bytes).map_err(no)?;
            }
        }
        for gone in differs.iter().filter(|d| d.target.is_none()) {
            let mut up = Path::new(OsStr::from_bytes(&gone.path)).parent();
            while let Some(folder) = up.filter(|p| !p.as_os_str().is_empty()) {
                if !remove_empty_folder(&root, folder) {
                    break;
                }
                up = folder.parent();
            }
        }
        Ok(())
    }

    /// The target's blobs the restore writes, by id, from one `git cat-file --batch`.
    fn blobs(&self, differs: &[Differs]) -> Result<HashMap<String, Vec<u8>>, NotInPlace> {
        let mut ids: Vec<&str> = differs
            .iter()
            .filter_map(|d| d.target.as_ref().map(|(_, id)| id.as_str()))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let mut blobs = HashMap::new();
        if ids.is_empty() {
            return Ok(blobs);
        }
        let input = ids.join("\n") + "\n";
        let out = self
            .git
            .run_with_input(&["cat-file", "--batch"], input.as_bytes())
            .map_err(no)?;
        let mut rest = out.stdout.as_slice();
        for id in ids {
            let newline = rest.iter().position(|b| *b == b'\n').ok_or(NotInPlace)?;
            let head = std::str::from_utf8(rest.get(..newline).ok_or(NotInPlace)?).map_err(no)?;
            let mut fields = head.split(' ');
            if fields.next() != Some(id) || fields.next() != Some("blob") {
                return Err(NotInPlace);
            }
            let size: usize = fields.next().ok_or(NotInPlace)?.parse().map_err(no)?;
            let body = rest
                .get(newline + 1..newline + 1 + size)
                .ok_or(NotInPlace)?;
            blobs.insert(id.to_owned(), body.to_vec());
            rest = rest.get(newline + 2 + size..).ok_or(NotInPlace)?;
        }
        Ok(blobs)
    }
}

/// Reads `git diff --raw -z --no-renames --no-abbrev TARGET CURRENT`, keeping paths as bytes.
fn parse(raw: &[u8]) -> Option<Vec<Differs>> {
    let mut fields = raw.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut out = Vec::new();
    while let Some(head) = fields.next() {
        let head = std::str::from_utf8(head).ok()?.strip_prefix(':')?;
        let cols: Vec<&str> = head.split(' ').collect();
        let [target_mode, current_mode, target_id, _, status] = cols.as_slice() else {
            return None;
        };
        let path = fields.next()?.to_vec();
        let target_mode = u32::from_str_radix(target_mode, 8).ok()?;
        let current_mode = u32::from_str_radix(current_mode, 8).ok()?;
        // Only files and links are restored by plumb (a gitlink is never staged).
        if !matches!(target_mode, 0 | 0o100644 | 0o100755 | 0o120000)
            || !matches!(*status, "A" | "D" | "M" | "T")
        {
            return None;
        }
        out.push(Differs {
            path,
            target: (target_mode != 0).then(|| (target_mode, (*target_id).to_owned())),
            current: current_mode != 0,
        });
    }
    Some(out)
}

/// Removes whatever is at `rel` (a folder with all it holds), never following a link.
fn remove(
    root: &OwnedFd,
    abs_root: &Path,
    rel: &Path,
    deadline: Option<Instant>,
) -> io::Result<()> {
    let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
        return Err(io::Error::other("the root is not removed"));
    };
    let dir = match open_folder(root, parent) {
        Ok(dir) => dir,
        // The folder is gone already (removed with a stray above it).
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(err),
    };
    let stat = match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => stat,
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(err) => return Err(err.into()),
    };
    if FileType::from_raw_mode(stat.st_mode) == FileType::Directory {
        if remove_within(&abs_root.join(rel), deadline)? {
            return Ok(());
        }
        return Err(io::Error::other("out of time"));
    }
    Ok(rustix::fs::unlinkat(&dir, name, AtFlags::empty())?)
}

/// Removes the folder `rel` if it is empty; whether it did.
fn remove_empty_folder(root: &OwnedFd, rel: &Path) -> bool {
    let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
        return false;
    };
    open_folder(root, parent)
        .ok()
        .is_some_and(|dir| rustix::fs::unlinkat(&dir, name, AtFlags::REMOVEDIR).is_ok())
}

/// Writes the target's entry at `rel`: its folders made (anything else in their place removed),
/// whatever is at the name removed, then the file or link created afresh.
fn write(root: &OwnedFd, rel: &Path, mode: u32, bytes: &[u8]) -> io::Result<()> {
    let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
        return Err(io::Error::other("the root is not a file"));
    };
    let mut dir = open_folder(root, Path::new(""))?;
    for folder in parent.iter() {
        match rustix::fs::statat(&dir, folder, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Directory => {}
            Ok(_) => {
                rustix::fs::unlinkat(&dir, folder, AtFlags::empty())?;
                rustix::fs::mkdirat(&dir, folder, Mode::from_raw_mode(0o755))?;
            }
            Err(rustix::io::Errno::NOENT) => {
                rustix::fs::mkdirat(&dir, folder, Mode::from_raw_mode(0o755))?;
            }
            Err(err) => return Err(err.into()),
        }
        dir = rustix::fs::openat(
            &dir,
            folder,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
    }
    match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Directory => {
            return Err(io::Error::other("a folder stands where a file goes"));
        }
        Ok(_) => rustix::fs::unlinkat(&dir, name, AtFlags::empty())?,
        Err(rustix::io::Errno::NOENT) => {}
        Err(err) => return Err(err.into()),
    }
    if mode == 0o120000 {
        return Ok(rustix::fs::symlinkat(bytes, &dir, name)?);
    }
    let perm = if mode == 0o100755 { 0o755 } else { 0o644 };
    let fd = rustix::fs::openat(
        &dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(perm),
    )?;
    rustix::fs::fchmod(&fd, Mode::from_raw_mode(perm))?;
    std::fs::File::from(fd).write_all(bytes)
}

/// Opens the folder `rel` beneath `root` (no link on the way).
fn open_folder(root: &OwnedFd, rel: &Path) -> io::Result<OwnedFd> {
    open_under(
        root,
        rel,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
    )
}
