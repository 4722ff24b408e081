//! The one task type. Every reader in [`crate::tasks`] (plumb's own JSON Lines, SWE-bench's files,
//! Multi-SWE-bench records) and every importer in [`crate::import`] produces a [`Task`]; the runner,
//! the oracle and the scorer only ever see this.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One task of a set, with its repository resolved to something on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// SWE-bench's `instance_id`: unique within a set; names the task's folder under `--out`
    /// (see [`Task::folder_name`]).
    pub instance_id: String,
    /// Where the tree at `base_commit` comes from.
    pub repo: RepoSource,
    /// The commit whose tree the agent starts from. Required for a git repository; an archive or
    /// a plain folder already is the tree at the base commit, and this only labels it.
    pub base_commit: Option<String>,
    /// The ticket the agent is given.
    pub problem_statement: String,
    /// The gold fix (a unified diff), if the set has one; the oracle plays it.
    pub patch: Option<String>,
    /// The tests that score the attempt (a unified diff applied on top of the agent's patch); the
    /// agent never sees it.
    pub test_patch: Option<String>,
    /// Tests that must fail before the fix and pass after it (SWE-bench's `FAIL_TO_PASS`), as the
    /// official harness's log parser writes their ids.
    pub fail_to_pass: Vec<String>,
    /// Tests that must keep passing (`PASS_TO_PASS`).
    pub pass_to_pass: Vec<String>,
    /// Run once in the sandbox before the agent starts, with the network the settings allow.
    pub setup_command: Option<String>,
    /// The project's test command; `None` means: detected, as `plumb fix` does.
    pub test_command: Option<String>,
    /// `python`, `rust`, `go`, `js`, `java`…; informational (reports group by it).
    pub language: Option<String>,
    /// Where in which file the record was read, for messages.
    pub origin: TaskOrigin,
}

/// Where a task's repository is, after resolving the record's `repo` field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "path", rename_all = "snake_case")]
pub enum RepoSource {
    /// A git repository (a working copy or a bare mirror); the tree at `base_commit` is read from
    /// its objects, never from its working tree, and no history goes with it.
    Git(PathBuf),
    /// A `.tar`, `.tar.gz`/`.tgz` archive of the tree at the base commit.
    Archive(PathBuf),
    /// A plain folder holding the tree at the base commit.
    Folder(PathBuf),
}

/// The file and 1-based line (or row) a task was read from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskOrigin {
    pub file: PathBuf,
    pub line: usize,
}

impl Task {
    /// The task's folder name under `--out`: the id with every character other than ASCII
    /// letters, digits, `-`, `_` and `.` replaced by `_`, so an id such as `org/repo#12` cannot
    /// name a path outside the folder. A leading `.` becomes `_` too.
    pub fn folder_name(&self) -> String {
        folder_name(&self.instance_id)
    }
}

/// See [`Task::folder_name`].
pub fn folder_name(instance_id: &str) -> String {
    let mut name: String = instance_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.starts_with('.') || name.is_empty() {
        name.insert(0, '_');
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_cannot_leave_the_folder() {
        assert_eq!(
            folder_name("marshmallow-code__marshmallow-1359"),
            "marshmallow-code__marshmallow-1359"
        );
        assert_eq!(folder_name("org/repo#12"), "org_repo_12");
        assert_eq!(folder_name(".."), "_..");
        assert_eq!(folder_name(""), "_");
    }
}
