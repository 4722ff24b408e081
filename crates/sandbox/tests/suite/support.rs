//! Shared fixtures: a workspace directory, a scratch directory and a `none` backend whose
//! environment comes from a fixed parent environment, never from this process's.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use plumb_sandbox::{CommandOutput, CommandSpec, EnvPolicy, NoSandbox};
use tempfile::TempDir;

pub const TEST_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

pub struct Fixture {
    pub workdir: TempDir,
    pub scratch: TempDir,
    pub sandbox: NoSandbox,
}

impl Fixture {
    pub fn new() -> Self {
        Self::with_parent_env(vec![("PATH".to_owned(), TEST_PATH.to_owned())])
    }

    pub fn with_parent_env(parent: Vec<(String, String)>) -> Self {
        let workdir = tempfile::tempdir().unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let sandbox = NoSandbox::new(scratch.path().join("sandbox"))
            .with_env_policy(EnvPolicy::from_parent(parent));
        Self {
            workdir,
            scratch,
            sandbox,
        }
    }

    /// The workspace root as an absolute path without symbolic links, as `pwd` prints it.
    pub fn root(&self) -> PathBuf {
        self.workdir.path().canonicalize().unwrap()
    }

    pub fn scratch_dir(&self) -> PathBuf {
        self.scratch.path().join("sandbox")
    }

    pub fn spec(&self, argv: &[&str]) -> CommandSpec {
        CommandSpec::new(argv.iter().map(|a| (*a).to_owned()).collect(), self.root())
    }
}

/// `sh -c SCRIPT`.
pub fn sh(script: &str) -> Vec<&str> {
    vec!["sh", "-c", script]
}

/// The output with the duration zeroed, for whole-value comparisons.
pub fn without_duration(mut out: CommandOutput) -> CommandOutput {
    out.duration = Duration::ZERO;
    out
}

/// The `none` backend's list of enforced limits.
pub fn none_enforced() -> Vec<String> {
    ["timeout", "output cap", "file size", "no core dumps"]
        .map(str::to_owned)
        .to_vec()
}

/// Whether `pid` is a live process (not gone, not a zombie waiting for a reaper), waiting up
/// to two seconds for a killed process to disappear.
pub fn still_alive(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        let alive = match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => {
                let state = stat.rsplit(')').next().unwrap_or("").trim_start();
                !(state.starts_with('Z') || state.starts_with('X'))
            }
            Err(_) => false,
        };
        if !alive || Instant::now() > until {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The pid a command wrote to `file` in the workspace.
pub fn read_pid(dir: &Path, file: &str) -> u32 {
    std::fs::read_to_string(dir.join(file))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}
