//! The destination folder of an unpack or a clone: it must be new or empty, it is opened without
//! following a link, and until the caller says the content is kept, dropping the guard removes
//! what was written under it (and the folder itself when the guard made it). Removal never
//! follows a link: `remove_dir_all` unlinks links instead of descending into them.

use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use super::error::IntakeError;

/// A destination being filled. See the module header.
#[derive(Debug)]
pub(crate) struct DestGuard {
    path: PathBuf,
    created: bool,
    keep: bool,
}

impl DestGuard {
    /// Makes `path` (its parent must exist) or takes it when it is an empty folder that is not a
    /// link; anything else is refused, since unpacking beside existing files could overwrite them
    /// and cleaning up would remove them.
    pub(crate) fn prepare(path: &Path) -> Result<DestGuard, IntakeError> {
        let created = match fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => {
                let mut entries = fs::read_dir(path)
                    .map_err(|source| IntakeError::io("read the folder", path, source))?;
                if entries.next().is_some() {
                    return Err(IntakeError::DestNotEmpty {
                        path: path.to_path_buf(),
                    });
                }
                false
            }
            Ok(_) => {
                return Err(IntakeError::DestNotEmpty {
                    path: path.to_path_buf(),
                });
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                // Not `create_dir_all`: folders made above the destination would be writes
                // outside it that no cleanup removes.
                fs::create_dir(path)
                    .map_err(|source| IntakeError::io("create the folder", path, source))?;
                true
            }
            Err(source) => return Err(IntakeError::io("look at", path, source)),
        };
        Ok(DestGuard {
            path: path.to_path_buf(),
            created,
            keep: false,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The destination opened as a folder, refusing a link put in its place since `prepare`.
    pub(crate) fn open(&self) -> Result<OwnedFd, IntakeError> {
        rustix::fs::open(
            &self.path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|err| IntakeError::io("open the folder", &self.path, err.into()))
    }

    /// The content stays: dropping the guard no longer removes it.
    pub(crate) fn keep(mut self) {
        self.keep = true;
    }
}

impl Drop for DestGuard {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        if self.created {
            let _ = fs::remove_dir_all(&self.path);
            return;
        }
        let Ok(entries) = fs::read_dir(&self.path) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => {
                    let _ = fs::remove_dir_all(&path);
                }
                _ => {
                    let _ = fs::remove_file(&path);
                }
            }
        }
    }
}
