//! Guided phases, the `phases` helper (on for the embedded model): the harness keeps the order the
//! rules ask for — first a test that shows the bug, then the fix — instead of trusting a small
//! model to keep it.
//!
//! In the test phase the reply may only read, search, write files and run tests (the embedded
//! model's grammar offers nothing else; any other model's call is refused with a note), an edit
//! to a file that is not a test is refused, and every test file written is run at once so the
//! model sees in the same round whether its test shows the bug. The fix phase starts when a test
//! the model wrote fails on the still-unchanged source; from then on every tool is offered.
//! In the fix phase every edit to a source file is followed by a run of that test, so the model
//! sees at once whether its fix works; a test changed before any source edit is judged again (it
//! must still fail on the unchanged code, or the run is back in the test phase). Each request
//! names the next step in one sentence.
//!
//! Nothing here decides success: the check ladder still runs in full at `done`.

use plumb_protocol::{TestCounts, ToolCall};
use plumb_verify::tamper::is_test_file;

/// The tools a reply may call before a test shows the bug. When a test file was shown up front,
/// `create_file` is left out: the new test goes at the end of that file, with `edit_file`.
const TEST_PHASE_TOOLS: [&str; 6] = [
    "search_code",
    "read_file",
    "list_files",
    "create_file",
    "edit_file",
    "run_tests",
];

/// What the model wrote as its test, and what running it showed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TestState {
    /// No test file written yet.
    None,
    /// Written; its last run passed on the unchanged source, so it does not show the bug.
    Passes(String),
    /// Written; its last run could not collect or run it (an import error, a syntax error).
    Broken(String),
}

/// Where a guided run stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Phases {
    enabled: bool,
    test: TestState,
    /// The test file that failed on the unchanged source: the fix phase has begun.
    reproduced: Option<String>,
    /// In the fix phase: whether that test passed on its last run after an edit.
    fixed: bool,
    /// In the fix phase: whether a source file was edited since the test showed the bug. Until
    /// then the source is as it was, so a changed test is judged again as in the test phase.
    source_edited: bool,
    /// The existing test file shown up front, where a new test can be added at the end and use
    /// the helpers already there.
    test_file: Option<String>,
}

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

/// Exceptions that, in a fresh test's failure, almost always mean the test is wrong rather than
/// the code: Python names and imports, and calls made with arguments that do not exist.
const TEST_MISTAKES: [&str; 12] = [
    "NameError",
    "got multiple values for",
    "object has no attribute",
    "object is not callable",
    "UnboundLocalError",
    "ImportError",
    "ModuleNotFoundError",
    "SyntaxError",
    "IndentationError",
    "unexpected keyword argument",
    "required positional argument",
    "fixture '",
];

