//! Skip, xfail, ignore and `.only` markers on the lines a change adds.
//!
//! "Added" is judged on multisets of trimmed lines: a marker line that was moved or re-indented
//! was there before and does not count, while a second copy of an existing one does. Lines that
//! are comments in the file's language are passed over, and a marker that starts with a letter
//! must not follow one (`process.exit(` is not `xit(`).

use std::collections::HashMap;

use super::{TamperFlag, TamperKind};

/// A marker as it is searched for, and as it is named to a person.
struct Marker {
    pattern: &'static str,
    label: &'static str,
}

const fn marker(pattern: &'static str, label: &'static str) -> Marker {
    Marker { pattern, label }
}

/// Longer patterns before their prefixes, so the label names the exact marker.
const PYTHON: &[Marker] = &[
    marker("pytest.mark.skipif", "pytest.mark.skipif"),
    marker("pytest.mark.skip", "pytest.mark.skip"),
    marker("pytest.mark.xfail", "pytest.mark.xfail"),
    marker("pytest.skip(", "pytest.skip()"),
    marker("pytest.xfail(", "pytest.xfail()"),
    marker("unittest.skipIf", "unittest.skipIf"),
    marker("unittest.skipUnless", "unittest.skipUnless"),
    marker("unittest.skip", "unittest.skip"),
    marker("unittest.expectedFailure", "unittest.expectedFailure"),
    marker("@skipIf", "@skipIf"),
    marker("@skipUnless", "@skipUnless"),
    marker("@skip", "@skip"),
    marker("@expectedFailure", "@expectedFailure"),
    marker("self.skipTest(", "self.skipTest()"),
    marker("SkipTest", "SkipTest"),
];

const RUST: &[Marker] = &[marker("#[ignore", "#[ignore]")];

const GO: &[Marker] = &[
    marker("t.Skip(", "t.Skip()"),
    marker("t.Skipf(", "t.Skipf()"),
    marker("t.SkipNow(", "t.SkipNow()"),
];

const JAVASCRIPT: &[Marker] = &[
    marker("describe.skip", "describe.skip"),
    marker("it.skip", "it.skip"),
    marker("test.skip", "test.skip"),
    marker("xdescribe", "xdescribe"),
    marker("xit(", "xit()"),
    marker("xtest(", "xtest()"),
    // `.only` runs one test and silently drops the rest.
    marker("describe.only", "describe.only"),
    marker("it.only", "it.only"),
    marker("test.only", "test.only"),
    marker("fdescribe(", "fdescribe()"),
    marker("fit(", "fit()"),
];

const JVM: &[Marker] = &[
    marker("@Disabled", "@Disabled"),
    marker("@Ignore", "@Ignore"),
];

/// The markers and the line-comment prefix for a file, by its extension.
fn language(path: &str) -> Option<(&'static [Marker], &'static str)> {
    let (_, ext) = path.rsplit_once('.')?;
    match ext {
        "py" | "pyi" => Some((PYTHON, "#")),
        "rs" => Some((RUST, "//")),
        "go" => Some((GO, "//")),
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => Some((JAVASCRIPT, "//")),
        "java" | "kt" | "kts" | "groovy" | "scala" => Some((JVM, "//")),
        _ => None,
    }
}

/// Whether a file's added lines are searched: test files, `conftest.py`, and every Rust file
/// (Rust unit tests live beside the code).
pub(super) fn scanned(path: &str, is_test_file: bool) -> bool {
    is_test_file || path.rsplit('/').next() == Some("conftest.py") || path.ends_with(".rs")
}

/// One flag per added line that carries a marker.
pub(super) fn added(path: &str, before: Option<&str>, after: &str) -> Vec<TamperFlag> {
    let Some((markers, comment)) = language(path) else {
        return Vec::new();
    };
    added_lines(before, after)
        .into_iter()
        .filter(|(_, line)| !line.trim_start().starts_with(comment))
        .filter_map(|(number, line)| {
            let label = find(line, markers)?;
            Some(TamperFlag {
                kind: TamperKind::SkipMarkerAdded,
                path: path.to_string(),
                line: Some(number),
                detail: format!("{path} line {number}: adds {label}"),
            })
        })
        .collect()
}

/// The lines of `after` that `before` does not have, with their 1-based numbers.
pub(super) fn added_lines<'a>(before: Option<&str>, after: &'a str) -> Vec<(usize, &'a str)> {
    let mut remaining: HashMap<&str, usize> = HashMap::new();
    for line in before.unwrap_or_default().lines() {
        *remaining.entry(line.trim()).or_default() += 1;
    }
    after
        .lines()
        .enumerate()
        .filter_map(|(index, line)| match remaining.get_mut(line.trim()) {
            Some(count) if *count > 0 => {
                *count -= 1;
                None
            }
            _ => Some((index + 1, line)),
        })
        .collect()
}

/// The label of the first marker on `line`, with the `@` of a decorator kept.
fn find(line: &str, markers: &[Marker]) -> Option<String> {
    for marker in markers {
        for (at, _) in line.match_indices(marker.pattern) {
            let previous = line.get(..at).and_then(|head| head.chars().next_back());
            let starts_word = marker
                .pattern
                .starts_with(|c: char| c.is_alphanumeric() || c == '_');
            if starts_word && previous.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            return Some(match previous {
                Some('@') if !marker.label.starts_with('@') => format!("@{}", marker.label),
                _ => marker.label.to_string(),
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn added_lines_ignore_moves_and_indentation() {
        let before = "a\n@skip\nb\n";
        let after = "b\n    @skip\nc\na\n";
        assert_eq!(added_lines(Some(before), after), vec![(3, "c")]);
    }

    #[test]
    fn markers_respect_word_starts() {
        let found: Vec<Option<String>> = [
            "process.exit(1)",
            "    xit('adds GST', () => {})",
            "profit(1)",
            "fit('only this')",
        ]
        .iter()
        .map(|line| find(line, JAVASCRIPT))
        .collect();
        assert_eq!(
            found,
            vec![None, Some("xit()".into()), None, Some("fit()".into())]
        );
    }
}
