//! The setup phase: one command from the settings (`setup_command`), run in the sandbox before the
//! agent starts, with the host's network only when `setup_network` says so. What it writes (installed
//! dependencies, generated files) becomes the new baseline, so it is never part of the patch. The
//! agent's own commands never get the network; this is the one door, and the user opens it.

use plumb_protocol::{Event, SettingSource};
use plumb_sandbox::{CommandSpec, Network};
use plumb_tools::sandbox_limits;
use plumb_tools::shorten::shorten;

use crate::run::Run;
use crate::{RunError, setup_cache};

/// Lines of the setup command's output kept in the journal event and in an error.
const OUTPUT_TAIL_LINES: usize = 30;

impl Run {
    /// Runs `setup_command` if the settings have one; a failing setup is bad input (exit 2).
    pub(crate) async fn run_setup(&mut self) -> Result<(), RunError> {
        let Some(text) = self.spec.config.setup_command.clone() else {
            return Ok(());
        };
        let argv = plumb_verify::parse_command(&text)
            .map_err(|err| RunError::BadInput(format!("setup_command in plumb.toml: {err}")))?
            .argv;
        // The network is the user's to give, and only to a command the user chose: a setup command
        // from the repository's own plumb.toml (a stranger's text) runs offline even when
        // `setup_network` is on, or it could send the user's uncommitted work anywhere.
        let from_repository = self
            .spec
            .settings
            .setting("setup_command")
            .is_some_and(|s| matches!(s.source, SettingSource::RepoFile { .. }));
        let network = if self.spec.config.setup_network && !from_repository {
            Network::Host
        } else {
            Network::Off
        };
        if self.spec.config.setup_network && from_repository {
            let message = format!(
                "the setup command `{text}` comes from the repository's plumb.toml, so it runs without the network although setup_network is on: only a setup command from your own settings or -c gets the network"
            );
            self.emit(Event::Warning { message }).await;
        }
        if self.restore_setup(&text).await {
            return self.record_setup_baseline().await;
        }
        let before = match &self.spec.setup_cache {
            Some(_) => plumb_workspace::Stamps::of(self.workspace.root()).ok(),
            None => None,
        };
        let spec = CommandSpec {
            argv: argv.clone(),
            workdir: self.workspace.root().to_path_buf(),
            env: Vec::new(),
            limits: sandbox_limits(&self.spec.config),
            network,
        };
        let output = self
            .spec
            .sandbox
            .run(&spec, &self.spec.cancel)
            .await
            .map_err(|err| {
                let text = format!(
                    "the setup command `{}` could not run: {err}",
                    argv.join(" ")
                );
                if err.is_infra() {
                    RunError::Infra(text)
                } else {
                    RunError::BadInput(text)
                }
            })?;
        self.timings.commands_ms += output.duration.as_millis() as u64;
        let combined = format!("{}{}", output.stdout, output.stderr);
        let tail = shorten(&combined, OUTPUT_TAIL_LINES).text;
        self.emit(Event::Setup {
            argv: argv.clone(),
            network: network == Network::Host,
            exit_code: output.exit_code,
            duration_ms: output.duration.as_millis() as u64,
            output: tail.clone(),
        })
        .await;
        if output.exit_code != Some(0) || output.timed_out {
            return Err(RunError::BadInput(format!(
                "the setup command `{}` failed ({}); fix setup_command in plumb.toml{}. Its output ended with:\n{tail}",
                argv.join(" "),
                match (output.timed_out, output.exit_code) {
                    (true, _) => "time limit".to_string(),
                    (false, Some(code)) => format!("exit {code}"),
                    (false, None) => "killed".to_string(),
                },
                if network == Network::Off {
                    " (it ran without network; set setup_network = true if it needs to download)"
                } else {
                    ""
                }
            )));
        }
        if let Some(before) = before {
            self.save_setup(&text, &before).await;
        }
        self.record_setup_baseline().await
    }

    /// The setup's result becomes the baseline.
    async fn record_setup_baseline(&mut self) -> Result<(), RunError> {
        let baseline = self.workspace.rebaseline("setup").map_err(|err| {
            RunError::Infra(format!("could not record the setup's result: {err}"))
        })?;
        self.last_checkpoint = baseline.clone();
        self.emit(Event::Checkpoint {
            label: "baseline after setup".into(),
            commit: baseline.to_string(),
        })
        .await;
        Ok(())
    }
}

impl Run {
    /// With a setup cache holding a snapshot for this command and these manifests: the snapshot
    /// restored into the workspace instead of running the command. `false` when there is none or
    /// it could not be restored (then the command runs).
    async fn restore_setup(&mut self, command: &str) -> bool {
        let Some(cache) = &self.spec.setup_cache else {
            return false;
        };
        let dir = setup_cache::snapshot_dir(cache, command, &self.workspace.tree());
        if !plumb_workspace::has_snapshot(&dir) {
            return false;
        }
        let started = std::time::Instant::now();
        match plumb_workspace::restore_changes(&dir, self.workspace.root()) {
            Ok(restored) => {
                let output = format!(
                    "restored from the setup cache {}: {} entries ({} with the workspace's path moved)",
                    dir.display(),
                    restored.entries,
                    restored.relocated
                );
                self.emit(Event::Setup {
                    argv: vec![command.to_owned()],
                    network: false,
                    exit_code: Some(0),
                    duration_ms: started.elapsed().as_millis() as u64,
                    output,
                })
                .await;
                true
            }
            Err(err) => {
                let message = format!(
                    "the setup cache {} could not be restored ({err}); running the setup command",
                    dir.display()
                );
                self.emit(Event::Warning { message }).await;
                false
            }
        }
    }

    /// Saves what the setup changed since `before` for the next run with the same key.
    async fn save_setup(&mut self, command: &str, before: &plumb_workspace::Stamps) {
        let Some(cache) = &self.spec.setup_cache else {
            return;
        };
        let dir = setup_cache::snapshot_dir(cache, command, &self.workspace.tree());
        let saved = std::fs::create_dir_all(&cache.dir)
            .and_then(|()| plumb_workspace::save_changes(self.workspace.root(), before, &dir));
        if let Err(err) = saved {
            let message = format!(
                "the setup's result could not be saved in the setup cache {} ({err}); the next run runs it again",
                dir.display()
            );
            self.emit(Event::Warning { message }).await;
        }
    }
}
