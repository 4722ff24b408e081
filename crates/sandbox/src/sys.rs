//! The places the sandbox needs raw system calls: killing a process group or a process,
//! asking whether we are root, and preparing the child between `fork` and `exec` (dying with
//! plumb, resource limits, joining the command's cgroups, keeping a descriptor open for the
//! launcher).
//!
//! Dying with plumb: every child plumb starts, here and through [`die_with_parent`] (git, pip,
//! the model runner), asks the kernel for `SIGKILL` when its parent dies
//! (`PR_SET_PDEATHSIG`), `SIGKILL` of plumb included, and then checks its parent is still the
//! process that forked it (plumb may have died between `fork` and `prctl`). The kernel's
//! "parent" is the *thread* that forked: plumb spawns from tokio's worker threads, or from a
//! thread that waits for the child, which both live as long as the child matters.
//!
//! `unsafe` is allowed in this module only. Why each use is sound:
//! - `killpg`, `kill`, `geteuid`, `getrlimit` and `setrlimit` are plain system calls on
//!   values and a pointer to a local `rlimit`; they touch no Rust-managed memory.
//! - The `pre_exec` closures run in the forked child, where only async-signal-safe work is
//!   allowed. They call only `prctl`, `getppid`, `open`, `write`, `close`, `fcntl`,
//!   `getrlimit` and `setrlimit` (all async-signal-safe system calls). They read what they
//!   own (the parent's pid and the [`ChildSetup`], built in the parent: the paths are
//!   `CString`s made before the fork, so nothing is allocated in the child), take no locks,
//!   do not touch the parent's state, and report failure through
//!   `io::Error::last_os_error()` or `io::Error::from_raw_os_error`, which do not allocate.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;

/// A macro rather than a function because the type of the resource argument differs
/// between C libraries (`c_uint` on glibc, `c_int` on musl and macOS).
macro_rules! lower_limit {
    ($resource:expr, $value:expr) => {{
        let mut current = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `current` is a valid, exclusively borrowed local.
        if unsafe { libc::getrlimit($resource, &mut current) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let value: libc::rlim_t = $value;
        let value = value.min(current.rlim_max);
        let wanted = libc::rlimit {
            rlim_cur: value,
            rlim_max: value,
        };
        // SAFETY: `wanted` is a valid local.
        if unsafe { libc::setrlimit($resource, &wanted) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }};
}

/// Sends `SIGKILL` to every process in the group `pgid`. A group that no longer exists is not
/// an error. Refuses groups 0 and 1, which would mean "our own group" and "init".
pub(crate) fn kill_process_group(pgid: u32) -> io::Result<()> {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return Ok(());
    };
    if pgid <= 1 {
        return Ok(());
    }
    // SAFETY: a system call on integers; see the module header.
    let rc = unsafe { libc::killpg(pgid, libc::SIGKILL) };
    kill_result(rc)
}

/// Sends `SIGKILL` to one process. A process that is gone is not an error. Refuses pids 0
/// and 1 (our own group, init) and anything that is not a positive pid.
pub(crate) fn kill_process(pid: u32) -> io::Result<()> {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return Ok(());
    };
    if pid <= 1 {
        return Ok(());
    }
    // SAFETY: a system call on integers; see the module header.
    let rc = unsafe { libc::kill(pid, libc::SIGKILL) };
    kill_result(rc)
}

/// A kill's return code as a result: a target that is already gone (`ESRCH`) is not an error.
fn kill_result(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::ESRCH) {
        return Ok(());
    }
    Err(err)
}

/// True when this process runs with effective user id 0.
pub(crate) fn is_root() -> bool {
    // SAFETY: `geteuid` cannot fail and takes no arguments.
    unsafe { libc::geteuid() == 0 }
}

/// Resource limits to set in the child before `exec`. Each limit is set as both soft and
/// hard limit, so the command cannot raise it again; a requested value above the current
/// hard limit is lowered to it (we can only tighten).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Rlimits {
    /// `RLIMIT_FSIZE`: the largest file the command may write.
    pub(crate) file_bytes: Option<libc::rlim_t>,
    /// `RLIMIT_CORE = 0`: no core files.
    pub(crate) no_core_dumps: bool,
    /// `RLIMIT_NPROC`: the fallback process limit (counts all processes of the user).
    pub(crate) processes: Option<libc::rlim_t>,
    /// `RLIMIT_AS`: the fallback memory limit (virtual, per process).
    pub(crate) address_space: Option<libc::rlim_t>,
}

