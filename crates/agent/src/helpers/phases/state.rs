//! Where a guided run stands, and what each check after a write means for it.

use plumb_context::templates::TemplateError;
use plumb_protocol::ToolCall;
use plumb_verify::Runner;
use plumb_verify::tamper::is_test_file;

use super::verdict::{CheckVerdict, PhaseCheck, TestVerdict, Written, written_path};
use super::words::Recorded;
use crate::helpers::trace::Pointer;
use crate::policy::Trial;

/// Where the tests that show the bug came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The model wrote them.
    Model,
    /// The task names them (SWE-bench's FAIL_TO_PASS).
    Named,
    /// They failed on the untouched code, before the run.
    Baseline,
}

/// The tests that show (or are to show) the bug, and how they last ran: with the changes, and
/// on the original source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TestRuns {
    /// The file the model wrote, or the tests listed, as the model is told.
    pub(super) path: String,
    /// What the test command is narrowed to when they run.
    pub(super) targets: Vec<String>,
    pub(super) origin: Origin,
    pub(super) now: TestVerdict,
    pub(super) original: TestVerdict,
    /// The last run with the code changes failed on the same assertion as the run on the
    /// original code: the changes did not touch the figure the test checks.
    pub(super) same_failure: bool,
}

impl TestRuns {
    /// Passes with the fix and fails (on an assertion or an error of the code) without it.
    pub(super) fn shows_the_fix(&self) -> bool {
        self.now == TestVerdict::Passes && self.original == TestVerdict::Fails
    }
}

/// Where a guided run stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Phases {
    /// The project's test runner: where a new test goes.
    pub(super) runner: Runner,
    /// A file that is not a test was changed: the fix is in, or on its way.
    pub(super) source_edited: bool,
    /// How the project's tests ran after the last source edit, while the model had no test.
    pub(super) existing: Option<TestVerdict>,
    /// The last fix was undone because the fix probe found no figure of the ticket in it.
    pub(super) unconfirmed: bool,
    /// The model's test file and its last runs.
    pub(super) test: Option<TestRuns>,
    /// The existing test file shown up front, where a new test can be added at the end and use
    /// the helpers already there.
    pub(super) test_file: Option<String>,
    /// The existing test closest to the ticket: the pattern for the model's test.
    pub(super) example: Option<String>,
    /// The ticket's sentences giving its example and what should happen.
    pub(super) ticket_example: Option<String>,
    /// The whole text of the existing test closest to the ticket, for the fix probe.
    pub(super) probe: Option<String>,
    /// The source file shown up front, which the figure trace follows (`trace.rs`).
    pub(super) source_file: Option<String>,
    /// The figure trace ran (it runs once, at the first fix undone before one was kept: the
    /// probe rejected it or it broke tests), and the sentence naming the line it points at, when
    /// it found one.
    pub(super) traced: bool,
    pub(super) pointer: Option<String>,
    /// The file and the (trimmed) code of the line the figure trace named.
    pub(super) pointed_line: Option<(String, String)>,
    /// Edits plumb undid: (path, old_text, new_text).
    pub(super) undone: Vec<(String, String, String)>,
    /// The model has called `done` (the ladder ran) at least once.
    pub(super) done_tried: bool,
    /// `helpers.undo_failing_fixes`: a fix after which the task's or the baseline's failing
    /// tests still fail is undone (see [`Phases::undoes_a_failing_fix`]).
    pub(super) undo_failing: bool,
}

