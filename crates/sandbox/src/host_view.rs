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
//! 4. Covers ([`Cover`]): where a later mount lies deeper inside a writable private mount
//!    ([`PRIVATE_WRITABLE`]: the private `/tmp` and `HOME`, and the sandbox's `/dev`), as a
//!    workspace under the host's `/tmp` does, the first directory of its path there is an
//!    empty read-only directory holding only the path down to the mounts. Without it every
//!    folder above the workspace would be made inside the writable tmpfs, writable.
//! 5. The command's `PATH` directories, read-only, by the rule of [`read_only_dirs`], then any
//!    directories a backend's settings or the toolchains (`toolchains/`) add, refused as the
//!    `PATH` rule refuses; then the toolchains' cache, read-write, for a command with the
//!    network only (otherwise it is among the read-only ones).
//! 6. The workspace, read-write, at its own path.
//!
//! Nothing else of the host is there: not its `HOME`, `/root`, `/tmp`, `/var`, `/run`, nor
//! the workspace's parent, which holds the shadow git directory. Every folder above the
//! workspace is read-only, wherever the workspace is, except a private mount that is its
//! direct parent (a workspace `/tmp/work` has the private `/tmp` above it). [`inspect_host`]
//! looks at the host once per command; the backends build their mounts from its answer
//! alone.

use std::path::{Path, PathBuf};

/// `HOME` inside the sandbox: an empty tmpfs per command.
pub const HOME_INSIDE: &str = "/home/sandbox";
/// `TMPDIR` inside the sandbox: an empty tmpfs per command.
pub(crate) const TMP_INSIDE: &str = "/tmp";
/// The writable places the sandbox makes itself (tmpfs), below which a host path mounted at
/// its own path needs a [`Cover`]: the private `/tmp` and `HOME`, and `/dev` (bwrap's and
/// gVisor's are a tmpfs too). `/dev/shm` comes before `/dev` so that a workspace in it (a
/// common place for a fast one) is covered below it: POSIX shared memory stays writable.
pub(crate) const PRIVATE_WRITABLE: [&str; 4] = [TMP_INSIDE, HOME_INSIDE, "/dev/shm", "/dev"];

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

/// An empty read-only directory at `at`, the first directory below a private writable mount
/// on the path of later mounts (item 4), holding only the directories down to them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cover {
    /// Where the cover is mounted, e.g. `/tmp/plumb-home`.
    pub(crate) at: PathBuf,
    /// The later mounts inside it, relative to `at`, e.g. `runs/r1/workspace/work`: the
    /// directories it must hold (the bwrap backend lets bwrap make them before the cover is
    /// made read-only; gVisor's bundle holds them ready).
    pub(crate) inner: Vec<PathBuf>,
}

/// The host paths a command's mounts are built from, found by [`inspect_host`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HostView {
    pub(crate) system: Vec<SystemEntry>,
    pub(crate) hidden_files: Vec<PathBuf>,
    pub(crate) hidden_dirs: Vec<PathBuf>,
    /// Covers over the paths of the mounts below (item 4).
    pub(crate) covers: Vec<Cover>,
    /// Directories shown read-only at their own path (item 5).
    pub(crate) read_only: Vec<PathBuf>,
    /// Directories shown read-write at their own path (item 5, the toolchains' cache).
    pub(crate) writable: Vec<PathBuf>,
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
            covers: Vec::new(),
            read_only: vec!["/root/.pyenv".into()],
            writable: Vec::new(),
        }
    }
}

