//! Reading a failing test run: whose mistake it shows. Each runner's adapter
//! ([`crate::RunnerAdapter::read_failure`]) reads its own output; this module holds what they
//! answer and what they are told about the project.
//!
//! The guided phases need to tell three failures apart. A failed *assertion* is about what the
//! code computes: the bug, or a fix not right yet. A *test mistake* is the test's own — a name it
//! never defined, an import or fixture that does not exist, a test file that does not compile or
//! parse — and the answer is to fix the test, not the code. And the *code stopped*: the code under
//! test cannot run at all (a name it uses is not defined, its file does not compile), which after a
//! code edit is that edit's mistake. Everything else (an exception or panic the code raises, a
//! timeout) is `Other`: a bug that raises still shows the bug.

use crate::tamper::is_test_file;

/// Whose mistake a failing run shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The test's own mistake: it uses a name it never defined, imports or asks for a fixture
    /// that does not exist, calls with arguments the code does not take, or its file does not
    /// compile or parse. Fix the test.
    TestMistake,
    /// The code under test could not run: a name it uses is not defined, or it does not compile
    /// or parse. After a code edit, the edit's mistake.
    CodeStopped,
    /// A test compared a value and it was not what the test expects: the code's answer.
    Assertion,
    /// Anything else: an exception or panic the code raised, or nothing plumb can read.
    Other,
}

/// What a failing run's output says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureReading {
    pub kind: FailureKind,
    /// The line of the output that says so (an error message, a compiler error), trimmed.
    pub evidence: Option<String>,
    /// For an assertion, the lines that state the values compared (pytest's `E assert …` lines,
    /// libtest's `left:`/`right:`, a go test's `t.Errorf` lines, jest's `Expected:`/`Received:`),
    /// without anything that moves when the code's lines move (panic locations, stack frames):
    /// two runs that failed the same way give the same lines. Empty for any other failure.
    pub compared: Vec<String>,
}

impl FailureReading {
    /// A failure plumb cannot read any further.
    pub fn other() -> Self {
        FailureReading {
            kind: FailureKind::Other,
            evidence: None,
            compared: Vec::new(),
        }
    }

    pub(crate) fn new(kind: FailureKind, evidence: Option<&str>) -> Self {
        FailureReading {
            kind,
            evidence: evidence.map(|line| line.trim().to_string()),
            compared: Vec::new(),
        }
    }

    /// True when both runs failed on an assertion that compared the same values: whatever
    /// changed between them did not change the value that failed.
    pub fn same_assertion(&self, other: &FailureReading) -> bool {
        !self.compared.is_empty() && self.compared == other.compared
    }
}

/// A place a runner's output points at: a file as the output names it (relative to the project,
/// or absolute inside the folder the command ran in) and a 1-based line when it gives one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place<'a> {
    pub path: &'a str,
    pub line: Option<u32>,
}

/// Tells test code from the code under test, for the places a runner's output points at.
pub trait TestPlaces {
    fn is_test(&self, place: &Place<'_>) -> bool;
}

/// Test code told by the file's name alone ([`is_test_file`]): `tests/…`, `test_*.py`,
/// `*_test.go`, `*.test.js`, `src/test/java/…`. A caller that can read the files knows more (a
/// Rust file's `#[cfg(test)]` module, the test the model just wrote).
pub struct TestFileNames;

impl TestPlaces for TestFileNames {
    fn is_test(&self, place: &Place<'_>) -> bool {
        is_test_file(place.path)
    }
}

/// `path:line` or `path:line:column` at the start of `text` (after `(` or spaces), for a path
/// ending in one of `extensions`: the place and the rest of the text after it.
pub(crate) fn place_at<'t>(text: &'t str, extensions: &[&str]) -> Option<(Place<'t>, &'t str)> {
    let text = text.trim_start().trim_start_matches('(');
    let file_end = extensions
        .iter()
        .filter_map(|ext| text.find(&format!(".{ext}:")).map(|at| at + ext.len() + 1))
        .min()?;
    let path = text.get(..file_end)?;
    if path.is_empty() || path.contains(char::is_whitespace) {
        return None;
    }
    let rest = text.get(file_end + 1..)?;
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let line = rest.get(..digits)?.parse().ok()?;
    Some((
        Place {
            path,
            line: Some(line),
        },
        rest.get(digits..).unwrap_or_default(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn places_are_read_from_the_start_of_a_line() {
        let at = |text| place_at(text, &["go", "js"]);
        assert_eq!(
            at("calc/calc_test.go:6:12: undefined: AddTwo"),
            Some((
                Place {
                    path: "calc/calc_test.go",
                    line: Some(6)
                },
                ":12: undefined: AddTwo"
            ))
        );
        assert_eq!(
            at("(/w/src/ref.test.js:6:33)").map(|(place, _)| place),
            Some(Place {
                path: "/w/src/ref.test.js",
                line: Some(6)
            })
        );
        assert_eq!(at("see calc.go:4"), None);
        assert_eq!(at("calc.py:4: NameError"), None);
    }

    #[test]
    fn the_same_assertion_needs_compared_values() {
        let compared = |lines: &[&str]| FailureReading {
            kind: FailureKind::Assertion,
            evidence: None,
            compared: lines.iter().map(|l| l.to_string()).collect(),
        };
        assert!(
            compared(&["left: 1", "right: 2"]).same_assertion(&compared(&["left: 1", "right: 2"]))
        );
        assert!(
            !compared(&["left: 1", "right: 2"]).same_assertion(&compared(&["left: 3", "right: 2"]))
        );
        assert!(!compared(&[]).same_assertion(&compared(&[])));
    }
}
