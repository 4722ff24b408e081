//! HumanEvalFix (HumanEvalPack): one JSON line per task (`task_id`, `declaration`,
//! `buggy_solution`, `canonical_solution`, `test`, `example_test`, `entry_point`, `docstring`,
//! `failure_symptoms`, and for Go `import` and `test_setup`) becomes one task and one repository.
//!
//! For every line, in order: read the record ([`Problem::parse`]), lay out the task's files in the
//! language's usual way (`python.rs`, `js.rs`, `rust.rs`, `go.rs`, each giving a [`Layout`]), commit
//! the buggy tree (its `base_commit`), then diff the canonical solution against it (`patch`) and
//! the hidden test files against it (`test_patch`), and write the record. The full test is only
//! ever in `test_patch`; the tree holds the buggy function and the record's example tests; the
//! ticket ([`ticket`]) holds the function's name, file, signature and description, never the
//! canonical solution or the hidden test.

mod go;
mod js;
mod python;
mod rust;

use std::collections::HashSet;
use std::fs;
use std::io::Write as _;
use std::path::Path;

use serde_json::Value;

use super::git_repo::{File, Repo};
use super::{ImportError, ImportSummary, Lang, TaskRecord};
use crate::task::folder_name;

/// One HumanEvalPack record, its text fields as they are in the file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Problem {
    pub task_id: String,
    pub entry_point: String,
    pub declaration: String,
    pub buggy_solution: String,
    pub canonical_solution: String,
    pub test: String,
    /// Empty when the record has none (or the string `None`, as the Rust file writes it).
    pub example_test: String,
    pub docstring: String,
    pub signature: String,
    pub failure_symptoms: String,
    /// Go: the solution's `import ( … )` block.
    pub import: String,
    /// Go: the test's `package` line and imports.
    pub test_setup: String,
}

impl Problem {
    /// Reads one line; the error names the field and says what is wrong with it.
    pub(crate) fn parse(line: &str) -> Result<Problem, String> {
        let value: Value =
            serde_json::from_str(line).map_err(|error| format!("is not valid JSON: {error}"))?;
        let Value::Object(fields) = value else {
            return Err("is not a JSON object".into());
        };
        let text = |name: &str, required: bool| -> Result<String, String> {
            match fields.get(name) {
                Some(Value::String(text)) if required && text.trim().is_empty() => {
                    Err(format!("(field `{name}`): is empty; a task needs it"))
                }
                Some(Value::String(text)) if text.trim() == "None" => Ok(String::new()),
                Some(Value::String(text)) => Ok(text.clone()),
                None | Some(Value::Null) if !required => Ok(String::new()),
                None | Some(Value::Null) => Err(format!(
                    "(field `{name}`): missing; HumanEvalPack records have it"
                )),
                Some(other) => Err(format!(
                    "(field `{name}`): is {}, not a string",
                    kind_of(other)
                )),
            }
        };
        let problem = Problem {
            task_id: text("task_id", true)?,
            entry_point: text("entry_point", true)?,
            declaration: text("declaration", true)?,
            buggy_solution: text("buggy_solution", true)?,
            canonical_solution: text("canonical_solution", true)?,
            test: text("test", true)?,
            example_test: text("example_test", false)?,
            docstring: text("docstring", false)?,
            signature: text("signature", false)?,
            failure_symptoms: text("failure_symptoms", false)?,
            import: text("import", false)?,
            test_setup: text("test_setup", false)?,
        };
        let entry = &problem.entry_point;
        if !entry.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || entry.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(format!(
                "(field `entry_point`): `{entry}` is not a function name (letters, digits, `_`)"
            ));
        }
        Ok(problem)
    }

    /// The buggy function as the benchmark writes it: declaration, then the buggy body.
    pub(crate) fn buggy_code(&self) -> String {
        join_code(&self.declaration, &self.buggy_solution)
    }

    /// The fixed function: declaration, then the canonical body.
    pub(crate) fn canonical_code(&self) -> String {
        join_code(&self.declaration, &self.canonical_solution)
    }
}

