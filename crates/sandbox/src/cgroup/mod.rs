//! Per-command cgroups: where this machine lets us make them (detected once per process), one
//! cgroup per command with its memory, process and CPU limits, which limit it ran into, and
//! its removal.
//!
//! Detection, per controller (`memory`, `pids`, `cpu`), from `/proc/self/mountinfo` and
//! `/proc/self/cgroup`:
//! - **v1**: a `cgroup` mount carrying the controller. The command's cgroup is made under
//!   *our own* cgroup of that hierarchy, `<mount>/<our path>/plumb-<pid>-<n>`, so it is
//!   bounded by whatever bounds us.
//! - **v2**: the `cgroup2` mount, for controllers no v1 hierarchy holds. A child cgroup gets a
//!   controller only if our cgroup lists it in `cgroup.subtree_control`, and the kernel
//!   refuses to enable one while our cgroup holds processes ("no internal processes"). If we
//!   are the only process there, we move ourselves into `<ours>/plumb-supervisor` once and
//!   enable the controllers — the step container runtimes take in a delegated cgroup. If
//!   other processes share our cgroup we leave it alone and fall back to rlimits.
//! - A controller counts as usable only after a trial `mkdir`/`rmdir` under its parent.
//!
//! Per command: `mkdir` the cgroup(s), write the limits, and hand the `cgroup.procs` paths to
//! the spawn, whose child joins them before `exec` (see `sys::ChildSetup`), so nothing it
//! starts is ever outside. Afterwards: read the OOM-kill and pids-max counters, kill what is
//! left (`cgroup.kill` on v2, each pid on v1), and `rmdir`, retrying while the killed
//! processes finish exiting. If the run is dropped part-way, `Drop` does the same without
//! waiting.

mod detect;

use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::Limits;
use crate::spec::{enforced, limit_hit};
use crate::sys;

/// The CFS period written with a CPU quota: 100 ms, the kernel's default.
const CPU_PERIOD_US: u64 = 100_000;
/// Processes the launcher itself keeps in the cgroup (bwrap outside and bwrap as pid 1).
pub(crate) const LAUNCHER_PROCESSES: u32 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    V1,
    V2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Controller {
    Memory,
    Pids,
    Cpu,
}

impl Controller {
    const ALL: [Controller; 3] = [Controller::Memory, Controller::Pids, Controller::Cpu];

    fn name(self) -> &'static str {
        match self {
            Controller::Memory => "memory",
            Controller::Pids => "pids",
            Controller::Cpu => "cpu",
        }
    }
}

/// Where one controller's per-command cgroups are made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    pub(crate) version: Version,
    pub(crate) parent: PathBuf,
}

/// The controllers this process can use, each with its place; `None` means "fall back".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Support {
    pub(crate) memory: Option<Place>,
    pub(crate) pids: Option<Place>,
    pub(crate) cpu: Option<Place>,
}

impl Support {
    /// Detected once per process; see the module header.
    pub(crate) fn get() -> &'static Support {
        static SUPPORT: OnceLock<Support> = OnceLock::new();
        SUPPORT.get_or_init(detect::detect)
    }

    fn place(&self, controller: Controller) -> Option<&Place> {
        match controller {
            Controller::Memory => self.memory.as_ref(),
            Controller::Pids => self.pids.as_ref(),
            Controller::Cpu => self.cpu.as_ref(),
        }
    }

    fn set(&mut self, controller: Controller, place: Place) {
        match controller {
            Controller::Memory => self.memory = Some(place),
            Controller::Pids => self.pids = Some(place),
            Controller::Cpu => self.cpu = Some(place),
        }
    }

    /// A line for `plumb doctor`, e.g. "cgroup v1: memory, pids, cpu".
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        for version in [Version::V1, Version::V2] {
            let names: Vec<&str> = Controller::ALL
                .into_iter()
                .filter(|c| self.place(*c).is_some_and(|p| p.version == version))
                .map(Controller::name)
                .collect();
            if !names.is_empty() {
                let label = match version {
                    Version::V1 => "cgroup v1",
                    Version::V2 => "cgroup v2",
                };
                parts.push(format!("{label}: {}", names.join(", ")));
            }
        }
        if parts.is_empty() {
            "no usable cgroup controller".to_owned()
        } else {
            parts.join("; ")
        }
    }

    pub(crate) fn is_complete(&self) -> bool {
        self.memory.is_some() && self.pids.is_some() && self.cpu.is_some()
    }
}

static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// A name no other cgroup of ours has: `plumb-<pid>-<n>`.
fn fresh_name(prefix: &str) -> String {
    let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}-{}-{n}", std::process::id())
}

