//! Running one prepared process under the shared limits; every backend ends here.
//!
//! Order of steps:
//! 1. Spawn with a cleared environment, stdin from /dev/null, both output streams piped, in a
//!    new process group (`process_group(0)`), set between fork and exec to die with plumb
//!    (`sys.rs`) and with its rlimits; then start its watch (`watch.rs`), which kills the
//!    group if plumb dies.
//! 2. Read stdout and stderr concurrently into tail-keeping capped buffers (reading them one
//!    after the other would deadlock once the other pipe fills).
//! 3. Wait for the first of: the cancel token, the process exiting, the wall-clock deadline.
//! 4. `SIGKILL` the whole process group — on timeout and cancel, and also after a normal exit,
//!    so nothing the command left running in the background outlives it (as a PID namespace
//!    would guarantee for the namespacing backends).
//! 5. Keep reading for at most [`GRACE_AFTER_KILL`]: a process that left the group (`setsid`)
//!    may still hold a pipe, and must not hang us. Stop the watch.
//!
//! If the future is dropped part-way, a guard kills the process group (and the watch).

use std::fs::File;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio::process::Command;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::capture::capture;
use crate::spec::{enforced, limit_hit};
use crate::sys::{self, ChildSetup};
use crate::watch::{Cleanup, Watch};
use crate::{CommandOutput, CommandSpec, Limits, SandboxError};

/// How long output is still read after the process group was killed.
pub const GRACE_AFTER_KILL: Duration = Duration::from_secs(1);

/// A process ready to spawn: what a backend makes of a [`CommandSpec`].
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    /// The program as the command named it, for error messages (a backend's launcher such
    /// as `bwrap` is not what the user asked to run).
    pub(crate) shown_program: String,
    pub(crate) program: String,
    pub(crate) args: Vec<String>,
    /// The complete environment; nothing is inherited.
    pub(crate) env: Vec<(String, String)>,
    pub(crate) cwd: PathBuf,
    /// Rlimits, cgroups to join and descriptors to keep, applied between fork and exec.
    pub(crate) child: ChildSetup,
    /// Files whose descriptors are in `child.keep_fds`; held open until the spawn is done.
    pub(crate) keep_open: Vec<Arc<File>>,
    /// Limits the backend itself enforces (beyond the timeout, output cap, file size and
    /// core-dump rlimits, which are reported here), by the names in [`enforced`].
    pub(crate) backend_enforced: Vec<String>,
    /// What the watch cleans up, besides the process group, if plumb dies.
    pub(crate) cleanup: Cleanup,
}

/// Checks what every backend needs of a spec: a program, and an absolute working directory
/// that exists. Returns the program.
pub(crate) async fn check_spec(spec: &CommandSpec) -> Result<&str, SandboxError> {
    let program = spec
        .argv
        .first()
        .filter(|p| !p.is_empty())
        .ok_or(SandboxError::EmptyCommand)?;
    let workdir_err = |reason: &str| SandboxError::Workdir {
        path: spec.workdir.clone(),
        reason: reason.to_owned(),
    };
    if !spec.workdir.is_absolute() {
        return Err(workdir_err("the path is not absolute"));
    }
    match tokio::fs::metadata(&spec.workdir).await {
        Ok(meta) if meta.is_dir() => Ok(program),
        Ok(_) => Err(workdir_err("it is not a directory")),
        Err(e) => Err(workdir_err(&e.to_string())),
    }
}

/// The output of a command that was never started because `cancel` had already fired.
pub(crate) fn cancelled_before_start() -> CommandOutput {
    CommandOutput {
        exit_code: None,
        signal: None,
        stdout: String::new(),
        stderr: String::new(),
        timed_out: false,
        cancelled: true,
        stdout_truncated_bytes: 0,
        stderr_truncated_bytes: 0,
        duration: Duration::ZERO,
        enforced: Vec::new(),
        limits_hit: Vec::new(),
    }
}

enum Ending {
    Exited(std::io::Result<ExitStatus>),
    TimedOut,
    Cancelled,
}

/// Kills the process group when dropped, unless it was already killed.
struct GroupGuard(Option<u32>);

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            // Nothing useful to do if this fails: the group is gone or not ours.
            let _ = sys::kill_process_group(pgid);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Spawns `launch` and supervises it to the end; see the module header for the steps.
