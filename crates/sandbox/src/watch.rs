//! The watch: what ends a command when plumb itself dies without a chance to clean up (a
//! `SIGKILL`, as a supervisor's timeout sends, or a crash).
//!
//! `PR_SET_PDEATHSIG` (see `sys.rs`) kills the process plumb spawned, which for `bwrap` and
//! `gvisor` takes the whole sandbox with it (bwrap is pid 1 of the command's pid namespace;
//! runsc's sandbox is started `--attached`). It does not reach the rest of the process group:
//! under `none`, a child the command started would be re-parented and run on. So beside every
//! command runs a watch, a tiny `sh` in a process group of its own, blocked reading a pipe
//! whose only writer is plumb. The kernel closes that pipe when plumb dies, however it dies;
//! the watch then, in this order:
//! 1. `SIGKILL`s the command's process group;
//! 2. removes the command's cgroup directories, retrying for up to five seconds while the
//!    killed processes exit;
//! 3. runs the backend's last step, if any (gVisor: `runsc delete --force`, which also removes
//!    the cgroups runsc made and its state).
//!
//! While plumb lives the watch does nothing: plumb kills it (before closing the pipe) when the
//! command has ended, and dropping the [`Watch`] does the same, so a watch never outlives its
//! command's supervision and never acts on a process group that has gone (whose id could have
//! been reused). It costs one `sh` per command, about a millisecond.

use std::io;
use std::path::PathBuf;
use std::process::Stdio;

use tokio::process::{Child, ChildStdin, Command};

/// The watch's script; `$1` is the process group, then the directories to remove, then `--`
/// and the last step's argv.
const SCRIPT: &str = r#"read -r _
kill -s KILL -- "-$1" 2>/dev/null
shift
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  n=0
  while [ -d "$1" ] && ! rmdir "$1" 2>/dev/null && [ $n -lt 50 ]; do
    sleep 0.1
    n=$((n + 1))
  done
  shift
done
[ $# -gt 1 ] || exit 0
shift
exec "$@"
"#;

/// Where the watch finds `rmdir` and `sleep`.
const WATCH_PATH: &str = "/usr/bin:/bin";

/// What the watch cleans up after killing the command's process group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Cleanup {
    /// Directories to remove once empty: the command's cgroups.
    pub(crate) remove_dirs: Vec<PathBuf>,
    /// A last command to run (absolute program first); empty for none.
    pub(crate) then: Vec<String>,
}

/// A running watch; dropping it kills it, which ends its job.
#[derive(Debug)]
pub(crate) struct Watch {
    child: Child,
    /// The pipe plumb holds; closed only after the watch was killed (field order: `drop`
    /// kills the child first).
    _pipe: Option<ChildStdin>,
}

/// The watch's argv after `sh -c SCRIPT`: its name (`$0`, naming the plumb it watches for, so
/// `ps` tells whose it is), the group, the directories, `--` and the last step.
fn watch_args(pgid: u32, cleanup: &Cleanup) -> Vec<String> {
    let name = format!("plumb-watch:{}", std::process::id());
    let mut args = vec![name, pgid.to_string()];
    args.extend(
        cleanup
            .remove_dirs
            .iter()
            .map(|d| d.to_string_lossy().into_owned()),
    );
    if !cleanup.then.is_empty() {
        args.push("--".to_owned());
        args.extend(cleanup.then.iter().cloned());
    }
    args
}

impl Watch {
    /// Starts the watch over process group `pgid`.
    pub(crate) fn start(pgid: u32, cleanup: &Cleanup) -> io::Result<Watch> {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(SCRIPT)
            .args(watch_args(pgid, cleanup))
            .env_clear()
            .env("PATH", WATCH_PATH)
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = cmd.spawn()?;
        let pipe = child.stdin.take();
        Ok(Watch { child, _pipe: pipe })
    }

    /// Ends the watch without it acting: the command it watched is over.
    pub(crate) async fn stop(mut self) {
        // Nothing to do if this fails: the watch is gone already.
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        // Before `_pipe` closes, so the watch never sees its end of file while plumb lives.
        let _ = self.child.start_kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use tokio::io::AsyncWriteExt;

    #[test]
    fn the_argv_names_the_group_the_directories_and_the_last_step() {
        let cleanup = Cleanup {
            remove_dirs: vec!["/cg/memory/plumb-1-2".into(), "/cg/pids/plumb-1-2".into()],
            then: vec!["/usr/bin/runsc".to_owned(), "delete".to_owned()],
        };

        let actual = [
            watch_args(42, &Cleanup::default()).join(" "),
            watch_args(42, &cleanup).join(" "),
        ];

        let name = format!("plumb-watch:{}", std::process::id());
        let expected = [
            format!("{name} 42"),
            format!("{name} 42 /cg/memory/plumb-1-2 /cg/pids/plumb-1-2 -- /usr/bin/runsc delete"),
        ];
        assert_eq!(actual, expected);
    }

    /// The script itself, with the pipe closed as plumb's death would close it: the group is
    /// killed, the directories removed, the last step run.
    #[tokio::test]
    async fn a_closed_pipe_kills_the_group_and_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        let (empty, done) = (dir.path().join("cgroup"), dir.path().join("done"));
        std::fs::create_dir(&empty).unwrap();
        let mut group = Command::new("sleep")
            .arg("600")
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let cleanup = Cleanup {
            remove_dirs: vec![empty.clone()],
            then: vec![
                "/bin/sh".to_owned(),
                "-c".to_owned(),
                "echo ran > \"$0\"".to_owned(),
                done.to_string_lossy().into_owned(),
            ],
        };
        let mut watch = Watch::start(group.id().unwrap(), &cleanup).unwrap();

        let mut pipe = watch._pipe.take().unwrap();
        pipe.shutdown().await.unwrap();
        drop(pipe);
        let status = tokio::time::timeout(std::time::Duration::from_secs(10), watch.child.wait())
            .await
            .unwrap()
            .unwrap();
        let sleeper = group.wait().await.unwrap();

        use std::os::unix::process::ExitStatusExt as _;
        let actual = (
            status.success(),
            sleeper.signal(),
            empty.exists(),
            std::fs::read_to_string(&done).unwrap_or_default(),
        );
        assert_eq!(
            actual,
            (true, Some(libc::SIGKILL), false, "ran\n".to_owned())
        );
    }
}
