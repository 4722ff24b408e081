//! Finding the repository's own settings file without reading anything outside the repository:
//! a committed `plumb.toml` that is a link out of the tree, a FIFO or a huge file is left out
//! with a reason (the run goes on with the user's settings), never opened.

use std::path::{Path, PathBuf};

/// Where a repository's settings may be, relative to its root; the first that exists counts.
pub const REPO_FILES: [&str; 2] = ["plumb.toml", ".plumb/plumb.toml"];

/// The largest repository settings file plumb reads.
const MAX_REPO_FILE_BYTES: u64 = 1 << 20;

/// The repository's settings file, as found inside the repository.
pub(crate) enum RepoFile {
    Absent,
    /// `shown` is the path under the repository (for messages), `real` the file it resolves to.
    Found {
        rel: String,
        shown: PathBuf,
        real: PathBuf,
    },
    Refused {
        rel: String,
        reason: String,
    },
}

/// The first of [`REPO_FILES`] that exists, read only when it resolves to a regular file inside
/// the repository and is not huge: a committed link must not make plumb read a host file.
pub(crate) fn find_repo_file(root: &Path) -> RepoFile {
    for rel in REPO_FILES {
        let shown = root.join(rel);
        let Ok(meta) = std::fs::symlink_metadata(&shown) else {
            continue;
        };
        if meta.is_dir() {
            continue;
        }
        let refused = |reason: &str| RepoFile::Refused {
            rel: rel.to_string(),
            reason: reason.to_string(),
        };
        let (Ok(real), Ok(real_root)) = (shown.canonicalize(), root.canonicalize()) else {
            return refused("it is a link that leads nowhere");
        };
        if !real.starts_with(&real_root) {
            return refused(
                "it is a link to a file outside the repository, and plumb reads settings only from inside it",
            );
        }
        match std::fs::metadata(&real) {
            Ok(meta) if !meta.is_file() => {
                return refused("it is not a regular file");
            }
            Ok(meta) if meta.len() > MAX_REPO_FILE_BYTES => {
                return refused("it is larger than 1 MiB");
            }
            Ok(_) => {
                return RepoFile::Found {
                    rel: rel.to_string(),
                    shown,
                    real,
                };
            }
            Err(_) => return refused("it cannot be read"),
        }
    }
    RepoFile::Absent
}
