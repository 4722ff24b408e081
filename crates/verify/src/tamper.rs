//! The tamper scan (docs/contracts.md §5, step 2): what in a change could make the tests say "pass"
//! without the bug being fixed, and what in the patch is a hazard once it is applied.
//!
//! The caller lists the change as git stages it (the patch's own content, never the workspace's
//! files, which may be links) and hands each changed file over as a [`FileChange`] with both texts
//! and both [`FileMode`]s; [`scan`] then looks, per file, for
//! 1. an existing test file modified, deleted or renamed (a new test file is fine, and so are new
//!    tests only added to an existing one: see `added_tests`, reported by [`tests_added`]),
//! 2. new or changed test configuration (`conftest.py`, pytest/tox/jest/vitest settings, Cargo test
//!    targets, `go.mod` replace lines; see `config`),
//! 3. patch hazards: symbolic links (`links`), mode changes, new executables and gitlinks
//!    (`modes`), CI and automation files (`automation`), build files (`build_files`),
//!    bidirectional, terminal-control or invisible characters in file names and added lines
//!    (`hidden`), and names that look like another path (`confusable`),
//! 4. skip, xfail, ignore or `.only` markers on the lines the change adds (see `markers`), and
//!    `pytest_plugins` on the lines added to a Python test file (`plugins`).
//!
//! [`nested_flags`] flags what the workspace kept out of the patch: a `.git` below the root or a
//! changed top `.gitmodules` (`nested`).
//!
//! Every finding is a [`TamperFlag`] for a person to look at; [`TamperPolicy`] (from `plumb.toml`)
//! says which kinds also block (`kinds`). Details never carry a raw control character: paths and
//! link targets are shown with such characters spelled out (`<U+202E>`). Nothing here reads files
//! or runs git.

mod added_tests;
mod automation;
mod build_files;
mod config;
mod confusable;
mod hidden;
mod kinds;
mod links;
mod markers;
mod modes;
mod nested;
mod plugins;
pub mod setup_files;

use serde::{Deserialize, Serialize};

pub use added_tests::TestsAdded;
pub use kinds::{TamperKind, TamperPolicy};
pub use nested::{Nested, NestedKind, nested_flags};
pub use setup_files::{TestSetupFiles, is_runner_config};

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

/// What git stores at a path: its mode (`100644`, `100755`, `120000`, `160000`) and, for a link,
/// the target it names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FileMode {
    Regular,
    Executable,
    Symlink {
        target: String,
    },
    /// A commit of another repository (what a submodule or a nested repository is staged as).
    Gitlink,
}

impl FileMode {
    /// Git's octal mode.
    pub fn octal(&self) -> &'static str {
        match self {
            FileMode::Regular => "100644",
            FileMode::Executable => "100755",
            FileMode::Symlink { .. } => "120000",
            FileMode::Gitlink => "160000",
        }
    }
}

/// One changed file: its path relative to the repository root (with `/`), its text at the
/// baseline (`before`, for a rename the text at the old name) and in the patch (`after`), and its
/// modes on both sides. A text is `None` where the file does not exist on that side, is binary,
/// or is not a regular file (a link's target is in its mode). A mode is `None` where the file
/// does not exist on that side (or the caller did not say: no mode rule applies then).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    pub status: ChangeStatus,
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
    #[serde(default)]
    pub before_mode: Option<FileMode>,
    #[serde(default)]
    pub after_mode: Option<FileMode>,
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

/// Scans every change; the flags come in the order of `changes`, and per file the file-level flags
/// first (tests, test settings, links, modes, automation and build files, the file name), then
/// the added lines' (plugins, markers, then hidden characters) by line. `setup` names the files
/// the test runners' configurations run around the tests ([`TestSetupFiles::from_configs`]).
pub fn scan(changes: &[FileChange], setup: &TestSetupFiles) -> Vec<TamperFlag> {
    let mut flags = Vec::new();
    for change in changes {
        scan_change(change, setup, &mut flags);
    }
    flags
}

