//! The two places the sandbox needs raw system calls: killing a process group and setting
//! resource limits in the child between `fork` and `exec`.
//!
//! `unsafe` is allowed in this module only. Why each use is sound:
//! - `killpg`, `getrlimit` and `setrlimit` are plain system calls on values and a pointer to
//!   a local `rlimit`; they touch no Rust-managed memory.
//! - The `pre_exec` closure runs in the forked child, where only async-signal-safe work is
//!   allowed. It calls only `getrlimit`/`setrlimit` (both async-signal-safe), captures two
//!   `Copy` values, does not allocate, take locks or touch the parent's state, and reports
//!   failure through `io::Error::last_os_error()`, which does not allocate either.
#![allow(unsafe_code)]

use std::io;

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
    if rc == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::ESRCH) {
        return Ok(());
    }
    Err(err)
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
}

/// Arranges for `limits` to be set in the child. If setting them fails, spawning fails, so a
/// spawned command always runs under every limit asked for.
pub(crate) fn set_rlimits_before_exec(cmd: &mut tokio::process::Command, limits: Rlimits) {
    if limits == Rlimits::default() {
        return;
    }
    let set_limits = move || {
        if let Some(bytes) = limits.file_bytes {
            lower_limit!(libc::RLIMIT_FSIZE, bytes);
        }
        if limits.no_core_dumps {
            lower_limit!(libc::RLIMIT_CORE, 0);
        }
        Ok(())
    };
    // SAFETY: `set_limits` is async-signal-safe; see the module header.
    unsafe {
        cmd.pre_exec(set_limits);
    }
}