fn words(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// One directory of a command's cgroup (one per v1 hierarchy; one in all on v2).
#[derive(Debug)]
struct Dir {
    path: PathBuf,
    version: Version,
    controllers: Vec<Controller>,
}

/// A command's cgroup(s), removed by [`CommandCgroup::finish`] or, failing that, on drop.
#[derive(Debug, Default)]
pub(crate) struct CommandCgroup {
    dirs: Vec<Dir>,
}

/// What [`CommandCgroup::create`] achieved.
#[derive(Debug, Default)]
pub(crate) struct Created {
    pub(crate) cgroup: CommandCgroup,
    /// `cgroup.procs` files for the child to join.
    pub(crate) join: Vec<CString>,
    /// The names (from [`enforced`]) of the limits now in force.
    pub(crate) enforced: Vec<&'static str>,
    pub(crate) memory: bool,
    pub(crate) processes: bool,
    pub(crate) cpus: bool,
}

fn write_limit(dir: &Path, file: &str, value: &str) -> bool {
    fs::write(dir.join(file), value).is_ok()
}

/// Writes one controller's limit into `dir`; true when it is in force.
fn write_controller_limit(
    dir: &Path,
    version: Version,
    controller: Controller,
    limits: &Limits,
) -> bool {
    match (controller, version) {
        (Controller::Memory, Version::V1) => {
            let bytes = limits.memory_bytes.to_string();
            let ok = write_limit(dir, "memory.limit_in_bytes", &bytes);
            // Without swap accounting the file is missing; then there is no swap to escape to
            // through this cgroup either.
            if ok && dir.join("memory.memsw.limit_in_bytes").exists() {
                write_limit(dir, "memory.memsw.limit_in_bytes", &bytes);
            }
            ok
        }
        (Controller::Memory, Version::V2) => {
            let ok = write_limit(dir, "memory.max", &limits.memory_bytes.to_string());
            if ok && dir.join("memory.swap.max").exists() {
                write_limit(dir, "memory.swap.max", "0");
            }
            ok
        }
        (Controller::Pids, _) => {
            let max = limits.max_processes.saturating_add(LAUNCHER_PROCESSES);
            write_limit(dir, "pids.max", &max.to_string())
        }
        (Controller::Cpu, _) if limits.cpus == 0 => false,
        (Controller::Cpu, Version::V1) => {
            let quota = u64::from(limits.cpus) * CPU_PERIOD_US;
            write_limit(dir, "cpu.cfs_period_us", &CPU_PERIOD_US.to_string())
                && write_limit(dir, "cpu.cfs_quota_us", &quota.to_string())
        }
        (Controller::Cpu, Version::V2) => {
            let quota = u64::from(limits.cpus) * CPU_PERIOD_US;
            write_limit(dir, "cpu.max", &format!("{quota} {CPU_PERIOD_US}"))
        }
    }
}

fn enforced_name(controller: Controller, version: Version) -> &'static str {
    match (controller, version) {
        (Controller::Memory, Version::V1) => enforced::MEMORY_CGROUP_V1,
        (Controller::Memory, Version::V2) => enforced::MEMORY_CGROUP_V2,
        (Controller::Pids, Version::V1) => enforced::PROCESSES_CGROUP_V1,
        (Controller::Pids, Version::V2) => enforced::PROCESSES_CGROUP_V2,
        (Controller::Cpu, Version::V1) => enforced::CPUS_CGROUP_V1,
        (Controller::Cpu, Version::V2) => enforced::CPUS_CGROUP_V2,
    }
}

