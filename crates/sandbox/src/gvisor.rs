//! `--sandbox gvisor`: each command runs in its own gVisor sandbox (`runsc run` on an OCI
//! bundle), behind gVisor's user-space kernel, seeing the host as `host_view.rs` says, as
//! under bwrap: the system read-only, only the workspace writable besides a private `/tmp`
//! and `HOME`, the host's `HOME`, secrets and the shadow git directory invisible, no
//! network, and the limits.
//!
//! Order of one run:
//! 1. Check the spec; refuse early when runsc is missing or we are not root (runsc needs
//!    root for `run`; see [`GvisorSandbox::probe`]).
//! 2. Build the environment (allowlist, `HOME=/home/sandbox`, `TMPDIR=/tmp`), look at the
//!    host, and write the bundle (`bundle.rs`) into a fresh directory under the scratch dir.
//! 3. Spawn `runsc --root <scratch>/runsc-state --network=none run --bundle <dir> <id>`
//!    through the shared `supervise`, with an empty environment of its own and a container
//!    id unique to this process and run. runsc and its gofer share runsc's process group; the
//!    sandbox process makes its own session but is started `--attached` (it gets `SIGKILL`
//!    when runsc dies), and every process of the command lives inside it (with the ptrace
//!    platform, as stub processes under it). So the group kill on timeout or cancel takes the
//!    whole sandbox down, including processes that double-forked inside.
//!    If plumb dies (a `SIGKILL` included), runsc dies with it (`PR_SET_PDEATHSIG`), which
//!    takes the attached sandbox and the gofer along, and the command's watch (`watch.rs`)
//!    runs `runsc delete --force` for the state and cgroups left behind.
//! 4. Cleanup (`runsc.rs`): `runsc delete --force` when runsc still has state for the
//!    container, which also removes its cgroups; then the bundle.
//! 5. Tell a failure of runsc itself (exit 128, one `running container: ...` line) from the
//!    command's.
//!
//! Why an OCI bundle and not `runsc do`, measured on the machine this was written on
//! (Debian 12, runsc 0.0~20221219, root, cgroup v1, a Firecracker VM, two CPUs; medians of
//! 20 runs of `true`, over several rounds): the host takes 1–3 ms; `runsc --network=none do
//! true` 131–154 ms; `runsc run` of a bundle 138–142 ms, or 109–120 ms with
//! `--ignore-cgroups`. `do` cannot express the policy: it shows the whole host root (host
//! `HOME` included) read-only under a throwaway overlay, so writes to the workspace would not
//! reach the host either. A bundle costs about the same and gives exact mounts. Through this
//! backend (bundle written, `runsc run`, cleanup) `true` takes a median of 150 ms (148–155).
//! Python through the pyenv shim (a bash script) starts in about 1.2 s inside, against
//! 0.4 s for the interpreter named directly.
//!
//! Platform: runsc's default, ptrace on that version. `--platform=kvm` hangs there (nested
//! virtualization); `runsc run --rootless` as another user fails to start the sandbox, so
//! only root is supported.
//!
//! Limits: the timeout and output cap as everywhere; `RLIMIT_FSIZE`, `RLIMIT_CORE` and
//! `RLIMIT_NPROC` inside gVisor (its kernel enforces them for the sandbox's processes, uid 0
//! included); memory and CPUs through the cgroups runsc makes, where this process may make
//! cgroups (`cgroup` detects that), else `--ignore-cgroups` and neither is reported. No
//! pids limit on the host cgroup: the host counts gVisor's own threads and stub processes,
//! and the sandbox panics when a fork of the platform fails. Which limit was hit is not
//! detected beyond the timeout and the output cap (runsc removes its cgroup, and its
//! counters, before it exits).
//!
//! Known gap of runsc 20221219: `statx` with `AT_NO_AUTOMOUNT` fails with `EINVAL`, so
//! coreutils 9 `ls` and `stat` fail inside; Python, pytest, git and shells do not use it.

mod bundle;
mod runsc;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::cgroup::{Support, Version};
use crate::host_view::{self, HOME_INSIDE, TMP_INSIDE};
use crate::launcher::Launcher;
use crate::spec::enforced;
use crate::supervise::{Launch, cancelled_before_start, check_spec, supervise};
use crate::sys::{self, ChildSetup, Rlimits};
use crate::toolchains::Toolchains;
use crate::watch::Cleanup;
use crate::{CommandOutput, CommandSpec, EnvPolicy, Network, Sandbox, SandboxError, SandboxKind};

/// How long [`GvisorSandbox::probe`] lets `true` take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Numbers container ids within this process.
static NEXT_CONTAINER: AtomicU64 = AtomicU64::new(1);

/// The `gvisor` backend.
#[derive(Debug, Clone)]
pub struct GvisorSandbox {
    launcher: Launcher,
    scratch_dir: PathBuf,
    env: EnvPolicy,
    toolchains: Toolchains,
    host_home: Option<PathBuf>,
}

impl GvisorSandbox {
    /// What is said when runsc is missing.
    pub const MISSING: &str = "gVisor's runsc is not installed; install it with `apt-get install runsc` (Debian 12 and later) or pass --sandbox bwrap";

