//! Guided phases, the `phases` helper (on for the embedded model): the harness keeps the order of
//! the work instead of trusting a small model to keep it — first the fix, then a test that shows
//! it — and runs, after every write, what tells the model where it stands.
//!
//! - **Fix.** Until a file that is not a test changed, the reply may read, search, edit and run
//!   tests (the embedded model's grammar offers nothing else; any other model's test edit or
//!   `done` is refused with a note). After each edit the project's tests run (the test file
//!   shown up front, or the whole suite): a fix must not break them.
//! - **Test.** Then the model adds a test. Every test file it writes is run twice: with its fix,
//!   and on the original source (the baseline plus only the test changes, as the ladder's
//!   reproduce step does). A test that passes with the fix and fails without it shows both the
//!   bug and the fix; one that fails with the fix expects the wrong figure or meets a wrong fix,
//!   and the model is told which run said what. A later edit of the code runs that test again.
//! - **Done.** Once a test passes with the fix and fails without it, the next step is `done`.
//!
//! A model shown its own fix writes a test that agrees with the ticket more often than one asked
//! for the test first: the two runs catch a test that asserts the bug (it passes on the original)
//! and one that asserts a wrong figure (it fails with the fix), neither of which a single run on
//! the unchanged source can tell apart from a good reproduction.
//!
//! Nothing here decides success: the check ladder still runs in full at `done`.

use plumb_protocol::{TestCounts, ToolCall};
use plumb_verify::tamper::is_test_file;

/// The tools a reply may call before the fix: no `create_file` (a new file is almost always a
/// test at this point) and no `done`.
const FIX_PHASE_TOOLS: [&str; 5] = [
    "search_code",
    "read_file",
    "list_files",
    "edit_file",
    "run_tests",
];

/// The tools a reply may call after the fix, until a test shows it. When a test file was shown up
/// front, `create_file` is left out: the new test goes at the end of that file, with `edit_file`.
const TEST_PHASE_TOOLS: [&str; 6] = [
    "search_code",
    "read_file",
    "list_files",
    "create_file",
    "edit_file",
    "run_tests",
];

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

/// What running the model's test file showed, with its fix and on the original source.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TestRuns {
    path: String,
    now: TestVerdict,
    original: TestVerdict,
}

impl TestRuns {
    /// Passes with the fix and fails (on an assertion or an error of the code) without it.
    fn shows_the_fix(&self) -> bool {
        self.now == TestVerdict::Passes && self.original == TestVerdict::Fails
    }
}

/// Where a guided run stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Phases {
    enabled: bool,
    /// A file that is not a test was changed: the fix is in, or on its way.
    source_edited: bool,
    /// How the project's tests ran after the last source edit, while the model had no test.
    existing: Option<TestVerdict>,
    /// The model's test file and its last runs.
    test: Option<TestRuns>,
    /// The existing test file shown up front, where a new test can be added at the end and use
    /// the helpers already there.
    test_file: Option<String>,
}

/// What plumb runs after a write, by phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PhaseCheck {
    /// After an edit of the code while the model has no test: the project's tests (this file, or
    /// the whole suite), which must still pass.
    Existing(Option<String>),
    /// After the model wrote this test file: it runs with the fix and on the original source.
    BothWays(String),
    /// After an edit of the code once the model has a test: that test again, with the fix (its
    /// run on the original source does not change).
    Again(String),
}

/// What a phase check's runs showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CheckVerdict {
    /// The run on the workspace as it is.
    pub now: TestVerdict,
    /// The run on the original source with only the test changes (`BothWays` only).
    pub original: Option<TestVerdict>,
}

impl PhaseCheck {
    /// The test (file) the check runs; `None` is the whole suite.
    pub(crate) fn test(&self) -> Option<&str> {
        match self {
            PhaseCheck::Existing(file) => file.as_deref(),
            PhaseCheck::BothWays(test) | PhaseCheck::Again(test) => Some(test),
        }
    }

    /// True when the check also runs the test on the original source.
    pub(crate) fn runs_on_the_original(&self) -> bool {
        matches!(self, PhaseCheck::BothWays(_))
    }
}

/// What trying a reply's write on the workspace can show (the candidates helper).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Trial {
    /// Run this check after the write; wanted as [`Phases::wanted`] says.
    Check(PhaseCheck),
    /// Nothing to try: the phases refuse the write.
    Unwanted(String),
}

