//! What of the host a sandboxed command may see: the one policy both namespacing backends
//! put in force, bwrap as bind mounts (`bwrap/layout.rs`) and gVisor as OCI mounts
//! (`gvisor/bundle.rs`). It lives here so the two cannot drift apart: a credential hidden
//! under one backend is hidden under the other.
//!
//! The view is an allowlist over an empty root, later items covering earlier ones:
//! 1. The system, read-only: whichever [`SYSTEM`] paths exist; a merged-/usr symlink such as
//!    `/bin -> usr/bin` stays the same symlink.
//! 2. Credentials in `/etc` covered: [`HIDDEN_FILES`] by an empty file, [`HIDDEN_DIRS`] (host
//!    keys, private TLS keys) by an empty read-only directory.
//! 3. A private, empty `/tmp` ([`TMP_INSIDE`]) and `HOME` ([`HOME_INSIDE`]) per command.
//! 4. The command's `PATH` directories, read-only, by the rule of [`read_only_dirs`], then any
//!    directories a backend's settings add.
//! 5. The workspace, read-write, at its own path.
//!
//! Nothing else of the host is there: not its `HOME`, `/root`, `/tmp`, `/var`, `/run`, nor
//! the workspace's parent, which holds the shadow git directory. [`inspect_host`] looks at
//! the host once per command; the backends build their mounts from its answer alone.

use std::path::{Path, PathBuf};

/// `HOME` inside the sandbox: an empty tmpfs per command.
pub const HOME_INSIDE: &str = "/home/sandbox";
/// `TMPDIR` inside the sandbox: an empty tmpfs per command.
pub(crate) const TMP_INSIDE: &str = "/tmp";

/// Top-level system paths shown read-only when they exist.
const SYSTEM: [&str; 8] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
];
/// Credential files covered by an empty file (`/dev/null`).
const HIDDEN_FILES: [&str; 5] = [
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/security/opasswd",
];
/// Credential directories covered by an empty read-only tmpfs.
const HIDDEN_DIRS: [&str; 2] = ["/etc/ssh", "/etc/ssl/private"];

/// One top-level system path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SystemEntry {
    Dir(PathBuf),
    Symlink { link: PathBuf, target: PathBuf },
}

/// The host paths a command's mounts are built from, found by [`inspect_host`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HostView {
    pub(crate) system: Vec<SystemEntry>,
    pub(crate) hidden_files: Vec<PathBuf>,
    pub(crate) hidden_dirs: Vec<PathBuf>,
    /// Directories shown read-only at their own path (item 4).
    pub(crate) read_only: Vec<PathBuf>,
}

#[cfg(test)]
impl HostView {
    /// A view as on a merged-/usr machine with pyenv, for the backends' tests of their mounts.
    pub(crate) fn sample() -> Self {
        Self {
            system: vec![
                SystemEntry::Dir("/usr".into()),
                SystemEntry::Symlink {
                    link: "/bin".into(),
                    target: "usr/bin".into(),
                },
                SystemEntry::Dir("/etc".into()),
            ],
            hidden_files: vec!["/etc/shadow".into()],
            hidden_dirs: vec!["/etc/ssh".into()],
            read_only: vec!["/root/.pyenv".into()],
        }
    }
}

/// Looks at the host for one command: which system paths exist, which credentials to
/// cover, and which directories to show read-only: those of the `PATH` in `env` (see
/// [`read_only_dirs`]), then each of `extra` that exists and is not already shown.
pub(crate) fn inspect_host(
    env: &[(String, String)],
    workdir: &Path,
    host_home: Option<&Path>,
    extra: &[PathBuf],
) -> HostView {
    let system = SYSTEM
        .iter()
        .map(PathBuf::from)
        .filter_map(|path| {
            let meta = std::fs::symlink_metadata(&path).ok()?;
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).ok()?;
                Some(SystemEntry::Symlink { link: path, target })
            } else if meta.is_dir() {
                Some(SystemEntry::Dir(path))
            } else {
                None
            }
        })
        .collect();
    let existing = |paths: &[&str], is_kind: fn(&std::fs::Metadata) -> bool| -> Vec<PathBuf> {
        paths
            .iter()
            .map(PathBuf::from)
            .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| is_kind(&m)))
            .collect()
    };
    let path_var = env
        .iter()
        .find(|(name, _)| name == "PATH")
        .map_or("", |(_, value)| value.as_str());
    let mut read_only = read_only_dirs(
        path_var,
        workdir,
        host_home,
        |p| p.canonicalize().ok().filter(|c| c.is_dir()),
        is_pyenv_root,
    );
    for dir in extra {
        if dir.is_absolute() && dir.is_dir() && !read_only.iter().any(|d| dir.starts_with(d)) {
            read_only.push(dir.clone());
        }
    }
    HostView {
        system,
        hidden_files: existing(&HIDDEN_FILES, std::fs::Metadata::is_file),
        hidden_dirs: existing(&HIDDEN_DIRS, std::fs::Metadata::is_dir),
        read_only,
    }
}

