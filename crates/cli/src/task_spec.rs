//! What a task stored for `plumb worker` asks for, as JSON in the store: the repository, the
//! ticket, and settings it may only tighten.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A task's request. The repository is a folder on the worker's machine, for an operator's own
/// tasks; repositories from a git URL or an uploaded archive come with the service's intake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TaskSpec {
    /// The repository: an absolute path to a folder (it is copied; the original is never changed).
    pub repo_path: PathBuf,
    /// The ticket's text.
    pub ticket: String,
    /// A model spec (`local`, `openai:…`, `script:PATH`); the worker's setting when absent.
    #[serde(default)]
    pub model: Option<String>,
    /// At most this many rounds; never more than the worker's own limit.
    #[serde(default)]
    pub max_rounds: Option<u32>,
    /// The test command; detected when absent.
    #[serde(default)]
    pub test_command: Option<String>,
}

impl TaskSpec {
    /// Reads a stored spec, with a sentence naming what is wrong.
    pub(crate) fn from_json(value: &serde_json::Value) -> Result<TaskSpec, String> {
        let spec: TaskSpec = serde_json::from_value(value.clone())
            .map_err(|error| format!("the task's request is not one plumb reads: {error}"))?;
        if !spec.repo_path.is_absolute() {
            return Err(format!(
                "repo_path {} is relative; give the repository's absolute path",
                spec.repo_path.display()
            ));
        }
        if spec.ticket.trim().is_empty() {
            return Err("the ticket is empty; give the ticket's text".to_owned());
        }
        Ok(spec)
    }
}
