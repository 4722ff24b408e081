//! The two error types of this crate.
//!
//! [`WorkspaceError`] is what a person (or the front end speaking for them) is told: each message names the
//! input and what to change, and [`WorkspaceError::is_infra`] separates infrastructure failures (git missing or
//! failing, the run directory unwritable: exit code 3) from bad input (exit code 2) and from refusals of the
//! agent's work (a binary change, a patch too large to show); [`WorkspaceError::is_budget`] names the
//! refusals a budget made (the workspace's limits, the wall clock).
//!
//! [`ConfineError`] is what a model is told when a path it gave is refused; its messages are sentences a model
//! can act on and never echo anything about the machine outside the workspace.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong while preparing, checkpointing, rolling back or diffing a workspace.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The source folder does not exist.
    #[error("the source {} does not exist; pass the path of the repository folder to work on", path.display())]
    SourceMissing { path: PathBuf },

    /// The source exists but is not a folder.
    #[error("the source {} is not a folder; pass the repository's top folder, not a file inside it", path.display())]
    SourceNotDirectory { path: PathBuf },

    /// A file or folder of the source could not be read while copying it.
    #[error(
        "could not read {} in the source ({detail}); fix its permissions, or list it in .gitignore if it \
         does not belong to the project",
        path.display()
    )]
    SourceUnreadable { path: PathBuf, detail: String },

    /// The source's files add up to more than the copy may hold.
    #[error(
        "the files of {} add up to more than limits.max_copy_bytes ({limit}); list the large folders that a fix \
         does not need in .plumbignore, or raise limits.max_copy_bytes",
        path.display()
    )]
    SourceTooLarge { path: PathBuf, limit: String },

    /// `prepare` was given a run directory that already holds something.
    #[error("the run directory {} is not empty; pass a new or empty directory for this run", path.display())]
    RunDirNotEmpty { path: PathBuf },

    /// `prepare` was given a run directory inside the source, which would write into the user's repository.
    #[error(
        "the run directory {} is inside the source {}; plumb never writes into the repository, so choose a run \
         directory outside it",
        run_dir.display(),
        source_dir.display()
    )]
    RunDirInsideSource {
        run_dir: PathBuf,
        source_dir: PathBuf,
    },

    /// `open` was given a directory that `prepare` did not create.
    #[error(
        "{} is not a prepared plumb workspace (it has no work/ folder and shadow.git/ beside it); pass the run \
         directory that prepare created",
        path.display()
    )]
    NotPrepared { path: PathBuf },

    /// A string that should have been a commit id is not one.
    #[error("`{value}` is not a commit id; expected 40 or 64 lowercase hexadecimal digits")]
    InvalidCommitId { value: String },

    /// A well-formed commit id that the shadow repository does not hold.
    #[error(
        "commit {commit} is not one of this workspace's checkpoints; pass a commit returned by checkpoint(), \
         head() or baseline()"
    )]
    UnknownCommit { commit: String },

    /// The change touches binary files, which a text patch cannot carry.
    #[error(
        "the change touches {} binary file{} ({}), which plumb cannot show as a text patch; revert {} or make \
         the change in text files",
        paths.len(),
        if paths.len() == 1 { "" } else { "s" },
        paths.join(", "),
        if paths.len() == 1 { "it" } else { "them" }
    )]
    BinaryChange { paths: Vec<String> },

    /// The change holds text that is not UTF-8, which the patch (a `String`) cannot carry byte for byte.
    #[error(
        "the change holds text that is not UTF-8 in {}; plumb cannot show it as a text patch, so save the \
         file as UTF-8 or revert it",
        paths.join(", ")
    )]
    NotUtf8 { paths: Vec<String> },

    /// The diff is larger than plumb is willing to show a reviewer.
    #[error(
        "the change is too large to show as a patch (over {limit_bytes} bytes); make a smaller change or remove \
         generated files from it"
    )]
    PatchTooLarge { limit_bytes: usize },

    /// The `git` executable could not be started.
    #[error("could not run git ({source}); install git and make sure it is on PATH")]
    GitMissing {
        #[source]
        source: io::Error,
    },

    /// git ran and failed.
    #[error("`git {command}` failed ({status}): {stderr}")]
    Git {
        command: String,
        status: String,
        stderr: String,
    },

    /// git did not finish within its time limit and was killed with its process group.
    #[error(
        "`git {command}` did not finish within {seconds} s and was stopped; check the disk and the size of the workspace"
    )]
    GitTimeout { command: String, seconds: u64 },

    /// git succeeded but printed something this crate cannot read.
    #[error("`git {command}` printed something unexpected: {detail}")]
    GitOutput { command: String, detail: String },

    /// The workspace holds more names than `limits.max_workspace_files`.
    #[error(
        "the workspace holds more than limits.max_workspace_files ({limit}) files and folders (ignored \
         build output counts one name per ignored folder); plumb stopped before reading any of it. \
         Remove what filled it, or raise limits.max_workspace_files in your own settings"
    )]
    TooManyFiles { limit: u64 },

    /// The workspace's files are longer than `limits.max_workspace_bytes` together.
    #[error(
        "the workspace's files are longer than limits.max_workspace_bytes ({limit}) together (ignored \
         build output not counted); plumb stopped before reading any of them. Remove what filled \
         it, or raise limits.max_workspace_bytes in your own settings"
    )]
    TooManyBytes { limit: String },

    /// A file kept changing while it was staged (a process still writing in the copy).
    #[error(
        "{path} in the workspace changed while plumb was reading it, twice; a process the agent \
         started is still writing there"
    )]
    ChangedWhileStaged { path: String },

    /// The run's deadline passed during a step on the host.
    #[error("the wall-clock budget ran out while plumb was {doing}")]
    OutOfTime { doing: String },

    /// A file-system operation on the run directory failed.
    #[error("could not {action} {} ({source})", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl WorkspaceError {
    /// True for failures of the machinery (git, the file system under the run directory), false for bad input
    /// and for refusals of the agent's change. Front ends map `true` to exit code 3.
    pub fn is_infra(&self) -> bool {
        match self {
            WorkspaceError::GitMissing { .. }
            | WorkspaceError::Git { .. }
            | WorkspaceError::GitTimeout { .. }
            | WorkspaceError::GitOutput { .. }
            | WorkspaceError::ChangedWhileStaged { .. }
            | WorkspaceError::Io { .. } => true,
            WorkspaceError::SourceMissing { .. }
            | WorkspaceError::SourceNotDirectory { .. }
            | WorkspaceError::SourceUnreadable { .. }
            | WorkspaceError::SourceTooLarge { .. }
            | WorkspaceError::RunDirNotEmpty { .. }
            | WorkspaceError::RunDirInsideSource { .. }
            | WorkspaceError::NotPrepared { .. }
            | WorkspaceError::InvalidCommitId { .. }
            | WorkspaceError::UnknownCommit { .. }
            | WorkspaceError::BinaryChange { .. }
            | WorkspaceError::NotUtf8 { .. }
            | WorkspaceError::PatchTooLarge { .. }
            | WorkspaceError::TooManyFiles { .. }
            | WorkspaceError::TooManyBytes { .. }
            | WorkspaceError::OutOfTime { .. } => false,
        }
    }

    /// True when a budget stopped the step (the workspace's limits or the wall clock): the run
    /// ends as over budget, never as an infrastructure failure.
    pub fn is_budget(&self) -> bool {
        matches!(
            self,
            WorkspaceError::TooManyFiles { .. }
                | WorkspaceError::TooManyBytes { .. }
                | WorkspaceError::OutOfTime { .. }
        )
    }

    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        WorkspaceError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

