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

use crate::trace::Pointer;

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
    /// The last run with the code changes failed on the same assertion as the run on the
    /// original code: the changes did not touch the figure the test checks.
    same_failure: bool,
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
    /// The last fix was undone because the fix probe found no figure of the ticket in it.
    unconfirmed: bool,
    /// The model's test file and its last runs.
    test: Option<TestRuns>,
    /// The existing test file shown up front, where a new test can be added at the end and use
    /// the helpers already there.
    test_file: Option<String>,
    /// The existing test closest to the ticket: the pattern for the model's test.
    example: Option<String>,
    /// The ticket's sentences giving its example and what should happen.
    ticket_example: Option<String>,
    /// The whole text of the existing test closest to the ticket, for the fix probe.
    probe: Option<String>,
    /// The source file shown up front, which the figure trace follows (`trace.rs`).
    source_file: Option<String>,
    /// The figure trace ran (it runs once, at the first fix undone before one was kept: the
    /// probe rejected it or it broke tests), and the sentence naming the line it points at, when
    /// it found one.
    traced: bool,
    pointer: Option<String>,
    /// The file and the (trimmed) code of the line the figure trace named.
    pointed_line: Option<(String, String)>,
    /// Edits plumb undid: (path, old_text, new_text).
    undone: Vec<(String, String, String)>,
    /// The model has called `done` (the ladder ran) at least once.
    done_tried: bool,
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
    /// Both runs failed on the same assertion (see [`same_assertion`]).
    pub same_failure: bool,
    /// After a code edit once the model has a test (`Again`): a test that passed at baseline
    /// fails in the project's suite.
    pub broke_old: bool,
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
            unconfirmed: false,
            test: None,
            test_file: None,
            example: None,
            ticket_example: None,
            probe: None,
            source_file: None,
            traced: false,
            pointer: None,
            pointed_line: None,
            undone: Vec::new(),
            done_tried: false,
        }
    }

    /// The model called `done`: from now on every tool is offered again, so a check the ladder
    /// fails can be answered.
    pub(crate) fn done_called(&mut self) {
        self.done_tried = true;
    }

    /// Names the test file the model was shown, so the steps can point at it, and the existing
    /// test in it closest to the ticket, shown once the fix keeps the old tests passing.
    pub(crate) fn suggest_test_file(&mut self, path: Option<String>, example: Option<String>) {
        self.test_file = path;
        self.example = example;
    }

    /// True once a test of the model's passes with the fix and fails without it.
    fn shown(&self) -> bool {
        self.test.as_ref().is_some_and(TestRuns::shows_the_fix)
    }

    /// The tools this reply may call, when not all of them. Once the model's test shows the fix,
    /// only `done` until it has been called: told to call done, the embedded model went on
    /// editing instead (a benchmark run spent its last round that way), and the ladder checks
    /// everything there is to check.
    pub(crate) fn allowed_tools(&self) -> Option<Vec<String>> {
        if !self.enabled {
            return None;
        }
        if self.shown() {
            return (!self.done_tried).then(|| vec!["done".to_string()]);
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
        if !self.source_edited
            && !self.unconfirmed
            && self.existing.is_none_or(|v| v == TestVerdict::Passes)
        {
            return Some(
                "fix the code first: change the lines the ticket is about with edit_file (old_text copied from the code shown above, new_text the corrected lines). plumb runs the existing tests after it; the test comes next.".to_string(),
            );
        }
        let Some(test) = &self.test else {
            if self.existing.is_some_and(|v| v != TestVerdict::Passes) {
                let mut step = "your last change broke tests that passed before, so plumb undid it (see above): fix the code again with edit_file, changing only the lines the ticket is about.".to_string();
                if let Some(pointer) = self.pointer() {
                    step.push(' ');
                    step.push_str(pointer);
                }
                return Some(step);
            }
            if self.unconfirmed {
                return Some(match self.pointer() {
                    Some(pointer) => format!(
                        "your last change did not change any value the tests check to a figure the ticket gives, so plumb undid it (see above): fix the code again with edit_file. {pointer}"
                    ),
                    None => "your last change did not change any value the tests check to a figure the ticket gives, so plumb undid it (see above): fix the code again with edit_file, in the line that computes what the ticket says is wrong.".to_string(),
                });
            }
            return Some(match &self.test_file {
                Some(file) if self.example.is_some() => format!(
                    "now add a test that shows the bug: one new test function at the end of {file}, with edit_file (old_text empty, new_text the function). Start from the existing test shown after your fix: copy its lines under a new name, with the ticket's own example, and add one assert of the figure the ticket says it should be (that figure only: one you work out yourself may be wrong). plumb runs it with your fix and on the original code: it must pass with the fix and fail without it."
                ),
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
            (TestVerdict::Fails, _) if test.same_failure => format!(
                "{path} fails with your code change exactly as on the original code, so the change did not touch the figure the test checks. If the test builds the ticket's example and asserts the figure the ticket gives, the fix is in the wrong place: change the line that computes that figure."
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
        if !allowed.contains(&call.name) && self.shown() {
            return Some(format!(
                "{} is not offered now: your test passes with your fix and fails on the original code, so call done; plumb then runs the whole suite and its other checks, and if one fails every tool is offered again. Nothing was done.",
                call.name
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
        if let Some(note) = self.repeats_undone_lines(call) {
            return Some(note);
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

    /// Records a fix that kept the old tests passing but that the fix probe could not confirm
    /// (`figures.rs`: with it, no value the closest test checks comes out as a figure of the
    /// ticket): it is undone like a fix that breaks tests, and the fix step starts again. On
    /// BILL-412 the 1.5B model's wrong fixes (a rewritten `check_line` bound) all kept the old
    /// tests passing; told that the fix was doubtful, it went on to write tests for it anyway.
    /// Returns the sentence for the model.
    pub(crate) fn reject_unconfirmed(&mut self) -> String {
        if !self.source_edited {
            self.unconfirmed = true;
            self.existing = None;
        }
        // The trace's sentence on a line of its own: lines past 500 characters are cut in what
        // the model is shown.
        let again = match self.pointer() {
            Some(pointer) => format!("\n{pointer}"),
            None => " change the line that computes what the ticket says is wrong.".to_string(),
        };
        format!(
            "So plumb undid it: the code is as it was before this edit. Fix the code again:{again}"
        )
    }

    /// The test file, the closest test and the source file to trace the ticket's figures with
    /// (`trace.rs`), when the trace has not run yet.
    pub(crate) fn trace_with(&self) -> Option<(String, String, String)> {
        if !self.enabled || self.traced || self.source_edited {
            return None;
        }
        Some((
            self.test_file.clone()?,
            self.probe.clone()?,
            self.source_file.clone()?,
        ))
    }

    /// The figure trace's sentence, while no fix has been kept (it names a line of the original
    /// code).
    pub(crate) fn pointer(&self) -> Option<&str> {
        self.pointer.as_deref().filter(|_| !self.source_edited)
    }

    /// Keeps what the figure trace found (it does not run again).
    pub(crate) fn point_at(&mut self, pointer: Option<&Pointer>) {
        self.traced = true;
        self.pointer = pointer.map(Pointer::sentence);
        self.pointed_line = pointer.map(|p| (p.file.clone(), p.code.clone()));
    }

    /// A refusal of an edit that goes back to the lines of a fix plumb undid, leaving out the
    /// line the figure trace named, while no fix has been kept. Told which line makes the
    /// ticket's wrong figure, a 1.5B model still edited its undone line again in two rounds of
    /// one benchmark run (with `old_text` its own undone line, rebased onto the original): a
    /// refused sample makes the candidates helper try the next one, and the model is shown the
    /// line to edit, with the `old_text` to copy.
    fn repeats_undone_lines(&self, call: &ToolCall) -> Option<String> {
        if !self.enabled || self.source_edited || call.name != "edit_file" {
            return None;
        }
        let (file, code) = self.pointed_line.as_ref()?;
        let pointer = self.pointer.as_deref()?;
        let path = call.arguments.get("path")?.as_str()?;
        if path != file {
            return None;
        }
        let rebased = self.rebase_on_undone(call);
        let arguments = rebased.as_ref().map_or(&call.arguments, |(args, _)| args);
        let old = arguments.get("old_text")?.as_str()?;
        let lines = |text: &str| -> Vec<String> {
            text.lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .map(str::to_string)
                .collect()
        };
        let old_lines = lines(old);
        if old_lines.is_empty() || old_lines.contains(code) {
            return None;
        }
        // A line like `)` or `else:` is in many edits: only lines with some code count.
        let has_code = |line: &String| line.chars().filter(|c| c.is_alphanumeric()).count() >= 3;
        let (_, undone_old, _) = self.undone.iter().rev().find(|(p, undone_old, _)| {
            p == path
                && lines(undone_old)
                    .iter()
                    .any(|line| has_code(line) && old_lines.contains(line))
        })?;
        Some(format!(
            "plumb already undid an edit of these lines (`{}`), and the figure trace names another line. Nothing was changed.\n{pointer}\nCopy that line as old_text: `{code}`.",
            first_line_of(undone_old)
        ))
    }

    /// What to add to the error of an `edit_file` call that could not be made (its `old_text`
    /// matched nothing or several times, or the file would not parse after it) on the file the
    /// figure trace names, while no fix has
    /// been kept and the `old_text` leaves out the named line: the trace's sentence and the line
    /// to copy. In a replay of a benchmark run the 1.5B model's next edit after an undone one was
    /// its undone line with the start changed, which matches nothing; the error showed the file
    /// around it, but not which line the trace named.
    pub(crate) fn after_failed_edit(&self, call: &ToolCall) -> Option<String> {
        if !self.enabled || self.source_edited || call.name != "edit_file" {
            return None;
        }
        let (file, code) = self.pointed_line.as_ref()?;
        let pointer = self.pointer.as_deref()?;
        let path = call.arguments.get("path")?.as_str()?;
        let old = call.arguments.get("old_text")?.as_str()?;
        if path != file || old.is_empty() || old.lines().any(|line| line.trim() == code) {
            return None;
        }
        Some(format!(
            "\n{pointer}\nCopy that line as old_text: `{code}`."
        ))
    }

    /// Remembers an `edit_file` call plumb undid (see [`Phases::undoes`]).
    pub(crate) fn remember_undone(&mut self, call: &ToolCall) {
        if call.name != "edit_file" {
            return;
        }
        // An edit that was itself rebased replaced the original lines.
        let arguments = self
            .rebase_on_undone(call)
            .map_or_else(|| call.arguments.clone(), |(arguments, _)| arguments);
        let text = |key: &str| arguments.get(key)?.as_str().map(str::to_string);
        if let (Some(path), Some(old), Some(new)) =
            (text("path"), text("old_text"), text("new_text"))
            && !old.is_empty()
        {
            self.undone.push((path, old, new));
        }
    }

    /// An `edit_file` call whose `old_text` is the `new_text` of an edit plumb undid, rewritten
    /// to replace the lines that edit had replaced, with a note saying so. A 1.5B model told that
    /// its edit was undone went on copying its own edited lines into `old_text`: one run spent
    /// nine rounds on "old_text found 0 times".
    pub(crate) fn rebase_on_undone(&self, call: &ToolCall) -> Option<(serde_json::Value, String)> {
        if !self.enabled || call.name != "edit_file" {
            return None;
        }
        let path = call.arguments.get("path")?.as_str()?;
        let old = call.arguments.get("old_text")?.as_str()?;
        let (_, original, _) = self
            .undone
            .iter()
            .rev()
            .find(|(p, _, new)| p == path && new == old && !old.is_empty())?;
        let mut arguments = call.arguments.clone();
        arguments["old_text"] = serde_json::Value::String(original.clone());
        Some((
            arguments,
            format!(
                "Your old_text is what an edit plumb undid had written, so it was taken as the lines that edit replaced: `{}`. ",
                first_line_of(original)
            ),
        ))
    }

    /// Keeps the whole existing test closest to the ticket, to check fixes with (`figures.rs`).
    pub(crate) fn probe_with(&mut self, example: Option<String>, source_file: Option<String>) {
        self.probe = example;
        self.source_file = source_file;
    }

    /// The test file and the example to check a fix with, after `check` showed that it kept the
    /// old tests passing while the model has no test yet.
    pub(crate) fn probe_after(
        &self,
        check: &PhaseCheck,
        verdict: CheckVerdict,
    ) -> Option<(String, String)> {
        let fix_kept_the_tests =
            matches!(check, PhaseCheck::Existing(_)) && verdict.now == TestVerdict::Passes;
        if !self.enabled || !fix_kept_the_tests || self.test.is_some() {
            return None;
        }
        Some((self.test_file.clone()?, self.probe.clone()?))
    }

    /// Keeps the ticket's own example and expectation (its sentences saying so), to repeat next to
    /// each request for a test.
    pub(crate) fn quote_ticket(&mut self, sentences: Option<String>) {
        self.ticket_example = sentences;
    }

    /// What to show after `check`'s report, before the phase's sentence is recorded: once a fix
    /// kept the old tests passing, the ticket's example and the existing test closest to it; after
    /// a test that asserts a figure but does not show the fix, the ticket's example again.
    pub(crate) fn shown_after(&self, check: &PhaseCheck, verdict: CheckVerdict) -> Option<String> {
        if !self.enabled {
            return None;
        }
        let quote = self
            .ticket_example
            .as_ref()
            .map(|text| format!("\n\nThe ticket says: \"{text}\""));
        let asserted = matches!(verdict.now, TestVerdict::Passes | TestVerdict::Fails);
        match check {
            PhaseCheck::Existing(_)
                if verdict.now == TestVerdict::Passes && self.test.is_none() =>
            {
                let example = self.example.as_ref().map(|text| {
                    format!("\n\nThe existing test closest to the ticket, to start from: {text}")
                });
                let both = format!(
                    "{}{}",
                    quote.unwrap_or_default(),
                    example.unwrap_or_default()
                );
                (!both.is_empty()).then_some(both)
            }
            PhaseCheck::BothWays(_) if asserted && !self.wanted(check, verdict) => quote,
            PhaseCheck::Again(_) if asserted && !self.wanted(check, verdict) => quote,
            _ => None,
        }
    }

    /// The model's test file to try the ticket's figures in (see `figures.rs`): after its test ran
    /// without showing the fix, on an assertion or passing both ways.
    pub(crate) fn figure_search(
        &self,
        check: &PhaseCheck,
        verdict: CheckVerdict,
    ) -> Option<String> {
        let ran = matches!(verdict.now, TestVerdict::Passes | TestVerdict::Fails);
        let model_test = matches!(check, PhaseCheck::BothWays(_) | PhaseCheck::Again(_));
        let wanted = self.wanted(check, verdict);
        (self.enabled && ran && model_test && !wanted && !verdict.broke_old)
            .then(|| check.test().map(str::to_string))
            .flatten()
    }

    /// True when the write that `check` followed is to be undone: a code edit that breaks tests
    /// which passed before, or that stops the model's test, which ran, from running. A 1.5B model
    /// asked to repair its own broken rewrite rewrote more (one run spent all ten rounds on it);
    /// from the code as it was, it tries a smaller fix. Asked before [`Phases::record`].
    pub(crate) fn undoes(&self, check: &PhaseCheck, verdict: CheckVerdict) -> bool {
        let stops_running =
            |v: TestVerdict| matches!(v, TestVerdict::FailsInTheTest | TestVerdict::Broken);
        self.enabled
            && match check {
                PhaseCheck::Existing(_) => verdict.now != TestVerdict::Passes,
                PhaseCheck::Again(_) => {
                    verdict.broke_old
                        || (stops_running(verdict.now)
                            && self.test.as_ref().is_some_and(|t| !stops_running(t.now)))
                }
                PhaseCheck::BothWays(_) => false,
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
                if verdict.now == TestVerdict::Passes {
                    self.source_edited = true;
                    self.unconfirmed = false;
                    self.existing = Some(TestVerdict::Passes);
                    "The existing tests still pass. Now add a test that shows the bug: it must pass with your fix and fail on the original code."
                } else {
                    // The edit is undone: the code is back where it was, with or without an
                    // earlier fix that kept the tests passing.
                    if !self.source_edited {
                        self.existing = Some(verdict.now);
                    }
                    "Tests that passed before fail with this change (see above), so plumb undid it: the code is as it was before this edit. Fix the code again, changing only the lines the ticket is about."
                }
            }
            PhaseCheck::BothWays(path) => {
                let runs = TestRuns {
                    path: path.clone(),
                    now: verdict.now,
                    original: verdict.original.unwrap_or(TestVerdict::Broken),
                    same_failure: verdict.same_failure,
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
                    TestVerdict::Fails if verdict.same_failure => {
                        "The test fails with your fix exactly as it does on the original code (see above): your change did not touch the figure it checks. If the test builds the ticket's example and asserts the figure the ticket gives, the fix is in the wrong place: find the line that computes that figure and change it."
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
                if self.undoes(check, verdict) {
                    // The code and the test's last runs stay as they were.
                    return if verdict.broke_old {
                        "This change broke tests that passed before (see above), so plumb undid it: the code is as it was before this edit."
                    } else {
                        "The test no longer runs with this change (see the error): the edit broke something the test needs, so plumb undid it."
                    };
                }
                let Some(test) = &mut self.test else {
                    return "";
                };
                self.source_edited = true;
                test.now = verdict.now;
                test.same_failure = verdict.same_failure;
                if test.shows_the_fix() {
                    "The test passes now, and it failed on the original code. Call done: plumb then runs the whole suite and its other checks."
                } else if verdict.now == TestVerdict::Passes {
                    "The test passes, but it passed on the original code too, so it does not show the bug yet: change the test."
                } else if verdict.same_failure {
                    "The test still fails exactly as on the original code (see above): this change did not touch the figure it checks either."
                } else if verdict.now != TestVerdict::Fails {
                    "The test still does not run (see the error): fix the test."
                } else {
                    "The test still fails with the changed code (see above)."
                }
            }
        }
    }
}

/// The first line of `text`, trimmed, for a note.
fn first_line_of(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default()
}

/// True when two runs' failure excerpts (pytest's `E` lines, without the `where` lines that
/// print whole objects) are the same and compare a value (`assert …`): whatever changed between
/// the runs did not change the figure that failed. False for other failures (`DID NOT RAISE`,
/// an exception), which say nothing about a figure.
pub(crate) fn same_assertion(one: &str, other: &str) -> bool {
    fn assertions(excerpt: &str) -> Vec<&str> {
        excerpt
            .lines()
            .filter_map(|line| line.trim_start().strip_prefix("E "))
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('+') && !line.contains(" where "))
            .collect()
    }
    let first = assertions(one);
    let compares = first
        .iter()
        .any(|line| line.starts_with("assert ") || line.starts_with("AssertionError"));
    compares && first == assertions(other)
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
pub(crate) fn written_path(call: &ToolCall) -> Option<&str> {
    WRITE_TOOLS
        .contains(&call.name.as_str())
        .then(|| call.arguments.get("path")?.as_str())
        .flatten()
}

/// The tools that write a file.
pub(crate) const WRITE_TOOLS: [&str; 2] = ["create_file", "edit_file"];

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
        CheckVerdict {
            now,
            original,
            same_failure: false,
            broke_old: false,
        }
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
        phases.suggest_test_file(Some("tests/test_x.py".into()), None);
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
        phases.suggest_test_file(Some("tests/test_x.py".into()), None);
        let existing = PhaseCheck::Existing(Some("tests/test_x.py".into()));
        let broken = verdict(TestVerdict::Fails, None);
        assert!(
            phases.undoes(&existing, broken),
            "a fix that breaks tests is undone"
        );
        let said = phases.record(&existing, broken);
        assert!(
            said.starts_with(
                "Tests that passed before fail with this change (see above), so plumb undid it"
            ),
            "{said}"
        );
        assert!(
            phases
                .next_step()
                .unwrap()
                .starts_with("your last change broke tests that passed before, so plumb undid it")
        );
        assert!(
            phases.refusal(&test_edit()).is_some(),
            "the undone fix does not open the test phase"
        );
        assert!(!phases.undoes(&existing, verdict(TestVerdict::Passes, None)));
        assert_eq!(
            phases.shown_after(&existing, verdict(TestVerdict::Passes, None)),
            None,
            "no example was found and the ticket has no sentence to quote"
        );
        phases.record(&existing, verdict(TestVerdict::Passes, None));
        let step = phases.next_step().unwrap();
        let mut with_example = Phases::new(true);
        with_example.suggest_test_file(
            Some("tests/test_x.py".into()),
            Some("12| def test_a():\n".into()),
        );
        with_example.quote_ticket(Some("It should be Rs 162.".into()));
        assert_eq!(
            with_example
                .shown_after(&existing, verdict(TestVerdict::Passes, None))
                .as_deref(),
            Some(
                "\n\nThe ticket says: \"It should be Rs 162.\"\n\nThe existing test closest to the ticket, to start from: 12| def test_a():\n"
            )
        );
        assert_eq!(with_example.shown_after(&existing, broken), None);
        with_example.record(&existing, verdict(TestVerdict::Passes, None));
        assert!(
            with_example
                .next_step()
                .unwrap()
                .contains("Start from the existing test shown after your fix")
        );
        let both = PhaseCheck::BothWays("tests/test_x.py".into());
        for (now, original, quoted) in [
            (TestVerdict::Passes, TestVerdict::Passes, true),
            (TestVerdict::Fails, TestVerdict::Fails, true),
            (TestVerdict::Passes, TestVerdict::Fails, false),
            (
                TestVerdict::FailsInTheTest,
                TestVerdict::FailsInTheTest,
                false,
            ),
        ] {
            assert_eq!(
                with_example
                    .shown_after(&both, verdict(now, Some(original)))
                    .is_some(),
                quoted,
                "{now:?} with the fix, {original:?} without"
            );
        }
        let mut second_edit = phases.clone();
        assert_eq!(
            second_edit.record(&existing, broken),
            "Tests that passed before fail with this change (see above), so plumb undid it: the code is as it was before this edit. Fix the code again, changing only the lines the ticket is about."
        );
        assert_eq!(
            second_edit.next_step().as_deref(),
            Some(step.as_str()),
            "undoing a second edit leaves the first fix, whose tests passed"
        );
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
        assert_eq!(
            phases.allowed_tools(),
            Some(vec!["done".to_string()]),
            "only done is offered"
        );
        assert!(phases.next_step().unwrap().contains("Call done"));
        assert_eq!(phases.refusal(&call("done", json!({}))), None);
        assert!(
            phases
                .refusal(&source_edit())
                .unwrap()
                .starts_with("edit_file is not offered now: your test passes with your fix")
        );
        phases.done_called();
        assert_eq!(
            phases.allowed_tools(),
            None,
            "after done every tool is offered again"
        );
        assert_eq!(phases.refusal(&source_edit()), None);
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
        let breaks_the_test = verdict(TestVerdict::Broken, None);
        assert!(phases.undoes(&again, breaks_the_test));
        assert!(
            phases
                .record(&again, breaks_the_test)
                .ends_with("so plumb undid it.")
        );
        let broke_old = CheckVerdict {
            broke_old: true,
            ..verdict(TestVerdict::Fails, None)
        };
        assert!(phases.undoes(&again, broke_old));
        assert!(phases.clone().record(&again, broke_old).starts_with(
            "This change broke tests that passed before (see above), so plumb undid it"
        ));
        let mut broken_test = phases.clone();
        broken_test.record(
            &PhaseCheck::BothWays(TEST.into()),
            verdict(
                TestVerdict::FailsInTheTest,
                Some(TestVerdict::FailsInTheTest),
            ),
        );
        assert!(
            !broken_test.undoes(&again, breaks_the_test),
            "a code edit is not blamed for a test that did not run before it either"
        );
        assert!(
            phases.next_step().unwrap().contains("fails with your fix"),
            "the test's last runs stand: the edit was undone"
        );
        assert!(phases.wanted(&again, verdict(TestVerdict::Passes, None)));
        assert!(!phases.wanted(&again, verdict(TestVerdict::Fails, None)));
        assert!(
            phases
                .record(&again, verdict(TestVerdict::Passes, None))
                .contains("it failed on the original code. Call done")
        );
        assert_eq!(phases.allowed_tools(), Some(vec!["done".to_string()]));
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
    fn an_unconfirmed_fix_starts_the_fix_step_again() {
        let mut phases = Phases::new(true);
        assert!(phases.reject_unconfirmed().starts_with("So plumb undid it"));
        assert!(
            phases
                .next_step()
                .unwrap()
                .starts_with("your last change did not change any value the tests check")
        );
        assert!(phases.refusal(&test_edit()).is_some(), "still the fix step");
        phases.record(
            &PhaseCheck::Existing(None),
            verdict(TestVerdict::Passes, None),
        );
        assert!(phases.next_step().unwrap().starts_with("now add a test"));
    }

    #[test]
    fn the_figure_trace_runs_once_and_names_its_line_in_the_fix_step() {
        let mut phases = Phases::new(true);
        assert_eq!(phases.trace_with(), None, "nothing to trace with yet");
        phases.suggest_test_file(Some("tests/test_a.py".into()), None);
        phases.probe_with(
            Some("def test_a():\n    x = f(1)\n".into()),
            Some("a.py".into()),
        );
        assert_eq!(
            phases.trace_with(),
            Some((
                "tests/test_a.py".into(),
                "def test_a():\n    x = f(1)\n".into(),
                "a.py".into()
            ))
        );
        let found = pointer("a.py", "x = f(1)");
        phases.point_at(Some(&found));
        let sentence = found.sentence();
        assert_eq!(phases.trace_with(), None, "the trace runs once");
        assert!(
            phases
                .reject_unconfirmed()
                .ends_with(&format!("Fix the code again:\n{sentence}"))
        );
        assert!(
            phases
                .next_step()
                .unwrap()
                .ends_with(&format!("fix the code again with edit_file. {sentence}"))
        );
        // A fix undone for breaking the old tests names the line too.
        phases.record(
            &PhaseCheck::Existing(None),
            verdict(TestVerdict::Fails, None),
        );
        assert!(phases.next_step().unwrap().ends_with(&format!(
            "changing only the lines the ticket is about. {sentence}"
        )));
        // Once a fix is kept, the line of the original code is no longer named.
        phases.record(
            &PhaseCheck::Existing(None),
            verdict(TestVerdict::Passes, None),
        );
        assert_eq!(phases.pointer(), None);
        // Nothing found: the general sentence.
        let mut phases = Phases::new(true);
        phases.point_at(None);
        assert!(
            phases
                .reject_unconfirmed()
                .ends_with("change the line that computes what the ticket says is wrong.")
        );
    }

    /// A trace's pointer at `code` in `file`.
    fn pointer(file: &str, code: &str) -> Pointer {
        Pointer {
            file: file.into(),
            line: 3,
            function: "f".into(),
            name: "x".into(),
            value: "180.00".into(),
            code: code.into(),
            figure: "180".into(),
            missing: Some("162".into()),
        }
    }

    #[test]
    fn an_edit_back_to_undone_lines_is_refused_when_the_trace_names_another() {
        let mut phases = Phases::new(true);
        let edit = |old: &str, new: &str| {
            call(
                "edit_file",
                json!({"path": "a.py", "old_text": old, "new_text": new}),
            )
        };
        let first = edit(
            "    if x > 1:\n        return y",
            "    if x >= 1:\n        return y",
        );
        phases.remember_undone(&first);
        let again = edit("    if x > 1:", "    if x > 0:");
        assert_eq!(phases.refusal(&again), None, "no line named yet");
        phases.point_at(Some(&pointer("a.py", "tax = f(gross)")));
        let refused = phases.refusal(&again).expect("the undone lines again");
        assert!(
            refused.starts_with("plumb already undid an edit of these lines (`if x > 1:`)"),
            "{refused}"
        );
        assert!(
            refused.ends_with("\nCopy that line as old_text: `tax = f(gross)`."),
            "{refused}"
        );
        // Its own undone line as old_text is rebased onto the original, and refused the same.
        assert!(
            phases
                .refusal(&edit("    if x >= 1:\n        return y", "    if x > 2:"))
                .is_some()
        );
        // The named line, alone or with the undone lines, and other lines, may be edited.
        assert_eq!(
            phases.refusal(&edit("    tax = f(gross)", "    tax = 1")),
            None
        );
        assert_eq!(
            phases.refusal(&edit("    if x > 1:\n    tax = f(gross)", "    tax = 1")),
            None
        );
        assert_eq!(phases.refusal(&edit("    z = 2", "    z = 3")), None);
        phases.remember_undone(&edit("    total = f(\n    )", "    total = g(\n    )"));
        assert_eq!(
            phases.refusal(&edit("    other = h(\n    )", "    other = 1")),
            None,
            "a line with no code in common is not the undone lines"
        );
        let other_file = call(
            "edit_file",
            json!({"path": "b.py", "old_text": "    if x > 1:", "new_text": ""}),
        );
        assert_eq!(phases.refusal(&other_file), None);
        // Once a fix is kept, the line of the original code no longer counts.
        phases.record(
            &PhaseCheck::Existing(None),
            verdict(TestVerdict::Passes, None),
        );
        assert_eq!(phases.refusal(&again), None);
    }

    #[test]
    fn a_failed_edit_of_the_traced_file_is_told_the_line_the_trace_names() {
        let mut phases = Phases::new(true);
        let edit = |path: &str, old: &str| {
            call(
                "edit_file",
                json!({"path": path, "old_text": old, "new_text": "x"}),
            )
        };
        let missed = edit("a.py", "    tax = sum(item.tax for item in lines)");
        assert_eq!(phases.after_failed_edit(&missed), None, "no line named yet");
        phases.point_at(Some(&pointer("a.py", "tax = f(gross)")));
        let told = phases.after_failed_edit(&missed).expect("the line to copy");
        assert!(told.starts_with('\n'), "{told}");
        assert!(
            told.ends_with("\nCopy that line as old_text: `tax = f(gross)`."),
            "{told}"
        );
        assert_eq!(
            phases.after_failed_edit(&edit("a.py", "    tax = f(gross)\n    y = 2")),
            None,
            "an old_text with the named line failed for another reason"
        );
        assert_eq!(phases.after_failed_edit(&edit("b.py", "z = 1")), None);
        assert_eq!(phases.after_failed_edit(&edit("a.py", "")), None);
        phases.record(
            &PhaseCheck::Existing(None),
            verdict(TestVerdict::Passes, None),
        );
        assert_eq!(
            phases.after_failed_edit(&missed),
            None,
            "once a fix is kept, the line of the original code no longer counts"
        );
    }

    #[test]
    fn an_edit_of_undone_lines_replaces_the_lines_they_had_replaced() {
        let mut phases = Phases::new(true);
        let undone = call(
            "edit_file",
            json!({"path": "a.py", "old_text": "x = 1", "new_text": "x = 2"}),
        );
        phases.remember_undone(&undone);
        let again = call(
            "edit_file",
            json!({"path": "a.py", "old_text": "x = 2", "new_text": "x = 3"}),
        );
        let (arguments, note) = phases.rebase_on_undone(&again).unwrap();
        assert_eq!(
            arguments,
            json!({"path": "a.py", "old_text": "x = 1", "new_text": "x = 3"})
        );
        assert!(
            note.contains("taken as the lines that edit replaced: `x = 1`"),
            "{note}"
        );
        let elsewhere = call(
            "edit_file",
            json!({"path": "b.py", "old_text": "x = 2", "new_text": "x = 3"}),
        );
        assert_eq!(phases.rebase_on_undone(&elsewhere), None);
        assert_eq!(Phases::new(false).rebase_on_undone(&again), None);
        phases.remember_undone(&again);
        let third = call(
            "edit_file",
            json!({"path": "a.py", "old_text": "x = 3", "new_text": "x = 4"}),
        );
        assert_eq!(
            phases.rebase_on_undone(&third).unwrap().0["old_text"],
            "x = 1",
            "an undone rebased edit had replaced the original lines too"
        );
    }

    #[test]
    fn a_fix_that_did_not_touch_the_asserted_figure_is_named() {
        let with_fix = "    def test_gst_after_discount():\n>       assert totals.tax == Decimal(\"162.00\")\nE       AssertionError: assert Decimal('180.00') == Decimal('162.00')\nE        +  where Decimal('180.00') = InvoiceTotals(lines=(1,)).tax\n";
        let original = with_fix.replace("(1,)", "(2,)");
        assert!(
            same_assertion(with_fix, &original),
            "the where lines print whole objects and may differ"
        );
        let right_fix = with_fix.replace("180.00", "171.00");
        assert!(!same_assertion(&right_fix, &original));
        let raises = "E       Failed: DID NOT RAISE InvoiceError\n";
        assert!(
            !same_assertion(raises, raises),
            "only a compared value says the fix missed a figure"
        );
        assert!(!same_assertion("", ""));

        let mut phases = Phases::new(true);
        phases.record(
            &PhaseCheck::Existing(None),
            verdict(TestVerdict::Passes, None),
        );
        let missed = CheckVerdict {
            now: TestVerdict::Fails,
            original: Some(TestVerdict::Fails),
            same_failure: true,
            broke_old: false,
        };
        assert!(
            phases
                .record(&PhaseCheck::BothWays(TEST.into()), missed)
                .contains("your change did not touch the figure it checks")
        );
        assert!(
            phases
                .next_step()
                .unwrap()
                .contains("the fix is in the wrong place")
        );
        let again = PhaseCheck::Again(TEST.into());
        let missed_again = CheckVerdict {
            original: None,
            ..missed
        };
        assert!(
            phases
                .record(&again, missed_again)
                .contains("did not touch the figure it checks either")
        );
        phases.record(&again, verdict(TestVerdict::Fails, None));
        assert!(
            phases
                .next_step()
                .unwrap()
                .contains("Compare the figure it expects"),
            "a change that moved the figure is judged as before"
        );
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