impl TestVerdict {
    /// The verdict on one run: counts from the runner, and the failure excerpt it printed.
    pub(crate) fn of(counts: &TestCounts, excerpt: &str) -> Self {
        if counts.failed > 0 {
            let mistake = TEST_MISTAKES.iter().any(|m| excerpt.contains(m));
            let asserted = excerpt.contains("AssertionError") || excerpt.contains("assert ");
            if mistake && !asserted {
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

impl Phases {
    pub(crate) fn new(enabled: bool) -> Self {
        Self {
            enabled,
            test: TestState::None,
            reproduced: None,
            fixed: false,
            source_edited: false,
            test_file: None,
        }
    }

    /// Names the test file the model was shown, so the first step can point at it.
    pub(crate) fn suggest_test_file(&mut self, path: Option<String>) {
        self.test_file = path;
    }

    /// True while the model still owes a test that shows the bug.
    pub(crate) fn in_test_phase(&self) -> bool {
        self.enabled && self.reproduced.is_none()
    }

    /// The tools this reply may call, when not all of them.
    pub(crate) fn allowed_tools(&self) -> Option<Vec<String>> {
        self.in_test_phase().then(|| {
            TEST_PHASE_TOOLS
                .iter()
                .filter(|tool| self.test_file.is_none() || **tool != "create_file")
                .map(|tool| tool.to_string())
                .collect()
        })
    }

    /// The next step in one sentence, shown at the end of each request.
    pub(crate) fn next_step(&self) -> Option<String> {
        if !self.enabled {
            return None;
        }
        Some(match (&self.reproduced, &self.test) {
            (Some(test), _) if self.fixed => format!(
                "{test} passes now. Call done: plumb then runs the whole suite and its other checks."
            ),
            (Some(test), _) => format!(
                "{test} fails on the current code, so it shows the bug. Fix the code with edit_file so that it passes (do not change the test), then call done."
            ),
            (None, TestState::None) => match &self.test_file {
                Some(file) => format!(
                    "write a test that shows the bug before fixing anything: add one new test function at the end of {file} with edit_file (old_text empty, new_text the function). Give it a new name, build the case the ticket describes with the helpers shown above, and assert the result the ticket expects. plumb runs it at once."
                ),
                None => "write a test that shows the bug before fixing anything: create_file a new test file (for example tests/test_<topic>.py) that copies the imports and helper functions it needs from the existing tests, then has one test function that runs the case the ticket describes and asserts the result the ticket expects. plumb runs it at once.".to_string(),
            },
            (None, TestState::Passes(test)) => format!(
                "{test} passes on the current code, so it does not show the bug yet. Change it with edit_file so that it runs the case the ticket describes (its example) and asserts the result the ticket expects, which the current code gets wrong."
            ),
            (None, TestState::Broken(test)) if self.test_file.is_some() => format!(
                "{test} could not run (see the error above). Fix the new test with edit_file: old_text copied from it, new_text the corrected lines."
            ),
            (None, TestState::Broken(test)) => format!(
                "{test} could not run (see the error above). Fix the test file with edit_file, or create_file it again under a new name."
            ),
        })
    }

    /// A note refusing `call` in the current phase, or `None` when it may run.
    pub(crate) fn refusal(&self, call: &ToolCall) -> Option<String> {
        if !self.in_test_phase() {
            return None;
        }
        let allowed = self.allowed_tools().unwrap_or_default();
        if let (false, Some(file)) = (allowed.contains(&call.name), &self.test_file)
            && call.name == "create_file"
        {
            return Some(format!(
                "create_file is not offered now: add the new test at the end of {file} with edit_file and an empty old_text, so it can use that file's imports and helpers. Nothing was done."
            ));
        }
        if !allowed.contains(&call.name) {
            return Some(format!(
                "{} is not available yet: first write a test that shows the bug (a test that fails on the current code). Nothing was done.",
                call.name
            ));
        }
        let path = written_path(call)?;
        let first = match &self.test_file {
            Some(file) => format!(
                "First add a test at the end of {file} with edit_file and an empty old_text"
            ),
            None => {
                "First create_file a new test file (for example tests/test_<topic>.py)".to_string()
            }
        };
        (!is_test_file(path)).then(|| {
            format!(
                "{path} is not a test file, and the code is fixed only after a test shows the bug. {first}, whose test fails on the current code. Nothing was changed."
            )
        })
    }

    /// The test file `call` wrote, when it is one the phases should run at once: in the test
    /// phase, and in the fix phase while the source is still unchanged (a test changed then must
    /// show the bug again).
    pub(crate) fn test_to_run<'a>(&self, call: &'a ToolCall) -> Option<&'a str> {
        let judged_again = self.enabled && self.reproduced.is_some() && !self.source_edited;
        if !self.in_test_phase() && !judged_again {
            return None;
        }
        written_path(call).filter(|path| is_test_file(path))
    }

    /// The model's failing test, to run after `call` changed a source file in the fix phase.
    pub(crate) fn test_after_fix(&self, call: &ToolCall) -> Option<String> {
        if !self.enabled {
            return None;
        }
        let test = self.reproduced.as_ref()?;
        written_path(call)
            .filter(|path| !is_test_file(path) || self.source_edited)
            .map(|_| test.clone())
    }

    /// Records how the model's failing test ran after a source edit; returns what to tell it.
    pub(crate) fn record_fix(&mut self, verdict: TestVerdict) -> &'static str {
        self.source_edited = true;
        self.fixed = verdict == TestVerdict::Passes;
        match verdict {
            TestVerdict::Passes => {
                "The test passes now. Call done: plumb then runs the whole suite and its other checks."
            }
            TestVerdict::Fails => {
                "The test still fails, so the fix is not right yet: read the failure and change the code again."
            }
            TestVerdict::Broken | TestVerdict::FailsInTheTest => {
                "The test no longer runs (see the error): the edit broke something it needs."
            }
        }
    }

    /// Records how a run of the model's test `path` came out; returns the sentence to tell it.
    pub(crate) fn record(&mut self, path: &str, verdict: TestVerdict) -> &'static str {
        match verdict {
            TestVerdict::Fails => {
                self.reproduced = Some(path.to_string());
                "Good: the test fails on the current code, so it shows the bug. Now fix the code."
            }
            TestVerdict::FailsInTheTest => {
                self.reproduced = None;
                self.test = TestState::Broken(path.to_string());
                "The test fails, but on a mistake in the test itself (see the error above), not on an assertion about the code: fix the test."
            }
            TestVerdict::Passes => {
                self.reproduced = None;
                self.test = TestState::Passes(path.to_string());
                "The test passes on the current code, so it does not show the bug yet: make it assert what the ticket expects."
            }
            TestVerdict::Broken => {
                self.reproduced = None;
                self.test = TestState::Broken(path.to_string());
                "The test could not run, or nothing in the file is a test (see the error above): fix the test. It can use only what its file defines or imports, and its name must start with test."
            }
        }
    }
}

