//! An eval's attempt as a job of the service's queue: what `plumb eval --db` stores for each
//! attempt and a worker on any machine reads back and runs with [`run_attempt`]. The worker's own
//! settings and sandbox apply; the eval only names the model and may lower the rounds. The task's
//! starting tree travels with it, packed, through the store.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::{Engine, ModelChoice, attempt};
use crate::result::AttemptResult;
use crate::task::Task;

/// The `kind` of a stored task that is an eval's attempt.
pub const QUEUED_ATTEMPT_KIND: &str = "eval_attempt";

/// One attempt of one task of an eval, as stored for a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueuedAttempt {
    /// Always [`QUEUED_ATTEMPT_KIND`].
    pub kind: String,
    /// The eval's id (from its output folder), so a resumed eval finds its attempts.
    pub eval: String,
    pub task: Task,
    pub attempt: u32,
    /// `oracle`, `script:FOLDER` or a model spec.
    pub model: String,
    /// The eval's `--max-rounds`, which may only lower the worker's limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rounds: Option<u32>,
    /// The store's upload holding the task's starting tree as a `.tar.gz` (the eval packed it),
    /// so a worker needs nothing of the machine the eval started on; `None`: the task's own
    /// `repo` path is read on the worker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
}

impl QueuedAttempt {
    /// Whether a stored request is an eval's attempt.
    pub fn is_one(spec: &serde_json::Value) -> bool {
        spec.get("kind").and_then(serde_json::Value::as_str) == Some(QUEUED_ATTEMPT_KIND)
    }

    /// The stored task's title: the eval, the task and the attempt, unique within an eval.
    pub fn title(&self) -> String {
        format!(
            "eval {} {} attempt {}",
            self.eval, self.task.instance_id, self.attempt
        )
    }
}

/// Runs attempt `attempt` of `task` into `task_dir/attempt-N` as the batch runner runs each
/// (`result.json` written last); `None` when cancelled. One caller at a time per `task_dir`.
pub async fn run_attempt(
    model: ModelChoice,
    setup_cache: PathBuf,
    engine: Arc<dyn Engine>,
    task: &Task,
    attempt: u32,
    task_dir: &Path,
    cancel: &CancellationToken,
) -> Option<AttemptResult> {
    let shared = attempt::Shared {
        model,
        setup_cache,
        keep_trees: false,
        engine,
    };
    let tree_lock = tokio::sync::Mutex::new(());
    attempt::run(&shared, task, attempt, task_dir, &tree_lock, cancel).await
}