impl Phases {
    pub(crate) fn new(runner: Runner) -> Self {
        Self {
            runner,
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
            undo_failing: false,
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

    /// Starts from tests that already fail on the original code — the task's named ones, or the
    /// baseline's failing ones — as the tests that show the bug: the next step is the fix, and
    /// once they pass (breaking no test that passed), `done`.
    pub(crate) fn with_reproduction(
        &mut self,
        origin: Origin,
        targets: Vec<String>,
        shown: String,
    ) {
        self.test = Some(TestRuns {
            path: shown,
            targets,
            origin,
            now: TestVerdict::Fails,
            original: TestVerdict::Fails,
            same_failure: false,
        });
    }

    /// True once a test that shows the bug passes with the changes (and failed without them).
    pub(super) fn shown(&self) -> bool {
        self.test.as_ref().is_some_and(TestRuns::shows_the_fix)
    }

    /// What plumb runs after `call` wrote a file, when the phases want a run, telling a test
    /// from the code by the file's path (a test file).
    pub(crate) fn check_after(&self, call: &ToolCall) -> Option<PhaseCheck> {
        let path = written_path(call)?;
        Some(if is_test_file(path) {
            self.check_after_test(Written::from(path))
        } else {
            self.check_after_code()
        })
    }

    /// What plumb runs after the model wrote the tests `written`.
    pub(crate) fn check_after_test(&self, written: Written) -> PhaseCheck {
        if self.source_edited {
            PhaseCheck::BothWays(written)
        } else {
            PhaseCheck::First(written)
        }
    }

    /// What plumb runs after the model changed the code.
    pub(crate) fn check_after_code(&self) -> PhaseCheck {
        match &self.test {
            Some(test) => PhaseCheck::Again(Written {
                path: test.path.clone(),
                targets: test.targets.clone(),
            }),
            None => PhaseCheck::Existing(self.test_file.clone()),
        }
    }

    /// True when a check's verdict is what the phase needs: the project's tests still pass after
    /// a fix, or the model's test passes with the fix and fails without it.
    pub(crate) fn wanted(&self, check: &PhaseCheck, verdict: CheckVerdict) -> bool {
        match check {
            PhaseCheck::Existing(_) => verdict.now == TestVerdict::Passes,
            PhaseCheck::BothWays(_) => {
                verdict.now == TestVerdict::Passes && verdict.original == Some(TestVerdict::Fails)
            }
            // A test written first is wanted when it fails on the original code: it shows the bug.
            PhaseCheck::First(_) => verdict.now == TestVerdict::Fails,
            PhaseCheck::Again(_) => {
                verdict.now == TestVerdict::Passes
                    && !verdict.broke_old
                    && !verdict.broke_code
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
    pub(crate) fn reject_unconfirmed(&mut self) -> Result<String, TemplateError> {
        if !self.source_edited {
            self.unconfirmed = true;
            self.existing = None;
        }
        // The trace's sentence goes on a line of its own: lines past 500 characters are cut in
        // what the model is shown.
        super::words::undone(&super::words::Undone::Unconfirmed {
            pointer: self.pointer(),
        })
    }

    /// The test file, the closest test and the source file to trace the ticket's figures with
    /// (`trace.rs`), when the trace has not run yet.
    pub(crate) fn trace_with(&self) -> Option<(String, String, String)> {
        if self.traced || self.source_edited {
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
    pub(crate) fn point_at(&mut self, pointer: Option<&Pointer>) -> Result<(), TemplateError> {
        self.traced = true;
        self.pointer = pointer.map(Pointer::sentence).transpose()?;
        self.pointed_line = pointer.map(|p| (p.file.clone(), p.code.clone()));
        Ok(())
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
        if !fix_kept_the_tests || self.test.is_some() {
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
        let model_test = match check {
            PhaseCheck::BothWays(_) => true,
            PhaseCheck::Again(_) => self.own_test(),
            PhaseCheck::Existing(_) | PhaseCheck::First(_) => false,
        };
        let wanted = self.wanted(check, verdict);
        (ran && model_test && !wanted && !verdict.broke_old && !verdict.broke_code)
            .then(|| check.test().map(str::to_string))
            .flatten()
    }

    /// True when the test the phases run again is one the model wrote (not the task's named tests
    /// or the tests that failed at baseline).
    pub(crate) fn own_test(&self) -> bool {
        self.test
            .as_ref()
            .is_some_and(|t| t.origin == Origin::Model)
    }

    /// True when the write that `check` followed is to be undone: a code edit that breaks tests
    /// which passed before, that makes the code stop on an error the original code did not raise
    /// (a name no longer defined), or that stops the model's test, which ran, from running. A 1.5B model
    /// asked to repair its own broken rewrite rewrote more (one run spent all ten rounds on it);
    /// from the code as it was, it tries a smaller fix. Asked before [`Phases::record`].
    pub(crate) fn undoes(&self, check: &PhaseCheck, verdict: CheckVerdict) -> bool {
        let stops_running =
            |v: TestVerdict| matches!(v, TestVerdict::FailsInTheTest | TestVerdict::Broken);
        match check {
            PhaseCheck::Existing(_) => verdict.now != TestVerdict::Passes,
            PhaseCheck::Again(_) => {
                verdict.broke_old
                    || verdict.broke_code
                    || (stops_running(verdict.now)
                        && self.test.as_ref().is_some_and(|t| !stops_running(t.now)))
                    || self.undoes_a_failing_fix(verdict)
            }
            PhaseCheck::BothWays(_) | PhaseCheck::First(_) => false,
        }
    }

    /// With `helpers.undo_failing_fixes`: true for a code edit after which the task's or the
    /// baseline's failing tests still fail on an assertion, no more of them passing than on the
    /// original code. Kept, such fixes pile up: in the eval a 1.5B model added `- 1` to one
    /// line in six rounds running (Python/67), and another lost a function's logic to a one-line
    /// rewrite, then went back and forth between two wrong ones (Python/74). From the code as it
    /// was, each round is a fresh try, as Agentless samples every fix from the same place. The
    /// model's own test is left out: it may assert a wrong figure, and a right fix must not be
    /// undone for it.
    pub(super) fn undoes_a_failing_fix(&self, verdict: CheckVerdict) -> bool {
        self.undo_failing
            && verdict.now == TestVerdict::Fails
            && !verdict.passes_more
            && self
                .test
                .as_ref()
                .is_some_and(|t| t.origin != Origin::Model)
    }

    /// True while a fix can be judged only by the project's tests still passing (the model has no
    /// test yet): the candidates helper then tries every sample and takes the most common fix.
    pub(crate) fn votes_on_fixes(&self) -> bool {
        self.test.is_none()
    }

    /// How trying `call` would be judged, for the candidates helper: `None` when the call writes
    /// nothing, or the phases have nothing left to want (a test already shows the fix). A fix
    /// is voted on while no test of the model's can judge it.
    pub(crate) fn trial(&self, call: &ToolCall) -> Option<Trial> {
        if self.shown() {
            return None;
        }
        written_path(call)?;
        if let Some(note) = self.refusal(call) {
            return Some(match super::words::note(&note) {
                Ok(note) => Trial::Unwanted(note),
                Err(error) => Trial::Failed(error.to_string()),
            });
        }
        self.check_after(call).map(|check| match check {
            PhaseCheck::BothWays(_) | PhaseCheck::First(_) => Trial::Test,
            PhaseCheck::Existing(_) => Trial::Fix {
                vote: self.votes_on_fixes(),
            },
            PhaseCheck::Again(_) => Trial::Fix { vote: false },
        })
    }

    /// Records how a test written before any fix ran on the original code.
    fn record_first(&mut self, written: &Written, verdict: CheckVerdict) -> Recorded {
        match verdict.now {
            TestVerdict::Fails => {
                if self.test.as_ref().is_none_or(|t| t.origin == Origin::Model) {
                    self.test = Some(TestRuns {
                        path: written.path.clone(),
                        targets: written.targets.clone(),
                        origin: Origin::Model,
                        now: TestVerdict::Fails,
                        original: TestVerdict::Fails,
                        same_failure: false,
                    });
                }
                Recorded::FirstFails
            }
            TestVerdict::Passes => Recorded::FirstPasses,
            TestVerdict::FailsInTheTest => Recorded::FailsInTheTest,
            TestVerdict::Broken => Recorded::FirstBroken,
        }
    }

    /// Records a check's verdict after `call` ran; returns what to tell the model.
    pub(crate) fn record(&mut self, check: &PhaseCheck, verdict: CheckVerdict) -> Recorded {
        match check {
            PhaseCheck::Existing(_) => {
                if verdict.now == TestVerdict::Passes {
                    self.source_edited = true;
                    self.unconfirmed = false;
                    self.existing = Some(TestVerdict::Passes);
                    Recorded::ExistingPass
                } else {
                    // The edit is undone: the code is back where it was, with or without an
                    // earlier fix that kept the tests passing.
                    if !self.source_edited {
                        self.existing = Some(verdict.now);
                    }
                    Recorded::ExistingBroke
                }
            }
            PhaseCheck::First(written) => self.record_first(written, verdict),
            PhaseCheck::BothWays(written) => {
                let runs = TestRuns {
                    path: written.path.clone(),
                    targets: written.targets.clone(),
                    origin: Origin::Model,
                    now: verdict.now,
                    original: verdict.original.unwrap_or(TestVerdict::Broken),
                    same_failure: verdict.same_failure,
                };
                let shown = runs.shows_the_fix();
                // The task's own tests stay the ones that show the bug; the model's test replaces
                // the baseline's failing tests only once it shows the fix itself.
                let keeps = match self.test.as_ref().map(|t| t.origin) {
                    Some(Origin::Named) => true,
                    Some(Origin::Baseline) => !shown,
                    Some(Origin::Model) | None => false,
                };
                if !keeps {
                    self.test = Some(runs);
                }
                match verdict.now {
                    _ if shown => Recorded::Shown,
                    TestVerdict::Passes if verdict.original != Some(TestVerdict::Passes) => {
                        Recorded::PassesOriginalBroken
                    }
                    TestVerdict::Passes => Recorded::PassesOnOriginal,
                    TestVerdict::Fails if verdict.same_failure => Recorded::FailsAsOriginal,
                    TestVerdict::Fails => Recorded::FailsWithFix,
                    TestVerdict::FailsInTheTest => Recorded::FailsInTheTest,
                    TestVerdict::Broken => Recorded::BrokenNotATest,
                }
            }
            PhaseCheck::Again(_) => {
                if self.undoes(check, verdict) {
                    // The code and the test's last runs stay as they were.
                    return if verdict.broke_old {
                        Recorded::UndoneBrokeOld
                    } else if verdict.broke_code {
                        Recorded::UndoneBrokeCode
                    } else if self.undoes_a_failing_fix(verdict) && verdict.same_failure {
                        Recorded::UndoneSameFailure
                    } else if self.undoes_a_failing_fix(verdict) {
                        Recorded::UndoneStillFails
                    } else {
                        Recorded::UndoneTestBroken
                    };
                }
                let Some(test) = &mut self.test else {
                    return Recorded::Nothing;
                };
                self.source_edited = true;
                test.now = verdict.now;
                test.same_failure = verdict.same_failure;
                let own = test.origin == Origin::Model;
                if test.shows_the_fix() {
                    if own {
                        Recorded::AgainShownOwn
                    } else {
                        Recorded::AgainShownTheirs
                    }
                } else if verdict.now == TestVerdict::Passes {
                    Recorded::AgainPassesOnOriginal
                } else if verdict.same_failure {
                    Recorded::AgainSameFailure
                } else if verdict.now != TestVerdict::Fails {
                    Recorded::AgainDoesNotRun
                } else if own {
                    Recorded::AgainStillFailsOwn
                } else {
                    Recorded::AgainStillFailsTheirs
                }
            }
        }
    }
}
