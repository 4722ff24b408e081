//! The setup phase: one command from the settings (`setup_command`), run in the sandbox before the
//! agent starts, with the host's network only when `setup_network` says so. What it writes (installed
//! dependencies, generated files) becomes the new baseline, so it is never part of the patch. The
//! agent's own commands never get the network; this is the one door, and the user opens it.

use plumb_protocol::{Event, SettingSource};
use plumb_sandbox::{CommandSpec, Network};
use plumb_tools::shorten::shorten;

use std::path::PathBuf;

use plumb_workspace::{RestoreMode, Stamps};

use super::Run;
use crate::RunError;
use crate::setup_cache::{RUN_SNAPSHOT_DIR, snapshot_dir};

/// Lines of the setup command's output kept in the journal event and in an error.
const OUTPUT_TAIL_LINES: usize = 30;

impl Run {
    /// Runs `setup_command` if the settings have one; a failing setup is bad input (exit 2).
    pub(super) async fn run_setup(&mut self) -> Result<(), RunError> {
        let Some(text) = self.asked.config.setup_command.clone() else {
            return Ok(());
        };
        let argv = plumb_verify::parse_command(&text)
            .map_err(|err| RunError::BadInput(format!("setup_command in plumb.toml: {err}")))?
            .argv;
        // The network is the user's to give, and only to a command the user chose: a setup command
        // from the repository's own plumb.toml (a stranger's text) runs offline even when
        // `setup_network` is on, or it could send the user's uncommitted work anywhere.
        let from_repository = self
            .asked
            .settings
            .setting("setup_command")
            .is_some_and(|s| matches!(s.source, SettingSource::RepoFile { .. }));
        let network = if self.asked.config.setup_network && !from_repository {
            Network::Host
        } else {
            Network::Off
        };
        if self.asked.config.setup_network && from_repository {
            let message = format!(
                "the setup command `{text}` comes from the repository's plumb.toml, so it runs without the network although setup_network is on: only a setup command from your own settings or -c gets the network"
            );
            self.emit(Event::Warning { message }).await;
        }
        if self.restore_setup(&text).await {
            return self.record_setup_baseline().await;
        }
        // What the setup changes is kept (see setup_cache.rs): the check trees and the next
        // run of the same repository need what it made that git does not track.
        let before = plumb_workspace::Stamps::of(self.workspace.root()).ok();
        let spec = CommandSpec {
            argv: argv.clone(),
            workdir: self.workspace.root().to_path_buf(),
            env: Vec::new(),
            limits: self.tester.limits(),
            network,
        };
        let output = self
            .tester
            .sandbox()
            .run(&spec, &self.asked.cancel)
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
            let text = format!("could not record the setup's result: {err}");
            // A setup that filled the copy past its limits is the settings' to change.
            if err.is_budget() {
                RunError::BadInput(text)
            } else {
                RunError::Infra(text)
            }
        })?;
        self.last_checkpoint = baseline.clone();
        self.emit(Event::Checkpoint {
            label: "baseline after setup".into(),
            commit: baseline.to_string(),
        })
        .await;
        Ok(())
    }

    /// Where this run's setup snapshot goes: the setup cache's folder for this key, else the run's.
    fn snapshot_location(&self, command: &str) -> PathBuf {
        match &self.asked.setup_cache {
            Some(cache) => snapshot_dir(cache, command, &self.workspace.tree()),
            None => self.asked.run_dir.join(RUN_SNAPSHOT_DIR),
        }
    }

    /// With a setup cache holding a snapshot for this command and these manifests: the snapshot
    /// restored into the workspace instead of running the command. `false` when there is none or
    /// it could not be restored (then the command runs).
    async fn restore_setup(&mut self, command: &str) -> bool {
        if self.asked.setup_cache.is_none() {
            return false;
        }
        let dir = self.snapshot_location(command);
        if !plumb_workspace::has_snapshot(&dir) {
            return false;
        }
        let started = std::time::Instant::now();
        match plumb_workspace::restore_changes(&dir, self.workspace.root(), RestoreMode::Overwrite)
        {
            Ok(restored) => {
                let output = format!(
                    "restored from the setup cache {}: {} entries ({} with the workspace's path moved)",
                    dir.display(),
                    restored.entries,
                    restored.relocated
                );
                self.tester.set_setup_snapshot(dir);
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

    /// Saves what the setup changed since `before`.
    async fn save_setup(&mut self, command: &str, before: &Stamps) {
        let dir = self.snapshot_location(command);
        let saved = dir
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| plumb_workspace::save_changes(self.workspace.root(), before, &dir));
        match saved {
            Ok(_) => self.tester.set_setup_snapshot(dir),
            Err(err) => {
                let message = format!(
                    "what the setup made could not be kept in {} ({err}); check trees will lack what git does not track",
                    dir.display()
                );
                self.emit(Event::Warning { message }).await;
            }
        }
    }
}
