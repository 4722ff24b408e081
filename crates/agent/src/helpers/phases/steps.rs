//! What the guided phases say: the tools a reply may call and the next step at each point, and
//! the note refusing a call that comes out of order. The request for a test names where the
//! project keeps its tests (pytest's test file, Rust's `#[cfg(test)]` module, Go's `_test.go`).

use plumb_protocol::ToolCall;
use plumb_verify::Runner;

use super::state::{Origin, Phases, TestRuns};
use super::verdict::TestVerdict;

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

    /// The next step in one sentence, shown at the end of each request.
    pub(crate) fn next_step(&self) -> Option<String> {
        if let Some(test) = &self.test {
            return Some(self.step_with_test(test));
        }
        if !self.source_edited
            && !self.unconfirmed
            && self.existing.is_none_or(|v| v == TestVerdict::Passes)
        {
            return Some(format!(
                "fix the code first: change the lines the ticket is about {HOW_TO_FIX}. plumb runs the existing tests after it; the test comes next."
            ));
        }
        if self.existing.is_some_and(|v| v != TestVerdict::Passes) {
            let mut step = "your last change broke tests that passed before, so plumb undid it (see above): fix the code again, changing only the lines the ticket is about.".to_string();
            if let Some(pointer) = self.pointer() {
                step.push(' ');
                step.push_str(pointer);
            }
            return Some(step);
        }
        if self.unconfirmed {
            return Some(match self.pointer() {
                Some(pointer) => format!(
                    "your last change did not change any value the tests check to a figure the ticket gives, so plumb undid it (see above): fix the code again. {pointer}"
                ),
                None => "your last change did not change any value the tests check to a figure the ticket gives, so plumb undid it (see above): fix the code again, in the line that computes what the ticket says is wrong.".to_string(),
            });
        }
        Some(self.ask_for_a_test())
    }

    /// The next step once there are tests that show (or are to show) the bug.
    fn step_with_test(&self, test: &TestRuns) -> String {
        let path = &test.path;
        let theirs = test.origin != Origin::Model;
        if test.shows_the_fix() {
            return if theirs {
                format!(
                    "{path} fail on the original code and pass with your change. Call done: plumb then runs the whole suite and its other checks."
                )
            } else {
                format!(
                    "{path} passes with your fix and fails on the original code. Call done: plumb then runs the whole suite and its other checks."
                )
            };
        }
        if theirs {
            return if self.source_edited {
                format!(
                    "{path} still fail with your change (see above): change the code (not the tests) so that they pass, {HOW_TO_FIX}. plumb runs them after each edit."
                )
            } else {
                format!(
                    "fix the code: {path} fail on the original code, which is the bug. Change the code (not the tests) so that they pass, {HOW_TO_FIX}; plumb runs them after each edit, and no test that passes now may break."
                )
            };
        }
        if !self.source_edited && test.now == TestVerdict::Fails {
            return format!(
                "{path} fails on the original code, so it shows the bug: now fix the code so that it passes, {HOW_TO_FIX}. plumb runs it after each edit."
            );
        }
        match (test.now, test.original) {
            (TestVerdict::Passes, TestVerdict::FailsInTheTest | TestVerdict::Broken) => format!(
                "{path} passes with your fix, but on the original code it could not run as written (see above), so it shows nothing about the bug: make it use only what the original code has, and assert only the figure the ticket gives."
            ),
            (TestVerdict::Passes, _) => format!(
                "{path} passes on the original code too, so it does not show the bug. Change the new test with edit_file so that it builds the ticket's example and asserts only the figure the ticket gives (one assert: a figure you work out yourself may be wrong)."
            ),
            (TestVerdict::Fails, _) if test.same_failure => format!(
                "{path} fails with your code change exactly as on the original code, so the change did not touch the figure the test checks. If the test builds the ticket's example and asserts the figure the ticket gives, the fix is in the wrong place: change the line that computes that figure."
            ),
            (TestVerdict::Fails, _) => format!(
                "{path} fails with your fix. Compare the figure it expects with the one the code gives (see above): if the test expects a wrong figure, correct the test (assert only the figure the ticket gives); if the code is still wrong, change the code."
            ),
            (TestVerdict::FailsInTheTest | TestVerdict::Broken, _) => format!(
                "{path} could not run as written (see the error above). Fix the new test with edit_file: old_text copied from it, new_text the corrected lines."
            ),
        }
    }

    /// The request for a test that shows the bug, where the project keeps its tests.
    fn ask_for_a_test(&self) -> String {
        const BOTH_WAYS: &str = "plumb runs it with your fix and on the original code: it must pass with the fix and fail without it.";
        match (self.runner, &self.test_file) {
            (_, Some(file)) if self.example.is_some() => format!(
                "now add a test that shows the bug: one new test function at the end of {file}, with edit_file (old_text empty, new_text the function). Start from the existing test shown after your fix: copy its lines under a new name, with the ticket's own example, and add one assert of the figure the ticket says it should be (that figure only: one you work out yourself may be wrong). {BOTH_WAYS}"
            ),
            (_, Some(file)) => format!(
                "now add a test that shows the bug: one new test function at the end of {file}, with edit_file (old_text empty, new_text the function, with a new name). Call the helpers the way the first test shown above does, with the ticket's own example, and assert only the figure the ticket gives (one assert: a figure you work out yourself may be wrong). {BOTH_WAYS}"
            ),
            (Runner::Cargo | Runner::Nextest, None) => format!(
                "now add a test that shows the bug: a #[test] function in the #[cfg(test)] mod tests of {} (replace_function with that file, the new test's name and its code adds it there), that calls the function with an example from the ticket and checks with assert_eq! what the ticket says it should give. {BOTH_WAYS}",
                self.source_file.as_deref().unwrap_or("the file you fixed")
            ),
            (Runner::Go, None) => format!(
                "now add a test that shows the bug: a func TestName(t *testing.T) in a _test.go file beside {}, that calls the function with an example from the ticket and fails with t.Errorf when the result is not what the ticket says. {BOTH_WAYS}",
                self.source_file.as_deref().unwrap_or("the file you fixed")
            ),
            (Runner::Jest | Runner::Vitest | Runner::Npm, None) => format!(
                "now add a test that shows the bug: a test in a .test.js file beside {} (create_file), that calls the function with an example from the ticket and expects what the ticket says it should give. {BOTH_WAYS}",
                self.source_file.as_deref().unwrap_or("the file you fixed")
            ),
            (Runner::Pytest, None) => format!(
                "now add a test that shows the bug: create_file a new test file (for example tests/test_<topic>.py) that copies the imports and helpers it needs from the existing tests, with one test function that builds the ticket's own example and asserts only the figure the ticket gives (one assert: a figure you work out yourself may be wrong). {BOTH_WAYS}"
            ),
            (_, None) => format!(
                "now add a test that shows the bug, where the project keeps its tests, with an example from the ticket and a check of what the ticket says should happen. {BOTH_WAYS}"
            ),
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