    /// The process limit as reported in [`CommandOutput::enforced`]: `RLIMIT_NPROC` enforced
    /// by gVisor's kernel, which counts only the sandbox's processes and applies to uid 0 too.
    pub const PROCESSES_ENFORCED: &str = "processes (RLIMIT_NPROC in gVisor)";

    /// The backend with the `runsc` found on this process's `PATH` (or in `/usr/bin`,
    /// `/usr/local/bin`), keeping bundles and runsc's state under `scratch_dir`, with the
    /// allowlisted variables of this process's environment. Fails with [`GvisorSandbox::MISSING`].
    pub fn new(scratch_dir: PathBuf) -> Result<Self, SandboxError> {
        let launcher = Launcher::from_process_path(&runsc::RUNSC)?;
        Ok(Self::with_launcher(launcher, scratch_dir))
    }

    /// The backend with an explicit `runsc` executable; it is checked when a command runs.
    pub fn with_program(runsc: PathBuf, scratch_dir: PathBuf) -> Self {
        Self::with_launcher(Launcher::at(&runsc::RUNSC, runsc), scratch_dir)
    }

    fn with_launcher(launcher: Launcher, scratch_dir: PathBuf) -> Self {
        Self {
            launcher,
            scratch_dir,
            env: EnvPolicy::from_process(),
            toolchains: Toolchains::none(),
            host_home: std::env::var_os("HOME").map(PathBuf::from),
        }
    }

    /// Replaces the environment policy, e.g. with one built from a given parent environment.
    pub fn with_env_policy(mut self, env: EnvPolicy) -> Self {
        self.env = env;
        self
    }

    /// Gives commands these toolchains and their cache folder (none by default).
    pub fn with_toolchains(mut self, toolchains: Toolchains) -> Self {
        self.toolchains = toolchains;
        self
    }

    /// Whether gVisor works on this machine: runs `true` with plumb's bundle in a throwaway
    /// workspace. `Err` is one sentence saying why not and what to do.
    pub async fn probe() -> Result<(), String> {
        let launcher = Launcher::from_process_path(&runsc::RUNSC).map_err(|e| e.to_string())?;
        if !sys::is_root() {
            return Err(not_root());
        }
        let dirs = (tempfile::tempdir(), tempfile::tempdir());
        let (Ok(workdir), Ok(scratch)) = dirs else {
            return Err(
                "could not make a temporary directory to try gVisor in; check that TMPDIR is \
                 writable"
                    .to_owned(),
            );
        };
        let sandbox = Self::with_launcher(launcher, scratch.path().to_path_buf());
        let mut spec = CommandSpec::new(vec!["true".to_owned()], workdir.path().to_path_buf());
        spec.limits.timeout = PROBE_TIMEOUT;
        let out = sandbox
            .run(&spec, &CancellationToken::new())
            .await
            .map_err(|e| format!("gVisor cannot run a command here: {e}"))?;
        if out.success() {
            return Ok(());
        }
        if out.timed_out {
            return Err(format!(
                "runsc did not finish `true` within {} seconds; see whether `runsc \
                 --network=none do true` hangs too (the kvm platform does in nested VMs)",
                PROBE_TIMEOUT.as_secs()
            ));
        }
        Err(format!(
            "runsc could not run `true` (exit {:?}, signal {:?}: {}); try `runsc \
             --network=none do true` for gVisor's own message — it needs root and ptrace \
             (in Docker: --cap-add SYS_PTRACE --security-opt seccomp=unconfined)",
            out.exit_code,
            out.signal,
            out.stderr.trim()
        ))
    }

    fn scratch_err(&self, source: std::io::Error) -> SandboxError {
        SandboxError::Scratch {
            path: self.scratch_dir.clone(),
            source,
        }
    }
}

fn not_root() -> String {
    "gVisor's runsc runs sandboxes only as root on this setup (plumb is not running as root); \
     run plumb as root or pass --sandbox bwrap"
        .to_owned()
}

/// Which cgroup-backed limits runsc can put in force here, by the names in [`enforced`].
fn cgroup_limits(support: &Support) -> Option<Vec<String>> {
    let memory = support.memory.as_ref()?;
    let mut names = vec![match memory.version {
        Version::V1 => enforced::MEMORY_CGROUP_V1.to_owned(),
        Version::V2 => enforced::MEMORY_CGROUP_V2.to_owned(),
    }];
    if let Some(cpu) = &support.cpu {
        names.push(match cpu.version {
            Version::V1 => enforced::CPUS_CGROUP_V1.to_owned(),
            Version::V2 => enforced::CPUS_CGROUP_V2.to_owned(),
        });
    }
    Some(names)
}

/// A container id unique among this machine's runs: our pid and a per-process counter. It
/// also names the cgroup runsc makes, beside the bwrap backend's `plumb-<pid>-<n>` ones.
fn container_id() -> String {
    let n = NEXT_CONTAINER.fetch_add(1, Ordering::Relaxed);
    format!("plumb-gvisor-{}-{n}", std::process::id())
}

#[async_trait::async_trait]
impl Sandbox for GvisorSandbox {
    fn kind(&self) -> SandboxKind {
        SandboxKind::Gvisor
    }

