//! What a setup command made, kept: every check tree the ladder writes from a commit gets the
//! setup's untracked output (a virtual environment ignored by the repository's `.gitignore` is in
//! no commit), relocated to the check tree's path; and with a setup cache (`plumb eval`) the next
//! workspace of the same repository has it restored instead of running the command again, so a
//! second task on a repository starts in seconds. The key is the repository (the caller's `scope`), the
//! command, and the bytes of the files a setup reads — the dependency manifests found at the top
//! of the tree and one folder down ([`MANIFESTS`]); change one and the setup runs again. The
//! snapshot itself is `plumb_workspace::save_changes` / `restore_changes` (paths relocated).

use std::path::{Path, PathBuf};

use plumb_protocol::Event;
use plumb_workspace::{CommitId, RestoreMode, Stamps, Tree, WorkspaceError, sha256_hex};

use crate::run::Run;

/// The snapshot of a run without a setup cache, in its run folder.
const RUN_SNAPSHOT_DIR: &str = "setup-snapshot";

/// Where snapshots are kept and what they are shared by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupCache {
    /// One folder per key.
    pub dir: PathBuf,
    /// The repository the runs share (e.g. its path or name): snapshots of two repositories are
    /// never mixed, whatever their files say.
    pub scope: String,
}

/// Files whose bytes decide what a setup installs.
pub const MANIFESTS: &[&str] = &[
    "setup.py",
    "setup.cfg",
    "pyproject.toml",
    "requirements.txt",
    "requirements-dev.txt",
    "requirements_dev.txt",
    "dev-requirements.txt",
    "test-requirements.txt",
    "tox.ini",
    "Pipfile.lock",
    "poetry.lock",
    "uv.lock",
    "Cargo.toml",
    "Cargo.lock",
    "rust-toolchain.toml",
    "package.json",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "go.mod",
    "go.sum",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
];

/// Most bytes of one manifest read for the key.
const MAX_MANIFEST_BYTES: u64 = 4 * 1024 * 1024;

/// The snapshot folder in `cache` for the setup command `command` on the tree at `root` (as it
/// was before the setup): where a run saved or found it.
pub fn setup_snapshot_dir(cache: &SetupCache, command: &str, root: &Path) -> Option<PathBuf> {
    let tree = Tree::new(root).ok()?;
    Some(snapshot_dir(cache, command, &tree))
}

/// The snapshot folder for `command` on the tree `tree`.
fn snapshot_dir(cache: &SetupCache, command: &str, tree: &Tree) -> PathBuf {
    let mut material = format!("plumb setup cache v1\0{}\0{command}\0", cache.scope);
    let mut folders = vec![String::new()];
    if let Ok(entries) = std::fs::read_dir(tree.root()) {
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|name| !name.starts_with('.'))
            .map(|name| format!("{name}/"))
            .collect();
        names.sort();
        folders.extend(names);
    }
    for folder in &folders {
        for name in MANIFESTS {
            let rel = format!("{folder}{name}");
            if let Ok(bytes) = tree.read(&rel, MAX_MANIFEST_BYTES) {
                material.push_str(&format!("{rel}\0{}\0", sha256_hex(&bytes)));
            }
        }
    }
    let key = sha256_hex(material.as_bytes());
    cache.dir.join(key.get(..32).unwrap_or(&key))
}

impl Run {
    /// Where this run's setup snapshot goes: the setup cache's folder for this key, else the run's.
    fn snapshot_location(&self, command: &str) -> PathBuf {
        match &self.spec.setup_cache {
            Some(cache) => snapshot_dir(cache, command, &self.workspace.tree()),
            None => self.spec.run_dir.join(RUN_SNAPSHOT_DIR),
        }
    }

    /// With a setup cache holding a snapshot for this command and these manifests: the snapshot
    /// restored into the workspace instead of running the command. `false` when there is none or
    /// it could not be restored (then the command runs).
    pub(crate) async fn restore_setup(&mut self, command: &str) -> bool {
        if self.spec.setup_cache.is_none() {
            return false;
        }
        let dir = self.snapshot_location(command);
        if !plumb_workspace::has_snapshot(&dir) {
            return false;
        }
        let started = std::time::Instant::now();
        match plumb_workspace::restore_changes(&dir, self.workspace.root(), RestoreMode::Overwrite)
        {
            Ok(restored) => {
                let output = format!(
                    "restored from the setup cache {}: {} entries ({} with the workspace's path moved)",
                    dir.display(),
                    restored.entries,
                    restored.relocated
                );
                self.setup_snapshot = Some(dir);
                self.emit(Event::Setup {
                    argv: vec![command.to_owned()],
                    network: false,
                    exit_code: Some(0),
                    duration_ms: started.elapsed().as_millis() as u64,
                    output,
                })
                .await;
                true
            }
            Err(err) => {
                let message = format!(
                    "the setup cache {} could not be restored ({err}); running the setup command",
                    dir.display()
                );
                self.emit(Event::Warning { message }).await;
                false
            }
        }
    }

    /// Saves what the setup changed since `before`.
    pub(crate) async fn save_setup(&mut self, command: &str, before: &Stamps) {
        let dir = self.snapshot_location(command);
        let saved = dir
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| plumb_workspace::save_changes(self.workspace.root(), before, &dir));
        match saved {
            Ok(_) => self.setup_snapshot = Some(dir),
            Err(err) => {
                let message = format!(
                    "what the setup made could not be kept in {} ({err}); check trees will lack what git does not track",
                    dir.display()
                );
                self.emit(Event::Warning { message }).await;
            }
        }
    }

    /// Writes the tree of `commit` into `dest` for a check, with the setup's untracked output.
    pub(crate) fn materialize_check_tree(
        &self,
        commit: &CommitId,
        dest: &Path,
    ) -> Result<(), String> {
        self.workspace
            .materialize(commit, dest)
            .map_err(|err: WorkspaceError| err.to_string())?;
        if let Some(snapshot) = &self.setup_snapshot {
            let dest = dest.canonicalize().unwrap_or_else(|_| dest.to_path_buf());
            plumb_workspace::restore_changes(snapshot, &dest, RestoreMode::MissingOnly).map_err(
                |err| {
                    format!(
                        "could not put the setup's output into the check tree {}: {err}",
                        dest.display()
                    )
                },
            )?;
        }
        Ok(())
    }
}
