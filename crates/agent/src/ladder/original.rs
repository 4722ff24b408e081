//! The original source with only the change's tests: the baseline tree, the test files the change
//! added or changed, and the test items it added beside the code (Rust's `#[cfg(test)]`, see
//! `inline_tests.rs`). The reproduce step judges new tests there, and the guided phases run a
//! test there to see whether it fails without the fix.

use std::path::PathBuf;

use plumb_verify::tamper::FileChange;
use plumb_workspace::Workspace;

use super::inline_tests::inline_tests;
use super::judged;
use super::static_checks::file_changes;
use crate::ending::Ending;
use crate::tester::Tester;

/// Writes the original source with the tests of `changes` into `checks/NAME` of the run folder.
pub(crate) fn original_source_with(
    workspace: &Workspace,
    tester: &Tester,
    name: &str,
    changes: &[FileChange],
) -> Result<PathBuf, Ending> {
    let dest = tester.fresh_baseline_tree(workspace, name)?;
    judged::overlay_test_changes(workspace.root(), &dest, changes)
        .and_then(|()| judged::overlay_texts(&dest, &inline_tests(changes).overlay))
        .map_err(Ending::infra)?;
    Ok(dest)
}

/// The same, for the workspace's change so far.
pub(crate) fn original_source(
    workspace: &Workspace,
    tester: &Tester,
    name: &str,
) -> Result<PathBuf, Ending> {
    let changed = workspace.changed_files().map_err(Ending::workspace)?;
    let changes = file_changes(workspace, &changed)?;
    original_source_with(workspace, tester, name, &changes)
}
