//! What the guided phases run after a write ([`PhaseCheck`]) and what its runs showed
//! ([`CheckVerdict`], one [`TestVerdict`] a run), and the readings of test output they share.

use plumb_protocol::{TestCounts, ToolCall};
use plumb_verify::{FailureKind, FailureReading};

use super::words::Note;

/// How one run of the model's test came out, as far as the phases care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TestVerdict {
    /// At least one test failed: the bug is shown.
    Fails,
    /// Every test passed.
    Passes,
    /// Nothing ran, or only errors (collection, import, syntax).
    Broken,
    /// A test failed, but on a mistake in the test (a name it never defined, an import that does
    /// not exist), not on what the code computes.
    FailsInTheTest,
}

impl TestVerdict {
    /// The verdict on one run: counts from the runner, and whose mistake its failures show.
    pub(crate) fn of(counts: &TestCounts, failure: &FailureReading) -> Self {
        if counts.failed > 0 {
            if failure.kind == FailureKind::TestMistake {
                TestVerdict::FailsInTheTest
            } else {
                TestVerdict::Fails
            }
        } else if counts.errors == 0 && counts.passed > 0 {
            TestVerdict::Passes
        } else {
            TestVerdict::Broken
        }
    }
}

/// What a phase check's runs showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CheckVerdict {
    /// The run on the workspace as it is.
    pub now: TestVerdict,
    /// The run on the original source with only the test changes (`BothWays` only).
    pub original: Option<TestVerdict>,
    /// Both runs failed on an assertion that compared the same values
    /// ([`FailureReading::same_assertion`]).
    pub same_failure: bool,
    /// After a code edit once the model has a test (`Again`): a test that passed at baseline
    /// fails in the project's suite.
    pub broke_old: bool,
    /// After a code edit once a test shows the bug (`Again`): the test now stops on an error
    /// that means the code cannot run ([`FailureKind::CodeStopped`]), where on the original code
    /// it ran to the test's check.
    pub broke_code: bool,
    /// After a code edit while tests show the bug (`Again`) and still fail: more of them pass
    /// than on the original code, so the edit is some of the way to the fix.
    pub passes_more: bool,
}

/// Tests a write added or changed, or a reproduction to run again: the file it names in what the
/// model is told, and the ids or paths the test command is narrowed to (the file itself, the test
/// functions a Rust edit added beside the code, the task's or the baseline's failing tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Written {
    pub path: String,
    pub targets: Vec<String>,
}

impl From<&str> for Written {
    fn from(path: &str) -> Self {
        Written {
            path: path.to_string(),
            targets: vec![path.to_string()],
        }
    }
}

impl From<String> for Written {
    fn from(path: String) -> Self {
        Written::from(path.as_str())
    }
}

/// What plumb runs after a write, by phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PhaseCheck {
    /// After an edit of the code while no test shows the bug: the project's tests (this file, or
    /// the whole suite), which must still pass.
    Existing(Option<String>),
    /// After the model wrote a test, with a fix in: it runs with the fix and on the original
    /// source.
    BothWays(Written),
    /// After the model wrote a test before any fix: it runs once, on the original code (the
    /// workspace holds nothing else), and if it fails it shows the bug.
    First(Written),
    /// After an edit of the code once a test shows the bug: that test again, with the change (its
    /// run on the original source does not change).
    Again(Written),
}

impl PhaseCheck {
    /// The test file the check names, when it runs one the model wrote or one file; `None` is
    /// the whole suite.
    pub(crate) fn test(&self) -> Option<&str> {
        match self {
            PhaseCheck::Existing(file) => file.as_deref(),
            PhaseCheck::BothWays(test) | PhaseCheck::First(test) | PhaseCheck::Again(test) => {
                Some(&test.path)
            }
        }
    }

    /// What the test command is narrowed to; empty is the whole suite.
    pub(crate) fn targets(&self) -> Vec<String> {
        match self {
            PhaseCheck::Existing(file) => file.iter().cloned().collect(),
            PhaseCheck::BothWays(test) | PhaseCheck::First(test) | PhaseCheck::Again(test) => {
                test.targets.clone()
            }
        }
    }

    /// True when the check also runs the test on the original source.
    pub(crate) fn runs_on_the_original(&self) -> bool {
        matches!(self, PhaseCheck::BothWays(_))
    }
}

/// The first line of `text`, trimmed, for a note.
pub(super) fn first_line_of(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default()
}

/// A plain-words reading of a test mistake small models make often and rarely see from the
/// error alone: in Python, `invoice = invoice(...)` makes `invoice` a local variable, so the
/// helper of that name can no longer be called in the function.
pub(crate) fn explain_mistake(excerpt: &str) -> Option<Note> {
    let name = excerpt
        .split("cannot access local variable '")
        .nth(1)?
        .split('\'')
        .next()?;
    Some(Note::ShadowedHelper {
        name: name.to_string(),
    })
}

/// The file a `create_file` or `edit_file` call writes.
pub(crate) fn written_path(call: &ToolCall) -> Option<&str> {
    plumb_tools::WRITE_TOOLS
        .contains(&call.name.as_str())
        .then(|| call.arguments.get("path")?.as_str())
        .flatten()
}
