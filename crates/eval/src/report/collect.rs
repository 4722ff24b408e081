//! Reading a run back: every `OUT/<task>/attempt-<n>/result.json`. An attempt folder without
//! `result.json` is an attempt that did not finish (the runner writes it last) and is left out;
//! other files and folders in `OUT` (summary.json, report.html, caches) are not attempts.

use std::fs;
use std::path::{Path, PathBuf};

use super::ReportError;
use crate::result::{AttemptResult, RESULT_VERSION};

/// One finished attempt and its folder, relative to `OUT` (`<task>/attempt-<n>`).
#[derive(Debug, Clone)]
pub(crate) struct Collected {
    pub folder: PathBuf,
    pub result: AttemptResult,
}

/// Every finished attempt under `out_dir`, sorted by task id and attempt number.
pub fn collect(out_dir: &Path) -> Result<Vec<AttemptResult>, ReportError> {
    Ok(collect_with_folders(out_dir)?
        .into_iter()
        .map(|c| c.result)
        .collect())
}

/// [`collect`], keeping each attempt's folder (for the report's links).
pub(crate) fn collect_with_folders(out_dir: &Path) -> Result<Vec<Collected>, ReportError> {
    let mut found = Vec::new();
    for task in sorted_dirs(out_dir, true)? {
        for attempt in sorted_dirs(&out_dir.join(&task), false)? {
            if !is_attempt_name(&attempt) {
                continue;
            }
            let folder = PathBuf::from(&task).join(&attempt);
            let path = out_dir.join(&folder).join("result.json");
            let text = match fs::read_to_string(&path) {
                Ok(text) => text,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => return Err(ReportError::Read { path, source }),
            };
            let result = parse(&path, &text)?;
            found.push(Collected { folder, result });
        }
    }
    found.sort_by(|a, b| {
        (&a.result.instance_id, a.result.attempt).cmp(&(&b.result.instance_id, b.result.attempt))
    });
    for pair in found.windows(2) {
        if let [a, b] = pair
            && a.result.instance_id == b.result.instance_id
            && a.result.attempt == b.result.attempt
        {
            return Err(ReportError::Duplicate {
                instance_id: a.result.instance_id.clone(),
                attempt: a.result.attempt,
                first: out_dir.join(&a.folder),
                second: out_dir.join(&b.folder),
            });
        }
    }
    Ok(found)
}

fn parse(path: &Path, text: &str) -> Result<AttemptResult, ReportError> {
    // The version first, so a newer file is named as such rather than as a missing field.
    #[derive(serde::Deserialize)]
    struct Versioned {
        v: u32,
    }
    let parse_err = |source| ReportError::Parse {
        path: path.to_path_buf(),
        source,
    };
    let version: Versioned = serde_json::from_str(text).map_err(parse_err)?;
    if version.v > RESULT_VERSION {
        return Err(ReportError::Version {
            path: path.to_path_buf(),
            found: version.v,
            supported: RESULT_VERSION,
        });
    }
    serde_json::from_str(text).map_err(parse_err)
}

/// `attempt-<n>` with `n` a number.
fn is_attempt_name(name: &str) -> bool {
    name.strip_prefix("attempt-")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The names of the real folders (links are not followed) in `dir`, sorted. `top` says `dir` is
/// `OUT` itself, whose absence is the user's mistake rather than a damaged run.
fn sorted_dirs(dir: &Path, top: bool) -> Result<Vec<String>, ReportError> {
    let entries = fs::read_dir(dir).map_err(|source| {
        if top {
            ReportError::OutDir {
                path: dir.to_path_buf(),
                source,
            }
        } else {
            ReportError::Read {
                path: dir.to_path_buf(),
                source,
            }
        }
    })?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| ReportError::Read {
            path: dir.to_path_buf(),
            source,
        })?;
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        // A name that is not UTF-8 was not written by the runner (task folders are ASCII).
        if let (true, Some(name)) = (is_dir, entry.file_name().to_str()) {
            names.push(name.to_string());
        }
    }
    names.sort();
    Ok(names)
}
