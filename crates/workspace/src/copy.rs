//! Copying the source tree into the run directory.
//!
//! The copy is the tree as it stands on disk (uncommitted changes included), minus what `.gitignore` and
//! `.git/info/exclude` exclude, minus every `.git` (folder or file, at any depth): the repository's history
//! never reaches the agent. The source is only read: no git command runs on it and nothing is written there.
//!
//! Symbolic links are copied as links (never followed, so a link to `/etc` copies as a link, and path
//! confinement refuses it later). Regular files are written with mode 0755 if any executable bit was set and
//! 0644 otherwise, which is all git records. Other file types (sockets, FIFOs, devices) are skipped.
//!
//! A `.plumbignore` file (gitignore syntax, at any level) leaves out more: files the agent must not see,
//! such as a recorded answer or data a model should not send anywhere.
//!
//! Limitation: a file that is tracked by git but matches an ignore pattern is not copied, since telling
//! tracked from untracked would need the source's index, which this crate does not read.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use ignore::WalkBuilder;

use crate::error::WorkspaceError;

/// Gitignore-style file naming what the copy leaves out besides `.gitignore`d files.
pub const PLUMBIGNORE: &str = ".plumbignore";

/// Copies `source` (a canonical folder) into `dest` (an existing empty folder).
pub(crate) fn copy_tree(source: &Path, dest: &Path) -> Result<(), WorkspaceError> {
    let walker = WalkBuilder::new(source)
        .hidden(false)
        .ignore(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .parents(true)
        .add_custom_ignore_filename(PLUMBIGNORE)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();

    for item in walker {
        let entry = match item {
            Ok(entry) => entry,
            Err(err) => {
                // A malformed pattern in a .gitignore is skipped, as git itself does; anything the walker
                // could not read is an error, so the copy is never silently incomplete.
                if err.io_error().is_some() {
                    return Err(WorkspaceError::SourceUnreadable {
                        path: source.to_path_buf(),
                        detail: err.to_string(),
                    });
                }
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        let from = entry.path();
        let Ok(rel) = from.strip_prefix(source) else {
            continue;
        };
        let to = dest.join(rel);
        let Some(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            fs::create_dir(&to).map_err(|e| WorkspaceError::io("create the folder", &to, e))?;
        } else if kind.is_symlink() {
            let target = fs::read_link(from).map_err(|e| unreadable(from, &e))?;
            symlink(&target, &to).map_err(|e| WorkspaceError::io("create the link", &to, e))?;
        } else if kind.is_file() {
            copy_file(from, &to)?;
        }
    }
    Ok(())
}

fn copy_file(from: &Path, to: &Path) -> Result<(), WorkspaceError> {
    let mode = fs::symlink_metadata(from)
        .map_err(|e| unreadable(from, &e))?
        .permissions()
        .mode();
    fs::copy(from, to).map_err(|e| {
        // fs::copy fails on either side; the source side is the user's to fix, ours is infrastructure.
        if fs::File::open(from).is_err() {
            unreadable(from, &e)
        } else {
            WorkspaceError::io("write the copy of a file at", to, e)
        }
    })?;
    let normalised = if mode & 0o111 != 0 { 0o755 } else { 0o644 };
    fs::set_permissions(to, fs::Permissions::from_mode(normalised))
        .map_err(|e| WorkspaceError::io("set the permissions of", to, e))
}

fn unreadable(path: &Path, err: &std::io::Error) -> WorkspaceError {
    WorkspaceError::SourceUnreadable {
        path: path.to_path_buf(),
        detail: err.to_string(),
    }
}
