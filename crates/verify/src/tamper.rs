//! The tamper scan (DESIGN.md §5, step 2): what in a change could make the tests say "pass"
//! without the bug being fixed.
//!
//! The caller diffs the workspace against the baseline (new files included) and hands each changed
//! file over as a [`FileChange`] with both texts; [`scan`] then looks, per file, for
//! 1. an existing test file modified, deleted or renamed (a new test file is fine),
//! 2. new or changed test configuration (`conftest.py`, pytest/tox/jest/vitest settings, Cargo test
//!    targets, `go.mod` replace lines; see `config`),
//! 3. skip, xfail, ignore or `.only` markers on the lines the change adds (see `markers`).
//!
//! Every finding is a [`TamperFlag`] for a person to look at; [`TamperPolicy`] (from `plumb.toml`)
//! says which kinds also block. Nothing here reads files or runs git.

mod config;
mod markers;

use serde::{Deserialize, Serialize};

/// How a file changed between the baseline and the current tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeStatus {
    Added,
    Modified,
    Deleted,
    /// Moved from `from` (the change's `path` is the new name), perhaps edited too.
    Renamed {
        from: String,
    },
}

/// One changed file: its path relative to the repository root (with `/`), and its text at the
/// baseline (`before`, for a rename the text at the old name) and now (`after`). A text is `None`
/// where the file does not exist on that side, or is binary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    pub status: ChangeStatus,
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// What kind of tampering a flag is about; the names in `plumb.toml` are the snake_case ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TamperKind {
    TestModified,
    TestDeleted,
    TestRenamed,
    TestConfigChanged,
    SkipMarkerAdded,
}

impl TamperKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TamperKind::TestModified => "test_modified",
            TamperKind::TestDeleted => "test_deleted",
            TamperKind::TestRenamed => "test_renamed",
            TamperKind::TestConfigChanged => "test_config_changed",
            TamperKind::SkipMarkerAdded => "skip_marker_added",
        }
    }
}

/// One finding of the scan. `detail` is one sentence, starting with the path (and line), written
/// for both the person approving and the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TamperFlag {
    pub kind: TamperKind,
    pub path: String,
    pub line: Option<usize>,
    pub detail: String,
}

/// Which kinds of flag stop the run instead of only asking for attention (`[verify.tamper]` in
/// `plumb.toml`, e.g. `block = ["test_deleted", "skip_marker_added"]`). The default blocks nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TamperPolicy {
    pub block: Vec<TamperKind>,
}

impl TamperPolicy {
    /// The flags this policy turns into failures, in the order given.
    pub fn blocking<'a>(&self, flags: &'a [TamperFlag]) -> Vec<&'a TamperFlag> {
        flags
            .iter()
            .filter(|flag| self.block.contains(&flag.kind))
            .collect()
    }
}

/// Scans every change; the flags come in the order of `changes`, and per file the file-level flags
/// first, then the markers by line.
pub fn scan(changes: &[FileChange]) -> Vec<TamperFlag> {
    let mut flags = Vec::new();
    for change in changes {
        scan_change(change, &mut flags);
    }
    flags
}

fn scan_change(change: &FileChange, flags: &mut Vec<TamperFlag>) {
    let path = change.path.as_str();
    let before = change.before.as_deref();
    let after = change.after.as_deref();

    match &change.status {
        ChangeStatus::Added => flags.extend(config::check(path, None, after)),
        ChangeStatus::Modified => {
            if is_test_file(path) && (before.is_none() || before != after) {
                flags.push(file_flag(
                    TamperKind::TestModified,
                    path,
                    "an existing test file was modified",
                ));
            }
            flags.extend(config::check(path, before, after));
        }
        ChangeStatus::Deleted => {
            if is_test_file(path) {
                flags.push(file_flag(
                    TamperKind::TestDeleted,
                    path,
                    "an existing test file was deleted",
                ));
            }
            flags.extend(config::check(path, before, None));
        }
        ChangeStatus::Renamed { from } => {
            if is_test_file(from) {
                let what = format!("an existing test file was renamed from {from}");
                flags.push(file_flag(TamperKind::TestRenamed, path, &what));
            }
            // The settings left the old place and arrived at the new one, which may apply to
            // other tests: judged as a deletion plus an addition.
            flags.extend(config::check(from, before, None));
            flags.extend(config::check(path, None, after));
        }
    }

    if let Some(after) = after
        && markers::scanned(path, is_test_file(path))
    {
        flags.extend(markers::added(path, before, after));
    }
}

/// Whether changing `path` from `before` to `after` (`None` where absent) changes test
/// configuration: what [`scan`] flags as `test_config_changed`. The ladder judges the tests with
/// the baseline's version of such files ([`crate::baseline_config`]).
pub fn is_test_config_change(path: &str, before: Option<&str>, after: Option<&str>) -> bool {
    config::check(path, before, after).is_some()
}

fn file_flag(kind: TamperKind, path: &str, what: &str) -> TamperFlag {
    TamperFlag {
        kind,
        path: path.to_string(),
        line: None,
        detail: format!("{path}: {what}"),
    }
}

/// Whether `path` holds tests, judged by its path alone: anything under a `tests/`, `test/`,
/// `__tests__/` or `testdata/` folder (so `src/test/java/**` and Rust's `tests/*.rs`), and files
/// named `test_*.py`, `*_test.py`, `tests.py`, `*_test.go`, `*.test.{js,ts,jsx,tsx,mjs,cjs}` or
/// `*.spec.*`. `conftest.py` is test configuration, not a test file. Rust unit tests inside
/// `src/` are not found this way.
pub fn is_test_file(path: &str) -> bool {
    let mut parts: Vec<&str> = path
        .split(['/', '\\'])
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    let Some(name) = parts.pop() else {
        return false;
    };
    if name == "conftest.py" {
        return false;
    }
    if parts
        .iter()
        .any(|dir| matches!(*dir, "tests" | "test" | "__tests__" | "testdata"))
    {
        return true;
    }
    if let Some(stem) = name.strip_suffix(".py") {
        return stem.starts_with("test_") || stem.ends_with("_test") || stem == "tests";
    }
    if name.ends_with("_test.go") {
        return true;
    }
    let pieces: Vec<&str> = name.split('.').collect();
    match pieces.as_slice() {
        [_, .., "spec", _] => true,
        [_, .., "test", ext] => matches!(*ext, "js" | "ts" | "jsx" | "tsx" | "mjs" | "cjs"),
        _ => false,
    }
}
