//! `--sandbox bwrap`: each command runs under bubblewrap in namespaces of its own, seeing
//! the host as `host_view.rs` says through the mounts of `layout.rs`, with kernel limits from
//! `limits.rs`, and optionally the strict mode's seccomp filter (`seccomp.rs`).
//!
//! Order of one run:
//! 1. Check the spec; build the command's environment (allowlist, `HOME=/home/sandbox`,
//!    `TMPDIR=/tmp`); look at the host for the layout.
//! 2. Make the command's cgroup and write its limits (or choose rlimit fallbacks).
//! 3. Spawn `bwrap` through the shared `supervise` with an *empty* environment of its own
//!    (bwrap stays as pid 1 inside, and its `/proc/1/environ` must hold nothing), joining the
//!    cgroup between fork and exec. Killing bwrap's process group kills bwrap outside and
//!    bwrap as pid 1 inside; the kernel then kills everything else in the pid namespace,
//!    including processes that left the session or double-forked. If plumb dies (a `SIGKILL`
//!    included), bwrap dies with it (`PR_SET_PDEATHSIG`, and its own `--die-with-parent`),
//!    with the same effect, and the command's watch (`watch.rs`) removes the cgroup.
//! 4. Read which cgroup limits were hit; kill leftovers; remove the cgroup.
//! 5. Tell a failure of bwrap itself (exit 1 with one `bwrap: ...` line on stderr and no
//!    stdout) from a failure of the command: a program that cannot be executed is a
//!    [`SandboxError::Spawn`], any other setup failure a [`SandboxError::Backend`].

mod layout;
mod seccomp;

use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::cgroup::{CommandCgroup, Support};
use crate::host_view::{self, HOME_INSIDE, TMP_INSIDE};
use crate::launcher::{self, Launcher, LauncherKind};
use crate::spec::enforced;
use crate::supervise::{Launch, cancelled_before_start, check_spec, supervise};
use crate::toolchains::Toolchains;
use crate::watch::Cleanup;
use crate::{
    CommandOutput, CommandSpec, EnvPolicy, Network, Sandbox, SandboxError, SandboxKind, limits,
};

/// What is said when bwrap is missing.
pub const BWRAP_MISSING: &str = "bubblewrap (bwrap) is not installed; install it with `apt-get install bubblewrap` or pass --sandbox none";

/// Where bwrap is looked for, and what is said when it is not there.
static BWRAP: LauncherKind = LauncherKind {
    backend: "bwrap",
    file_name: "bwrap",
    fallback_dirs: &["/usr/bin"],
    missing: BWRAP_MISSING,
};

/// Options of the bwrap backend.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BwrapSettings {
    /// Strict mode: a seccomp filter that refuses `ptrace`, `io_uring`, sockets other than
    /// unix sockets (loopback TCP included) and the kernel keyrings.
    pub seccomp: bool,
    /// More host directories shown read-only at their own path, e.g. `~/.rustup` for a
    /// `cargo` on `PATH`.
    pub extra_read_only: Vec<PathBuf>,
}

/// The `bwrap` backend.
#[derive(Debug, Clone)]
pub struct BwrapSandbox {
    launcher: Launcher,
    env: EnvPolicy,
    settings: BwrapSettings,
    toolchains: Toolchains,
    host_home: Option<PathBuf>,
}

impl BwrapSandbox {
    /// The backend with the `bwrap` found on this process's `PATH` (or `/usr/bin/bwrap`),
    /// the allowlisted variables of this process's environment and default settings.
    /// Fails with [`BWRAP_MISSING`] when there is no bwrap.
    pub fn new() -> Result<Self, SandboxError> {
        Launcher::from_process_path(&BWRAP).map(Self::with_launcher)
    }

    /// The backend with an explicit `bwrap` executable; it is checked when a command runs.
    pub fn with_program(program: PathBuf) -> Self {
        Self::with_launcher(Launcher::at(&BWRAP, program))
    }

    fn with_launcher(launcher: Launcher) -> Self {
        Self {
            launcher,
            env: EnvPolicy::from_process(),
            settings: BwrapSettings::default(),
            toolchains: Toolchains::none(),
            host_home: std::env::var_os("HOME").map(PathBuf::from),
        }
    }

