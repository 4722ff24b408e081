//! Moving the touched paths of a change from one side to the other — before to after to apply,
//! after to before to undo — so that at every moment each path holds one side or the other, and a
//! byte the user writes meanwhile is never written over.
//!
//! For each path (removals first, so a file can become a folder), in this order:
//! 1. leftovers of an interrupted step beside it are tidied: a file plumb moved aside is put
//!    back if the path is empty, the temporary new file is removed;
//! 2. the path must hold the side it leaves (or already the side it goes to: nothing to do);
//! 3. the new bytes are written beside it under a temporary name (`.plumb-<run>-<n>.new`), from the
//!    bytes saved in the run folder, whose SHA-256 is checked first;
//! 4. the path's file is moved aside (`.plumb-<run>-<n>.old`, a rename, so no write by the user
//!    can land between the check and the move) and what was moved is checked again: if it is not
//!    the side it should be, it goes back and the path is named as changed;
//! 5. the new file is moved to the path only if nothing is there (`RENAME_NOREPLACE`): a file the
//!    user made there meanwhile stays, and the path is named as changed;
//! 6. the old file is removed, and for a removal, the folders it left empty (as `git apply` does).
//!
//! When a path fails, every path already moved (that one included) is moved back the same way,
//! before the failure is reported. Every write first asks the [`Faults`] seam (but the removal of
//! plumb's own temporary file right after a failure, which the next step's tidying repeats).

use std::ffi::OsStr;
use std::fs::{OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::{CWD, RenameFlags, renameat_with};
use rustix::io::Errno;

use super::HomeError;
use super::faults::{Faults, Step};
use super::record::{Blob, Slot, sync_folder};
use super::state::{FileKind, FileState, content_at, inside, state_of};
use crate::diff::sha256_hex;

/// The two sides of a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Before,
    After,
}

impl Side {
    fn other(self) -> Side {
        match self {
            Side::Before => Side::After,
            Side::After => Side::Before,
        }
    }
}

impl Slot {
    fn side(&self, side: Side) -> Option<&Blob> {
        match side {
            Side::Before => self.before.as_ref(),
            Side::After => self.after.as_ref(),
        }
    }

    /// Whether `held` (what a path holds; `None`: nothing) is this slot's `side`.
    fn is(&self, side: Side, held: Option<&FileState>) -> bool {
        self.side(side).map(|blob| &blob.state) == held
    }
}

/// Why one path stopped: the user's bytes are there (kept; when putting back, nothing of
/// plumb's is left to undo at that path), or a write failed.
enum Stop {
    Theirs(HomeError),
    Failed(HomeError),
}

impl From<HomeError> for Stop {
    fn from(err: HomeError) -> Self {
        Stop::Failed(err)
    }
}

impl Stop {
    fn error(self) -> HomeError {
        match self {
            Stop::Theirs(err) | Stop::Failed(err) => err,
        }
    }
}

/// A failed [`Files::switch`]: why, and the paths that could not be moved back (each with why).
pub(crate) struct Failure {
    pub(crate) cause: HomeError,
    pub(crate) left: Vec<(String, HomeError)>,
}

/// The user's tree, the saved bytes, and how to name a path the user changed.
pub(crate) struct Files<'a> {
    pub(crate) root: &'a Path,
    /// The run's `applied/` folder.
    pub(crate) saved: &'a Path,
    /// The run's id, in temporary names.
    pub(crate) tag: String,
    pub(crate) faults: &'a dyn Faults,
    /// The error for paths that hold neither side (the user changed them).
    pub(crate) changed: &'a dyn Fn(Vec<String>) -> HomeError,
}

