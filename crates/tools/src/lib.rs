//! plumb-tools: the model-facing tools of docs/contracts.md §3, their registry, and the text the
//! model sees.
//!
//! A tool takes JSON arguments and a [`ToolContext`] (the workspace, the sandbox, the settings) and
//! returns either a [`ToolOutput`] or a [`ToolError`]. `ToolError::RespondToModel` is a sentence the
//! model can act on ("old_text found 2 times. …"); it becomes a tool result, never a crash.
//! `ToolError::Infra` means plumb itself could not work (sandbox, git) and ends the run.
//! Every path a tool takes goes through `Workspace::resolve`, reads included.

// Unit tests read their own fixtures; the library itself reads workspace files only through
// plumb_workspace::Tree (clippy.toml's disallowed-methods, checked on the non-test build).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

mod args;
mod blocking;
mod edit;
mod exec;
pub mod names;
mod new_test;
mod read;
mod registry;
mod reindent;
mod repeated;
mod replace;
pub mod search;
pub mod shorten;
mod test_parameters;
mod test_run;
mod tool;
mod unshadow;
pub mod workdir_paths;

use std::time::Duration;

use plumb_config::Config;
use plumb_sandbox::Sandbox;
use plumb_verify::TestCommand;
use plumb_workspace::Workspace;
use tokio_util::sync::CancellationToken;

pub use edit::EDITED_LINES_HEADER;
pub use read::MAX_READ_BYTES;
pub use registry::{DONE_TOOL, Registry, WRITE_TOOLS};
pub use test_run::{REPORT_DIR, TestRun, run_test_command, sandbox_limits};
pub use tool::{Project, Tool};

/// Everything a tool may touch.
pub struct ToolContext<'a> {
    pub workspace: &'a Workspace,
    pub sandbox: &'a dyn Sandbox,
    pub config: &'a Config,
    pub test_command: Option<&'a TestCommand>,
    pub cancel: &'a CancellationToken,
    /// The small-model helpers in effect for this run.
    pub helpers: plumb_config::HelpersInEffect,
    /// The ticket, which `list_files` ranks a large folder's files for.
    pub ticket: &'a str,
    /// The repository's tag cache file (outside the workspace), when plumb keeps one.
    pub tag_cache: Option<&'a std::path::Path>,
}

/// What a tool did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    /// The full result; the journal keeps it, the model sees it shortened.
    pub text: String,
    /// One line for progress displays.
    pub summary: String,
    /// True when the tool changed files in the workspace (the loop then takes a checkpoint).
    pub changed: bool,
    /// Time spent inside sandboxed commands.
    pub command_time: Duration,
}

/// Why a tool call did not succeed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// A sentence for the model; the run goes on.
    #[error("{0}")]
    RespondToModel(String),
    /// plumb itself failed (sandbox, git, disk); the run ends as an infrastructure failure.
    #[error("{0}")]
    Infra(String),
}

impl ToolError {
    pub fn respond(text: impl Into<String>) -> Self {
        ToolError::RespondToModel(text.into())
    }
}
