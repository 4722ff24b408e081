//! `pytest_plugins` in a test file: a module-level `pytest_plugins = [...]` in a test module makes
//! pytest import those plugins into the whole session, where a plugin's hooks can rewrite any
//! test's outcome — test configuration arriving through a test file, which the ladder cannot
//! judge with the baseline's version (the test file is the agent's own new test). So a line the
//! change adds to a Python test file that names `pytest_plugins` outside a comment is a flag for a
//! person, naming the line.

use super::markers::added_lines;
use super::{FileChange, TamperFlag, TamperKind, is_test_file};

const NAME: &str = "pytest_plugins";

/// The flag for the first added line of a Python test file that names `pytest_plugins`.
pub(super) fn added(change: &FileChange) -> Option<TamperFlag> {
    if !change.path.ends_with(".py") || !is_test_file(&change.path) {
        return None;
    }
    let after = change.after.as_deref()?;
    let (number, _) = added_lines(change.before.as_deref(), after)
        .into_iter()
        .find(|(_, line)| names_plugins(line))?;
    Some(TamperFlag {
        kind: TamperKind::TestConfigChanged,
        path: change.path.clone(),
        line: Some(number),
        detail: format!(
            "{} line {number}: the added line sets pytest_plugins, which loads pytest plugins into the whole test session",
            super::hidden::shown(&change.path)
        ),
    })
}

/// Whether the code of `line` (before a `#` comment) names `pytest_plugins` as a whole word.
fn names_plugins(line: &str) -> bool {
    let code = line.split('#').next().unwrap_or_default();
    code.match_indices(NAME).any(|(at, _)| {
        let before = code.get(..at).and_then(|head| head.chars().next_back());
        let after = code
            .get(at + NAME.len()..)
            .and_then(|tail| tail.chars().next());
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !word(before) && !word(after)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tamper::ChangeStatus;
    use pretty_assertions::assert_eq;

    fn test_file(path: &str, before: Option<&str>, after: &str) -> FileChange {
        FileChange {
            status: if before.is_some() {
                ChangeStatus::Modified
            } else {
                ChangeStatus::Added
            },
            path: path.into(),
            before: before.map(str::to_string),
            after: Some(after.into()),
            before_mode: None,
            after_mode: None,
        }
    }

    #[test]
    fn an_added_plugins_line_in_a_test_file_is_flagged_with_its_line() {
        let changes = [
            test_file(
                "tests/test_gst.py",
                None,
                "import pytest\npytest_plugins = ['tests.always_pass']\n\ndef test_gst():\n    assert 1\n",
            ),
            test_file(
                "tests/test_old.py",
                Some("pytest_plugins = ('x',)\n"),
                "pytest_plugins = ('x',)\ndef test_a(): pass\n",
            ),
            test_file(
                "tests/test_doc.py",
                None,
                "# pytest_plugins = ['x']\nmy_pytest_plugins = 1\n",
            ),
            test_file("billing/tax.py", None, "pytest_plugins = ['x']\n"),
        ];
        let actual: Vec<Option<(Option<usize>, String)>> = changes
            .iter()
            .map(|change| added(change).map(|flag| (flag.line, flag.detail)))
            .collect();
        let expected = vec![
            Some((
                Some(2),
                "tests/test_gst.py line 2: the added line sets pytest_plugins, which loads pytest plugins into the whole test session".to_string(),
            )),
            None,
            None,
            None,
        ];
        assert_eq!(actual, expected);
    }
}
