//! Reading task sets. (Placeholder: plumb's JSON Lines with paths only, until the readers land.)

use std::path::{Path, PathBuf};

use crate::task::{RepoSource, Task, TaskOrigin};

#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    pub repos_dir: Option<PathBuf>,
}

#[derive(Debug, Default)]
pub struct Loaded {
    pub tasks: Vec<Task>,
    pub problems: Vec<RecordProblem>,
}

#[derive(Debug, Clone)]
pub struct RecordProblem {
    pub file: PathBuf,
    pub line: usize,
    pub instance_id: Option<String>,
    pub field: Option<String>,
    pub message: String,
}

impl std::fmt::Display for RecordProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} line {}: {}",
            self.file.display(),
            self.line,
            self.message
        )
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct LoadError(String);

#[derive(serde::Deserialize)]
struct Record {
    instance_id: String,
    repo: String,
    base_commit: Option<String>,
    problem_statement: String,
    patch: Option<String>,
    test_patch: Option<String>,
    #[serde(rename = "FAIL_TO_PASS", default)]
    fail_to_pass: Vec<String>,
    #[serde(rename = "PASS_TO_PASS", default)]
    pass_to_pass: Vec<String>,
    setup_command: Option<String>,
    test_command: Option<String>,
    language: Option<String>,
}

pub fn load(path: &Path, _options: &LoadOptions) -> Result<Loaded, LoadError> {
    let text = std::fs::read_to_string(path)
        .map_err(|err| LoadError(format!("{}: {err}", path.display())))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut loaded = Loaded::default();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(line) {
            Ok(r) => {
                let repo = base.join(&r.repo);
                let repo = if repo.is_dir() {
                    RepoSource::Git(repo)
                } else {
                    RepoSource::Archive(repo)
                };
                loaded.tasks.push(Task {
                    instance_id: r.instance_id,
                    repo,
                    base_commit: r.base_commit,
                    problem_statement: r.problem_statement,
                    patch: r.patch,
                    test_patch: r.test_patch,
                    fail_to_pass: r.fail_to_pass,
                    pass_to_pass: r.pass_to_pass,
                    setup_command: r.setup_command,
                    test_command: r.test_command,
                    language: r.language,
                    origin: TaskOrigin {
                        file: path.to_path_buf(),
                        line: index + 1,
                    },
                });
            }
            Err(err) => loaded.problems.push(RecordProblem {
                file: path.to_path_buf(),
                line: index + 1,
                instance_id: None,
                field: None,
                message: err.to_string(),
            }),
        }
    }
    Ok(loaded)
}
