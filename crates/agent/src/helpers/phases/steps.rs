//! What the guided phases say: the tools a reply may call and the next step at each point, and
//! the note refusing a call that comes out of order. The request for a test names where the
//! project keeps its tests (pytest's test file, Rust's `#[cfg(test)]` module, Go's `_test.go`).

use plumb_protocol::ToolCall;
use plumb_verify::Runner;

use super::state::{Origin, Phases, TestRuns};
use super::verdict::TestVerdict;
use super::words::{First, NextStep, Note};

/// The tools a reply may call until a test shows the fix: every tool but `run` and `done`. When a
/// test file was shown up front, `create_file` is left out too: a new test goes at the end of that
/// file, with `edit_file`, where it can use the file's imports and helpers.
const WORK_TOOLS: [&str; 7] = [
    "search_code",
    "read_file",
    "list_files",
    "edit_file",
    "replace_function",
    "create_file",
    "run_tests",
];

impl Phases {
    /// The tools this reply may call, when not all of them. Once a test shows the fix, only
    /// `done` until it has been called: told to call done, the embedded model went on editing
    /// instead (a benchmark run spent its last round that way), and the ladder checks everything
    /// there is to check.
    pub(crate) fn allowed_tools(&self) -> Option<Vec<String>> {
        if self.shown() {
            return (!self.done_tried).then(|| vec!["done".to_string()]);
        }
        Some(
            WORK_TOOLS
                .iter()
                .filter(|tool| self.test_file.is_none() || **tool != "create_file")
                .map(|tool| tool.to_string())
                .collect(),
        )
    }

    /// The next step, shown at the end of each request (`words.rs` has its words).
    pub(crate) fn next_step(&self) -> Option<NextStep> {
        if let Some(test) = &self.test {
            return Some(self.step_with_test(test));
        }
        if !self.source_edited
            && !self.unconfirmed
            && self.existing.is_none_or(|v| v == TestVerdict::Passes)
        {
            return Some(NextStep::FixFirst);
        }
        let pointer = || self.pointer().map(str::to_string);
        if self.existing.is_some_and(|v| v != TestVerdict::Passes) {
            return Some(NextStep::BrokeTests { pointer: pointer() });
        }
        if self.unconfirmed {
            return Some(NextStep::Unconfirmed { pointer: pointer() });
        }
        Some(self.ask_for_a_test())
    }

    /// The next step once there are tests that show (or are to show) the bug.
    fn step_with_test(&self, test: &TestRuns) -> NextStep {
        let path = test.path.clone();
        let theirs = test.origin != Origin::Model;
        if test.shows_the_fix() {
            return if theirs {
                NextStep::TheirsShown { path }
            } else {
                NextStep::OwnShown { path }
            };
        }
        if theirs {
            return if self.source_edited {
                NextStep::TheirsStillFail { path }
            } else {
                NextStep::TheirsFixTheCode { path }
            };
        }
        if !self.source_edited && test.now == TestVerdict::Fails {
            return NextStep::OwnFailsOnOriginal { path };
        }
        match (test.now, test.original) {
            (TestVerdict::Passes, TestVerdict::FailsInTheTest | TestVerdict::Broken) => {
                NextStep::PassesOriginalBroken { path }
            }
            (TestVerdict::Passes, _) => NextStep::PassesOnOriginal { path },
            (TestVerdict::Fails, _) if test.same_failure => NextStep::SameFailure { path },
            (TestVerdict::Fails, _) => NextStep::FailsWithFix { path },
            (TestVerdict::FailsInTheTest | TestVerdict::Broken, _) => {
                NextStep::CouldNotRun { path }
            }
        }
    }

    /// The request for a test that shows the bug, where the project keeps its tests.
    fn ask_for_a_test(&self) -> NextStep {
        let source = || {
            self.source_file
                .clone()
                .unwrap_or_else(|| "the file you fixed".to_string())
        };
        match (self.runner, &self.test_file) {
            (_, Some(file)) if self.example.is_some() => {
                NextStep::TestFromExample { file: file.clone() }
            }
            (_, Some(file)) => NextStep::TestInFile { file: file.clone() },
            (Runner::Cargo | Runner::Nextest, None) => NextStep::TestRust { source: source() },
            (Runner::Go, None) => NextStep::TestGo { source: source() },
            (Runner::Jest | Runner::Vitest | Runner::Npm, None) => {
                NextStep::TestJs { source: source() }
            }
            (Runner::Pytest, None) => NextStep::TestPytest,
            (_, None) => NextStep::TestElsewhere,
        }
    }

    /// The note refusing `call` in the current phase, or `None` when it may run.
    pub(crate) fn refusal(&self, call: &ToolCall) -> Option<Note> {
        if let Some(note) = self.changes_the_reproduction(call) {
            return Some(note);
        }
        let allowed = self.allowed_tools()?;
        if call.name == "create_file"
            && !allowed.contains(&call.name)
            && let Some(file) = &self.test_file
        {
            return Some(Note::CreateFileNotOffered { file: file.clone() });
        }
        if !allowed.contains(&call.name) && self.shown() {
            return Some(Note::CallDone {
                tool: call.name.clone(),
            });
        }
        if !allowed.contains(&call.name) {
            let first = if self.test.is_some() {
                First::MakeTheTestsPass
            } else if self.source_edited {
                First::AddATest
            } else {
                First::FixThenTest
            };
            return Some(Note::NotYet {
                tool: call.name.clone(),
                first,
            });
        }
        self.repeats_undone_lines(call)
    }
}
