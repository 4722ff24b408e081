//! Reading task sets: plumb's JSON Lines, SWE-bench's published files (JSON, JSON Lines,
//! parquet) and Multi-SWE-bench records, each record resolved to a [`Task`] whose repository is on
//! this machine.
//!
//! [`load`] goes in three steps:
//! 1. the file as a whole, by its extension, is cut into records with their line (or row)
//!    numbers ([`json`], [`parquet`]); only a file that cannot be read at all is a [`LoadError`];
//! 2. each record is read by its shape ([`swebench`] or [`multi_swe`], fields in [`fields`]) and
//!    its id checked to be new in the set;
//! 3. its `repo` is resolved ([`repo`]), never by a download.
//!
//! A record that fails any step is a [`RecordProblem`] naming its line and field; the rest of the
//! set still loads, so one bad line costs one task, not the run.

mod fields;
mod json;
mod multi_swe;
mod parquet;
mod repo;
mod swebench;

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::task::{Task, TaskOrigin};

use fields::{FieldError, kind};

/// How a set is loaded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// `--repos DIR`: where GitHub names (`owner/name`) are looked up, as git mirrors or
    /// archives of the trees at their base commits.
    pub repos_dir: Option<PathBuf>,
}

/// A loaded set: the tasks that can run, in file order, and the records that cannot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    pub tasks: Vec<Task>,
    pub problems: Vec<RecordProblem>,
}

/// One bad record: the rest of the set still loads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordProblem {
    /// The task file, as it was named.
    pub file: PathBuf,
    /// 1-based line (JSON, JSON Lines) or row (parquet).
    pub line: usize,
    pub instance_id: Option<String>,
    /// The field at fault; `None` when the record as a whole is (not JSON, not an object).
    pub field: Option<String>,
    /// What is wrong, then what to change.
    pub message: String,
}

impl fmt::Display for RecordProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = if has_extension(&self.file, "parquet") {
            "row"
        } else {
            "line"
        };
        write!(f, "{} {unit} {}", self.file.display(), self.line)?;
        match (&self.instance_id, &self.field) {
            (Some(id), Some(field)) => write!(f, " (`{id}`, field `{field}`)")?,
            (Some(id), None) => write!(f, " (`{id}`)")?,
            (None, Some(field)) => write!(f, " (field `{field}`)")?,
            (None, None) => {}
        }
        write!(f, ": {}", self.message)
    }
}

/// The task file as a whole cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("task file {} does not exist; name a .jsonl, .json or .parquet task set", path.display())]
    NotFound { path: PathBuf },
    #[error("cannot read task file {}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "task file {}: unknown format `{extension}`; name a .jsonl (JSON Lines), .json or .parquet file",
        path.display()
    )]
    UnknownFormat { path: PathBuf, extension: String },
    #[error(
        "{} line {line} column {column}: not valid JSON ({message}); a .json task set is one array of \
         records, or one record a line",
        path.display()
    )]
    Json {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "task file {} is not a parquet file plumb can read ({message}); SWE-bench's published \
         parquet files (snappy-compressed) are, or convert it to JSON Lines",
        path.display()
    )]
    Parquet { path: PathBuf, message: String },
    #[error("--repos {}: {problem}; name the folder that holds the git mirrors or archives", path.display())]
    ReposDir { path: PathBuf, problem: String },
}

/// One record as a format hands it over: its line (or row) and its JSON value, or why it is not
/// JSON.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawRecord {
    pub line: usize,
    pub value: Result<Value, String>,
}

/// A record's fields, read and checked, before its `repo` is resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Draft {
    pub instance_id: String,
    /// As the record has it: a path, a URL, or a GitHub name.
    pub repo: String,
    pub base_commit: Option<String>,
    pub problem_statement: String,
    pub patch: Option<String>,
    pub test_patch: Option<String>,
    pub fail_to_pass: Vec<String>,
    pub pass_to_pass: Vec<String>,
    pub setup_command: Option<String>,
    pub test_command: Option<String>,
    pub language: Option<String>,
}

/// A record's line (or row) and its draft, or its problem.
pub(crate) type NumberedDraft = (usize, Result<Draft, RecordProblem>);

