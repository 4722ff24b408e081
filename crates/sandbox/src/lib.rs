//! plumb-sandbox: where every command the agent causes runs (DESIGN.md §5b).
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
//!
//! Backends: [`NoSandbox`] (`--sandbox none`, explicit and loud). `bwrap` and `gvisor` slot in
//! beside it as further [`Sandbox`] implementations that wrap the argv in their launcher.

mod capture;
mod env;
mod error;
mod none;
mod scratch;
mod spec;
mod supervise;
mod sys;

pub use env::EnvPolicy;
pub use error::SandboxError;
pub use none::NoSandbox;
pub use plumb_protocol::SandboxKind;
pub use spec::{CommandOutput, CommandSpec, Limits, enforced};
pub use supervise::GRACE_AFTER_KILL;

use tokio_util::sync::CancellationToken;

/// Runs one command under a backend's isolation and the shared limits.
#[async_trait::async_trait]
pub trait Sandbox: Send + Sync {
    /// Which backend this is, for journals and reports.
    fn kind(&self) -> SandboxKind;

    /// A sentence for progress displays and reports, e.g.
    /// "no sandbox: commands run directly on this machine (--sandbox none)".
    fn describe(&self) -> String;

    /// Runs `cmd` to completion, timeout or cancellation. A command that runs and fails is an
    /// `Ok` with its exit code; `Err` means it could not be run at all.
    async fn run(
        &self,
        cmd: &CommandSpec,
        cancel: &CancellationToken,
    ) -> Result<CommandOutput, SandboxError>;
}