/// The existing test files the change only added new tests to (which [`scan`] does not flag as
/// modified), in the order of `changes`.
pub fn tests_added(changes: &[FileChange]) -> Vec<TestsAdded> {
    changes
        .iter()
        .filter(|change| change.status == ChangeStatus::Modified && is_test_file(&change.path))
        .filter_map(|change| {
            added_tests::only_added(
                &change.path,
                change.before.as_deref()?,
                change.after.as_deref()?,
            )
        })
        .collect()
}

fn scan_change(change: &FileChange, setup: &TestSetupFiles, flags: &mut Vec<TamperFlag>) {
    let path = change.path.as_str();
    let before = change.before.as_deref();
    let after = change.after.as_deref();

    match &change.status {
        ChangeStatus::Added => flags.extend(config::check(path, None, after, setup)),
        ChangeStatus::Modified => {
            let edited = match (before, after) {
                (Some(before), Some(after)) => {
                    before != after && added_tests::only_added(path, before, after).is_none()
                }
                // A text replaced by a link or a binary, or the other way round.
                (before, after) => before != after || before.is_none(),
            };
            if is_test_file(path) && edited {
                flags.push(file_flag(
                    TamperKind::TestModified,
                    path,
                    "an existing test file was modified",
                ));
            }
            flags.extend(config::check(path, before, after, setup));
        }
        ChangeStatus::Deleted => {
            if is_test_file(path) {
                flags.push(file_flag(
                    TamperKind::TestDeleted,
                    path,
                    "an existing test file was deleted",
                ));
            }
            flags.extend(config::check(path, before, None, setup));
        }
        ChangeStatus::Renamed { from } => {
            if is_test_file(from) {
                let what = format!(
                    "an existing test file was renamed from {}",
                    hidden::shown(from)
                );
                flags.push(file_flag(TamperKind::TestRenamed, path, &what));
            }
            // The settings left the old place and arrived at the new one, which may apply to
            // other tests: judged as a deletion plus an addition.
            flags.extend(config::check(from, before, None, setup));
            flags.extend(config::check(path, None, after, setup));
        }
    }
    flags.extend(links::check(change));
    flags.extend(modes::check(change));
    flags.extend(automation::check(change));
    flags.extend(build_files::check(change));
    flags.extend(hidden::in_path(change));
    flags.extend(confusable::check(change));

    flags.extend(plugins::added(change));
    if let Some(after) = after
        && markers::scanned(path, is_test_file(path))
    {
        flags.extend(markers::added(path, before, after));
    }
    flags.extend(hidden::in_added_lines(change));
}

/// Whether changing `path` from `before` to `after` (`None` where absent) changes test
/// configuration: what [`scan`] flags as `test_config_changed` for the file as a whole (a test
/// file's added `pytest_plugins` line is flagged, but the test file stays the agent's). The
/// ladder judges the tests with the baseline's version of such files
/// ([`crate::baseline_config`]).
pub fn is_test_config_change(
    path: &str,
    before: Option<&str>,
    after: Option<&str>,
    setup: &TestSetupFiles,
) -> bool {
    config::check(path, before, after, setup).is_some()
}

fn file_flag(kind: TamperKind, path: &str, what: &str) -> TamperFlag {
    TamperFlag {
        kind,
        path: path.to_string(),
        line: None,
        detail: format!("{}: {what}", hidden::shown(path)),
    }
}

/// The verb for a whole-file change: "added", "deleted", "changed" or "renamed from …".
fn change_verb(change: &FileChange) -> String {
    match &change.status {
        ChangeStatus::Added => "added".to_string(),
        ChangeStatus::Modified => "changed".to_string(),
        ChangeStatus::Deleted => "deleted".to_string(),
        ChangeStatus::Renamed { from } => format!("renamed from {}", hidden::shown(from)),
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
