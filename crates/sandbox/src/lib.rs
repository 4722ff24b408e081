//! plumb-sandbox: where every command the agent causes runs (docs/contracts.md §5b).
//!
//! A backend only decides *how to spawn*: it turns a [`CommandSpec`] into a `Launch`
//! (program, arguments, environment, working directory, rlimits). Everything else is shared
//! by all backends and lives here:
//!
//! - [`EnvPolicy`]: the environment allowlist plus fixed values (private `HOME`/`TMPDIR`).
//! - `scratch`: a fresh private `HOME` and `TMPDIR` per command, removed afterwards.
//! - `supervise`: spawn in a new process group, capture both streams concurrently into
//!   tail-keeping capped buffers, enforce the wall-clock timeout and the cancel token by
//!   killing the whole process group, and stop reading shortly after the kill.
//! - `sys` and `watch`: no command outlives plumb, however plumb ends — the spawned process
//!   dies with it (`PR_SET_PDEATHSIG`, also offered as [`die_with_parent`] for plumb's other
//!   children), and a watch kills the rest of its process group.
//!
//! - `cgroup` and `limits`: the kernel side of a command's limits — a per-command cgroup
//!   (v1 or v2) for memory, processes and CPUs where the machine allows, rlimits where not.
//! - `toolchains`: rust (rustup), go, node/npm and java/maven found on the host, shown
//!   read-only with the variables they need, their package caches in one folder that only a
//!   command with the network may write.
//! - `host_view` and `launcher`, for the namespacing backends: what of the host a command may
//!   see, and the launcher program (`bwrap`, `runsc`) that is spawned in its place.
//!
//! Backends: [`NoSandbox`] (`--sandbox none`, explicit and loud), [`BwrapSandbox`]
//! (bubblewrap, the default on Linux) and [`GvisorSandbox`] (gVisor's `runsc`).
//! [`check_backends`] is what `plumb doctor` reports.

mod bwrap;
mod capture;
mod cgroup;
mod doctor;
mod env;
mod error;
mod gvisor;
mod host_view;
mod launcher;
mod limits;
mod none;
mod scratch;
mod spec;
mod supervise;
mod sys;
mod toolchains;
mod watch;

pub use bwrap::{BWRAP_MISSING, BwrapSandbox, BwrapSettings};
pub use doctor::{BackendStatus, CheckKind, ToolchainStatus, check_backends, check_toolchains};
pub use env::EnvPolicy;
pub use error::SandboxError;
pub use gvisor::GvisorSandbox;
pub use host_view::HOME_INSIDE;
pub use none::NoSandbox;
pub use plumb_protocol::SandboxKind;
pub use spec::{CommandOutput, CommandSpec, Limits, Network, enforced, limit_hit};
pub use supervise::GRACE_AFTER_KILL;
pub use sys::die_with_parent;
pub use toolchains::{Toolchain, ToolchainKind, Toolchains};

use tokio_util::sync::CancellationToken;

/// Runs one command under a backend's isolation and the shared limits.
#[async_trait::async_trait]
pub trait Sandbox: Send + Sync {
    /// Which backend this is, for journals and reports.
    fn kind(&self) -> SandboxKind;

    /// A sentence for progress displays and reports, e.g.
    /// "no sandbox: commands run directly on this machine" (the run says who chose it).
    fn describe(&self) -> String;

    /// Runs `cmd` to completion, timeout or cancellation. A command that runs and fails is an
    /// `Ok` with its exit code; `Err` means it could not be run at all.
    async fn run(
        &self,
        cmd: &CommandSpec,
        cancel: &CancellationToken,
    ) -> Result<CommandOutput, SandboxError>;
}
