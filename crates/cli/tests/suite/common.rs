//! Running the real `plumb` binary against fixture repositories.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use plumb_protocol::{Event, FinalReport, JournalLine};
use plumb_test_support::Script;
use serde_json::json;

/// A fixture repository (a git repo holding a copy of examples/billing) and a private PLUMB_HOME.
pub struct Fixture {
    pub repo: tempfile::TempDir,
    pub home: tempfile::TempDir,
}

impl Fixture {
    pub fn billing() -> Self {
        Self {
            repo: plumb_test_support::git_repo_from(&plumb_test_support::billing_example()),
            home: tempfile::tempdir().unwrap(),
        }
    }

    pub fn repo_path(&self) -> &Path {
        self.repo.path()
    }

    pub fn ticket(&self) -> PathBuf {
        self.repo.path().join("BILL-412.md")
    }

    /// A path for a script file inside the private home.
    pub fn script_path(&self, name: &str) -> PathBuf {
        self.home.path().join(name)
    }

    /// A script whose run is caught in a long command: round 1 writes a file into the copy,
    /// round 2 runs `sleep 30` (allow it with `run.allowed_commands=[["sleep"]]`).
    pub fn slow_script(&self) -> PathBuf {
        let script = self.script_path("slow.jsonl");
        Script::new()
            .tool(
                "create_file",
                json!({"path": "notes.txt", "content": "half done\n"}),
            )
            .tool("run", json!({"argv": ["sleep", "30"]}))
            .write(&script);
        script
    }

    /// `plumb fix` on the fixture with a script, JSON report, no sandbox (fast; the sandbox has
    /// its own tests, and `fix_in_default_sandbox` runs the same flow behind it).
    pub fn fix_with_script(&self, script: &Path, extra: &[&str]) -> Output {
        let mut args = vec!["--sandbox", "none"];
        args.extend_from_slice(extra);
        self.fix_in_default_sandbox(script, &args)
    }

    /// `plumb fix` on the fixture with a script, JSON report, the sandbox of the settings
    /// unless `extra` says otherwise.
    pub fn fix_in_default_sandbox(&self, script: &Path, extra: &[&str]) -> Output {
        let model = format!("script:{}", script.display());
        let repo = self.repo_path().display().to_string();
        let ticket = self.ticket().display().to_string();
        let mut args = vec![
            "fix", "--repo", &repo, "--ticket", &ticket, "--model", &model, "--json",
        ];
        args.extend_from_slice(extra);
        plumb(self.home.path(), &args)
    }
}

/// The plumb binary with a private PLUMB_HOME and no config of the user's, not yet started.
pub fn plumb_command(home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_plumb"));
    command
        .env("PLUMB_HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"));
    command
}

/// Runs the plumb binary with a private PLUMB_HOME and no config of the user's.
pub fn plumb(home: &Path, args: &[&str]) -> Output {
    plumb_command(home).args(args).output().unwrap()
}

pub fn report(output: &Output) -> FinalReport {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|err| {
        panic!(
            "stdout is not a report ({err}).\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

pub fn journal_events(report: &FinalReport) -> Vec<Event> {
    let text = std::fs::read_to_string(&report.journal).unwrap();
    text.lines()
        .map(|line| serde_json::from_str::<JournalLine>(line).unwrap().event)
        .collect()
}

/// Every model request of `events` (a journal's, in order) with all its messages: the journal
/// keeps only each request's new messages.
pub fn requests_of(events: &[Event]) -> Vec<plumb_agent::JournalRequest> {
    let lines: Vec<JournalLine> = events
        .iter()
        .enumerate()
        .map(|(seq, event)| JournalLine {
            v: plumb_protocol::JOURNAL_VERSION,
            ts: 0,
            run: String::new(),
            seq: seq as u64,
            event: event.clone(),
        })
        .collect();
    plumb_agent::journal_requests(&lines).unwrap()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The workspace copy of a run.
pub fn work_dir(report: &FinalReport) -> PathBuf {
    PathBuf::from(&report.workspace)
        .join("workspace")
        .join("work")
}

/// The shadow git dir of a run.
pub fn shadow_git(report: &FinalReport) -> PathBuf {
    PathBuf::from(&report.workspace)
        .join("workspace")
        .join("shadow.git")
}
