//! `--sandbox none`: commands run directly on this machine, as the current user, with the
//! scrubbed environment, a private HOME/TMPDIR, the time limit (whole process group killed),
//! the output cap, `RLIMIT_FSIZE` and no core files. Memory, CPU and process limits, the
//! read-only system and the network cut-off are *not* enforced, and are not reported as
//! enforced. Only behind an explicit flag; front ends say so on every run ([`Sandbox::describe`]).

use std::path::PathBuf;

use tokio_util::sync::CancellationToken;

use crate::scratch::PrivateDirs;
use crate::supervise::{Launch, cancelled_before_start, check_spec, supervise};
use crate::sys::{ChildSetup, Rlimits};
use crate::toolchains::Toolchains;
use crate::watch::Cleanup;
use crate::{CommandOutput, CommandSpec, EnvPolicy, Sandbox, SandboxError, SandboxKind};

/// The `none` backend.
#[derive(Debug, Clone)]
pub struct NoSandbox {
    scratch_dir: PathBuf,
    env: EnvPolicy,
    toolchains: Toolchains,
}

impl NoSandbox {
    /// A backend whose private HOME/TMPDIR directories are made fresh per command under
    /// `scratch_dir`, inheriting the allowlisted variables of this process's environment.
    pub fn new(scratch_dir: PathBuf) -> Self {
        Self {
            scratch_dir,
            env: EnvPolicy::from_process(),
            toolchains: Toolchains::none(),
        }
    }

    /// Gives commands these toolchains' variables and cache folder (none by default). Nothing
    /// is read-only here: without a sandbox the cache is writable for every command.
    pub fn with_toolchains(mut self, toolchains: Toolchains) -> Self {
        self.toolchains = toolchains;
        self
    }

    /// Replaces the environment policy, e.g. with one built from a given parent environment.
    pub fn with_env_policy(mut self, env: EnvPolicy) -> Self {
        self.env = env;
        self
    }
}

#[async_trait::async_trait]
impl Sandbox for NoSandbox {
    fn kind(&self) -> SandboxKind {
        SandboxKind::None
    }

    fn describe(&self) -> String {
        "no sandbox: commands run directly on this machine; only the time \
         limit, the output cap and the file-size limit are enforced — no memory, CPU or \
         process limits, no read-only system, and the network is open"
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
        let dirs = PrivateDirs::create(&self.scratch_dir)?;
        let tools = match self
            .toolchains
            .for_command(cmd.network, &cmd.workdir, dirs.home())
        {
            Ok(tools) => tools,
            Err(e) => {
                dirs.remove().await;
                return Err(e);
            }
        };
        let extra: Vec<(String, String)> = tools.env.iter().chain(&cmd.env).cloned().collect();
        let env = self.env.environment(dirs.home(), dirs.tmp(), &extra);
        let result = match env {
            Ok(env) => {
                let launch = Launch {
                    shown_program: program.clone(),
                    program,
                    args: cmd.argv.iter().skip(1).cloned().collect(),
                    env,
                    cwd: cmd.workdir.clone(),
                    child: ChildSetup {
                        rlimits: Rlimits {
                            file_bytes: Some(cmd.limits.max_file_bytes),
                            no_core_dumps: true,
                            ..Rlimits::default()
                        },
                        ..ChildSetup::default()
                    },
                    keep_open: Vec::new(),
                    backend_enforced: Vec::new(),
                    cleanup: Cleanup::default(),
                };
                supervise(launch, &cmd.limits, cancel).await
            }
            Err(e) => Err(e),
        };
        // The command's copy of Go's build cache goes with it.
        drop(tools);
        dirs.remove().await;
        result
    }
}