impl Files<'_> {
    /// The paths that hold none of the `sides` (a file an interrupted step moved aside counts
    /// for its path when the path is empty).
    pub(crate) fn not_holding(
        &self,
        slots: &[Slot],
        sides: &[Side],
    ) -> Result<Vec<String>, HomeError> {
        let mut changed = Vec::new();
        for (index, slot) in slots.iter().enumerate() {
            let mut held = state_of(self.root, &slot.path)?;
            if held.is_none() {
                let (_, old) = self.beside(&inside(self.root, &slot.path)?, index);
                held = content_at(&old, &slot.path)?.map(|content| content.state);
            }
            if !sides.iter().any(|side| slot.is(*side, held.as_ref())) {
                changed.push(slot.path.clone());
            }
        }
        Ok(changed)
    }

    /// Moves every slot's path to `toward`. On a failure, when `roll_back`, moves the paths it
    /// touched back first.
    pub(crate) fn switch(
        &self,
        slots: &[Slot],
        toward: Side,
        roll_back: bool,
    ) -> Result<(), Failure> {
        let order = order(slots, toward);
        for (done, &index) in order.iter().enumerate() {
            if let Err(stop) = self.converge(index, &slots[index], toward) {
                let cause = stop.error();
                let left = if roll_back {
                    let touched: Vec<usize> = order[..=done].iter().rev().copied().collect();
                    self.put_back(slots, &touched, toward.other())
                } else {
                    Vec::new()
                };
                return Err(Failure { cause, left });
            }
        }
        Ok(())
    }

    /// Moves every slot back to `toward` after a failure that came after [`Files::switch`]
    /// (a record that could not be written); the paths that could not be, each with why.
    pub(crate) fn put_back_all(&self, slots: &[Slot], toward: Side) -> Vec<(String, HomeError)> {
        let order: Vec<usize> = order(slots, toward.other()).into_iter().rev().collect();
        self.put_back(slots, &order, toward)
    }

    /// Moves the slots back; a path holding the user's bytes stays theirs.
    fn put_back(&self, slots: &[Slot], order: &[usize], toward: Side) -> Vec<(String, HomeError)> {
        order
            .iter()
            .filter_map(|&index| {
                let slot = &slots[index];
                match self.converge(index, slot, toward) {
                    Ok(()) | Err(Stop::Theirs(_)) => None,
                    Err(Stop::Failed(err)) => Some((slot.path.clone(), err)),
                }
            })
            .collect()
    }

    /// The user's bytes at the slot's path.
    fn theirs(&self, slot: &Slot) -> Stop {
        Stop::Theirs((self.changed)(vec![slot.path.clone()]))
    }

    /// Brings one slot's path to `toward` (see the module's steps).
    fn converge(&self, index: usize, slot: &Slot, toward: Side) -> Result<(), Stop> {
        let target = slot.side(toward);
        let path = inside(self.root, &slot.path)?;
        let (new, old) = self.beside(&path, index);
        self.tidy(slot, &path, &new, &old)?;
        let held = state_of(self.root, &slot.path)?;
        if slot.is(toward, held.as_ref()) {
            // A step cut short after it made the folders of a new file leaves them empty.
            if target.is_none() {
                self.remove_emptied_folders(slot, toward)?;
            }
            return Ok(());
        }
        if !slot.is(toward.other(), held.as_ref()) {
            return Err(self.theirs(slot));
        }
        if let Some(blob) = target {
            self.make_parents(&slot.path)?;
            self.step(Step::Temp(slot.path.clone()), &new)?;
            if let Err(err) = self.write_new(&new, blob) {
                let _ = std::fs::remove_file(&new);
                return Err(err.into());
            }
        }
        if let Err(err) = self.move_aside(slot, toward, &path, &old) {
            let _ = std::fs::remove_file(&new);
            return Err(err);
        }
        if target.is_some() {
            let placed = self
                .step(Step::Place(slot.path.clone()), &path)
                .and_then(|()| {
                    rename_no_replace(&new, &path).map_err(|err| HomeError::write(&path, err))
                });
            if let Err(err) = placed {
                let _ = std::fs::remove_file(&new);
                if exists(&path) {
                    // A file the user made at the path meanwhile: theirs, never replaced.
                    return Err(self.theirs(slot));
                }
                if slot.side(toward.other()).is_some() {
                    self.step(Step::PutBack(slot.path.clone()), &path)?;
                    rename_no_replace(&old, &path).map_err(|err| HomeError::write(&path, err))?;
                }
                return Err(err.into());
            }
        }
        if slot.side(toward.other()).is_some() {
            self.step(Step::Drop(slot.path.clone()), &old)?;
            std::fs::remove_file(&old).map_err(|err| HomeError::write(&old, err))?;
        }
        if target.is_none() {
            self.remove_emptied_folders(slot, toward)?;
        }
        // The renames reach the disk before a record says they happened.
        match path.ancestors().skip(1).find(|dir| dir.exists()) {
            Some(dir) => Ok(sync_folder(dir)?),
            None => Ok(()),
        }
    }

    /// Moves the path's file aside and checks it is the side being left; puts it back if not.
    /// For a side that is nothing, checks nothing is there.
    fn move_aside(&self, slot: &Slot, toward: Side, path: &Path, old: &Path) -> Result<(), Stop> {
        let leaving = toward.other();
        if slot.side(leaving).is_none() {
            return if exists(path) {
                Err(self.theirs(slot))
            } else {
                Ok(())
            };
        }
        self.step(Step::Aside(slot.path.clone()), path)?;
        match std::fs::rename(path, old) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(self.theirs(slot)),
            Err(err) => return Err(HomeError::write(path, err).into()),
        }
        let moved = content_at(old, &slot.path)?.map(|content| content.state);
        if slot.is(leaving, moved.as_ref()) {
            return Ok(());
        }
        // The user changed it between the look and the move: theirs goes back untouched.
        self.step(Step::PutBack(slot.path.clone()), path)?;
        match rename_no_replace(old, path) {
            Ok(()) => Err(self.theirs(slot)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
                Err(Stop::Theirs(HomeError::LeftAside {
                    path: slot.path.clone(),
                    aside: old.to_path_buf(),
                }))
            }
            Err(err) => Err(HomeError::write(path, err).into()),
        }
    }

    /// Step 1: what an interrupted step left beside the path. A file moved aside goes back when
    /// the path is empty, and is removed when the path is filled and the file is one of the two
    /// sides (whose bytes are saved); anything else moved aside is the user's and stays.
    fn tidy(&self, slot: &Slot, path: &Path, new: &Path, old: &Path) -> Result<(), Stop> {
        if exists(new) {
            self.step(Step::Tidy(slot.path.clone()), new)?;
            std::fs::remove_file(new).map_err(|err| HomeError::write(new, err))?;
        }
        if !exists(old) {
            return Ok(());
        }
        if !exists(path) {
            self.step(Step::PutBack(slot.path.clone()), path)?;
            return rename_no_replace(old, path).map_err(|err| HomeError::write(path, err).into());
        }
        let held = content_at(old, &slot.path)?.map(|content| content.state);
        if slot.is(Side::Before, held.as_ref()) || slot.is(Side::After, held.as_ref()) {
            self.step(Step::Tidy(slot.path.clone()), old)?;
            return std::fs::remove_file(old).map_err(|err| HomeError::write(old, err).into());
        }
        Err(Stop::Theirs(HomeError::LeftAside {
            path: slot.path.clone(),
            aside: old.to_path_buf(),
        }))
    }

    /// Writes `blob`'s saved bytes as a new file (or link) at `new`, after checking they are
    /// still the bytes plumb saved.
    fn write_new(&self, new: &Path, blob: &Blob) -> Result<(), HomeError> {
        let source = self.saved.join(&blob.name);
        let bytes = std::fs::read(&source).map_err(|err| HomeError::io(&source, err))?;
        if sha256_hex(&bytes) != blob.state.sha256 {
            return Err(HomeError::SavedChanged { file: source });
        }
        if blob.state.kind == FileKind::Symlink {
            return std::os::unix::fs::symlink(OsStr::from_bytes(&bytes), new)
                .map_err(|err| HomeError::write(new, err));
        }
        let written = (|| {
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(new)?;
            file.write_all(&bytes)?;
            file.set_permissions(Permissions::from_mode(blob.mode))?;
            file.sync_all()
        })();
        written.map_err(|err| HomeError::write(new, err))
    }

    /// Makes the folders above `rel` that do not exist yet.
    fn make_parents(&self, rel: &str) -> Result<(), HomeError> {
        let Some(parent) = Path::new(rel).parent() else {
            return Ok(());
        };
        let mut dir = self.root.to_path_buf();
        let mut dir_rel = PathBuf::new();
        for component in parent.components() {
            dir.push(component);
            dir_rel.push(component);
            if std::fs::symlink_metadata(&dir).is_ok() {
                // `inside` checked it is a folder, not a link.
                continue;
            }
            self.step(Step::MakeDir(dir_rel.display().to_string()), &dir)?;
            match std::fs::create_dir(&dir) {
                Ok(()) => {}
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => {}
                Err(err) => return Err(HomeError::write(&dir, err)),
            }
        }
        Ok(())
    }

    /// Removes the folders above the slot's path that are empty now, deepest first: toward the
    /// change any of them, as `git apply` does; back from it only those the apply made.
    fn remove_emptied_folders(&self, slot: &Slot, toward: Side) -> Result<(), HomeError> {
        let ancestors = Path::new(&slot.path)
            .ancestors()
            .skip(1)
            .filter(|dir| !dir.as_os_str().is_empty());
        for dir_rel in ancestors {
            let name = dir_rel.display().to_string();
            if toward == Side::Before && !slot.made.contains(&name) {
                break;
            }
            let dir = self.root.join(dir_rel);
            let empty = match std::fs::read_dir(&dir) {
                Ok(mut entries) => entries.next().is_none(),
                // Never made (a step cut short): the one above may be empty.
                Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
                Err(_) => false,
            };
            if !empty {
                break;
            }
            self.step(Step::RemoveDir(name), &dir)?;
            match std::fs::remove_dir(&dir) {
                Ok(()) => {}
                // Filled meanwhile: it stays.
                Err(err) if err.raw_os_error() == Some(Errno::NOTEMPTY.raw_os_error()) => break,
                Err(err) => return Err(HomeError::write(&dir, err)),
            }
        }
        Ok(())
    }

    /// The temporary new file and the file moved aside of slot `index`, beside `path`.
    fn beside(&self, path: &Path, index: usize) -> (PathBuf, PathBuf) {
        let dir = path.parent().unwrap_or(self.root);
        (
            dir.join(format!(".plumb-{}-{index}.new", self.tag)),
            dir.join(format!(".plumb-{}-{index}.old", self.tag)),
        )
    }

    fn step(&self, step: Step, path: &Path) -> Result<(), HomeError> {
        self.faults
            .before(&step)
            .map_err(|err| HomeError::write(path, err))
    }
}