impl Phases {
    pub(crate) fn new(enabled: bool) -> Self {
        Self {
            enabled,
            source_edited: false,
            existing: None,
            test: None,
            test_file: None,
        }
    }

    /// Names the test file the model was shown, so the steps can point at it.
    pub(crate) fn suggest_test_file(&mut self, path: Option<String>) {
        self.test_file = path;
    }

    /// True once a test of the model's passes with the fix and fails without it.
    fn shown(&self) -> bool {
        self.test.as_ref().is_some_and(TestRuns::shows_the_fix)
    }

    /// The tools this reply may call, when not all of them.
    pub(crate) fn allowed_tools(&self) -> Option<Vec<String>> {
        if !self.enabled || self.shown() {
            return None;
        }
        let tools: &[&str] = if self.source_edited {
            &TEST_PHASE_TOOLS
        } else {
            &FIX_PHASE_TOOLS
        };
        Some(
            tools
                .iter()
                .filter(|tool| self.test_file.is_none() || **tool != "create_file")
                .map(|tool| tool.to_string())
                .collect(),
        )
    }

    /// The next step in one sentence, shown at the end of each request.
    pub(crate) fn next_step(&self) -> Option<String> {
        if !self.enabled {
            return None;
        }
        if !self.source_edited {
            return Some(
                "fix the code first: change the lines the ticket is about with edit_file (old_text copied from the code shown above, new_text the corrected lines). plumb runs the existing tests after it; the test comes next.".to_string(),
            );
        }
        let Some(test) = &self.test else {
            if self.existing.is_some_and(|v| v != TestVerdict::Passes) {
                return Some(
                    "your change broke tests that passed before (see above): fix the code with edit_file so that they pass again.".to_string(),
                );
            }
            return Some(match &self.test_file {
                Some(file) => format!(
                    "now add a test that shows the bug: one new test function at the end of {file}, with edit_file (old_text empty, new_text the function, with a new name). Call the helpers the way the first test shown above does, with the ticket's own example, and assert only the figure the ticket gives (one assert: a figure you work out yourself may be wrong). plumb runs it with your fix and on the original code: it must pass with the fix and fail without it."
                ),
                None => "now add a test that shows the bug: create_file a new test file (for example tests/test_<topic>.py) that copies the imports and helpers it needs from the existing tests, with one test function that builds the ticket's own example and asserts only the figure the ticket gives (one assert: a figure you work out yourself may be wrong). plumb runs it with your fix and on the original code: it must pass with the fix and fail without it.".to_string(),
            });
        };
        let path = &test.path;
        Some(match (test.now, test.original) {
            _ if test.shows_the_fix() => format!(
                "{path} passes with your fix and fails on the original code. Call done: plumb then runs the whole suite and its other checks."
            ),
            (TestVerdict::Passes, TestVerdict::FailsInTheTest | TestVerdict::Broken) => format!(
                "{path} passes with your fix, but on the original code it could not run as written (see above), so it shows nothing about the bug: make it use only what the original code has, and assert only the figure the ticket gives."
            ),
            (TestVerdict::Passes, _) => format!(
                "{path} passes on the original code too, so it does not show the bug. Change the new test with edit_file so that it builds the ticket's example and asserts only the figure the ticket gives (one assert: a figure you work out yourself may be wrong)."
            ),
            (TestVerdict::Fails, _) => format!(
                "{path} fails with your fix. Compare the figure it expects with the one the code gives (see above): if the test expects a wrong figure, correct the test (assert only the figure the ticket gives); if the code is still wrong, change the code."
            ),
            (TestVerdict::FailsInTheTest | TestVerdict::Broken, _) => format!(
                "{path} could not run as written (see the error above). Fix the new test with edit_file: old_text copied from it, new_text the corrected lines."
            ),
        })
    }

    /// A note refusing `call` in the current phase, or `None` when it may run.
    pub(crate) fn refusal(&self, call: &ToolCall) -> Option<String> {
        let allowed = self.allowed_tools()?;
        if call.name == "create_file"
            && !allowed.contains(&call.name)
            && let Some(file) = &self.test_file
        {
            let when = if self.source_edited {
                format!(
                    "add the new test at the end of {file} with edit_file and an empty old_text, so it can use that file's imports and helpers"
                )
            } else {
                "first fix the code with edit_file".to_string()
            };
            return Some(format!(
                "create_file is not offered now: {when}. Nothing was done."
            ));
        }
        if !allowed.contains(&call.name) {
            let first = if self.source_edited {
                "first add a test that passes with your fix and fails without it"
            } else {
                "first fix the code, then add a test that shows the bug"
            };
            return Some(format!(
                "{} is not available yet: {first}. Nothing was done.",
                call.name
            ));
        }
        let path = written_path(call)?;
        (!self.source_edited && is_test_file(path)).then(|| {
            format!(
                "{path} is a test file, and the test comes after the fix: first change the code the ticket is about with edit_file. Then plumb runs your test with the fix and without it. Nothing was changed."
            )
        })
    }

