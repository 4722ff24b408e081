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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{empty, infra, scored};
    use pretty_assertions::assert_eq;

    #[test]
    fn one_line_a_task_with_the_first_resolved_patch() {
        let mut p1 = scored("t1", 1, false, true);
        p1.patch = "first".into();
        let mut p2 = scored("t1", 2, true, true);
        p2.patch = "resolved".into();
        let mut p3 = scored("t1", 3, true, true);
        p3.patch = "resolved later".into();
        let mut finished = scored("t3", 2, false, true);
        finished.patch = "after an error".into();
        let results = vec![p3, p1, p2, empty("t2", 1), infra("t3", 1), finished];
        let out = tempfile::tempdir().unwrap();
        let path = out.path().join("preds/predictions.jsonl");

        write_predictions(&path, &results, "plumb+scripted").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let actual: Vec<serde_json::Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        let line = |id: &str, patch: &str| {
            serde_json::json!({
                "instance_id": id, "model_name_or_path": "plumb+scripted", "model_patch": patch
            })
        };
        let expected = vec![
            line("t1", "resolved"),
            line("t2", ""),
            line("t3", "after an error"),
        ];
        assert_eq!(actual, expected);
    }
}
