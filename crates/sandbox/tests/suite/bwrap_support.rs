//! Fixtures for the bwrap suite: the run and host directories of `run_dirs.rs`, and a bwrap
//! backend whose environment comes from a fixed parent environment with fake secrets in it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use plumb_sandbox::{BwrapSandbox, BwrapSettings, CommandOutput, CommandSpec, EnvPolicy, Sandbox};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use super::run_dirs::{Place, RunDirs, parent_env};

/// Fake secrets in the parent environment; none may reach a command.
pub const SECRETS: [(&str, &str); 4] = [
    ("PLUMB_TEST_SECRET", "hunter2-bwrap"),
    ("OPENAI_API_KEY", "sk-test-bwrap"),
    ("AWS_SECRET_ACCESS_KEY", "aws-secret-bwrap"),
    ("SSH_AUTH_SOCK", "/tmp/ssh-agent-bwrap.sock"),
];

pub struct BwrapFixture {
    /// `<run>/work` (the workspace) and `<run>/shadow.git`.
    pub run_dir: TempDir,
    /// A host directory outside the run, in `/tmp`, holding `secret.txt`.
    pub outside: TempDir,
    pub sandbox: BwrapSandbox,
}

/// Fails loudly where bubblewrap is missing: these tests never skip silently.
pub fn require_bwrap() {
    assert!(
        Path::new("/usr/bin/bwrap").exists() || BwrapSandbox::new().is_ok(),
        "bubblewrap (bwrap) is not installed, and the bwrap suite needs it: \
         install it with `apt-get install bubblewrap` (.ci/run does)"
    );
}

impl BwrapFixture {
    pub fn new() -> Self {
        Self::at(Place::Target)
    }

    /// With the run directory at `place`.
    pub fn at(place: Place) -> Self {
        Self::with_settings_at(BwrapSettings::default(), place)
    }

    pub fn with_settings(settings: BwrapSettings) -> Self {
        Self::with_settings_at(settings, Place::Target)
    }

    fn with_settings_at(settings: BwrapSettings, place: Place) -> Self {
        require_bwrap();
        let RunDirs { run_dir, outside } = RunDirs::new("bwrap-run-", place);
        let sandbox = BwrapSandbox::new()
            .unwrap()
            .with_env_policy(EnvPolicy::from_parent(parent_env(&SECRETS)))
            .with_settings(settings);
        Self {
            run_dir,
            outside,
            sandbox,
        }
    }

    /// The workspace, absolute and without symbolic links.
    pub fn work(&self) -> PathBuf {
        self.run_dir.path().canonicalize().unwrap().join("work")
    }

    /// What `ls -A /tmp` shows inside: nothing, or with the run under `/tmp` (in it, or in a
    /// checkout there) the read-only first folder of the path to the workspace.
    pub fn tmp_listing(&self) -> String {
        let run = self.run_dir.path().canonicalize().unwrap();
        match run
            .strip_prefix("/tmp")
            .map(|rest| rest.components().next())
        {
            Ok(Some(first)) => format!("{}\n", first.as_os_str().to_string_lossy()),
            _ => String::new(),
        }
    }

    pub fn outside(&self) -> PathBuf {
        self.outside.path().canonicalize().unwrap()
    }

    pub fn spec(&self, argv: &[&str]) -> CommandSpec {
        CommandSpec::new(argv.iter().map(|a| (*a).to_owned()).collect(), self.work())
    }

    pub async fn run(&self, spec: &CommandSpec) -> CommandOutput {
        self.sandbox
            .run(spec, &CancellationToken::new())
            .await
            .unwrap()
    }

    /// A name no other test uses, for markers and files.
    pub fn token(&self) -> String {
        self.run_dir
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }
}

/// `python3 -c CODE ARGS...`.
pub fn py<'a>(code: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut argv = vec!["python3", "-c", code];
    argv.extend(args);
    argv
}

/// Sorted names in `dir` on the host.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Live processes (not zombies) whose command line contains `marker`, other than this one,
/// after waiting up to three seconds for killed ones to go.
pub fn processes_with(marker: &str) -> Vec<u32> {
    let ours = std::process::id();
    let until = Instant::now() + Duration::from_secs(3);
    loop {
        let found: Vec<u32> = std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| *pid != ours)
            .filter(|pid| {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                let state = stat.rsplit(')').next().unwrap_or("").trim_start();
                String::from_utf8_lossy(&cmdline).contains(marker)
                    && !(state.starts_with('Z') || state.starts_with('X'))
            })
            .collect();
        if found.is_empty() || Instant::now() > until {
            return found;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether the run enforced a limit by a cgroup (either version) — the name prefix, e.g.
/// "memory" or "processes".
pub fn by_cgroup(out: &CommandOutput, limit: &str) -> bool {
    out.enforced
        .iter()
        .any(|e| e.starts_with(limit) && e.contains("(cgroup"))
}
