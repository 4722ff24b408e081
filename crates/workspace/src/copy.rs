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
//!
//! Size is bounded by [`CopyLimits`]: a file larger than `max_file_bytes` is left out whole (never cut:
//! the agent must not see half a file) and named in [`CopyReport::skipped`], and a tree whose copied files
//! add up to more than `max_total_bytes` is refused. Sizes are the files' lengths, which is what the copy
//! writes: a sparse file (a 2 GB disk image that holds nothing) costs the source no disk but would cost
//! the copy its whole length. Its allocated size is only reported, since compressing file systems (ZFS,
//! btrfs) also show files with few blocks. A file is read at most one byte past the cap, so one that
//! grows while it is copied is left out too.

use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt, symlink};
use std::path::Path;

use ignore::WalkBuilder;

use crate::error::WorkspaceError;
use crate::stage::WorkspaceLimits;

/// Gitignore-style file naming what the copy leaves out besides `.gitignore`d files.
pub const PLUMBIGNORE: &str = ".plumbignore";

/// How much the copy may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyLimits {
    /// A file longer than this is left out (`limits.max_file_bytes`).
    pub max_file_bytes: u64,
    /// The copied files together may not be longer than this (`limits.max_copy_bytes`).
    pub max_total_bytes: u64,
    /// What the copy may hold whenever it is staged, the first time included
    /// (`limits.max_workspace_files`, `limits.max_workspace_bytes`).
    pub workspace: WorkspaceLimits,
}

impl Default for CopyLimits {
    /// 50 MiB a file: GitHub refuses files over 100 MB and warns past 50 MB, so a longer file is data, a
    /// model or a disk image, not code a fix needs. 2 GiB in all: a large monorepo's working tree.
    fn default() -> Self {
        Self {
            max_file_bytes: 50 << 20,
            max_total_bytes: 2 << 30,
            workspace: WorkspaceLimits::DEFAULT,
        }
    }
}

/// A file of the source the copy left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedFile {
    /// Relative to the source, `/`-separated.
    pub path: String,
    /// Its length in bytes.
    pub bytes: u64,
    /// The bytes the file system has allocated for it (far fewer for a sparse file).
    pub allocated: u64,
    /// The cap it is over.
    pub limit: u64,
}

impl std::fmt::Display for SkippedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sparse = if self.allocated < self.bytes / 2 {
            format!(
                " ({} of it on disk: a sparse file)",
                human_bytes(self.allocated)
            )
        } else {
            String::new()
        };
        write!(
            f,
            "{} was left out of the workspace: it is {}{sparse}, over limits.max_file_bytes ({}); the agent does not see it and your repository still has it. Raise limits.max_file_bytes if the fix needs it",
            self.path,
            human_bytes(self.bytes),
            human_bytes(self.limit)
        )
    }
}

/// What the copy did besides copying.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopyReport {
    /// Files left out for their size, in walk order.
    pub skipped: Vec<SkippedFile>,
    /// The length of every file copied, added up.
    pub bytes: u64,
}

/// At most this many skipped files are named one by one in [`CopyReport::warnings`].
const SKIPS_NAMED: usize = 20;

impl CopyReport {
    /// One sentence per file left out, the first [`SKIPS_NAMED`], then how many more.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings: Vec<String> = self
            .skipped
            .iter()
            .take(SKIPS_NAMED)
            .map(SkippedFile::to_string)
            .collect();
        if self.skipped.len() > SKIPS_NAMED {
            warnings.push(format!(
                "{} more files over limits.max_file_bytes were left out of the workspace",
                self.skipped.len() - SKIPS_NAMED
            ));
        }
        warnings
    }
}

/// `2.0 GiB`, `50.0 MiB`, `512 bytes`.
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (name, size) in UNITS {
        if bytes >= size {
            return format!("{:.1} {name}", bytes as f64 / size as f64);
        }
    }
    format!("{bytes} bytes")
}

/// Copies `source` (a canonical folder) into `dest` (an existing empty folder), within `limits`.
pub(crate) fn copy_tree(
    source: &Path,
    dest: &Path,
    limits: &CopyLimits,
) -> Result<CopyReport, WorkspaceError> {
    let mut report = CopyReport::default();
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
            let path = rel.to_string_lossy().replace('\\', "/");
            match copy_file(from, &to, limits.max_file_bytes)? {
                Copied::Whole(bytes) => {
                    report.bytes += bytes;
                    if report.bytes > limits.max_total_bytes {
                        return Err(WorkspaceError::SourceTooLarge {
                            path: source.to_path_buf(),
                            limit: human_bytes(limits.max_total_bytes),
                        });
                    }
                }
                Copied::Skipped { bytes, allocated } => report.skipped.push(SkippedFile {
                    path,
                    bytes,
                    allocated,
                    limit: limits.max_file_bytes,
                }),
            }
        }
    }
    Ok(report)
}

/// What [`copy_file`] did.
enum Copied {
    /// The file, this long, is in the copy.
    Whole(u64),
    /// The file is over the cap and not in the copy.
    Skipped { bytes: u64, allocated: u64 },
}

/// Copies one regular file if it is at most `max_bytes` long. Opened without following a link and
/// without waiting (a FIFO put in place of the file since the walk cannot block the copy), and read
/// at most one byte past the cap.
fn copy_file(from: &Path, to: &Path, max_bytes: u64) -> Result<Copied, WorkspaceError> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32)
        .open(from)
        .map_err(|e| unreadable(from, &e))?;
    let meta = file.metadata().map_err(|e| unreadable(from, &e))?;
    if !meta.is_file() {
        return Err(unreadable(
            from,
            &io::Error::other("it changed into something other than a file while it was copied"),
        ));
    }
    let skipped = |bytes: u64| Copied::Skipped {
        bytes,
        allocated: meta.blocks().saturating_mul(512),
    };
    if meta.len() > max_bytes {
        return Ok(skipped(meta.len()));
    }
    let mut out = fs::File::create(to)
        .map_err(|e| WorkspaceError::io("create the copy of a file at", to, e))?;
    // A file that opened and stat'ed fine rarely fails to read; a full disk on our side is likelier.
    let copied = io::copy(&mut (&file).take(max_bytes.saturating_add(1)), &mut out)
        .map_err(|e| WorkspaceError::io("write the copy of a file at", to, e))?;
    drop(out);
    if copied > max_bytes {
        fs::remove_file(to)
            .map_err(|e| WorkspaceError::io("remove the cut copy of a file at", to, e))?;
        return Ok(skipped(copied.max(meta.len())));
    }
    let normalised = if meta.mode() & 0o111 != 0 {
        0o755
    } else {
        0o644
    };
    fs::set_permissions(to, fs::Permissions::from_mode(normalised))
        .map_err(|e| WorkspaceError::io("set the permissions of", to, e))?;
    Ok(Copied::Whole(copied))
}

fn unreadable(path: &Path, err: &std::io::Error) -> WorkspaceError {
    WorkspaceError::SourceUnreadable {
        path: path.to_path_buf(),
        detail: err.to_string(),
    }
}
