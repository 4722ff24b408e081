//! What the namespacing backends' suites (bwrap, gVisor) run commands in and try to escape
//! to: a run directory laid out as plumb lays out a run (`work/` and a sibling `shadow.git/`),
//! a host directory in `/tmp` outside it holding a secret, and a parent environment with fake
//! secrets in it — never changes to this process's environment.
//!
//! The run directory is under the target's temp dir ([`Place::Target`], as plumb's runs live
//! under its state directory) or in `/tmp` ([`Place::Tmp`]: a checkout or `PLUMB_HOME` there,
//! where the sandbox's own private `/tmp` is mounted over the workspace's parents). The cases
//! that depend on the mount layout run in both.

use plumb_sandbox::EnvPolicy;
use tempfile::TempDir;

pub const HOST_SECRET: &str = "the host's secret";

/// Where a fixture's run directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Under the target's temp dir.
    Target,
    /// Directly in `/tmp`.
    Tmp,
}

/// A run directory and a host directory outside it.
pub struct RunDirs {
    /// `<run>/work` (the workspace) and `<run>/shadow.git`.
    pub run_dir: TempDir,
    /// A host directory outside the run, in `/tmp`, holding `secret.txt`.
    pub outside: TempDir,
}

impl RunDirs {
    /// `prefix` names the run directory after its suite, e.g. "bwrap-run-".
    pub fn new(prefix: &str, place: Place) -> Self {
        let parent = match place {
            Place::Target => env!("CARGO_TARGET_TMPDIR"),
            Place::Tmp => "/tmp",
        };
        let run_dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir_in(parent)
            .unwrap();
        std::fs::create_dir(run_dir.path().join("work")).unwrap();
        std::fs::create_dir(run_dir.path().join("shadow.git")).unwrap();
        std::fs::write(
            run_dir.path().join("shadow.git/HEAD"),
            "ref: refs/heads/main\n",
        )
        .unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), HOST_SECRET).unwrap();
        Self { run_dir, outside }
    }
}

/// The environment plumb would inherit: the host's `PATH`, a locale, and `secrets`, none of
/// which may reach a command.
pub fn parent_env(secrets: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut parent = vec![
        ("PATH".to_owned(), host_path()),
        ("LANG".to_owned(), "C.UTF-8".to_owned()),
    ];
    parent.extend(
        secrets
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    parent
}

/// This process's `PATH`, which is what plumb would pass on (on the CI machines it holds
/// pyenv's shims, through which `python3` resolves).
pub fn host_path() -> String {
    std::env::var("PATH").unwrap_or_else(|_| EnvPolicy::DEFAULT_PATH.to_owned())
}