/// Loads the task set at `path`: `.jsonl`, `.json` or `.parquet`.
pub fn load(path: &Path, options: &LoadOptions) -> Result<Loaded, LoadError> {
    if let Some(dir) = options.repos_dir.as_ref().filter(|dir| !dir.is_dir()) {
        let problem = if dir.exists() {
            "not a folder"
        } else {
            "no such folder"
        };
        return Err(LoadError::ReposDir {
            path: dir.clone(),
            problem: problem.to_owned(),
        });
    }
    let task_dir = path.parent().unwrap_or_else(|| Path::new(""));
    let places = repo::Places {
        task_dir,
        repos_dir: options.repos_dir.as_deref(),
    };
    let mut loaded = Loaded::default();
    let mut seen = HashSet::new();
    for (line, draft) in drafts(path)? {
        let problem = |instance_id: Option<String>, error: FieldError| RecordProblem {
            file: path.to_path_buf(),
            line,
            instance_id,
            field: Some(error.field),
            message: error.message,
        };
        let draft = match draft {
            Ok(draft) => draft,
            Err(mut problem) => {
                problem.file = path.to_path_buf();
                loaded.problems.push(problem);
                continue;
            }
        };
        if !seen.insert(draft.instance_id.clone()) {
            let error = FieldError::new(
                "instance_id",
                format!(
                    "`{}` is already the id of an earlier record; ids are unique within a set, so \
                     rename this one or drop the duplicate",
                    draft.instance_id
                ),
            );
            loaded
                .problems
                .push(problem(Some(draft.instance_id), error));
            continue;
        }
        match repo::resolve(&draft.repo, draft.base_commit.as_deref(), places) {
            Ok(source) => loaded.tasks.push(task(draft, source, path, line)),
            Err(error) => loaded
                .problems
                .push(problem(Some(draft.instance_id), error)),
        }
    }
    Ok(loaded)
}

/// The set's records, read into drafts; a record's problem has an empty `file`, filled in by
/// [`load`].
pub(crate) fn drafts(path: &Path) -> Result<Vec<NumberedDraft>, LoadError> {
    Ok(records(path)?
        .into_iter()
        .map(|record| (record.line, draft(record)))
        .collect())
}

fn records(path: &Path) -> Result<Vec<RawRecord>, LoadError> {
    if !path.exists() {
        return Err(LoadError::NotFound {
            path: path.to_path_buf(),
        });
    }
    let extension = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let text = || {
        std::fs::read_to_string(path)
            .map(|text| {
                text.strip_prefix('\u{feff}')
                    .map(str::to_owned)
                    .unwrap_or(text)
            })
            .map_err(|source| LoadError::Unreadable {
                path: path.to_path_buf(),
                source,
            })
    };
    match extension.as_str() {
        "jsonl" | "ndjson" => Ok(json::lines(&text()?)),
        "json" => json::document(path, &text()?),
        "parquet" => parquet::rows(path),
        _ => Err(LoadError::UnknownFormat {
            path: path.to_path_buf(),
            extension: if extension.is_empty() {
                "(none)".to_owned()
            } else {
                format!(".{extension}")
            },
        }),
    }
}

fn draft(record: RawRecord) -> Result<Draft, RecordProblem> {
    let whole = |message: String| RecordProblem {
        file: PathBuf::new(),
        line: record.line,
        instance_id: None,
        field: None,
        message,
    };
    let object = match &record.value {
        Ok(Value::Object(object)) => object,
        Ok(other) => {
            return Err(whole(format!(
                "the record is {}; each record is a JSON object with SWE-bench's fields",
                kind(other)
            )));
        }
        Err(message) => return Err(whole(message.clone())),
    };
    let read = if multi_swe::is_multi_swe(object) {
        multi_swe::read(object)
    } else {
        swebench::read(object)
    };
    read.map_err(|(instance_id, error)| RecordProblem {
        file: PathBuf::new(),
        line: record.line,
        instance_id,
        field: Some(error.field),
        message: error.message,
    })
}

fn task(draft: Draft, repo: crate::task::RepoSource, file: &Path, line: usize) -> Task {
    Task {
        instance_id: draft.instance_id,
        repo,
        base_commit: draft.base_commit,
        problem_statement: draft.problem_statement,
        patch: draft.patch,
        test_patch: draft.test_patch,
        fail_to_pass: draft.fail_to_pass,
        pass_to_pass: draft.pass_to_pass,
        setup_command: draft.setup_command,
        test_command: draft.test_command,
        language: draft.language,
        origin: TaskOrigin {
            file: file.to_path_buf(),
            line,
        },
    }
}

fn has_extension(path: &Path, extension: &str) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case(extension))
}