    /// What plumb runs after `call` wrote a file, when the phases want a run.
    pub(crate) fn check_after(&self, call: &ToolCall) -> Option<PhaseCheck> {
        if !self.enabled {
            return None;
        }
        let path = written_path(call)?;
        if is_test_file(path) {
            return self
                .source_edited
                .then(|| PhaseCheck::BothWays(path.to_string()));
        }
        Some(match &self.test {
            Some(test) => PhaseCheck::Again(test.path.clone()),
            None => PhaseCheck::Existing(self.test_file.clone()),
        })
    }

    /// True when a check's verdict is what the phase needs: the project's tests still pass after
    /// a fix, or the model's test passes with the fix and fails without it.
    pub(crate) fn wanted(&self, check: &PhaseCheck, verdict: CheckVerdict) -> bool {
        match check {
            PhaseCheck::Existing(_) => verdict.now == TestVerdict::Passes,
            PhaseCheck::BothWays(_) => {
                verdict.now == TestVerdict::Passes && verdict.original == Some(TestVerdict::Fails)
            }
            PhaseCheck::Again(_) => {
                verdict.now == TestVerdict::Passes
                    && self
                        .test
                        .as_ref()
                        .is_some_and(|t| t.original == TestVerdict::Fails)
            }
        }
    }

    /// True while a fix can be judged only by the project's tests still passing (the model has no
    /// test yet): the candidates helper then tries every sample and takes the most common fix.
    pub(crate) fn votes_on_fixes(&self) -> bool {
        self.enabled && self.test.is_none()
    }

    /// What trying `call` would show, for the candidates helper: `None` when the call writes
    /// nothing, or the phases have nothing left to want (off, or a test already shows the fix).
    pub(crate) fn trial(&self, call: &ToolCall) -> Option<Trial> {
        if !self.enabled || self.shown() {
            return None;
        }
        written_path(call)?;
        if let Some(note) = self.refusal(call) {
            return Some(Trial::Unwanted(note));
        }
        self.check_after(call).map(Trial::Check)
    }

