//! bwrap's mounts for what `host_view.rs` lets a command see, and the argv that builds them.
//!
//! The root is an empty tmpfs; only what is listed here is mounted into it (an allowlist, so
//! the host's `/root`, `/home`, `/tmp`, `/var`, `/srv`, `/mnt`, `/run` and the rest are simply
//! absent). Mount order, later mounts covering earlier ones:
//!
//! 1. The system, read-only, each existing path bound at itself; a merged-/usr symlink such
//!    as `/bin -> usr/bin` is recreated as the same symlink.
//! 2. Credentials in `/etc` covered: files by `/dev/null`, directories (`/etc/ssh` with the
//!    host keys, `/etc/ssl/private`) by an empty read-only tmpfs.
//! 3. A minimal `/dev` (`--dev`), a `/proc` of the sandbox's own pid namespace, and
//!    `/proc/sys` read-only: the command runs as uid 0 when plumb does, and without this a
//!    capability-less root could still write sysctls.
//! 4. A private `/tmp` and an empty private `HOME` ([`HOME_INSIDE`]), each a tmpfs capped at
//!    the memory limit (its pages are charged to the command's memory cgroup).
//! 5. The view's covers: a small tmpfs at the first folder below a private writable mount on
//!    the path of a later mount (a workspace under the host's `/tmp`), still writable so
//!    bwrap can make the mount points inside it.
//! 6. The view's read-only directories: the command's `PATH` directories and any the settings
//!    and the toolchains add; then its writable ones (the toolchains' cache, for a command
//!    with the network).
//! 7. The workspace, read-write, at its own path; only it: its parent (which holds the shadow
//!    git directory) is not mounted.
//! 8. Each cover remounted read-only (that mount alone: the workspace inside stays
//!    writable), so no folder above the workspace is writable, wherever it is.
//! 9. The root tmpfs remounted read-only, so nothing else is writable.
//!
//! Then the process flags: new user (uid and gid mapped to themselves, so files in the
//! workspace keep their owner; no nested user namespaces, `--disable-userns`), pid, net
//! (loopback only), ipc, uts and, where possible, cgroup namespaces; all capabilities dropped,
//! bounding set included (bwrap keeps them when run as root unless told); `--die-with-parent`;
//! `--new-session` (no terminal to inject keystrokes into); `--chdir` the workspace;
//! `--clearenv` and the allowlisted environment via `--setenv` (bwrap adds `PWD`).

use std::os::fd::RawFd;
use std::path::Path;

use crate::Network;
use crate::host_view::{HOME_INSIDE, HostView, SystemEntry, TMP_INSIDE};

/// Size cap of a cover's tmpfs: it only ever holds empty directories.
const COVER_BYTES: &str = "65536";

/// The command part of the argv.
#[derive(Debug)]
pub(crate) struct Invocation<'a> {
    pub(crate) workdir: &'a Path,
    /// The complete environment of the command.
    pub(crate) env: &'a [(String, String)],
    /// Size cap of the `/tmp` and `HOME` tmpfs each.
    pub(crate) tmpfs_bytes: u64,
    /// A descriptor holding a compiled seccomp program, for `--seccomp`.
    pub(crate) seccomp_fd: Option<RawFd>,
    pub(crate) argv: &'a [String],
    pub(crate) network: Network,
}

/// Collects arguments; paths are passed lossily only if they are not UTF-8, which
/// [`crate::EnvPolicy`] already refuses for the paths that matter.
struct Args(Vec<String>);

impl Args {
    fn push(&mut self, items: &[&str]) {
        self.0.extend(items.iter().map(|s| (*s).to_owned()));
    }

    fn path_op(&mut self, op: &str, source: &Path, dest: &Path) {
        self.0.push(op.to_owned());
        self.0.push(source.to_string_lossy().into_owned());
        self.0.push(dest.to_string_lossy().into_owned());
    }
}