    fn describe(&self) -> String {
        "gvisor sandbox: every command behind gVisor's user-space kernel (runsc), the system \
         read-only, only the workspace writable (plus a private /tmp and HOME), no network; \
         memory and CPU limits through cgroups where this machine allows, processes and file \
         size limited inside gVisor (each command reports what was enforced)"
            .to_owned()
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
        let workdir = cmd.workdir.to_str().ok_or_else(|| SandboxError::Workdir {
            path: cmd.workdir.clone(),
            reason: "the path is not UTF-8, so a gVisor bundle cannot name it".to_owned(),
        })?;
        self.launcher.check()?;
        if !sys::is_root() {
            return Err(SandboxError::Unavailable { reason: not_root() });
        }
        // Held to the end of `run`, after the command: it owns the command's copy of Go's
        // build cache.
        let tools =
            self.toolchains
                .for_command(cmd.network, &cmd.workdir, Path::new(HOME_INSIDE))?;
        let extra_env: Vec<(String, String)> = tools.env.iter().chain(&cmd.env).cloned().collect();
        let env =
            self.env
                .environment(Path::new(HOME_INSIDE), Path::new(TMP_INSIDE), &extra_env)?;
        // The toolchains' folders; `BwrapSettings::extra_read_only` has no gVisor counterpart
        // yet.
        let view = host_view::inspect_host(
            &env,
            &cmd.workdir,
            self.host_home.as_deref(),
            &tools.read_only,
            &tools.writable,
        );
        let cgroup_names = cgroup_limits(Support::get());
        let id = container_id();

        let state_root = self.scratch_dir.join("runsc-state");
        std::fs::create_dir_all(&state_root).map_err(|e| self.scratch_err(e))?;
        let bundle_dir = tempfile::Builder::new()
            .prefix("gvisor-")
            .tempdir_in(&self.scratch_dir)
            .map_err(|e| self.scratch_err(e))?;
        let config = bundle::config(
            &view,
            &bundle::Invocation {
                bundle: bundle_dir.path(),
                workdir,
                env: &env,
                argv: &cmd.argv,
                limits: &cmd.limits,
                cgroups_path: cgroup_names.as_ref().map(|_| id.as_str()),
                network: cmd.network,
            },
        );
        bundle::write_rootfs(bundle_dir.path(), &view)
            .and_then(|()| {
                std::fs::write(bundle_dir.path().join("config.json"), config.to_string())
            })
            .map_err(|e| self.scratch_err(e))?;

        let network_off = (cmd.network == Network::Off).then_some(enforced::NETWORK_OFF);
        let mut backend_enforced: Vec<String> = [
            Some(enforced::FILE_SIZE),
            Some(enforced::READ_ONLY_SYSTEM),
            network_off,
        ]
        .into_iter()
        .flatten()
        .chain([enforced::PID_NAMESPACE, Self::PROCESSES_ENFORCED])
        .map(str::to_owned)
        .collect();
        backend_enforced.extend(cgroup_names.iter().flatten().cloned());
        let launch = Launch {
            shown_program: program.clone(),
            program: self.launcher.path().to_string_lossy().into_owned(),
            args: runsc::run_args(
                &state_root,
                bundle_dir.path(),
                &id,
                cgroup_names.is_some(),
                cmd.network,
            ),
            env: Vec::new(),
            cwd: cmd.workdir.clone(),
            child: ChildSetup {
                rlimits: Rlimits {
                    no_core_dumps: true,
                    ..Rlimits::default()
                },
                ..ChildSetup::default()
            },
            keep_open: Vec::new(),
            backend_enforced,
            cleanup: Cleanup {
                remove_dirs: Vec::new(),
                then: runsc::orphan_delete(self.launcher.path(), &state_root, &id),
            },
        };

        let runsc = self.launcher.path().to_path_buf();
        let cleanup = runsc::Cleanup::new(runsc, state_root, id, bundle_dir);
        let result = supervise(launch, &cmd.limits, cancel).await;
        cleanup.finish().await;
        let out = result.map_err(|e| self.launcher.spawn_failure(e))?;
        if let Some(err) = runsc::launcher_failure(&out, &program) {
            return Err(err);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_missing_runsc_says_how_to_install_it() {
        let empty = tempfile::tempdir().unwrap();
        let sandbox = GvisorSandbox::with_program(empty.path().join("runsc"), empty.path().into());

        let err = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(sandbox.run(
                &CommandSpec::new(vec!["true".to_owned()], empty.path().to_path_buf()),
                &CancellationToken::new(),
            ))
            .unwrap_err();

        assert_eq!(
            (err.to_string(), err.is_infra()),
            (GvisorSandbox::MISSING.to_owned(), true)
        );
    }

    #[test]
    fn container_ids_are_unique_and_carry_our_pid() {
        let ids = [container_id(), container_id()];

        let prefix = format!("plumb-gvisor-{}-", std::process::id());
        assert!(ids.iter().all(|id| id.starts_with(&prefix)), "{ids:?}");
        assert_ne!(ids[0], ids[1]);
    }
}
