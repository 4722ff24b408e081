//! What a command sees under gVisor: the OCI bundle (`config.json` and an empty `rootfs/`)
//! that `runsc run` starts, putting in force what `host_view.rs` lets a command see, as OCI
//! mounts.
//!
//! The root is the bundle's own empty `rootfs/`, read-only; only what is listed here is
//! mounted into it (an allowlist: the host's `/root`, `/home`, `/tmp`, `/var`, `/srv`, `/mnt`,
//! `/run` and the workspace's parent, which holds the shadow git directory, are absent). The
//! gofer creates the mount points inside `rootfs/` itself. Mount order, later mounts covering
//! earlier ones:
//!
//! 1. gVisor's own `/proc` (its pid namespace), a `/dev` tmpfs that gVisor fills with its
//!    emulated devices, and its synthetic `/sys`, read-only.
//! 2. The system, read-only, each existing path bound at itself; a merged-/usr symlink such
//!    as `/bin -> usr/bin` is recreated as the same symlink inside `rootfs/`.
//! 3. Credentials in `/etc` covered: files by `/dev/null`, directories (`/etc/ssh`,
//!    `/etc/ssl/private`) by an empty read-only tmpfs.
//! 4. A private `/tmp` and an empty private `HOME` ([`HOME_INSIDE`]), each a tmpfs of the
//!    sandbox capped at the memory limit (its pages are the sandbox's memory).
//! 5. The view's covers (a workspace under the host's `/tmp`): each a directory of the
//!    bundle, `covers/<n>/`, holding only the empty directories down to the later mounts,
//!    bound read-only at the first folder below the private mount, so no folder above the
//!    workspace is writable. (OCI mounts cannot be remounted read-only after the mount points
//!    are made, as bwrap's covers are, so the mount points are made on the host beforehand.)
//! 6. The view's read-only directories: the command's `PATH` directories and the
//!    toolchains'; then its writable ones (the toolchains' cache, for a command with the
//!    network).
//! 7. The workspace, read-write, at its own path; only it.
//!
//! An OCI `config.json` names paths as strings, so a host path that is not UTF-8 is left out
//! (the workspace itself is refused earlier).
//!
//! The process: uid 0 inside with no capabilities at all (empty bounding set) and
//! `noNewPrivileges`; the cleared, allowlisted environment; the workspace as working
//! directory; rlimits `RLIMIT_FSIZE`, `RLIMIT_CORE = 0` and `RLIMIT_NPROC`, which gVisor's
//! kernel enforces itself, for every process in the sandbox and regardless of uid. New pid,
//! network, ipc, uts and mount namespaces; with cgroups, the memory limit and the CPU quota in
//! `linux.resources`, under a `cgroupsPath` relative to our own cgroup.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::host_view::{HOME_INSIDE, HostView, SystemEntry, TMP_INSIDE};
use crate::{Limits, Network};

/// CFS period for the CPU quota, in microseconds.
const CPU_PERIOD_US: u64 = 100_000;

/// The command part of the bundle.
#[derive(Debug)]
pub(super) struct Invocation<'a> {
    /// The bundle directory, which holds the covers' directories.
    pub(super) bundle: &'a Path,
    pub(super) workdir: &'a str,
    /// The complete environment of the command.
    pub(super) env: &'a [(String, String)],
    pub(super) argv: &'a [String],
    pub(super) limits: &'a Limits,
    /// The cgroup runsc makes for the sandbox, relative to our own; `None` runs without
    /// cgroups (`--ignore-cgroups`), so without the memory and CPU limits.
    pub(super) cgroups_path: Option<&'a str>,
    pub(super) network: Network,
}

/// Creates the bundle's empty root (the directory and the merged-/usr symlinks, step 2) and
/// the covers' directories (step 5) in `bundle`.
pub(super) fn write_rootfs(bundle: &Path, view: &HostView) -> io::Result<()> {
    let rootfs = bundle.join("rootfs");
    std::fs::create_dir(&rootfs)?;
    for entry in &view.system {
        if let SystemEntry::Symlink { link, target } = entry {
            let name = link.strip_prefix("/").unwrap_or(link);
            std::os::unix::fs::symlink(target, rootfs.join(name))?;
        }
    }
    for (n, cover) in view.covers.iter().enumerate() {
        let dir = cover_dir(bundle, n);
        std::fs::create_dir_all(&dir)?;
        for inner in &cover.inner {
            std::fs::create_dir_all(dir.join(inner))?;
        }
    }
    Ok(())
}

/// Where cover `n` lives in the bundle.
fn cover_dir(bundle: &Path, n: usize) -> PathBuf {
    bundle.join("covers").join(n.to_string())
}

/// The UTF-8 ones of `paths`; see the module header.
fn utf8(paths: &[PathBuf]) -> impl Iterator<Item = &str> {
    paths.iter().filter_map(|p| p.to_str())
}

