//! Talking to `runsc`: where to find it, the argv of one run, what runsc's own failures mean,
//! and deleting what a killed run left behind.
//!
//! Cleanup after every run, in this order: `runsc delete --force <id>` if runsc still has
//! state for the container (it removes its state on a normal exit; after our `SIGKILL` it
//! cannot), which kills a sandbox that outlived its launcher and removes the cgroups runsc
//! made; then the bundle directory. If the run is dropped part-way, `Drop` does the same on
//! a thread of its own.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tempfile::TempDir;

use super::GvisorSandbox;
use crate::launcher::{self, LauncherKind};
use crate::{CommandOutput, Network, SandboxError};

/// How long `runsc delete --force` may take before we give up on it.
const DELETE_TIMEOUT: Duration = Duration::from_secs(10);

/// runsc's exit code when it fails itself (`util.Fatalf`).
const RUNSC_FATAL_EXIT: i32 = 128;

/// Where runsc is looked for (Debian's package installs it in `/usr/bin`, gVisor's own
/// installer in `/usr/local/bin`), and what is said when it is not there.
pub(super) static RUNSC: LauncherKind = LauncherKind {
    backend: "gvisor",
    file_name: "runsc",
    fallback_dirs: &["/usr/bin", "/usr/local/bin"],
    missing: GvisorSandbox::MISSING,
};

/// The argv (without the program) of `runsc run` for one container.
pub(super) fn run_args(
    state_root: &Path,
    bundle: &Path,
    id: &str,
    cgroups: bool,
    network: Network,
) -> Vec<String> {
    let network = match network {
        Network::Off => "--network=none",
        Network::Host => "--network=host",
    };
    let mut args = vec![
        "--root".to_owned(),
        state_root.to_string_lossy().into_owned(),
        network.to_owned(),
    ];
    if !cgroups {
        args.push("--ignore-cgroups".to_owned());
    }
    args.extend([
        "run".to_owned(),
        "--bundle".to_owned(),
        bundle.to_string_lossy().into_owned(),
        id.to_owned(),
    ]);
    args
}

/// Whether `out` is runsc failing before the command ran (exit 128, no output, one line
/// `running container: ...` on stderr), and what that means: a program that cannot be
/// executed is a [`SandboxError::Spawn`], anything else a [`SandboxError::Backend`].
pub(super) fn launcher_failure(out: &CommandOutput, program: &str) -> Option<SandboxError> {
    let message = launcher::own_failure(out, RUNSC_FATAL_EXIT, "running container: ")?;
    let not_found = message.contains("error finding executable")
        || (message.contains("failed to load") && message.ends_with("no such file or directory"));
    let denied = message.contains("failed to load") && message.ends_with("permission denied");
    let kind = if not_found {
        io::ErrorKind::NotFound
    } else if denied {
        io::ErrorKind::PermissionDenied
    } else {
        return Some(SandboxError::Backend {
            backend: "gvisor",
            detail: message.to_owned(),
        });
    };
    Some(SandboxError::Spawn {
        program: program.to_owned(),
        source: io::Error::from(kind),
    })
}

/// What one run leaves behind: runsc's state for the container and the bundle directory.
pub(super) struct Cleanup {
    runsc: PathBuf,
    state_root: PathBuf,
    id: String,
    bundle: Option<TempDir>,
}

impl Cleanup {
    pub(super) fn new(runsc: PathBuf, state_root: PathBuf, id: String, bundle: TempDir) -> Self {
        Self {
            runsc,
            state_root,
            id,
            bundle: Some(bundle),
        }
    }

    /// Deletes the container if runsc still knows it, then the bundle; see the module header.
    pub(super) async fn finish(mut self) {
        if has_state(&self.state_root, &self.id) {
            let mut delete = tokio::process::Command::new(&self.runsc);
            delete
                .args(delete_args(&self.state_root, &self.id))
                .env_clear()
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .kill_on_drop(true);
            // A failure leaves state under our scratch dir, which nobody here could act on.
            let _ = tokio::time::timeout(DELETE_TIMEOUT, delete.status()).await;
        }
        if let Some(bundle) = self.bundle.take() {
            let _ = tokio::task::spawn_blocking(move || bundle.close()).await;
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let Some(bundle) = self.bundle.take() else {
            return;
        };
        let runsc = self.runsc.clone();
        let state_root = self.state_root.clone();
        let id = self.id.clone();
        std::thread::spawn(move || {
            if has_state(&state_root, &id) {
                let _ = std::process::Command::new(&runsc)
                    .args(delete_args(&state_root, &id))
                    .env_clear()
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
            let _ = bundle.close();
        });
    }
}

/// The watch's last step if plumb dies mid-run (see `watch.rs`): the same `runsc delete
/// --force`, which kills a sandbox still there and removes the cgroups runsc made.
pub(super) fn orphan_delete(runsc: &Path, state_root: &Path, id: &str) -> Vec<String> {
    let mut argv = vec![runsc.to_string_lossy().into_owned()];
    argv.extend(delete_args(state_root, id));
    argv
}

fn delete_args(state_root: &Path, id: &str) -> Vec<String> {
    vec![
        "--root".to_owned(),
        state_root.to_string_lossy().into_owned(),
        "delete".to_owned(),
        "--force".to_owned(),
        id.to_owned(),
    ]
}

/// Whether runsc keeps any state for container `id` under `state_root` (its files there are
/// named after the container id). Saves a `runsc delete` (about 20 ms) after a normal exit.
fn has_state(state_root: &Path, id: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(state_root) else {
        return false;
    };
    entries
        .flatten()
        .any(|e| e.file_name().to_str().is_some_and(|name| name.contains(id)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launcher::output;
    use pretty_assertions::assert_eq;

    #[test]
    fn runsc_failures_say_what_failed() {
        let cases = [
            output(
                128,
                "",
                "running container: starting container: starting root container: starting sandbox: \
                 error finding executable \"pytest\" in PATH [/usr/bin /bin]: no such file or directory\n",
            ),
            output(
                128,
                "",
                "running container: starting container: starting root container: starting sandbox: \
                 creating process: failed to load /w/run.sh: permission denied\n",
            ),
            output(
                128,
                "",
                "running container: creating container: cannot create sandbox: EOF\n",
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
                "the gvisor sandbox could not be set up: creating container: cannot create \
                 sandbox: EOF; run `plumb doctor` to see which sandboxes work on this machine"
                    .to_owned(),
                true,
            )),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn state_is_found_by_container_id() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("plumb-7-1_sandbox:plumb-7-1.state"), "").unwrap();

        let actual = [
            has_state(root.path(), "plumb-7-1"),
            has_state(root.path(), "plumb-7-2"),
            has_state(&root.path().join("missing"), "plumb-7-1"),
        ];

        assert_eq!(actual, [true, false, false]);
    }
}