/// Looks at the host for one command: which system paths exist, which credentials to
/// cover, and which directories to show read-only: those of the `PATH` in `env` (see
/// [`read_only_dirs`]), then each of `extra` that exists, is not already shown and is not
/// refused by the same rule; and `writable`, each that exists, read-write.
pub(crate) fn inspect_host(
    env: &[(String, String)],
    workdir: &Path,
    host_home: Option<&Path>,
    extra: &[PathBuf],
    writable: &[PathBuf],
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
        if dir.is_absolute()
            && dir.is_dir()
            && !refused(dir, workdir, host_home)
            && !read_only.iter().any(|d| dir.starts_with(d))
        {
            read_only.push(dir.clone());
        }
    }
    let writable: Vec<PathBuf> = writable
        .iter()
        .filter(|dir| dir.is_absolute() && dir.is_dir() && !refused(dir, workdir, host_home))
        .cloned()
        .collect();
    let mounted: Vec<&Path> = read_only
        .iter()
        .chain(&writable)
        .map(PathBuf::as_path)
        .chain([workdir])
        .collect();
    HostView {
        system,
        hidden_files: existing(&HIDDEN_FILES, std::fs::Metadata::is_file),
        hidden_dirs: existing(&HIDDEN_DIRS, std::fs::Metadata::is_dir),
        covers: covers(&mounted),
        read_only,
        writable,
    }
}

/// Directories never shown: `/`, the host `HOME` and any folder above it or the workspace
/// (which would show all of them), and anything inside the workspace or its sibling
/// `shadow.git`.
fn refused(dir: &Path, workdir: &Path, host_home: Option<&Path>) -> bool {
    let shadow = workdir.parent().map(|p| p.join("shadow.git"));
    dir.parent().is_none()
        || workdir.starts_with(dir)
        || dir.starts_with(workdir)
        || host_home.is_some_and(|home| home.starts_with(dir))
        || shadow.as_deref().is_some_and(|s| dir.starts_with(s))
}

/// The rule for item 4: for each of `mounted` (the later mounts at their own path) that lies
/// inside a [`PRIVATE_WRITABLE`] mount with a folder between, one cover at the first folder
/// below the mount, shared by every mount under it, in the order first needed.
fn covers(mounted: &[&Path]) -> Vec<Cover> {
    let mut covers: Vec<Cover> = Vec::new();
    for path in mounted {
        // The innermost private mount holding the path (`/dev/shm` before `/dev`).
        let Some((private, rest)) = PRIVATE_WRITABLE
            .iter()
            .find_map(|private| Some((*private, path.strip_prefix(private).ok()?)))
        else {
            continue;
        };
        let mut parts = rest.components();
        let Some(first) = parts.next() else {
            continue;
        };
        let rest = parts.as_path();
        if rest.as_os_str().is_empty() {
            // Directly in the private mount: nothing between to cover.
            continue;
        }
        let top = Path::new(private).join(first);
        match covers.iter_mut().find(|c| c.at == top) {
            Some(cover) => cover.inner.push(rest.to_path_buf()),
            None => covers.push(Cover {
                at: top,
                inner: vec![rest.to_path_buf()],
            }),
        }
    }
    covers
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
    let refused = |dir: &Path| refused(dir, workdir, host_home);
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
    fn mounts_below_a_private_writable_mount_get_one_cover_per_first_folder() {
        let mounted = [
            "/tmp/venv/bin",
            "/tmp/plumb/runs/r1/workspace/work",
            "/tmp/work",
            "/home/sandbox/.local/share/plumb/runs/r1/work",
            "/dev/shm/r1/work",
            "/dev/pts/x/work",
            "/dev/shm/work",
            "/tmpx/r1/work",
            "/srv/r1/work",
            "/tmp/venv/lib/tool",
        ]
        .map(Path::new);

        let actual = covers(&mounted);

        let cover = |at: &str, inner: &[&str]| Cover {
            at: at.into(),
            inner: inner.iter().map(PathBuf::from).collect(),
        };
        let expected = vec![
            cover("/tmp/venv", &["bin", "lib/tool"]),
            cover("/tmp/plumb", &["runs/r1/workspace/work"]),
            cover("/home/sandbox/.local", &["share/plumb/runs/r1/work"]),
            cover("/dev/shm/r1", &["work"]),
            cover("/dev/pts", &["x/work"]),
        ];
        assert_eq!(actual, expected);
    }

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