fn mount(destination: &str, kind: &str, source: &str, options: &[&str]) -> Value {
    json!({"destination": destination, "type": kind, "source": source, "options": options})
}

fn read_only_bind(path: &str) -> Value {
    mount(path, "bind", path, &["rbind", "ro"])
}

fn mounts(view: &HostView, cmd: &Invocation<'_>) -> Vec<Value> {
    let size = format!("size={}", cmd.limits.memory_bytes);
    // 1. gVisor's own /proc, /dev and /sys.
    let mut list = vec![
        mount("/proc", "proc", "proc", &[]),
        mount("/dev", "tmpfs", "tmpfs", &["nosuid", "mode=755"]),
        mount(
            "/sys",
            "sysfs",
            "sysfs",
            &["nosuid", "noexec", "nodev", "ro"],
        ),
    ];
    // 2. The system, read-only (symlinks live in rootfs/).
    for entry in &view.system {
        if let SystemEntry::Dir(dir) = entry
            && let Some(dir) = dir.to_str()
        {
            list.push(read_only_bind(dir));
        }
    }
    // 3. Credentials covered.
    for file in utf8(&view.hidden_files) {
        list.push(mount(file, "bind", "/dev/null", &["bind", "ro"]));
    }
    for dir in utf8(&view.hidden_dirs) {
        list.push(mount(dir, "tmpfs", "tmpfs", &["ro", "size=4096"]));
    }
    // 4. Private /tmp and HOME.
    list.push(mount(TMP_INSIDE, "tmpfs", "tmpfs", &["mode=1777", &size]));
    list.push(mount(HOME_INSIDE, "tmpfs", "tmpfs", &["mode=700", &size]));
    // 5. Covers over the paths to later mounts inside those.
    for (n, cover) in view.covers.iter().enumerate() {
        let source = cover_dir(cmd.bundle, n);
        if let (Some(at), Some(source)) = (cover.at.to_str(), source.to_str()) {
            list.push(mount(at, "bind", source, &["rbind", "ro"]));
        }
    }
    // 6. PATH directories, read-only.
    list.extend(utf8(&view.read_only).map(read_only_bind));
    list.extend(utf8(&view.writable).map(|dir| mount(dir, "bind", dir, &["rbind", "rw"])));
    // 7. The workspace, the only writable host directory.
    list.push(mount(cmd.workdir, "bind", cmd.workdir, &["rbind", "rw"]));
    list
}

fn rlimit(kind: &str, value: u64) -> Value {
    json!({"type": kind, "hard": value, "soft": value})
}