pub(crate) async fn supervise(
    launch: Launch,
    limits: &Limits,
    cancel: &CancellationToken,
) -> Result<CommandOutput, SandboxError> {
    let mut cmd = Command::new(&launch.program);
    cmd.args(&launch.args)
        .env_clear()
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&launch.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    sys::prepare_child(&mut cmd, launch.child.clone());

    let start = Instant::now();
    let spawned = cmd.spawn();
    drop(launch.keep_open);
    let mut child = spawned.map_err(|source| SandboxError::Spawn {
        program: launch.shown_program.clone(),
        source,
    })?;
    // The child is its own group leader, so its pid is the group id.
    let mut group = GroupGuard(child.id());
    let watch = match child.id() {
        Some(pgid) => {
            Some(
                Watch::start(pgid, &launch.cleanup).map_err(|source| SandboxError::Io {
                    context: "starting the watch that ends the command if plumb dies failed",
                    source,
                })?,
            )
        }
        // Already reaped: there is nothing left to watch.
        None => None,
    };

    let stop_reading = CancellationToken::new();
    let readers_done = CancellationToken::new();
    let stdout = capture(
        child.stdout.take(),
        limits.output_bytes,
        stop_reading.clone(),
    );
    let stderr = capture(
        child.stderr.take(),
        limits.output_bytes,
        stop_reading.clone(),
    );
    let readers = async {
        let streams = tokio::join!(stdout, stderr);
        readers_done.cancel();
        streams
    };

    let waiter = async {
        let ending = tokio::select! {
            biased;
            () = cancel.cancelled() => Ending::Cancelled,
            status = child.wait() => Ending::Exited(status),
            // `sleep` saturates where `start + timeout` would overflow on a huge limit.
            () = tokio::time::sleep(limits.timeout) => Ending::TimedOut,
        };
        group.kill();
        let status = match ending {
            Ending::Exited(ref status) => status.as_ref().ok().copied(),
            Ending::TimedOut | Ending::Cancelled => {
                tokio::time::timeout(GRACE_AFTER_KILL, child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok)
            }
        };
        tokio::select! {
            () = readers_done.cancelled() => {}
            () = tokio::time::sleep(GRACE_AFTER_KILL) => stop_reading.cancel(),
        }
        if let Some(watch) = watch {
            watch.stop().await;
        }
        (ending, status)
    };

    let ((stdout, stderr), (ending, status)) = tokio::join!(readers, waiter);
    let duration = start.elapsed();

    let (timed_out, cancelled) = match ending {
        Ending::Exited(Err(source)) => {
            return Err(SandboxError::Io {
                context: "waiting for the command to finish failed",
                source,
            });
        }
        Ending::Exited(Ok(_)) => (false, false),
        Ending::TimedOut => (true, false),
        Ending::Cancelled => (false, true),
    };
    let (stdout, stdout_truncated_bytes) = stdout.finish();
    let (stderr, stderr_truncated_bytes) = stderr.finish();
    let signal = status.and_then(|s| s.signal());
    let mut limits_hit = Vec::new();
    if timed_out {
        limits_hit.push(limit_hit::TIMEOUT.to_owned());
    }
    if stdout_truncated_bytes > 0 || stderr_truncated_bytes > 0 {
        limits_hit.push(limit_hit::OUTPUT_CAP.to_owned());
    }
    if signal == Some(libc::SIGXFSZ) {
        limits_hit.push(limit_hit::FILE_SIZE.to_owned());
    }
    Ok(CommandOutput {
        exit_code: status.and_then(|s| s.code()),
        signal,
        stdout,
        stderr,
        timed_out,
        cancelled,
        stdout_truncated_bytes,
        stderr_truncated_bytes,
        duration,
        enforced: enforced_list(&launch.child, launch.backend_enforced),
        limits_hit,
    })
}

fn enforced_list(child: &ChildSetup, backend_enforced: Vec<String>) -> Vec<String> {
    let mut list = vec![
        enforced::TIMEOUT.to_owned(),
        enforced::OUTPUT_CAP.to_owned(),
    ];
    if child.rlimits.file_bytes.is_some() {
        list.push(enforced::FILE_SIZE.to_owned());
    }
    if child.rlimits.no_core_dumps {
        list.push(enforced::NO_CORE_DUMPS.to_owned());
    }
    list.extend(backend_enforced);
    list
}