    /// Replaces the environment policy, e.g. with one built from a given parent environment.
    pub fn with_env_policy(mut self, env: EnvPolicy) -> Self {
        self.env = env;
        self
    }

    /// Replaces the settings.
    pub fn with_settings(mut self, settings: BwrapSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Gives commands these toolchains and their cache folder (none by default).
    pub fn with_toolchains(mut self, toolchains: Toolchains) -> Self {
        self.toolchains = toolchains;
        self
    }

    /// Runs `true` in a throwaway workspace under this backend: `Ok` when bwrap works here
    /// with this layout, otherwise the error a real command would get.
    pub async fn probe(&self) -> Result<(), SandboxError> {
        let workdir = tempfile::tempdir().map_err(|source| SandboxError::Io {
            context: "making a workspace for the bwrap check failed",
            source,
        })?;
        let mut spec = CommandSpec::new(vec!["true".to_owned()], workdir.path().to_path_buf());
        spec.limits.timeout = Duration::from_secs(10);
        let out = self.run(&spec, &CancellationToken::new()).await?;
        if out.success() {
            return Ok(());
        }
        Err(SandboxError::Backend {
            backend: "bwrap",
            detail: format!(
                "`true` did not succeed inside (exit {:?}, signal {:?}, stderr {:?})",
                out.exit_code,
                out.signal,
                out.stderr.trim()
            ),
        })
    }
}

/// Whether `out` is bwrap failing before the command ran, and what that means.
fn launcher_failure(out: &CommandOutput, program: &str) -> Option<SandboxError> {
    let message = launcher::own_failure(out, 1, "bwrap: ")?;
    if let Some(rest) = message.strip_prefix("execvp ") {
        let reason = rest.rsplit(": ").next().unwrap_or(rest);
        let source = match reason {
            "No such file or directory" => io::Error::from(io::ErrorKind::NotFound),
            "Permission denied" => io::Error::from(io::ErrorKind::PermissionDenied),
            other => io::Error::other(other.to_owned()),
        };
        return Some(SandboxError::Spawn {
            program: program.to_owned(),
            source,
        });
    }
    Some(SandboxError::Backend {
        backend: "bwrap",
        detail: message.to_owned(),
    })
}

#[async_trait::async_trait]
impl Sandbox for BwrapSandbox {
    fn kind(&self) -> SandboxKind {
        SandboxKind::Bwrap
    }

    fn describe(&self) -> String {
        let strict = if self.settings.seccomp {
            "; strict mode: no ptrace, io_uring, keyrings or non-unix sockets"
        } else {
            ""
        };
        format!(
            "bwrap sandbox: the system read-only, only the workspace writable (plus a private \
             /tmp and HOME), no network, its own pid namespace; memory, CPU and process limits \
             through cgroups where this machine allows (each command reports what was \
             enforced){strict}"
        )
    }

