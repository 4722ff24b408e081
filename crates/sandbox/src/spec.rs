//! What to run ([`CommandSpec`], [`Limits`]) and what came back ([`CommandOutput`]).

use std::path::PathBuf;
use std::time::Duration;

/// One command to run: no shell, the argv is passed as is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    /// Program and arguments; the program is looked up on the sandbox's `PATH`.
    pub argv: Vec<String>,
    /// The workspace root, absolute; the command starts here.
    pub workdir: PathBuf,
    /// Extra variables on top of the [`crate::EnvPolicy`] allowlist; they win over it.
    pub env: Vec<(String, String)>,
    pub limits: Limits,
    /// Off for every command the agent causes; only a setup phase the user asked for turns it on.
    pub network: Network,
}

/// Whether a command may use the network.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Network {
    /// Loopback inside its own namespace only: nothing of the host or beyond is reachable.
    #[default]
    Off,
    /// The host's network, for a setup phase the user allowed (e.g. installing dependencies).
    Host,
}

impl CommandSpec {
    /// A command with no extra environment and the default limits.
    pub fn new(argv: Vec<String>, workdir: PathBuf) -> Self {
        Self {
            argv,
            workdir,
            env: Vec::new(),
            limits: Limits::default(),
            network: Network::Off,
        }
    }
}

/// Resource limits for one command. Which of them a backend really enforced is reported in
/// [`CommandOutput::enforced`]; `none` enforces only the time, output and file-size limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock limit; when it passes the whole process tree is killed.
    pub timeout: Duration,
    pub memory_bytes: u64,
    pub cpus: u32,
    /// Processes and threads the command may have at once.
    pub max_processes: u32,
    /// The largest file the command may write (`RLIMIT_FSIZE`).
    pub max_file_bytes: u64,
    /// Bytes kept per stream; past this the *tail* is kept and the rest counted as dropped.
    pub output_bytes: usize,
}

impl Default for Limits {
    /// docs/contracts.md §8: 300 s, 4 GiB, 2 CPUs; the rest are ours.
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(300),
            memory_bytes: 4 << 30,
            cpus: 2,
            max_processes: 1024,
            max_file_bytes: 1 << 30,
            output_bytes: 1 << 20,
        }
    }
}

/// The names used in [`CommandOutput::enforced`].
pub mod enforced {
    /// The wall-clock limit, with the whole process group killed.
    pub const TIMEOUT: &str = "timeout";
    /// Output kept per stream is capped at `Limits::output_bytes`.
    pub const OUTPUT_CAP: &str = "output cap";
    /// `RLIMIT_FSIZE` set to `Limits::max_file_bytes`.
    pub const FILE_SIZE: &str = "file size";
    /// `RLIMIT_CORE` set to 0, so a crash cannot fill the disk with a core file.
    pub const NO_CORE_DUMPS: &str = "no core dumps";
    /// The system is mounted read-only; only the workspace, `/tmp` and `HOME` are writable.
    pub const READ_ONLY_SYSTEM: &str = "read-only system";
    /// A network namespace of its own with only loopback.
    pub const NETWORK_OFF: &str = "network off";
    /// A pid namespace of its own: the whole tree dies with the command.
    pub const PID_NAMESPACE: &str = "pid namespace";
    /// The strict mode's seccomp filter (ptrace, io_uring, non-unix sockets, keyrings).
    pub const SECCOMP: &str = "seccomp";
    pub const MEMORY_CGROUP_V1: &str = "memory (cgroup v1)";
    pub const MEMORY_CGROUP_V2: &str = "memory (cgroup v2)";
    /// `RLIMIT_AS`, the fallback without a memory cgroup: per process and virtual, see
    /// `limits.rs`.
    pub const MEMORY_RLIMIT_AS: &str = "memory (RLIMIT_AS)";
    pub const PROCESSES_CGROUP_V1: &str = "processes (cgroup v1)";
    pub const PROCESSES_CGROUP_V2: &str = "processes (cgroup v2)";
    /// `RLIMIT_NPROC`, the fallback without a pids cgroup; it counts every process of the
    /// user and the kernel ignores it for root.
    pub const PROCESSES_RLIMIT_NPROC: &str = "processes (RLIMIT_NPROC)";
    pub const CPUS_CGROUP_V1: &str = "cpus (cgroup v1 quota)";
    pub const CPUS_CGROUP_V2: &str = "cpus (cgroup v2 cpu.max)";
}

/// The names used in [`CommandOutput::limits_hit`].
pub mod limit_hit {
    /// The wall-clock limit passed and the tree was killed.
    pub const TIMEOUT: &str = "timeout";
    /// More output came than `Limits::output_bytes`; the head was dropped.
    pub const OUTPUT_CAP: &str = "output cap";
    /// The command itself was stopped by `SIGXFSZ` (a descendant hitting the limit is not
    /// visible from outside).
    pub const FILE_SIZE: &str = "file size";
    /// The kernel's OOM killer killed a process of the command's cgroup.
    pub const MEMORY: &str = "memory";
    /// A `fork` failed because the command's pids cgroup was full.
    pub const PROCESSES: &str = "processes";
}

/// What a command did. A command that failed is still an output; only a command that could
/// not be run is a [`crate::SandboxError`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutput {
    /// The exit code, when the process exited on its own.
    pub exit_code: Option<i32>,
    /// The signal that ended the process (`SIGKILL` after a timeout or cancel).
    pub signal: Option<i32>,
    /// The tail of standard output, lossy UTF-8.
    pub stdout: String,
    /// The tail of standard error, lossy UTF-8.
    pub stderr: String,
    pub timed_out: bool,
    pub cancelled: bool,
    /// Bytes of standard output dropped from the front to keep the tail.
    pub stdout_truncated_bytes: u64,
    /// Bytes of standard error dropped from the front to keep the tail.
    pub stderr_truncated_bytes: u64,
    /// Wall-clock time from spawn until the output was collected.
    pub duration: Duration,
    /// Which limits were actually enforced, by the names in [`enforced`].
    pub enforced: Vec<String>,
    /// Which limits the command ran into, where that is detectable, by the names in
    /// [`limit_hit`]; empty when none was.
    pub limits_hit: Vec<String>,
}

impl CommandOutput {
    /// True when the command ran to the end and exited with code 0.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out && !self.cancelled
    }
}