/// The order slots move in toward `side`: the paths that end empty first, so a file can give way
/// to a folder of the same name.
fn order(slots: &[Slot], side: Side) -> Vec<usize> {
    let (empty, filled): (Vec<usize>, Vec<usize>) =
        (0..slots.len()).partition(|&index| slots[index].side(side).is_none());
    empty.into_iter().chain(filled).collect()
}

/// Whether anything (a link included) is at `path`.
fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Renames `from` to `to` only if nothing is at `to`. Where the file system has no
/// `RENAME_NOREPLACE`, a hard link (which fails on an existing name too) and an unlink do it.
fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        Err(errno) if [Errno::INVAL, Errno::NOSYS, Errno::OPNOTSUPP].contains(&errno) => {
            link_then_unlink(from, to)
        }
        Err(errno) => Err(errno.into()),
    }
}

fn link_then_unlink(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::hard_link(from, to)?;
    std::fs::remove_file(from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fallback_rename_never_replaces_a_file_and_moves_links_as_links() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("from");
        let taken = dir.path().join("taken");
        let free = dir.path().join("free");
        std::fs::write(&from, "new").unwrap();
        std::fs::write(&taken, "theirs").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("somewhere", &link).unwrap();

        let refused = link_then_unlink(&from, &taken).unwrap_err();
        link_then_unlink(&from, &free).unwrap();
        link_then_unlink(&link, &dir.path().join("moved")).unwrap();

        assert_eq!(
            (
                refused.kind(),
                std::fs::read_to_string(&taken).unwrap(),
                std::fs::read_to_string(&free).unwrap(),
                from.exists(),
                std::fs::read_link(dir.path().join("moved")).unwrap(),
            ),
            (
                io::ErrorKind::AlreadyExists,
                "theirs".to_string(),
                "new".to_string(),
                false,
                PathBuf::from("somewhere"),
            )
        );
    }
}