/// The complete bwrap argv (without the program) for `view` and `cmd`, in the order of the
/// module header.
pub(crate) fn bwrap_args(view: &HostView, cmd: &Invocation<'_>) -> Vec<String> {
    let mut a = Args(Vec::new());
    a.push(&["--unshare-user", "--disable-userns", "--unshare-pid"]);
    match cmd.network {
        Network::Off => a.push(&["--unshare-net"]),
        // A setup phase the user allowed: the host's network, everything else as strict.
        Network::Host => {}
    }
    a.push(&[
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "sandbox",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
    ]);
    // 1. The system, read-only.
    for entry in &view.system {
        match entry {
            SystemEntry::Dir(dir) => a.path_op("--ro-bind", dir, dir),
            SystemEntry::Symlink { link, target } => a.path_op("--symlink", target, link),
        }
    }
    // 2. Credentials covered.
    for file in &view.hidden_files {
        a.path_op("--ro-bind", Path::new("/dev/null"), file);
    }
    for dir in &view.hidden_dirs {
        let dir = dir.to_string_lossy();
        a.push(&["--tmpfs", &dir, "--remount-ro", &dir]);
    }
    // 3. /dev, /proc, read-only sysctls.
    a.push(&[
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--ro-bind",
        "/proc/sys",
        "/proc/sys",
    ]);
    // 4. Private /tmp and HOME.
    let size = cmd.tmpfs_bytes.to_string();
    a.push(&["--size", &size, "--tmpfs", TMP_INSIDE]);
    a.push(&["--size", &size, "--tmpfs", HOME_INSIDE]);
    // 5. Covers over the paths to later mounts inside those.
    for cover in &view.covers {
        let at = cover.at.to_string_lossy();
        a.push(&["--size", COVER_BYTES, "--tmpfs", &at]);
    }
    // 6. PATH directories and configured ones, read-only.
    for dir in &view.read_only {
        a.path_op("--ro-bind", dir, dir);
    }
    for dir in &view.writable {
        a.path_op("--bind", dir, dir);
    }
    // 7. The workspace, the only writable host directory.
    a.path_op("--bind", cmd.workdir, cmd.workdir);
    // 8. The covers read-only, now that their mount points are made.
    for cover in &view.covers {
        a.push(&["--remount-ro", &cover.at.to_string_lossy()]);
    }
    // 9. Nothing else writable.
    a.push(&["--remount-ro", "/"]);
    // The command.
    a.push(&["--chdir", &cmd.workdir.to_string_lossy(), "--clearenv"]);
    for (name, value) in cmd.env {
        a.push(&["--setenv", name, value]);
    }
    if let Some(fd) = cmd.seccomp_fd {
        a.push(&["--seccomp", &fd.to_string()]);
    }
    a.push(&["--"]);
    a.0.extend(cmd.argv.iter().cloned());
    a.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn argv_follows_the_documented_mount_order() {
        let view = HostView::sample();
        let env = vec![("PATH".to_owned(), "/usr/bin".to_owned())];
        let argv = vec!["python3".to_owned(), "-V".to_owned()];
        let cmd = Invocation {
            workdir: Path::new("/runs/r1/work"),
            env: &env,
            tmpfs_bytes: 1024,
            seccomp_fd: Some(7),
            argv: &argv,
            network: Network::Off,
        };

        let actual = bwrap_args(&view, &cmd).join(" ");

        let expected = "--unshare-user --disable-userns --unshare-pid --unshare-net --unshare-ipc --unshare-uts \
            --unshare-cgroup-try --hostname sandbox --die-with-parent --new-session \
            --cap-drop ALL \
            --ro-bind /usr /usr --symlink usr/bin /bin --ro-bind /etc /etc \
            --ro-bind /dev/null /etc/shadow --tmpfs /etc/ssh --remount-ro /etc/ssh \
            --dev /dev --proc /proc --ro-bind /proc/sys /proc/sys \
            --size 1024 --tmpfs /tmp --size 1024 --tmpfs /home/sandbox \
            --ro-bind /root/.pyenv /root/.pyenv \
            --bind /runs/r1/work /runs/r1/work \
            --remount-ro / \
            --chdir /runs/r1/work --clearenv --setenv PATH /usr/bin --seccomp 7 \
            -- python3 -V";
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_workspace_under_tmp_is_covered_up_to_itself() {
        let view = HostView {
            covers: vec![crate::host_view::Cover {
                at: "/tmp/home".into(),
                inner: vec!["runs/r1/work".into()],
            }],
            ..HostView::default()
        };
        let cmd = Invocation {
            workdir: Path::new("/tmp/home/runs/r1/work"),
            env: &[],
            tmpfs_bytes: 1024,
            seccomp_fd: None,
            argv: &["true".to_owned()],
            network: Network::Off,
        };

        let argv = bwrap_args(&view, &cmd).join(" ");
        let actual = argv
            .split_once("--proc /proc --ro-bind /proc/sys /proc/sys ")
            .and_then(|(_, rest)| rest.split_once(" --chdir"))
            .map(|(mounts, _)| mounts.to_owned());

        let expected = "--size 1024 --tmpfs /tmp --size 1024 --tmpfs /home/sandbox \
            --size 65536 --tmpfs /tmp/home \
            --bind /tmp/home/runs/r1/work /tmp/home/runs/r1/work \
            --remount-ro /tmp/home --remount-ro /";
        assert_eq!(actual.as_deref(), Some(expected));
    }
}