fn is_system(path: &Path) -> bool {
    SYSTEM.iter().any(|s| path.starts_with(s))
}

/// True for a pyenv installation root: its shims exec `<root>/libexec/pyenv`, which reads
/// `<root>/version` and runs `<root>/versions/<v>/bin/...`, so the whole root must be visible.
fn is_pyenv_root(dir: &Path) -> bool {
    dir.join("libexec/pyenv").is_file() && dir.join("versions").is_dir()
}

/// The rule for item 4. For each absolute entry of the command's `PATH` that exists:
/// - both the entry and its resolved (canonical) path are candidates, unless the system
///   mounts already cover them;
/// - a candidate inside a pyenv root (a directory with `libexec/pyenv` and `versions/`)
///   becomes that root, so `python3 -> ~/.pyenv/shims/python3 ->
///   ~/.pyenv/versions/X/bin/python3` works without the rest of `HOME`;
/// - refused: `/`, the host `HOME` and any ancestor of it or of the workspace (which would
///   show all of them), and anything inside the workspace or its sibling `shadow.git`.
///
/// `resolve` canonicalizes a path that exists; `pyenv_root` says whether a directory is one.
fn read_only_dirs(
    path_var: &str,
    workdir: &Path,
    host_home: Option<&Path>,
    resolve: impl Fn(&Path) -> Option<PathBuf>,
    pyenv_root: impl Fn(&Path) -> bool,
) -> Vec<PathBuf> {
    let shadow = workdir.parent().map(|p| p.join("shadow.git"));
    let refused = |dir: &Path| {
        dir.parent().is_none()
            || workdir.starts_with(dir)
            || dir.starts_with(workdir)
            || host_home.is_some_and(|home| home.starts_with(dir))
            || shadow.as_deref().is_some_and(|s| dir.starts_with(s))
    };
    let mut dirs: Vec<PathBuf> = Vec::new();
    for entry in path_var.split(':').map(Path::new) {
        if !entry.is_absolute() {
            continue;
        }
        let Some(canonical) = resolve(entry) else {
            continue;
        };
        for candidate in [entry.to_path_buf(), canonical] {
            if is_system(&candidate) {
                continue;
            }
            let chosen = candidate
                .ancestors()
                .find(|a| pyenv_root(a))
                .map_or(candidate.clone(), Path::to_path_buf);
            if refused(&chosen) || dirs.iter().any(|d| chosen.starts_with(d)) {
                continue;
            }
            dirs.retain(|d| !d.starts_with(&chosen));
            dirs.push(chosen);
        }
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn path_rule_binds_pyenv_roots_and_refuses_wide_or_workspace_dirs() {
        let path_var = "/root/.cargo/bin:/root/.pyenv/plugins/pyenv-virtualenv/shims:\
                        /root/.pyenv/shims:/root/.pyenv/bin:/usr/local/bin:/usr/bin:/bin:\
                        relative/bin::/missing:/root:/:/runs/r1:/runs/r1/work/bin:\
                        /runs/r1/shadow.git/hooks:/opt/link";
        let resolve = |p: &Path| match p.to_str() {
            Some("/missing") => None,
            Some("/opt/link") => Some(PathBuf::from("/opt/tools/bin")),
            _ => Some(p.to_path_buf()),
        };
        let pyenv_root = |p: &Path| p == Path::new("/root/.pyenv");

        let actual = read_only_dirs(
            path_var,
            Path::new("/runs/r1/work"),
            Some(Path::new("/root")),
            resolve,
            pyenv_root,
        );

        let expected: Vec<PathBuf> = [
            "/root/.cargo/bin",
            "/root/.pyenv",
            "/opt/link",
            "/opt/tools/bin",
        ]
        .map(PathBuf::from)
        .to_vec();
        assert_eq!(actual, expected);
    }
}
