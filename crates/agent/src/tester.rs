//! The one way a run starts its test command: in the sandbox, with the run's limits, narrowed to
//! some tests when asked and whole when they cannot be named, its time counted. The baseline, the
//! check ladder, the helpers' checks and the trees they run in (the baseline commit, or any
//! checkpoint, written out with what the setup made) all come through here.

use std::path::{Path, PathBuf};

use plumb_sandbox::{CommandOutput, CommandSpec, Limits, Network, Sandbox, SandboxError};
use plumb_tools::{TestRun, ToolError, run_test_command};
use plumb_verify::{Runner, TestCommand};
use plumb_workspace::{CommitId, RestoreMode, Workspace};
use tokio_util::sync::CancellationToken;

use crate::ending::Ending;

pub(crate) struct Tester {
    sandbox: Box<dyn Sandbox>,
    command: TestCommand,
    limits: Limits,
    cancel: CancellationToken,
    /// `checks/` of the run folder: the trees the checks write.
    checks_dir: PathBuf,
    /// What the setup command made, put into every check tree (`setup_cache.rs`).
    setup_snapshot: Option<PathBuf>,
    /// Time spent in test commands so far.
    commands_ms: u64,
}

impl Tester {
    pub(crate) fn new(
        sandbox: Box<dyn Sandbox>,
        command: TestCommand,
        limits: Limits,
        cancel: CancellationToken,
        run_dir: &Path,
    ) -> Self {
        Self {
            sandbox,
            command,
            limits,
            cancel,
            checks_dir: run_dir.join("checks"),
            setup_snapshot: None,
            commands_ms: 0,
        }
    }

    pub(crate) fn sandbox(&self) -> &dyn Sandbox {
        self.sandbox.as_ref()
    }

    pub(crate) fn command(&self) -> &TestCommand {
        &self.command
    }

    pub(crate) fn runner(&self) -> Runner {
        self.command.runner
    }

    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }

    /// Where a check writes the tree called `name`.
    pub(crate) fn check_dir(&self, name: &str) -> PathBuf {
        self.checks_dir.join(name)
    }

    pub(crate) fn set_setup_snapshot(&mut self, dir: PathBuf) {
        self.setup_snapshot = Some(dir);
    }

    /// Milliseconds spent in test commands so far.
    pub(crate) fn commands_ms(&self) -> u64 {
        self.commands_ms
    }

    /// Runs the test command (narrowed to `tests` when given) in `workdir` in the sandbox, and
    /// counts its time.
    pub(crate) async fn run_counted(
        &mut self,
        workdir: &Path,
        tests: &[String],
    ) -> Result<TestRun, ToolError> {
        let run = run_test_command(
            self.sandbox.as_ref(),
            workdir,
            &self.command,
            tests,
            self.limits,
            &self.cancel,
        )
        .await?;
        self.commands_ms += run.duration.as_millis() as u64;
        Ok(run)
    }

    /// Runs the test command (narrowed to `tests` when given) in `workdir`. Tests the command
    /// cannot run alone (a command plumb cannot narrow, an id no runner takes, e.g. from a task's
    /// FAIL_TO_PASS) run as the whole suite, with a note saying why (see [`TestRun::note`]).
    pub(crate) async fn run_tests_in(
        &mut self,
        workdir: &Path,
        tests: &[String],
    ) -> Result<TestRun, Ending> {
        let run = match self.run_counted(workdir, tests).await {
            Ok(run) => run,
            Err(ToolError::Infra(text)) => return Err(Ending::infra(text)),
            Err(ToolError::RespondToModel(text)) => {
                let mut run = self
                    .run_counted(workdir, &[])
                    .await
                    .map_err(|err| Ending::infra(err.to_string()))?;
                run.note = Some(format!(
                    "plumb ran the whole suite, since it could not run only the tests asked for: {}",
                    text.trim_end_matches('.')
                ));
                run
            }
        };
        if run.cancelled {
            return Err(Ending::cancelled("during the checks"));
        }
        Ok(run)
    }

    /// One command (a linter) in the sandbox without the network, its time counted.
    pub(crate) async fn run_command(
        &mut self,
        argv: Vec<String>,
        workdir: &Path,
    ) -> Result<CommandOutput, SandboxError> {
        let spec = CommandSpec {
            argv,
            workdir: workdir.to_path_buf(),
            env: Vec::new(),
            limits: self.limits,
            network: Network::Off,
        };
        let output = self.sandbox.run(&spec, &self.cancel).await?;
        self.commands_ms += output.duration.as_millis() as u64;
        Ok(output)
    }

    /// Writes the tree of `commit` into `dest` for a check, with the setup's untracked output.
    pub(crate) fn materialize(
        &self,
        workspace: &Workspace,
        commit: &CommitId,
        dest: &Path,
    ) -> Result<(), Ending> {
        workspace
            .materialize(commit, dest)
            .map_err(Ending::workspace)?;
        if let Some(snapshot) = &self.setup_snapshot {
            let dest = dest.canonicalize().unwrap_or_else(|_| dest.to_path_buf());
            plumb_workspace::restore_changes(snapshot, &dest, RestoreMode::MissingOnly).map_err(
                |err| {
                    Ending::infra(format!(
                        "could not put the setup's output into the check tree {}: {err}",
                        dest.display()
                    ))
                },
            )?;
        }
        Ok(())
    }

    /// A fresh copy of the baseline tree in `checks/NAME` of the run folder (whatever an earlier
    /// check left there removed first), for a check that runs on the original code.
    pub(crate) fn fresh_baseline_tree(
        &self,
        workspace: &Workspace,
        name: &str,
    ) -> Result<PathBuf, Ending> {
        let dest = self.check_dir(name);
        // Set aside at once, removed while the run's time allows: a test run may have filled it.
        plumb_workspace::discard_tree(&dest, workspace.deadline()).map_err(Ending::infra)?;
        self.materialize(workspace, workspace.baseline(), &dest)?;
        Ok(dest)
    }
}