fn join_code(declaration: &str, body: &str) -> String {
    let mut code = format!("{declaration}{body}");
    let trimmed = code.trim_end().len();
    code.truncate(trimmed);
    code.push('\n');
    code
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// One task's files, as a language module lays them out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Layout {
    /// The tree at `base_commit`: the buggy function, its example tests, the build files.
    pub files: Vec<File>,
    /// The function's file with the canonical solution (what `patch` changes).
    pub fixed: File,
    /// The files `test_patch` writes (the hidden test; a file it must change to be compiled).
    pub hidden: Vec<File>,
    pub fail_to_pass: Vec<String>,
    pub setup_command: Option<String>,
    pub test_command: Option<String>,
}

/// What every language's layout needs from outside the record (Go's vendored testify).
struct Context {
    go_vendor: Vec<File>,
}

/// Imports HumanEvalFix's `file` (one language's `humanevalpack.jsonl`) into `out`:
/// `out/tasks.jsonl` and `out/repos/<task folder>/`. `out` may exist but must not already hold a
/// task set.
pub fn import_humanevalpack(
    file: &Path,
    lang: Lang,
    out: &Path,
) -> Result<ImportSummary, ImportError> {
    let text = fs::read_to_string(file).map_err(|source| ImportError::Read {
        path: file.to_path_buf(),
        source,
    })?;
    let tasks_file = out.join("tasks.jsonl");
    let repos = out.join("repos");
    if tasks_file.exists() || repos.exists() {
        return Err(ImportError::OutNotEmpty {
            path: out.to_path_buf(),
        });
    }
    fs::create_dir_all(&repos).map_err(|source| ImportError::Write {
        path: repos.clone(),
        source,
    })?;
    let context = Context {
        go_vendor: match lang {
            Lang::Go => go::vendor()?,
            Lang::Python | Lang::Js | Lang::Rust => Vec::new(),
        },
    };
    let name = file.file_name().map_or_else(
        || file.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    let mut lines = Vec::new();
    let mut problems = Vec::new();
    let mut seen = HashSet::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{name} line {}", index + 1);
        let problem = match Problem::parse(line) {
            Ok(problem) => problem,
            Err(message) => {
                problems.push(format!("{at} {message}; the line is left out"));
                continue;
            }
        };
        if problem.task_id.split('/').next() != Some(lang.task_prefix()) {
            problems.push(format!(
                "{at} (field `task_id`): `{}` is not a {} task (it should start with `{}/`); \
                 import it with the --lang of its file",
                problem.task_id,
                lang,
                lang.task_prefix()
            ));
            continue;
        }
        let folder = folder_name(&problem.task_id);
        if !seen.insert(folder.clone()) {
            problems.push(format!(
                "{at} (field `task_id`): `{}` comes twice (or names the same folder as an \
                 earlier task); the second is left out",
                problem.task_id
            ));
            continue;
        }
        let layout = match lay_out(&problem, lang, &context) {
            Ok(layout) => layout,
            Err(message) => {
                problems.push(format!("{at} {message}; the line is left out"));
                continue;
            }
        };
        let record = write_task(&problem, lang, &layout, &repos.join(&folder), &folder)?;
        let json = serde_json::to_string(&record).map_err(|error| ImportError::Write {
            path: tasks_file.clone(),
            source: std::io::Error::other(error),
        })?;
        lines.push(json);
    }
    let write = || -> std::io::Result<()> {
        let mut out = fs::File::create(&tasks_file)?;
        for line in &lines {
            writeln!(out, "{line}")?;
        }
        out.sync_all()
    };
    write().map_err(|source| ImportError::Write {
        path: tasks_file.clone(),
        source,
    })?;
    Ok(ImportSummary {
        tasks: lines.len(),
        problems,
        tasks_file,
    })
}

fn lay_out(problem: &Problem, lang: Lang, context: &Context) -> Result<Layout, String> {
    match lang {
        Lang::Python => python::layout(problem),
        Lang::Js => js::layout(problem),
        Lang::Rust => rust::layout(problem),
        Lang::Go => go::layout(problem, &context.go_vendor),
    }
}

