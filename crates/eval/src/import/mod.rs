//! Importers for public benchmarks: each turns a benchmark's own file into a task set in plumb's
//! format (`DIR/tasks.jsonl`, SWE-bench field names) and the repositories its records name
//! (`DIR/repos/<task folder>/`, one commit each, that commit the record's `base_commit`).
//!
//! - [`humanevalpack`]: HumanEvalFix (HumanEvalPack) in Python, JavaScript, Rust and Go;
//! - [`git_repo`]: the one-commit repository and the diffs against it (git with an empty
//!   configuration, no hooks, a fixed author and date, so equal input gives equal commits);
//! - [`TaskRecord`]: one line of `tasks.jsonl` as written, and its reading back into a [`Task`].
//!
//! A bad line of the input is a problem (named by file, line and field) and is left out; the other
//! lines are still imported. Only what stops the whole import (the input unreadable, the output
//! unwritable, git failing) is an [`ImportError`].

pub mod git_repo;
pub mod humanevalpack;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::task::{RepoSource, Task, TaskOrigin};

pub use humanevalpack::import_humanevalpack;

/// The languages of HumanEvalPack that the importer knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lang {
    Python,
    Js,
    Rust,
    Go,
}

impl Lang {
    /// The name used on the command line and in a task's `language`.
    pub fn as_str(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::Js => "js",
            Lang::Rust => "rust",
            Lang::Go => "go",
        }
    }

    /// The prefix of HumanEvalPack's `task_id` (`Python/3`, `JavaScript/3`, `Rust/3`, `Go/3`).
    pub fn task_prefix(self) -> &'static str {
        match self {
            Lang::Python => "Python",
            Lang::Js => "JavaScript",
            Lang::Rust => "Rust",
            Lang::Go => "Go",
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `--lang` was not one of the four names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown language `{0}`: use one of python, js, rust, go")]
pub struct UnknownLang(pub String);

impl FromStr for Lang {
    type Err = UnknownLang;

    fn from_str(text: &str) -> Result<Lang, UnknownLang> {
        match text.trim().to_ascii_lowercase().as_str() {
            "python" | "py" => Ok(Lang::Python),
            "js" | "javascript" | "node" => Ok(Lang::Js),
            "rust" | "rs" => Ok(Lang::Rust),
            "go" | "golang" => Ok(Lang::Go),
            _ => Err(UnknownLang(text.to_string())),
        }
    }
}

/// What an import wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportSummary {
    /// Tasks written to `tasks_file`.
    pub tasks: usize,
    /// One sentence per input line left out: file, line, field and what is wrong.
    pub problems: Vec<String>,
    /// `OUT/tasks.jsonl`.
    pub tasks_file: PathBuf,
}

/// What stops an import as a whole.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{} already holds a task set (tasks.jsonl or repos/): name an empty or new folder with --out",
        path.display()
    )]
    OutNotEmpty { path: PathBuf },
    #[error("git {command} failed in {}: {message}", dir.display())]
    Git {
        command: String,
        dir: PathBuf,
        message: String,
    },
    /// Something the import needs from this machine is missing (Go's testify sources).
    #[error("{0}")]
    Missing(String),
}

/// One line of `tasks.jsonl` as an importer writes it: SWE-bench's field names (upper-case test
/// lists included), `repo` a path relative to the file's folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub instance_id: String,
    pub repo: String,
    pub base_commit: String,
    pub problem_statement: String,
    pub patch: String,
    pub test_patch: String,
    #[serde(rename = "FAIL_TO_PASS")]
    pub fail_to_pass: Vec<String>,
    #[serde(rename = "PASS_TO_PASS")]
    pub pass_to_pass: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_command: Option<String>,
    pub language: String,
}

impl TaskRecord {
    /// The record as a [`Task`], its `repo` resolved against `tasks_file`'s folder (an imported
    /// repository is always a git working copy), `line` 1-based.
    pub fn into_task(self, tasks_file: &Path, line: usize) -> Task {
        let dir = tasks_file.parent().unwrap_or(Path::new("."));
        Task {
            instance_id: self.instance_id,
            repo: RepoSource::Git(dir.join(self.repo)),
            base_commit: Some(self.base_commit),
            problem_statement: self.problem_statement,
            patch: Some(self.patch),
            test_patch: Some(self.test_patch),
            fail_to_pass: self.fail_to_pass,
            pass_to_pass: self.pass_to_pass,
            setup_command: self.setup_command,
            test_command: self.test_command,
            language: Some(self.language),
            origin: TaskOrigin {
                file: tasks_file.to_path_buf(),
                line,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_parse_by_name_and_refuse_others() {
        let actual: Vec<Result<Lang, UnknownLang>> = ["python", "JS", "rust", "go", "cobol"]
            .iter()
            .map(|name| name.parse())
            .collect();
        let expected = vec![
            Ok(Lang::Python),
            Ok(Lang::Js),
            Ok(Lang::Rust),
            Ok(Lang::Go),
            Err(UnknownLang("cobol".into())),
        ];
        assert_eq!(actual, expected);
        assert_eq!(
            UnknownLang("cobol".into()).to_string(),
            "unknown language `cobol`: use one of python, js, rust, go"
        );
    }
}