fn linux(cmd: &Invocation<'_>) -> Value {
    // With the host's network (a setup phase the user allowed) the sandbox joins the host's
    // network namespace; gVisor's own network stack still stands between it and the kernel.
    let network = match cmd.network {
        Network::Off => Some(json!({"type": "network"})),
        Network::Host => None,
    };
    let namespaces: Vec<Value> = [
        Some(json!({"type": "pid"})),
        network,
        Some(json!({"type": "ipc"})),
        Some(json!({"type": "uts"})),
        Some(json!({"type": "mount"})),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut linux = json!({ "namespaces": namespaces });
    if let Some(path) = cmd.cgroups_path {
        let quota = u64::from(cmd.limits.cpus.max(1)) * CPU_PERIOD_US;
        linux["cgroupsPath"] = json!(path);
        linux["resources"] = json!({
            "memory": {"limit": cmd.limits.memory_bytes},
            "cpu": {"quota": quota, "period": CPU_PERIOD_US},
        });
    }
    linux
}

/// The complete `config.json` for `view` and `cmd`, in the order of the module header.
pub(super) fn config(view: &HostView, cmd: &Invocation<'_>) -> Value {
    let env: Vec<String> = cmd.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    json!({
        "ociVersion": "1.0.2",
        "process": {
            "terminal": false,
            "user": {"uid": 0, "gid": 0},
            "args": cmd.argv,
            "env": env,
            "cwd": cmd.workdir,
            "capabilities": {
                "bounding": [],
                "effective": [],
                "inheritable": [],
                "permitted": [],
                "ambient": [],
            },
            "rlimits": [
                rlimit("RLIMIT_FSIZE", cmd.limits.max_file_bytes),
                rlimit("RLIMIT_CORE", 0),
                rlimit("RLIMIT_NPROC", u64::from(cmd.limits.max_processes)),
            ],
            "noNewPrivileges": true,
        },
        "root": {"path": "rootfs", "readonly": true},
        "hostname": "sandbox",
        "mounts": mounts(view, cmd),
        "linux": linux(cmd),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn config_follows_the_documented_mount_order() {
        let view = HostView::sample();
        let env = vec![("PATH".to_owned(), "/usr/bin".to_owned())];
        let argv = vec!["python3".to_owned(), "-V".to_owned()];
        let limits = Limits {
            memory_bytes: 1024,
            cpus: 2,
            max_processes: 64,
            max_file_bytes: 4096,
            ..Limits::default()
        };
        let cmd = Invocation {
            bundle: Path::new("/scratch/gvisor-1"),
            workdir: "/runs/r1/work",
            env: &env,
            argv: &argv,
            limits: &limits,
            cgroups_path: Some("plumb-1-2"),
            network: Network::Off,
        };

        let actual = config(&view, &cmd);

        // Compared as JSON: the order of an object's keys means nothing to runsc, and
        // serde_json keeps or sorts it depending on which features the build unifies.
        let expected: Value = serde_json::from_str(concat!(
            r#"{"ociVersion":"1.0.2","process":{"terminal":false,"user":{"uid":0,"gid":0},"#,
            r#""args":["python3","-V"],"env":["PATH=/usr/bin"],"cwd":"/runs/r1/work","#,
            r#""capabilities":{"bounding":[],"effective":[],"inheritable":[],"permitted":[],"ambient":[]},"#,
            r#""rlimits":[{"type":"RLIMIT_FSIZE","hard":4096,"soft":4096},"#,
            r#"{"type":"RLIMIT_CORE","hard":0,"soft":0},{"type":"RLIMIT_NPROC","hard":64,"soft":64}],"#,
            r#""noNewPrivileges":true},"root":{"path":"rootfs","readonly":true},"hostname":"sandbox","#,
            r#""mounts":["#,
            r#"{"destination":"/proc","type":"proc","source":"proc","options":[]},"#,
            r#"{"destination":"/dev","type":"tmpfs","source":"tmpfs","options":["nosuid","mode=755"]},"#,
            r#"{"destination":"/sys","type":"sysfs","source":"sysfs","options":["nosuid","noexec","nodev","ro"]},"#,
            r#"{"destination":"/usr","type":"bind","source":"/usr","options":["rbind","ro"]},"#,
            r#"{"destination":"/etc","type":"bind","source":"/etc","options":["rbind","ro"]},"#,
            r#"{"destination":"/etc/shadow","type":"bind","source":"/dev/null","options":["bind","ro"]},"#,
            r#"{"destination":"/etc/ssh","type":"tmpfs","source":"tmpfs","options":["ro","size=4096"]},"#,
            r#"{"destination":"/tmp","type":"tmpfs","source":"tmpfs","options":["mode=1777","size=1024"]},"#,
            r#"{"destination":"/home/sandbox","type":"tmpfs","source":"tmpfs","options":["mode=700","size=1024"]},"#,
            r#"{"destination":"/root/.pyenv","type":"bind","source":"/root/.pyenv","options":["rbind","ro"]},"#,
            r#"{"destination":"/runs/r1/work","type":"bind","source":"/runs/r1/work","options":["rbind","rw"]}],"#,
            r#""linux":{"namespaces":[{"type":"pid"},{"type":"network"},{"type":"ipc"},{"type":"uts"},{"type":"mount"}],"#,
            r#""cgroupsPath":"plumb-1-2","resources":{"memory":{"limit":1024},"cpu":{"quota":200000,"period":100000}}}}"#,
        ))
        .unwrap();
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_workspace_under_tmp_is_covered_by_a_read_only_skeleton() {
        let bundle = tempfile::tempdir().unwrap();
        let view = HostView {
            covers: vec![crate::host_view::Cover {
                at: "/tmp/home".into(),
                inner: vec!["runs/r1/work".into()],
            }],
            ..HostView::default()
        };
        let limits = Limits {
            memory_bytes: 1024,
            ..Limits::default()
        };
        let cmd = Invocation {
            bundle: bundle.path(),
            workdir: "/tmp/home/runs/r1/work",
            env: &[],
            argv: &[],
            limits: &limits,
            cgroups_path: None,
            network: Network::Off,
        };

        write_rootfs(bundle.path(), &view).unwrap();
        let destinations: Vec<Value> = config(&view, &cmd)["mounts"]
            .as_array()
            .unwrap()
            .iter()
            .skip(3)
            .map(|m| json!([m["destination"], m["source"], m["options"]]))
            .collect();
        let skeleton = bundle.path().join("covers/0");
        let actual = (
            destinations,
            skeleton.join("runs/r1/work").is_dir(),
            std::fs::read_dir(skeleton.join("runs/r1")).unwrap().count(),
        );

        let expected = (
            vec![
                json!(["/tmp", "tmpfs", ["mode=1777", "size=1024"]]),
                json!(["/home/sandbox", "tmpfs", ["mode=700", "size=1024"]]),
                json!(["/tmp/home", skeleton.to_str().unwrap(), ["rbind", "ro"]]),
                json!([
                    "/tmp/home/runs/r1/work",
                    "/tmp/home/runs/r1/work",
                    ["rbind", "rw"]
                ]),
            ],
            true,
            1,
        );
        assert_eq!(actual, expected);
    }
}
