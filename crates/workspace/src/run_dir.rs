//! The checks on the two folders a workspace is made from and into, before anything is written:
//! the source must be a readable folder, and the run directory a new or empty one, named by an
//! absolute path without links.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::error::WorkspaceError;

pub(crate) fn canonical_source(source: &Path) -> Result<PathBuf, WorkspaceError> {
    let meta = fs::metadata(source).map_err(|err| match err.kind() {
        io::ErrorKind::NotFound => WorkspaceError::SourceMissing {
            path: source.to_path_buf(),
        },
        _ => WorkspaceError::SourceUnreadable {
            path: source.to_path_buf(),
            detail: err.to_string(),
        },
    })?;
    if !meta.is_dir() {
        return Err(WorkspaceError::SourceNotDirectory {
            path: source.to_path_buf(),
        });
    }
    source
        .canonicalize()
        .map_err(|err| WorkspaceError::SourceUnreadable {
            path: source.to_path_buf(),
            detail: err.to_string(),
        })
}

/// The run directory as an absolute path with no links, without creating anything: the deepest existing
/// ancestor is canonicalised and the missing rest appended (its `..` applied lexically, which is exact since
/// missing folders hold no links).
pub(crate) fn absolute_run_dir(run_dir: &Path) -> Result<PathBuf, WorkspaceError> {
    let absolute = if run_dir.is_absolute() {
        run_dir.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| WorkspaceError::io("read the current directory for", run_dir, e))?
            .join(run_dir)
    };
    let mut existing = absolute.as_path();
    let mut missing = Vec::new();
    let base = loop {
        match existing.canonicalize() {
            Ok(base) => break base,
            Err(_) => {
                let (Some(parent), Some(name)) =
                    (existing.parent(), existing.components().next_back())
                else {
                    return Err(WorkspaceError::io(
                        "resolve the run directory",
                        run_dir,
                        io::Error::from(io::ErrorKind::NotFound),
                    ));
                };
                missing.push(name);
                existing = parent;
            }
        }
    };
    let mut out = base;
    for component in missing.into_iter().rev() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    Ok(out)
}

/// Refuses a run directory that exists and holds anything (or is not a folder).
pub(crate) fn ensure_empty(run_dir: &Path) -> Result<(), WorkspaceError> {
    let not_empty = || WorkspaceError::RunDirNotEmpty {
        path: run_dir.to_path_buf(),
    };
    match fs::read_dir(run_dir) {
        Ok(mut entries) => match entries.next() {
            None => Ok(()),
            Some(_) => Err(not_empty()),
        },
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::NotADirectory => Err(not_empty()),
        Err(err) => Err(WorkspaceError::io("read the run directory", run_dir, err)),
    }
}
