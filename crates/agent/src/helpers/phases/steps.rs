//! What the guided phases say: the tools a reply may call and the next step at each point, and
//! the note refusing a call that comes out of order. The request for a test names where the
//! project keeps its tests (pytest's test file, Rust's `#[cfg(test)]` module, Go's `_test.go`).

use plumb_protocol::ToolCall;
use plumb_verify::Runner;

use super::state::{Origin, Phases, TestRuns};
use super::verdict::TestVerdict;
use super::words::NextStep;

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

/// How the fix step asks for the fix.
pub(super) const HOW_TO_FIX: &str = "with replace_function (the whole corrected function) or edit_file (old_text copied from the code shown above, new_text the corrected lines)";

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

    /// A note refusing `call` in the current phase, or `None` when it may run.
    pub(crate) fn refusal(&self, call: &ToolCall) -> Option<String> {
        if let Some(note) = self.changes_the_reproduction(call) {
            return Some(note);
        }
        let allowed = self.allowed_tools()?;
        if call.name == "create_file"
            && !allowed.contains(&call.name)
            && let Some(file) = &self.test_file
        {
            return Some(format!(
                "create_file is not offered now: add a new test at the end of {file} with edit_file and an empty old_text, so it can use that file's imports and helpers; change the code with replace_function or edit_file. Nothing was done."
            ));
        }
        if !allowed.contains(&call.name) && self.shown() {
            return Some(format!(
                "{} is not offered now: the tests that show the bug pass with your change and fail on the original code, so call done; plumb then runs the whole suite and its other checks, and if one fails every tool is offered again. Nothing was done.",
                call.name
            ));
        }
        if !allowed.contains(&call.name) {
            let first = if self.test.is_some() {
                "first make the tests that show the bug pass"
            } else if self.source_edited {
                "first add a test that passes with your fix and fails without it"
            } else {
                "first fix the code, then add a test that shows the bug"
            };
            return Some(format!(
                "{} is not available yet: {first}. Nothing was done.",
                call.name
            ));
        }
        self.repeats_undone_lines(call)
    }
}
