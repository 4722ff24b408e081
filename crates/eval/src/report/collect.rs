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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures::{empty, scored, write_result};
    use pretty_assertions::assert_eq;

    #[test]
    fn collects_finished_attempts_sorted_and_skips_everything_else() {
        let out = tempfile::tempdir().unwrap();
        write_result(out.path(), &scored("b", 1, true, true));
        write_result(out.path(), &scored("a", 10, false, false));
        write_result(out.path(), &empty("a", 2));
        // An attempt that did not finish, a cache folder, the run's own files.
        fs::create_dir_all(out.path().join("a/attempt-3")).unwrap();
        fs::create_dir_all(out.path().join("setup-cache/attempt-x")).unwrap();
        fs::write(out.path().join("summary.json"), "{}").unwrap();

        let actual: Vec<(String, u32)> = collect(out.path())
            .unwrap()
            .into_iter()
            .map(|r| (r.instance_id, r.attempt))
            .collect();
        let expected = vec![("a".into(), 2), ("a".into(), 10), ("b".into(), 1)];
        assert_eq!(actual, expected);
    }

    #[test]
    fn bad_folders_and_files_are_named_in_the_error() {
        let missing = tempfile::tempdir().unwrap().path().join("nowhere");
        let broken = tempfile::tempdir().unwrap();
        write_result(broken.path(), &scored("a", 1, true, true));
        let broken_file = broken.path().join("a/attempt-1/result.json");
        fs::write(&broken_file, "{\"v\": 1, \"instance_id\": ").unwrap();
        let newer = tempfile::tempdir().unwrap();
        let mut future = scored("a", 1, true, true);
        future.v = RESULT_VERSION + 1;
        write_result(newer.path(), &future);
        let twice = tempfile::tempdir().unwrap();
        write_result(twice.path(), &scored("x", 1, true, true));
        let copy = twice.path().join("x-copy/attempt-1");
        fs::create_dir_all(&copy).unwrap();
        fs::copy(
            twice.path().join("x/attempt-1/result.json"),
            copy.join("result.json"),
        )
        .unwrap();

        let message = |dir: &Path| {
            collect(dir)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        let actual = [
            message(&missing).starts_with(&format!(
                "cannot read the eval output folder {}:",
                missing.display()
            )),
            message(broken.path()).starts_with(&format!(
                "{} is not a result plumb eval wrote: EOF",
                broken_file.display()
            )),
            message(newer.path()).contains("has result version 2; this plumb reads version 1"),
            message(twice.path()).contains("both hold attempt 1 of task \"x\""),
        ];
        assert_eq!(actual, [true; 4]);
    }
}
