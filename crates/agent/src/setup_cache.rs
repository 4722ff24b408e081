//! What a setup command made, kept: every check tree the ladder writes from a commit gets the
//! setup's untracked output (a virtual environment ignored by the repository's `.gitignore` is in
//! no commit), relocated to the check tree's path; and with a setup cache (`plumb eval`) the next
//! workspace of the same repository has it restored instead of running the command again, so a
//! second task on a repository starts in seconds. The key is the repository (the caller's `scope`), the
//! command, and the bytes of the files a setup reads — the dependency manifests found at the top
//! of the tree and one folder down ([`MANIFESTS`]); change one and the setup runs again. The
//! snapshot itself is `plumb_workspace::save_changes` / `restore_changes` (paths relocated).

use std::path::{Path, PathBuf};

use plumb_workspace::{Tree, sha256_hex};

/// The snapshot of a run without a setup cache, in its run folder.
pub(crate) const RUN_SNAPSHOT_DIR: &str = "setup-snapshot";

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
pub(crate) fn snapshot_dir(cache: &SetupCache, command: &str, tree: &Tree) -> PathBuf {
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
