//! SWE-bench's predictions file: JSON Lines of `{"instance_id", "model_name_or_path",
//! "model_patch"}`, one line per task, so the official harness can score plumb's patches
//! itself. A task's patch is its representative attempt's (the first resolved attempt, else the
//! first that finished, else the first), the same attempt `summary.json`'s id lists stand on.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::tally::{group, representative};
use super::{ReportError, write_atomic};
use crate::result::AttemptResult;

/// One line of the predictions file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prediction {
    pub instance_id: String,
    pub model_name_or_path: String,
    pub model_patch: String,
}

/// Writes one prediction a task, in task id order, to `path` (its folder is made if missing).
pub fn write_predictions(
    path: &Path,
    results: &[AttemptResult],
    model_name: &str,
) -> Result<(), ReportError> {
    let mut text = String::new();
    for attempts in group(results).values() {
        let Some(chosen) = representative(attempts) else {
            continue;
        };
        let line = Prediction {
            instance_id: chosen.instance_id.clone(),
            model_name_or_path: model_name.to_string(),
            model_patch: chosen.patch.clone(),
        };
        let json = serde_json::to_string(&line).map_err(|source| ReportError::Write {
            path: path.to_path_buf(),
            source: std::io::Error::other(source),
        })?;
        text.push_str(&json);
        text.push('\n');
    }
    write_atomic(path, &text)
}
