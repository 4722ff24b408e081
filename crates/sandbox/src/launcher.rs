//! The program a namespacing backend spawns in place of the command (`bwrap`, `runsc`):
//! finding it, noticing that it has gone, and telling a failure of its own from one of the
//! command's. What the launcher's messages mean differs per launcher and stays with its
//! backend.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::{CommandOutput, SandboxError};

/// What a backend knows of its launcher before it has found one.
#[derive(Debug)]
pub(crate) struct LauncherKind {
    /// The backend's name in [`SandboxError::Backend`], e.g. "gvisor".
    pub(crate) backend: &'static str,
    /// The executable's file name, e.g. "runsc".
    pub(crate) file_name: &'static str,
    /// Where to look after the directories of `PATH`.
    pub(crate) fallback_dirs: &'static [&'static str],
    /// What is said when it is missing: how to install it, or what to pass instead.
    pub(crate) missing: &'static str,
}

impl LauncherKind {
    /// Finds an executable `file_name` on `path_var`, then in `fallback_dirs`.
    pub(crate) fn find(&self, path_var: Option<&OsStr>) -> Option<PathBuf> {
        let dirs = path_var.map(std::env::split_paths).into_iter().flatten();
        dirs.chain(self.fallback_dirs.iter().map(PathBuf::from))
            .map(|dir| dir.join(self.file_name))
            .find(|candidate| is_executable(candidate))
    }

    fn missing(&self) -> SandboxError {
        SandboxError::Unavailable {
            reason: self.missing.to_owned(),
        }
    }
}

/// A backend's launcher executable.
#[derive(Debug, Clone)]
pub(crate) struct Launcher {
    kind: &'static LauncherKind,
    path: PathBuf,
}

impl Launcher {
    /// The launcher found on this process's `PATH` or in the fallback directories; fails
    /// with the kind's `missing` sentence when there is none.
    pub(crate) fn from_process_path(kind: &'static LauncherKind) -> Result<Self, SandboxError> {
        let path = kind
            .find(std::env::var_os("PATH").as_deref())
            .ok_or_else(|| kind.missing())?;
        Ok(Self::at(kind, path))
    }

    /// An explicit executable; [`Launcher::check`] looks at it when a command runs.
    pub(crate) fn at(kind: &'static LauncherKind, path: PathBuf) -> Self {
        Self { kind, path }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Checked before every run, so that a launcher removed while plumb runs is reported as
    /// not installed, an infrastructure failure, rather than as the command not starting.
    pub(crate) fn check(&self) -> Result<(), SandboxError> {
        if is_executable(&self.path) {
            Ok(())
        } else {
            Err(self.kind.missing())
        }
    }

    /// Maps a failed spawn of the launcher itself: a vanished launcher is "not installed";
    /// anything else (a cgroup that could not be joined, an rlimit) is a backend failure.
    pub(crate) fn spawn_failure(&self, err: SandboxError) -> SandboxError {
        match err {
            SandboxError::Spawn { source, .. } => match self.check() {
                Ok(()) => SandboxError::Backend {
                    backend: self.kind.backend,
                    detail: format!("starting {} failed: {source}", self.path.display()),
                },
                Err(missing) => missing,
            },
            other => other,
        }
    }
}

/// The message of a launcher that failed before the command ran: it exited with
/// `exit_code`, wrote nothing to stdout and one line starting with `prefix` to stderr; the
/// message is that line without the prefix. The launcher passes the command's own exit code
/// on, so anything else (output, a second line, a timeout or cancel) is the command's.
pub(crate) fn own_failure<'a>(
    out: &'a CommandOutput,
    exit_code: i32,
    prefix: &str,
) -> Option<&'a str> {
    let line = out.stderr.trim_end();
    if out.exit_code != Some(exit_code)
        || !out.stdout.is_empty()
        || out.timed_out
        || out.cancelled
        || line.contains('\n')
    {
        return None;
    }
    line.strip_prefix(prefix)
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// An output that exited with `exit_code`, for the backends' tests of [`own_failure`]'s
/// callers.
#[cfg(test)]
pub(crate) fn output(exit_code: i32, stdout: &str, stderr: &str) -> CommandOutput {
    CommandOutput {
        exit_code: Some(exit_code),
        signal: None,
        stdout: stdout.to_owned(),
        stderr: stderr.to_owned(),
        timed_out: false,
        cancelled: false,
        stdout_truncated_bytes: 0,
        stderr_truncated_bytes: 0,
        duration: std::time::Duration::ZERO,
        enforced: Vec::new(),
        limits_hit: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn only_a_lone_prefixed_line_with_the_launchers_exit_code_is_its_own_failure() {
        let cases = [
            output(1, "", "bwrap: execvp pytest: No such file or directory\n"),
            output(1, "", "an error\nbwrap: something\n"),
            output(1, "x", "bwrap: something\n"),
            output(2, "", "bwrap: something\n"),
            output(1, "", "something\n"),
            CommandOutput {
                timed_out: true,
                ..output(1, "", "bwrap: something\n")
            },
            CommandOutput {
                cancelled: true,
                ..output(1, "", "bwrap: something\n")
            },
        ];

        let actual: Vec<Option<&str>> = cases
            .iter()
            .map(|out| own_failure(out, 1, "bwrap: "))
            .collect();

        let expected = vec![
            Some("execvp pytest: No such file or directory"),
            None,
            None,
            None,
            None,
            None,
            None,
        ];
        assert_eq!(actual, expected);
    }
}