/// What the child does between `fork` and `exec`, after arranging to die with plumb, in this
/// order: join cgroups, keep descriptors, set rlimits. Any failure makes spawning fail, so a spawned command always
/// runs under everything asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ChildSetup {
    /// `cgroup.procs` files the child writes `0` ("this process") to before `exec`, so the
    /// launcher and everything it starts are inside the command's cgroups from the start.
    pub(crate) join_cgroups: Vec<CString>,
    /// Descriptors whose close-on-exec flag the child clears, e.g. bwrap's `--seccomp FD`.
    pub(crate) keep_fds: Vec<RawFd>,
    pub(crate) rlimits: Rlimits,
}

fn join_cgroup(procs_file: &CString) -> io::Result<()> {
    // SAFETY: `procs_file` is a valid NUL-terminated path owned by the closure.
    let fd = unsafe { libc::open(procs_file.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: writes one byte from a static buffer to the descriptor opened above.
    let written = unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) };
    let result = if written == 1 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    };
    // SAFETY: closes the descriptor opened above, exactly once.
    unsafe { libc::close(fd) };
    result
}

/// In the child: `SIGKILL` when the parent dies, and fail (so the spawn fails) if it already
/// has: the child was re-parented and `getppid` no longer names `parent`.
fn die_with(parent: libc::pid_t) -> io::Result<()> {
    let signal = libc::c_ulong::try_from(libc::SIGKILL).unwrap_or(9);
    // SAFETY: `prctl(PR_SET_PDEATHSIG)` on integers.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `getppid` cannot fail and takes no arguments.
    if unsafe { libc::getppid() } != parent {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    Ok(())
}

/// This process's id, as the child's `getppid` reports it.
fn own_pid() -> libc::pid_t {
    libc::pid_t::try_from(std::process::id()).unwrap_or(libc::pid_t::MAX)
}

/// Makes `cmd`'s process get `SIGKILL` when plumb dies, however it dies, for the children
/// plumb starts outside the sandbox (git, pip, the model runner); see the module header.
/// Spawning fails if plumb died while the child started. Only the process itself: a child
/// of its own is its own business (kill its process group as well where that matters).
pub fn die_with_parent(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt as _;
    let parent = own_pid();
    // SAFETY: the closure only makes the system calls of `die_with`; see the module header.
    unsafe {
        cmd.pre_exec(move || die_with(parent));
    }
}

fn keep_fd(fd: RawFd) -> io::Result<()> {
    // SAFETY: `fcntl(F_SETFD)` on an integer; an invalid descriptor yields EBADF.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn set_rlimits(limits: Rlimits) -> io::Result<()> {
    if let Some(bytes) = limits.file_bytes {
        lower_limit!(libc::RLIMIT_FSIZE, bytes);
    }
    if limits.no_core_dumps {
        lower_limit!(libc::RLIMIT_CORE, 0);
    }
    if let Some(count) = limits.processes {
        lower_limit!(libc::RLIMIT_NPROC, count);
    }
    if let Some(bytes) = limits.address_space {
        lower_limit!(libc::RLIMIT_AS, bytes);
    }
    Ok(())
}

/// Arranges for the child to die with plumb (see the module header) and for `setup` to
/// happen in it (see [`ChildSetup`]).
pub(crate) fn prepare_child(cmd: &mut tokio::process::Command, setup: ChildSetup) {
    let parent = own_pid();
    let in_child = move || {
        die_with(parent)?;
        for procs_file in &setup.join_cgroups {
            join_cgroup(procs_file)?;
        }
        for fd in &setup.keep_fds {
            keep_fd(*fd)?;
        }
        set_rlimits(setup.rlimits)
    };
    // SAFETY: `in_child` is async-signal-safe; see the module header.
    unsafe {
        cmd.pre_exec(in_child);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::time::{Duration, Instant};

    /// The kernel's "parent" is the thread that spawned the child, so a thread that ends
    /// stands in for plumb dying: its child gets `SIGKILL`.
    #[test]
    fn a_child_dies_with_the_thread_that_spawned_it() {
        let spawned = std::thread::spawn(|| {
            let mut cmd = std::process::Command::new("sleep");
            cmd.arg("600");
            die_with_parent(&mut cmd);
            cmd.spawn().unwrap()
        });
        let mut child = spawned.join().unwrap();

        let until = Instant::now() + Duration::from_secs(5);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if Instant::now() > until {
                let _ = child.kill();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };

        use std::os::unix::process::ExitStatusExt as _;
        assert_eq!(status.and_then(|s| s.signal()), Some(libc::SIGKILL));
    }
}