    async fn run(
        &self,
        cmd: &CommandSpec,
        cancel: &CancellationToken,
    ) -> Result<CommandOutput, SandboxError> {
        if cancel.is_cancelled() {
            return Ok(cancelled_before_start());
        }
        let program = check_spec(cmd).await?.to_owned();
        self.launcher.check()?;
        // Held to the end of `run`, after the command: it owns the command's copy of Go's
        // build cache.
        let tools =
            self.toolchains
                .for_command(cmd.network, &cmd.workdir, Path::new(HOME_INSIDE))?;
        let extra_env: Vec<(String, String)> = tools.env.iter().chain(&cmd.env).cloned().collect();
        let env =
            self.env
                .environment(Path::new(HOME_INSIDE), Path::new(TMP_INSIDE), &extra_env)?;
        let read_only: Vec<PathBuf> = self
            .settings
            .extra_read_only
            .iter()
            .chain(&tools.read_only)
            .cloned()
            .collect();
        let view = host_view::inspect_host(
            &env,
            &cmd.workdir,
            self.host_home.as_deref(),
            &read_only,
            &tools.writable,
        );
        let filter = if self.settings.seccomp {
            let file = seccomp::program_file().map_err(|e| SandboxError::Backend {
                backend: "bwrap",
                detail: format!("could not prepare the seccomp filter: {e}"),
            })?;
            Some(Arc::new(file))
        } else {
            None
        };
        let seccomp_fd = filter.as_ref().map(|f| f.as_raw_fd());

        let mut kernel = limits::apply(&cmd.limits, Support::get());
        let args = layout::bwrap_args(
            &view,
            &layout::Invocation {
                workdir: &cmd.workdir,
                env: &env,
                tmpfs_bytes: cmd.limits.memory_bytes,
                seccomp_fd,
                argv: &cmd.argv,
                network: cmd.network,
            },
        );
        let network_off = (cmd.network == Network::Off).then_some(enforced::NETWORK_OFF);
        let mut backend_enforced: Vec<String> = [Some(enforced::READ_ONLY_SYSTEM), network_off]
            .into_iter()
            .flatten()
            .chain([enforced::PID_NAMESPACE])
            .map(str::to_owned)
            .collect();
        backend_enforced.append(&mut kernel.enforced);
        if filter.is_some() {
            backend_enforced.push(enforced::SECCOMP.to_owned());
        }
        kernel.child.keep_fds.extend(seccomp_fd);
        let cleanup = Cleanup {
            remove_dirs: kernel
                .cgroup
                .as_ref()
                .map(CommandCgroup::paths)
                .unwrap_or_default(),
            then: Vec::new(),
        };
        let launch = Launch {
            shown_program: program.clone(),
            program: self.launcher.path().to_string_lossy().into_owned(),
            args,
            env: Vec::new(),
            cwd: cmd.workdir.clone(),
            child: kernel.child,
            keep_open: filter.into_iter().collect(),
            backend_enforced,
            cleanup,
        };

        let result = supervise(launch, &cmd.limits, cancel).await;
        let hits = match kernel.cgroup {
            Some(cgroup) => cgroup.finish().await,
            None => Vec::new(),
        };
        let mut out = result.map_err(|e| self.launcher.spawn_failure(e))?;
        if let Some(err) = launcher_failure(&out, &program) {
            return Err(err);
        }
        out.limits_hit.extend(hits);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launcher::output;
    use pretty_assertions::assert_eq;

    #[test]
    fn bwrap_failures_say_what_failed() {
        let cases = [
            output(1, "", "bwrap: execvp pytest: No such file or directory\n"),
            output(1, "", "bwrap: execvp ./run.sh: Permission denied\n"),
            output(
                1,
                "",
                "bwrap: Can't mount tmpfs on /newroot/tmp: Operation not permitted\n",
            ),
        ];

        let actual: Vec<Option<(String, bool)>> = cases
            .iter()
            .map(|out| launcher_failure(out, "prog").map(|e| (e.to_string(), e.is_infra())))
            .collect();

        let expected = vec![
            Some((
                "could not start `prog`: not found; install it or change the command".to_owned(),
                false,
            )),
            Some((
                "could not start `prog`: permission denied; make it executable or change the command"
                    .to_owned(),
                false,
            )),
            Some((
                "the bwrap sandbox could not be set up: Can't mount tmpfs on /newroot/tmp: \
                 Operation not permitted; run `plumb doctor` to see which sandboxes work on \
                 this machine"
                    .to_owned(),
                true,
            )),
        ];
        assert_eq!(actual, expected);
    }

    #[tokio::test]
    async fn a_missing_bwrap_says_how_to_install_it() {
        let empty = tempfile::tempdir().unwrap();
        let sandbox = BwrapSandbox::with_program(empty.path().join("bwrap"));
        let spec = CommandSpec::new(vec!["true".to_owned()], empty.path().to_path_buf());

        let err = sandbox
            .run(&spec, &CancellationToken::new())
            .await
            .unwrap_err();
        // The search falls back to /usr/bin, so it may find an installed bwrap there.
        let found = BWRAP.find(Some(empty.path().as_os_str()));

        assert!(found.is_none_or(|p| p == Path::new("/usr/bin/bwrap")));
        assert_eq!(
            (err.to_string(), err.is_infra()),
            (BWRAP_MISSING.to_owned(), true)
        );
    }
}