    /// Records a check's verdict after `call` ran; returns the sentence to tell the model.
    pub(crate) fn record(&mut self, check: &PhaseCheck, verdict: CheckVerdict) -> &'static str {
        match check {
            PhaseCheck::Existing(_) => {
                self.source_edited = true;
                self.existing = Some(verdict.now);
                if verdict.now == TestVerdict::Passes {
                    "The existing tests still pass. Now add a test that shows the bug: it must pass with your fix and fail on the original code."
                } else {
                    "Tests that passed before fail now (see above): the change broke something. Fix the code again."
                }
            }
            PhaseCheck::BothWays(path) => {
                let runs = TestRuns {
                    path: path.clone(),
                    now: verdict.now,
                    original: verdict.original.unwrap_or(TestVerdict::Broken),
                };
                let shown = runs.shows_the_fix();
                self.test = Some(runs);
                match verdict.now {
                    _ if shown => {
                        "Good: the test passes with your fix and fails on the original code, so it shows the bug and the fix. Call done."
                    }
                    TestVerdict::Passes if verdict.original != Some(TestVerdict::Passes) => {
                        "The test passes with your fix, but on the original code it could not run as written (see above), so it shows nothing about the bug: make it use only what the original code has."
                    }
                    TestVerdict::Passes => {
                        "The test passes on the original code too, so it does not show the bug: make it build the ticket's example and assert only the figure the ticket gives (one assert: a figure you work out yourself may be wrong)."
                    }
                    TestVerdict::Fails => {
                        "The test fails with your fix (see above). Either it expects a wrong figure (keep only the assert of the figure the ticket gives) or the fix is not right yet."
                    }
                    TestVerdict::FailsInTheTest => {
                        "The test fails on a mistake in the test itself (see the error above), not on an assertion about the code: fix the test."
                    }
                    TestVerdict::Broken => {
                        "The test could not run, or nothing in the file is a test (see the error above): fix the test. It can use only what its file defines or imports, and its name must start with test."
                    }
                }
            }
            PhaseCheck::Again(_) => {
                self.source_edited = true;
                let Some(test) = &mut self.test else {
                    return "";
                };
                test.now = verdict.now;
                match verdict.now {
                    _ if test.shows_the_fix() => {
                        "The test passes now, and it failed on the original code. Call done: plumb then runs the whole suite and its other checks."
                    }
                    TestVerdict::Passes => {
                        "The test passes, but it passed on the original code too, so it does not show the bug yet: change the test."
                    }
                    TestVerdict::Fails => "The test still fails with the changed code (see above).",
                    TestVerdict::FailsInTheTest | TestVerdict::Broken => {
                        "The test no longer runs (see the error): the edit broke something it needs."
                    }
                }
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

    fn verdict(now: TestVerdict, original: Option<TestVerdict>) -> CheckVerdict {
        CheckVerdict { now, original }
    }

    const TEST: &str = "tests/test_gst.py";

    fn source_edit() -> ToolCall {
        call("edit_file", json!({"path": "billing/invoice.py"}))
    }

    fn test_edit() -> ToolCall {
        call("edit_file", json!({"path": TEST}))
    }

    #[test]
    fn off_means_no_limits_no_hint_and_no_runs() {
        let phases = Phases::new(false);
        assert_eq!(phases.allowed_tools(), None);
        assert_eq!(phases.next_step(), None);
        assert_eq!(phases.refusal(&test_edit()), None);
        assert_eq!(phases.check_after(&source_edit()), None);
        assert_eq!(phases.trial(&source_edit()), None);
    }

    #[test]
    fn the_fix_comes_first_and_a_test_edit_or_done_waits() {
        let mut phases = Phases::new(true);
        let allowed = phases.allowed_tools().unwrap();
        for tool in ["done", "run", "create_file"] {
            assert!(!allowed.contains(&tool.to_string()), "{tool}");
        }
        assert!(allowed.contains(&"edit_file".to_string()));
        assert!(
            phases
                .refusal(&test_edit())
                .unwrap()
                .starts_with("tests/test_gst.py is a test file, and the test comes after the fix")
        );
        assert!(
            phases
                .refusal(&call("done", json!({})))
                .unwrap()
                .starts_with("done is not available yet: first fix the code")
        );
        assert_eq!(phases.refusal(&source_edit()), None);
        assert_eq!(
            phases.refusal(&call("read_file", json!({"path": "a.py"}))),
            None
        );
        assert!(
            phases
                .next_step()
                .unwrap()
                .starts_with("fix the code first")
        );
        phases.suggest_test_file(Some("tests/test_x.py".into()));
        assert_eq!(
            phases.check_after(&source_edit()),
            Some(PhaseCheck::Existing(Some("tests/test_x.py".into()))),
            "the fix is followed by the tests of the file shown"
        );
        assert_eq!(
            phases.check_after(&call("read_file", json!({"path": "a.py"}))),
            None
        );
    }

    #[test]
    fn after_the_fix_a_test_is_run_with_it_and_on_the_original_code() {
        let mut phases = Phases::new(true);
        phases.suggest_test_file(Some("tests/test_x.py".into()));
        let existing = PhaseCheck::Existing(Some("tests/test_x.py".into()));
        let said = phases.record(&existing, verdict(TestVerdict::Fails, None));
        assert!(
            said.starts_with("Tests that passed before fail now"),
            "{said}"
        );
        assert!(
            phases
                .next_step()
                .unwrap()
                .starts_with("your change broke tests")
        );
        phases.record(&existing, verdict(TestVerdict::Passes, None));
        let step = phases.next_step().unwrap();
        assert!(
            step.contains("at the end of tests/test_x.py, with edit_file (old_text empty"),
            "{step}"
        );
        let allowed = phases.allowed_tools().unwrap();
        assert!(!allowed.contains(&"done".to_string()));
        assert!(
            !allowed.contains(&"create_file".to_string()),
            "the shown file takes the test"
        );
        assert_eq!(phases.refusal(&test_edit()), None);
        let both = PhaseCheck::BothWays(TEST.into());
        assert_eq!(phases.check_after(&test_edit()), Some(both.clone()));

        let new_name_only = verdict(TestVerdict::Passes, Some(TestVerdict::FailsInTheTest));
        assert!(
            phases
                .record(&both, new_name_only)
                .contains("on the original code it could not run as written")
        );
        assert!(!phases.wanted(&both, new_name_only));
        assert!(
            phases
                .next_step()
                .unwrap()
                .contains("shows nothing about the bug")
        );
        let asserts_the_bug = verdict(TestVerdict::Passes, Some(TestVerdict::Passes));
        assert!(
            phases
                .record(&both, asserts_the_bug)
                .contains("passes on the original code too")
        );
        assert!(!phases.wanted(&both, asserts_the_bug));
        let wrong_figure = verdict(TestVerdict::Fails, Some(TestVerdict::Fails));
        assert!(
            phases
                .record(&both, wrong_figure)
                .starts_with("The test fails with your fix")
        );
        assert!(
            phases
                .next_step()
                .unwrap()
                .contains("Compare the figure it expects")
        );
        assert_eq!(
            phases.check_after(&source_edit()),
            Some(PhaseCheck::Again(TEST.into())),
            "a later fix runs the model's test again"
        );
        let shows = verdict(TestVerdict::Passes, Some(TestVerdict::Fails));
        assert!(phases.wanted(&both, shows));
        assert!(
            phases
                .record(&both, shows)
                .starts_with("Good: the test passes with your fix")
        );
        assert_eq!(phases.allowed_tools(), None, "done is offered");
        assert!(phases.next_step().unwrap().contains("Call done"));
        assert_eq!(phases.refusal(&call("done", json!({}))), None);
    }

    #[test]
    fn a_later_fix_that_makes_the_test_pass_opens_done() {
        let mut phases = Phases::new(true);
        phases.record(
            &PhaseCheck::Existing(None),
            verdict(TestVerdict::Passes, None),
        );
        phases.record(
            &PhaseCheck::BothWays(TEST.into()),
            verdict(TestVerdict::Fails, Some(TestVerdict::Fails)),
        );
        let again = PhaseCheck::Again(TEST.into());
        assert!(phases.wanted(&again, verdict(TestVerdict::Passes, None)));
        assert!(!phases.wanted(&again, verdict(TestVerdict::Fails, None)));
        assert!(
            phases
                .record(&again, verdict(TestVerdict::Passes, None))
                .contains("it failed on the original code. Call done")
        );
        assert_eq!(phases.allowed_tools(), None);
    }

    #[test]
    fn each_phase_says_what_a_tried_write_must_show() {
        let mut phases = Phases::new(true);
        let read = call("read_file", json!({"path": "billing/invoice.py"}));
        assert_eq!(phases.trial(&read), None, "a read writes nothing");
        let fix = phases.trial(&source_edit()).unwrap();
        assert_eq!(fix, Trial::Check(PhaseCheck::Existing(None)));
        assert!(phases.wanted(
            &PhaseCheck::Existing(None),
            verdict(TestVerdict::Passes, None)
        ));
        assert!(!phases.wanted(
            &PhaseCheck::Existing(None),
            verdict(TestVerdict::Fails, None)
        ));
        assert!(matches!(
            phases.trial(&test_edit()),
            Some(Trial::Unwanted(_))
        ));

        phases.record(
            &PhaseCheck::Existing(None),
            verdict(TestVerdict::Passes, None),
        );
        assert_eq!(
            phases.trial(&test_edit()),
            Some(Trial::Check(PhaseCheck::BothWays(TEST.into())))
        );
        let both = PhaseCheck::BothWays(TEST.into());
        assert!(!phases.wanted(
            &both,
            verdict(TestVerdict::Passes, Some(TestVerdict::Passes))
        ));
        assert!(!phases.wanted(&both, verdict(TestVerdict::Fails, Some(TestVerdict::Fails))));
        assert!(!phases.wanted(
            &both,
            verdict(TestVerdict::Passes, Some(TestVerdict::FailsInTheTest))
        ));
        phases.record(
            &both,
            verdict(TestVerdict::Passes, Some(TestVerdict::Fails)),
        );
        assert_eq!(phases.trial(&source_edit()), None, "nothing left to want");
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
    fn a_local_that_hides_a_helper_is_explained_by_name() {
        let excerpt = "E       UnboundLocalError: cannot access local variable 'invoice' where it is not associated with a value";
        let explained = explain_mistake(excerpt).unwrap();
        assert!(
            explained.starts_with("In the test, `invoice = ...` makes `invoice` a local variable"),
            "{explained}"
        );
        assert_eq!(explain_mistake("E       assert 1 == 2"), None);
    }
}
