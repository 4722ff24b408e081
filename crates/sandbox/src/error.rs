//! Why a command could not be run at all. A command that runs and fails is not an error.

use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The argv was empty.
    #[error("the command is empty; give at least the program to run")]
    EmptyCommand,

    /// The program could not be started (not found, not executable, ...).
    #[error("could not start `{program}`: {}", spawn_reason(source))]
    Spawn {
        program: String,
        #[source]
        source: io::Error,
    },

    /// An extra environment variable cannot be passed to a process.
    #[error(
        "the environment variable name `{name}` is invalid; use a non-empty name without `=` or NUL, and a value without NUL"
    )]
    InvalidEnv { name: String },

    /// The working directory is missing, relative or not a directory.
    #[error("cannot run a command in {}: {reason}", path.display())]
    Workdir { path: PathBuf, reason: String },

    /// The private HOME/TMPDIR could not be prepared under the scratch directory.
    #[error("could not prepare a private HOME and TMPDIR under {}: {source}", path.display())]
    Scratch {
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// Talking to the running process failed.
    #[error("{context}: {source}")]
    Io {
        context: &'static str,
        #[source]
        source: io::Error,
    },

    /// The backend cannot work on this machine; `reason` says what to install or pass.
    #[error("{reason}")]
    Unavailable { reason: String },

    /// The backend's launcher could not set up the sandbox for this command.
    #[error(
        "the {backend} sandbox could not be set up: {detail}; run `plumb doctor` to see which sandboxes work on this machine"
    )]
    Backend {
        backend: &'static str,
        detail: String,
    },
}

impl SandboxError {
    /// True when the fault is the machine's or the harness's, not the command's: the run
    /// should end as an infrastructure failure (exit code 3) rather than tell the model to
    /// change the command.
    pub fn is_infra(&self) -> bool {
        match self {
            SandboxError::EmptyCommand | SandboxError::InvalidEnv { .. } => false,
            SandboxError::Spawn { source, .. } => !matches!(
                source.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied
            ),
            SandboxError::Workdir { .. }
            | SandboxError::Scratch { .. }
            | SandboxError::Io { .. }
            | SandboxError::Unavailable { .. }
            | SandboxError::Backend { .. } => true,
        }
    }
}

fn spawn_reason(source: &io::Error) -> String {
    match source.kind() {
        io::ErrorKind::NotFound => "not found; install it or change the command".to_owned(),
        io::ErrorKind::PermissionDenied => {
            "permission denied; make it executable or change the command".to_owned()
        }
        _ => source.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn spawn_messages_say_what_to_change() {
        let errors = [
            SandboxError::Spawn {
                program: "pytest".to_owned(),
                source: io::Error::from(io::ErrorKind::NotFound),
            },
            SandboxError::Spawn {
                program: "./run.sh".to_owned(),
                source: io::Error::from(io::ErrorKind::PermissionDenied),
            },
            SandboxError::EmptyCommand,
        ];

        let actual: Vec<(String, bool)> = errors
            .iter()
            .map(|e| (e.to_string(), e.is_infra()))
            .collect();

        let expected = vec![
            (
                "could not start `pytest`: not found; install it or change the command".to_owned(),
                false,
            ),
            (
                "could not start `./run.sh`: permission denied; make it executable or change the command"
                    .to_owned(),
                false,
            ),
            (
                "the command is empty; give at least the program to run".to_owned(),
                false,
            ),
        ];
        assert_eq!(actual, expected);
    }
}