/// A plain-words reading of a test mistake small models make often and rarely see from the
/// error alone: in Python, `invoice = invoice(...)` makes `invoice` a local variable, so the
/// helper of that name can no longer be called in the function.
pub(crate) fn explain_mistake(excerpt: &str) -> Option<String> {
    let name = excerpt
        .split("cannot access local variable '")
        .nth(1)?
        .split('\'')
        .next()?;
    Some(format!(
        "In the test, `{name} = ...` makes `{name}` a local variable for the whole function, so the function `{name}` cannot be called there: give the result another name (for example `result = {name}(...)`)."
    ))
}

/// The file a `create_file` or `edit_file` call writes.
fn written_path(call: &ToolCall) -> Option<&str> {
    matches!(call.name.as_str(), "create_file" | "edit_file")
        .then(|| call.arguments.get("path")?.as_str())
        .flatten()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    fn call(name: &str, arguments: serde_json::Value) -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: name.into(),
            arguments,
        }
    }

    #[test]
    fn off_means_no_limits_and_no_hint() {
        let phases = Phases::new(false);
        assert_eq!(phases.allowed_tools(), None);
        assert_eq!(phases.next_step(), None);
        assert_eq!(
            phases.refusal(&call("edit_file", json!({"path": "billing/x.py"}))),
            None
        );
        assert_eq!(
            phases.test_to_run(&call("create_file", json!({"path": "tests/test_x.py"}))),
            None
        );
    }

    #[test]
    fn the_test_phase_refuses_source_edits_and_done_and_runs_test_files() {
        let phases = Phases::new(true);
        let allowed = phases.allowed_tools().unwrap();
        assert!(!allowed.contains(&"done".to_string()));
        assert!(!allowed.contains(&"run".to_string()));
        assert!(allowed.contains(&"create_file".to_string()));
        let mut shown = Phases::new(true);
        shown.suggest_test_file(Some("tests/test_x.py".into()));
        let allowed_with_file = shown.allowed_tools().unwrap();
        assert!(!allowed_with_file.contains(&"create_file".to_string()));
        assert!(allowed_with_file.contains(&"edit_file".to_string()));
        assert!(
            shown
                .refusal(&call("edit_file", json!({"path": "billing/x.py"})))
                .unwrap()
                .contains("First add a test at the end of tests/test_x.py with edit_file and an empty old_text, whose test fails")
        );
        assert!(
            shown
                .refusal(&call("create_file", json!({"path": "tests/test_y.py"})))
                .unwrap()
                .starts_with(
                    "create_file is not offered now: add the new test at the end of tests/test_x.py"
                )
        );
        let source = phases.refusal(&call("edit_file", json!({"path": "billing/invoice.py"})));
        assert!(
            source
                .unwrap()
                .starts_with("billing/invoice.py is not a test file")
        );
        assert!(phases.refusal(&call("done", json!({}))).is_some());
        assert_eq!(
            phases.refusal(&call("create_file", json!({"path": "tests/test_gst.py"}))),
            None
        );
        assert_eq!(
            phases.refusal(&call("read_file", json!({"path": "a.py"}))),
            None
        );
        assert_eq!(
            phases.test_to_run(&call("create_file", json!({"path": "tests/test_gst.py"}))),
            Some("tests/test_gst.py")
        );
        assert_eq!(
            phases.test_to_run(&call("read_file", json!({"path": "tests/test_gst.py"}))),
            None
        );
        assert!(phases.next_step().unwrap().starts_with("write a test"));
    }

    #[test]
    fn the_first_step_points_at_the_test_file_shown_when_there_is_one() {
        let mut phases = Phases::new(true);
        assert!(
            phases
                .next_step()
                .unwrap()
                .contains("create_file a new test file")
        );
        phases.suggest_test_file(Some("tests/test_invoice_totals.py".into()));
        let step = phases.next_step().unwrap();
        assert!(
            step.contains(
                "at the end of tests/test_invoice_totals.py with edit_file (old_text empty"
            ),
            "{step}"
        );
    }

    #[test]
    fn a_failing_test_opens_the_fix_phase_and_a_passing_one_does_not() {
        let mut phases = Phases::new(true);
        phases.record("tests/test_gst.py", TestVerdict::Passes);
        assert!(phases.in_test_phase());
        assert!(
            phases
                .next_step()
                .unwrap()
                .contains("does not show the bug")
        );
        phases.record("tests/test_gst.py", TestVerdict::Broken);
        assert!(phases.next_step().unwrap().contains("could not run"));
        phases.record("tests/test_gst.py", TestVerdict::Fails);
        assert!(!phases.in_test_phase());
        assert_eq!(phases.allowed_tools(), None);
        assert_eq!(
            phases.refusal(&call("edit_file", json!({"path": "billing/invoice.py"}))),
            None
        );
        assert_eq!(
            phases.test_to_run(&call("edit_file", json!({"path": "tests/test_gst.py"}))),
            Some("tests/test_gst.py"),
            "no source edit yet: a changed test is judged again"
        );
        assert!(
            phases
                .next_step()
                .unwrap()
                .starts_with("tests/test_gst.py fails")
        );
    }

    fn counts(failed: u32, errors: u32, passed: u32) -> TestCounts {
        TestCounts {
            failed,
            errors,
            passed,
            ..TestCounts::default()
        }
    }

    #[test]
    fn a_failure_on_the_tests_own_mistake_is_not_a_reproduction() {
        let assertion = "E       assert Decimal('180.00') == Decimal('162.00')";
        assert_eq!(
            TestVerdict::of(&counts(1, 0, 0), assertion),
            TestVerdict::Fails
        );
        let own = "E       UnboundLocalError: cannot access local variable 'item'";
        assert_eq!(
            TestVerdict::of(&counts(1, 0, 0), own),
            TestVerdict::FailsInTheTest
        );
        let bad_call =
            "E       TypeError: LineItem.__init__() got an unexpected keyword argument 'price'";
        assert_eq!(
            TestVerdict::of(&counts(1, 0, 0), bad_call),
            TestVerdict::FailsInTheTest
        );
        // A bug that raises is still a reproduction.
        let raised = "E       ZeroDivisionError: division by zero";
        assert_eq!(
            TestVerdict::of(&counts(1, 0, 0), raised),
            TestVerdict::Fails
        );
        assert_eq!(TestVerdict::of(&counts(0, 0, 2), ""), TestVerdict::Passes);
        assert_eq!(TestVerdict::of(&counts(0, 1, 0), ""), TestVerdict::Broken);
        assert_eq!(TestVerdict::of(&counts(0, 0, 0), ""), TestVerdict::Broken);

        let mut phases = Phases::new(true);
        phases.record("tests/test_gst.py", TestVerdict::FailsInTheTest);
        assert!(phases.in_test_phase());
    }

    #[test]
    fn the_fix_phase_runs_the_failing_test_after_each_source_edit() {
        let mut phases = Phases::new(true);
        let source_edit = call("edit_file", json!({"path": "billing/invoice.py"}));
        assert_eq!(phases.test_after_fix(&source_edit), None, "no test yet");
        phases.record("tests/test_gst.py", TestVerdict::Fails);
        assert_eq!(
            phases.test_after_fix(&source_edit).as_deref(),
            Some("tests/test_gst.py")
        );
        assert_eq!(
            phases.test_after_fix(&call("edit_file", json!({"path": "tests/test_gst.py"}))),
            None
        );
        assert!(
            phases
                .record_fix(TestVerdict::Fails)
                .starts_with("The test still fails")
        );
        assert!(phases.next_step().unwrap().contains("Fix the code"));
        assert!(
            phases
                .record_fix(TestVerdict::Passes)
                .starts_with("The test passes now")
        );
        assert!(
            phases
                .next_step()
                .unwrap()
                .contains("passes now. Call done")
        );
    }

    #[test]
    fn a_local_that_hides_a_helper_is_explained_by_name() {
        let excerpt = "E       UnboundLocalError: cannot access local variable 'invoice' where it is not associated with a value";
        let explained = explain_mistake(excerpt).unwrap();
        assert!(
            explained.starts_with("In the test, `invoice = ...` makes `invoice` a local variable"),
            "{explained}"
        );
        assert_eq!(explain_mistake("E       assert 1 == 2"), None);
    }

    #[test]
    fn a_test_changed_before_any_fix_is_judged_again_and_after_a_fix_is_rerun() {
        let mut phases = Phases::new(true);
        let test_edit = call("edit_file", json!({"path": "tests/test_gst.py"}));
        let source_edit = call("edit_file", json!({"path": "billing/invoice.py"}));
        phases.record("tests/test_gst.py", TestVerdict::Fails);
        assert_eq!(phases.test_to_run(&test_edit), Some("tests/test_gst.py"));
        phases.record("tests/test_gst.py", TestVerdict::FailsInTheTest);
        assert!(phases.in_test_phase(), "back to the test phase");
        phases.record("tests/test_gst.py", TestVerdict::Fails);
        phases.record_fix(TestVerdict::Fails);
        assert_eq!(phases.test_to_run(&test_edit), None);
        assert_eq!(
            phases.test_after_fix(&test_edit).as_deref(),
            Some("tests/test_gst.py"),
            "after a source edit a changed test is simply run again"
        );
        assert!(phases.test_after_fix(&source_edit).is_some());
        let doubled =
            "E       TypeError: invoice() got multiple values for keyword argument 'discount'";
        assert_eq!(
            TestVerdict::of(&counts(1, 0, 0), doubled),
            TestVerdict::FailsInTheTest
        );
    }
}
