//! How each kernel-enforced limit of a command is put in force on this machine: a per-command
//! cgroup where the machine allows one (see `cgroup.rs`), an rlimit where it does not.
//!
//! | limit     | first choice                         | fallback                              |
//! |-----------|--------------------------------------|---------------------------------------|
//! | memory    | `memory.limit_in_bytes` / `memory.max` | `RLIMIT_AS`                         |
//! | processes | `pids.max`                           | `RLIMIT_NPROC` (not for root)         |
//! | cpus      | CFS quota / `cpu.max`                | none                                  |
//! | file size | `RLIMIT_FSIZE`, always               |                                       |
//! | core dumps| `RLIMIT_CORE = 0`, always            |                                       |
//!
//! The fallbacks are weaker, which is why [`crate::CommandOutput::enforced`] names the
//! mechanism:
//! - `RLIMIT_AS` caps *virtual* address space *per process*: it refuses programs that reserve
//!   much more than they touch (the JVM, Go, V8, sanitizers) while a tree of processes may
//!   together use many times the limit, and it does not count tmpfs or page cache.
//! - `RLIMIT_NPROC` counts every process of the same user on the machine, not of the
//!   command, and the kernel does not apply it to root at all — so as root without a pids
//!   cgroup there is no process limit, and none is reported.

use crate::Limits;
use crate::cgroup::{CommandCgroup, Support};
use crate::spec::enforced;
use crate::sys::{self, ChildSetup, Rlimits};

/// The kernel side of one command's limits.
#[derive(Debug, Default)]
pub(crate) struct KernelLimits {
    /// Cgroups to join and rlimits to set in the child.
    pub(crate) child: ChildSetup,
    /// The command's cgroup, to be finished after the run; `None` without one.
    pub(crate) cgroup: Option<CommandCgroup>,
    /// The names of the memory/process/cpu limits in force, by [`enforced`].
    pub(crate) enforced: Vec<String>,
}

/// Puts `limits` in force through `support`'s cgroups, falling back to rlimits per limit.
pub(crate) fn apply(limits: &Limits, support: &Support) -> KernelLimits {
    let created = CommandCgroup::create(support, limits);
    let mut rlimits = Rlimits {
        file_bytes: Some(limits.max_file_bytes),
        no_core_dumps: true,
        ..Rlimits::default()
    };
    let mut names: Vec<String> = created.enforced.iter().map(|n| (*n).to_owned()).collect();
    if !created.memory {
        rlimits.address_space = Some(limits.memory_bytes);
        names.push(enforced::MEMORY_RLIMIT_AS.to_owned());
    }
    if !created.processes && !sys::is_root() {
        let count = limits
            .max_processes
            .saturating_add(crate::cgroup::LAUNCHER_PROCESSES);
        rlimits.processes = Some(libc::rlim_t::from(count));
        names.push(enforced::PROCESSES_RLIMIT_NPROC.to_owned());
    }
    let cgroup = (!created.join.is_empty()).then_some(created.cgroup);
    KernelLimits {
        child: ChildSetup {
            join_cgroups: created.join,
            keep_fds: Vec::new(),
            rlimits,
        },
        cgroup,
        enforced: names,
    }
}
