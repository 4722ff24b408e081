//! A private `HOME` and `TMPDIR` for one command, created fresh under the backend's scratch
//! directory (mode 0700) and removed when the command is over, so nothing a command leaves
//! in its home (caches, credentials it was tricked into writing) reaches the next one.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::SandboxError;

pub(crate) struct PrivateDirs {
    root: TempDir,
    home: PathBuf,
    tmp: PathBuf,
}

impl PrivateDirs {
    /// Creates `<scratch_dir>/cmd-XXXX/{home,tmp}`, creating `scratch_dir` if needed.
    pub(crate) fn create(scratch_dir: &Path) -> Result<Self, SandboxError> {
        let err = |source| SandboxError::Scratch {
            path: scratch_dir.to_path_buf(),
            source,
        };
        fs::create_dir_all(scratch_dir).map_err(err)?;
        let root = tempfile::Builder::new()
            .prefix("cmd-")
            .tempdir_in(scratch_dir)
            .map_err(err)?;
        let home = root.path().join("home");
        let tmp = root.path().join("tmp");
        fs::create_dir(&home).map_err(err)?;
        fs::create_dir(&tmp).map_err(err)?;
        Ok(Self { root, home, tmp })
    }

    pub(crate) fn home(&self) -> &Path {
        &self.home
    }

    pub(crate) fn tmp(&self) -> &Path {
        &self.tmp
    }

    /// Removes the directories off the async runtime. Best effort: a failure leaves a
    /// directory under the scratch dir, which nobody here could act on anyway.
    pub(crate) async fn remove(self) {
        let root = self.root;
        let _ = tokio::task::spawn_blocking(move || {
            // Some tools leave read-only trees (Go's module cache); make them removable.
            make_writable(root.path());
            let _ = root.close();
        })
        .await;
    }
}

/// Adds owner write and execute permission to every directory below `dir`, without following
/// symbolic links.
fn make_writable(dir: &Path) {
    let Ok(meta) = fs::symlink_metadata(dir) else {
        return;
    };
    if !meta.is_dir() {
        return;
    }
    let mode = meta.permissions().mode();
    if mode & 0o700 != 0o700 {
        let _ = fs::set_permissions(dir, fs::Permissions::from_mode(mode | 0o700));
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        make_writable(&entry.path());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test]
    async fn read_only_trees_are_removed() {
        let scratch = tempfile::tempdir().unwrap();
        let dirs = PrivateDirs::create(&scratch.path().join("nested")).unwrap();
        let locked = dirs.home().join("go/pkg/mod");
        fs::create_dir_all(&locked).unwrap();
        fs::write(locked.join("f"), "x").unwrap();
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o555)).unwrap();

        dirs.remove().await;

        let left: Vec<_> = fs::read_dir(scratch.path().join("nested"))
            .unwrap()
            .collect();
        assert_eq!(left.len(), 0);
    }
}