/// Why a model-given path was refused by [`crate::Workspace::resolve`]. The `Display` text is meant for the
/// model: it names the path as the model wrote it and says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// The path was empty or only whitespace.
    #[error("the path is empty; give a path relative to the project folder, e.g. src/main.py")]
    Empty,

    /// The path contained a NUL byte or another character no file name can hold.
    #[error(
        "the path {path:?} contains a character that cannot be in a file name; give a plain relative path"
    )]
    Invalid { path: String },

    /// The path holds a control character or one that is invisible or turns the text's direction.
    #[error(
        "the path {path:?} contains {code}, a character that is invisible or changes how the name shows; give a path of plain visible characters"
    )]
    Hidden { path: String, code: String },

    /// The path was absolute.
    #[error(
        "{path} is an absolute path; you can only use paths inside the project folder, written relative to it \
         (e.g. src/main.py)"
    )]
    Absolute { path: String },

    /// The path, after following `..` and symbolic links, leads outside the workspace.
    #[error(
        "{path} leads outside the project folder; you can only use files inside the project folder"
    )]
    Escapes { path: String },

    /// The path names a `.git` folder or something inside one.
    #[error(
        "{path} is inside a .git folder, which is off limits; work on the project's files instead"
    )]
    GitDir { path: String },

    /// Some component before the last is a file, not a folder.
    #[error("{path} treats a file as a folder; check the path")]
    NotADirectory { path: String },

    /// Symbolic links chain too deep (or loop).
    #[error("{path} goes through too many symbolic links; give the path of the real file")]
    TooManyLinks { path: String },

    /// Looking at a component failed for another reason (permissions).
    #[error("{path} could not be checked ({detail}); try another path")]
    Io { path: String, detail: String },
}