/// `key N` from a flat-keyed cgroup file such as `memory.events` or `pids.events`.
fn counter(text: &str, key: &str) -> u64 {
    text.lines()
        .filter_map(|line| line.split_once(' '))
        .find(|(k, _)| *k == key)
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Kills what is left in each directory and removes the ones that are empty; true when
/// all are gone.
fn sweep(dirs: &mut Vec<Dir>) -> bool {
    dirs.retain(|dir| {
        if dir.version == Version::V2 {
            let _ = fs::write(dir.path.join("cgroup.kill"), "1");
        }
        for pid in words(&dir.path.join("cgroup.procs")) {
            if let Ok(pid) = pid.parse::<u32>() {
                let _ = sys::kill_process(pid);
            }
        }
        match fs::remove_dir(&dir.path) {
            Ok(()) => false,
            Err(e) => e.kind() != std::io::ErrorKind::NotFound,
        }
    });
    dirs.is_empty()
}

impl CommandCgroup {
    /// Makes the command's cgroup(s) under the places in `support` and writes `limits`. A
    /// controller whose directory or limit cannot be written is left out (and reported as
    /// not enforced); the caller falls back to rlimits for it.
    pub(crate) fn create(support: &Support, limits: &Limits) -> Created {
        let name = fresh_name("plumb");
        let mut created = Created::default();
        for controller in Controller::ALL {
            let Some(place) = support.place(controller) else {
                continue;
            };
            let path = place.parent.join(&name);
            let index = match created.cgroup.dirs.iter().position(|d| d.path == path) {
                Some(index) => index,
                None => {
                    if fs::create_dir(&path).is_err() {
                        continue;
                    }
                    created.cgroup.dirs.push(Dir {
                        path,
                        version: place.version,
                        controllers: Vec::new(),
                    });
                    created.cgroup.dirs.len() - 1
                }
            };
            let dir = &mut created.cgroup.dirs[index];
            if !write_controller_limit(&dir.path, dir.version, controller, limits) {
                continue;
            }
            dir.controllers.push(controller);
            created
                .enforced
                .push(enforced_name(controller, dir.version));
            match controller {
                Controller::Memory => created.memory = true,
                Controller::Pids => created.processes = true,
                Controller::Cpu => created.cpus = true,
            }
        }
        // A directory none of whose limits took is of no use; remove it now.
        created.cgroup.dirs.retain(|dir| {
            let keep = !dir.controllers.is_empty();
            if !keep {
                let _ = fs::remove_dir(&dir.path);
            }
            keep
        });
        created.join = created
            .cgroup
            .dirs
            .iter()
            .filter_map(|dir| {
                CString::new(dir.path.join("cgroup.procs").as_os_str().as_bytes()).ok()
            })
            .collect();
        created
    }

    /// Which limits the command ran into, by the names in [`limit_hit`].
    fn hits(&self) -> Vec<String> {
        let mut hits = Vec::new();
        for dir in &self.dirs {
            for controller in &dir.controllers {
                let read = |file: &str| fs::read_to_string(dir.path.join(file)).unwrap_or_default();
                match (controller, dir.version) {
                    (Controller::Memory, Version::V1) => {
                        let oom = read("memory.oom_control");
                        if counter(&oom, "oom_kill") > 0 || counter(&oom, "under_oom") > 0 {
                            hits.push(limit_hit::MEMORY.to_owned());
                        }
                    }
                    (Controller::Memory, Version::V2) => {
                        if counter(&read("memory.events"), "oom_kill") > 0 {
                            hits.push(limit_hit::MEMORY.to_owned());
                        }
                    }
                    (Controller::Pids, _) => {
                        if counter(&read("pids.events"), "max") > 0 {
                            hits.push(limit_hit::PROCESSES.to_owned());
                        }
                    }
                    (Controller::Cpu, _) => {}
                }
            }
        }
        hits
    }

    /// The command's cgroup directories, one per hierarchy.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.path.clone()).collect()
    }

    /// See [`sweep`].
    fn sweep(&mut self) -> bool {
        sweep(&mut self.dirs)
    }

    /// Reads which limits were hit, then kills what is left and removes the cgroup(s),
    /// waiting up to two seconds for killed processes to finish exiting.
    pub(crate) async fn finish(mut self) -> Vec<String> {
        let hits = self.hits();
        for _ in 0..400 {
            if self.sweep() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        hits
    }
}

impl Drop for CommandCgroup {
    /// The run was abandoned part-way (`finish` leaves nothing here): kill what is left now,
    /// and let a short-lived thread retry the removal while the killed processes exit, since
    /// `drop` cannot wait.
    fn drop(&mut self) {
        if self.sweep() {
            return;
        }
        // Plain directories, not a `CommandCgroup`: nothing here runs `drop` again.
        let mut rest = std::mem::take(&mut self.dirs);
        let _ = std::thread::Builder::new()
            .name("plumb-cgroup-cleanup".to_owned())
            .spawn(move || {
                for _ in 0..200 {
                    std::thread::sleep(Duration::from_millis(10));
                    if sweep(&mut rest) {
                        return;
                    }
                }
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn counters_are_read_by_key() {
        let oom = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";

        let actual = (
            counter(oom, "oom_kill"),
            counter(oom, "under_oom"),
            counter("max 7\n", "max"),
            counter("", "max"),
        );

        assert_eq!(actual, (3, 0, 7, 0));
    }

    #[test]
    fn limits_are_written_in_each_version_s_files() {
        let v1 = tempfile::tempdir().unwrap();
        let v2 = tempfile::tempdir().unwrap();
        fs::write(v1.path().join("memory.memsw.limit_in_bytes"), "").unwrap();
        let limits = Limits {
            memory_bytes: 256 << 20,
            cpus: 2,
            max_processes: 64,
            ..Limits::default()
        };

        for controller in Controller::ALL {
            assert!(write_controller_limit(
                v1.path(),
                Version::V1,
                controller,
                &limits
            ));
            assert!(write_controller_limit(
                v2.path(),
                Version::V2,
                controller,
                &limits
            ));
        }
        let read = |dir: &Path| {
            let mut files: Vec<(String, String)> = fs::read_dir(dir)
                .unwrap()
                .map(|e| {
                    let e = e.unwrap();
                    let value = fs::read_to_string(e.path()).unwrap();
                    (e.file_name().to_string_lossy().into_owned(), value)
                })
                .collect();
            files.sort();
            files
        };
        let actual = (read(v1.path()), read(v2.path()));

        let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
            list.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        let expected = (
            pairs(&[
                ("cpu.cfs_period_us", "100000"),
                ("cpu.cfs_quota_us", "200000"),
                ("memory.limit_in_bytes", "268435456"),
                ("memory.memsw.limit_in_bytes", "268435456"),
                ("pids.max", "66"),
            ]),
            pairs(&[
                ("cpu.max", "200000 100000"),
                ("memory.max", "268435456"),
                ("pids.max", "66"),
            ]),
        );
        assert_eq!(actual, expected);
    }
}
