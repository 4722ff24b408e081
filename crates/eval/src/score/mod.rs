//! Scoring as SWE-bench does. (Placeholder API until the scorer lands; see the score brief.)

use std::path::Path;

use crate::result::Score;
use crate::task::Task;

pub struct ScoreInput<'a> {
    pub task: &'a Task,
    pub base_tree: &'a Path,
    pub patch: &'a str,
    pub test_command: &'a plumb_verify::TestCommand,
    pub attempt_dir: &'a Path,
    pub sandbox: &'a dyn plumb_sandbox::Sandbox,
    pub limits: plumb_sandbox::Limits,
    pub cancel: &'a tokio_util::sync::CancellationToken,
}

#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    #[error("{0}")]
    Infra(String),
}

pub async fn score(input: ScoreInput<'_>) -> Result<Score, ScoreError> {
    let _ = input;
    Err(ScoreError::Infra("the scorer is not built yet".to_owned()))
}