/// Commits the buggy tree, makes the two diffs, and returns the task's record.
fn write_task(
    problem: &Problem,
    lang: Lang,
    layout: &Layout,
    dir: &Path,
    folder: &str,
) -> Result<TaskRecord, ImportError> {
    let message = format!(
        "{}: `{}` as HumanEvalFix gives it (buggy)",
        problem.task_id, problem.entry_point
    );
    let repo = Repo::create(dir, &layout.files, &message)?;
    let patch = repo.diff(std::slice::from_ref(&layout.fixed))?;
    let test_patch = repo.diff(&layout.hidden)?;
    Ok(TaskRecord {
        instance_id: problem.task_id.clone(),
        repo: format!("repos/{folder}"),
        base_commit: repo.commit().to_string(),
        problem_statement: ticket(problem, &layout.fixed.0),
        patch,
        test_patch,
        fail_to_pass: layout.fail_to_pass.clone(),
        pass_to_pass: Vec::new(),
        setup_command: layout.setup_command.clone(),
        test_command: layout.test_command.clone(),
        language: lang.as_str().to_string(),
    })
}

/// The ticket a person would write: which function, where, what it should do, and what goes
/// wrong. Never the canonical solution, never the hidden test.
pub(crate) fn ticket(problem: &Problem, function_file: &str) -> String {
    let mut text = format!(
        "`{}` in `{function_file}` is buggy: its tests fail. Fix it.\n",
        problem.entry_point
    );
    let signature = problem.signature.trim();
    if !signature.is_empty() {
        text.push_str(&format!("\nSignature: `{signature}`\n"));
    }
    let docstring = problem.docstring.trim();
    if !docstring.is_empty() {
        text.push_str(&format!("\nWhat it should do:\n\n{docstring}\n"));
    }
    let symptom = problem.failure_symptoms.trim();
    if !symptom.is_empty() {
        text.push_str(&format!("\nWhat goes wrong: {symptom}.\n"));
    }
    text
}

/// Every line of `text` with `prefix` in front (empty lines stay empty).
pub(crate) fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|line| {
            if line.trim().is_empty() {
                String::new()
            } else {
                format!("{prefix}{line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `BelowZero` or `belowZero` → `below_zero` (Go's and JavaScript's names as file names).
pub(crate) fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (index, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if index > 0 && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_line_names_its_field() {
        let actual = [
            r#"{"task_id": "Python/1"}"#,
            r#"{"task_id": "Python/1", "entry_point": 3}"#,
            "[1]",
            "{",
        ]
        .map(|line| Problem::parse(line).unwrap_err());
        let expected = [
            "(field `entry_point`): missing; HumanEvalPack records have it".to_string(),
            "(field `entry_point`): is a number, not a string".to_string(),
            "is not a JSON object".to_string(),
            "is not valid JSON: EOF while parsing an object at line 1 column 1".to_string(),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn the_ticket_names_the_function_and_never_the_fix() {
        let problem = Problem {
            task_id: "Python/3".into(),
            entry_point: "below_zero".into(),
            signature: "below_zero(operations: List[int]) -> bool".into(),
            docstring: "Detect if the balance falls below zero.\n".into(),
            failure_symptoms: "incorrect output".into(),
            canonical_solution: "    return balance < 0\n".into(),
            ..Problem::default()
        };
        let actual = ticket(&problem, "below_zero.py");
        let expected = "`below_zero` in `below_zero.py` is buggy: its tests fail. Fix it.\n\
                        \nSignature: `below_zero(operations: List[int]) -> bool`\n\
                        \nWhat it should do:\n\nDetect if the balance falls below zero.\n\
                        \nWhat goes wrong: incorrect output.\n";
        assert_eq!(actual, expected);
    }

    #[test]
    fn names_become_file_names() {
        let actual = ["BelowZero", "belowZero", "below_zero", "Fib4"].map(snake_case);
        assert_eq!(actual, ["below_zero", "below_zero", "below_zero", "fib4"]);
    }
}
