//! Guided phases, the `phases` helper (on for a small model): the harness keeps the order of
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

mod check;
#[cfg(test)]
mod hook_tests;
#[cfg(test)]
mod hook_tests_reproduction;
#[cfg(test)]
mod hook_tests_runners;
mod reproduction;
mod state;
mod steps;
#[cfg(test)]
mod tests;
mod tried;
mod undone;
mod verdict;
mod words;

use async_trait::async_trait;
use plumb_protocol::ToolCall;
use plumb_tools::EDITED_LINES_HEADER;

use check::{PhaseReport, report_explanation, run_phase_check};
use plumb_context::rust_tests;
use plumb_context::templates::TemplateError;
use plumb_verify::tamper::is_test_file;
use state::{Origin, Phases};
use tried::TriedStates;
use verdict::{CheckVerdict, PhaseCheck, TestVerdict, Written, written_path};
use words::Undone;

use crate::ending::Ending;
use crate::facts::RunFacts;
use crate::helpers::figures::{self, FigureSearch};
use crate::helpers::trace;
use crate::policy::{Gate, Judgement, Policy, RequestShape, RunHandle, ToolOutcome, Trial};

/// The guided-phases helper, with the parts of it that apply to this run: the figure search and
/// fix probe (`figures/`), and the figure trace (`trace.rs`).
pub(crate) struct Guided {
    phases: Phases,
    figures: bool,
    trace: bool,
    /// Code states a check failed on (`helpers.undo_failing_fixes`).
    tried: TriedStates,
}

impl Guided {
    /// The phases for a run: where the tests that show the bug come from when the run starts
    /// with some (the task's named tests, else the baseline's failing tests), what the first
    /// message showed, and which of the figure helpers apply.
    pub(crate) fn new(facts: &RunFacts<'_>, figures: bool, trace: bool) -> Self {
        let briefing = facts.briefing;
        let mut phases = Phases::new(facts.runner);
        if !facts.fail_to_pass.is_empty() {
            let named = facts.fail_to_pass.to_vec();
            phases.with_reproduction(Origin::Named, named.clone(), listed(&named));
        } else {
            let failing = facts.baseline.failing();
            if !failing.is_empty() {
                phases.with_reproduction(Origin::Baseline, failing.clone(), listed(&failing));
            }
        }
        phases.suggest_test_file(briefing.test_file.clone(), briefing.closest_test.clone());
        phases.probe_with(
            briefing.closest_test_text.clone(),
            briefing.source_file.clone(),
        );
        phases.quote_ticket(briefing.ticket_example.clone());
        Self {
            phases,
            figures,
            trace,
            tried: TriedStates::default(),
        }
    }

    /// With `on` (`helpers.undo_failing_fixes`): a fix after which the task's or the baseline's
    /// failing tests still fail is undone, and a write that brings back code a check already
    /// failed on is undone before any test runs.
    pub(crate) fn undo_failing_fixes(mut self, on: bool) -> Self {
        self.phases.undo_failing = on;
        self
    }

    /// The workspace's patch after a code edit, when failing states are remembered.
    fn code_state(&self, run: &dyn RunHandle, check: &PhaseCheck) -> Option<String> {
        let code = matches!(check, PhaseCheck::Existing(_) | PhaseCheck::Again(_));
        (self.phases.undo_failing && code)
            .then(|| run.patch())
            .flatten()
    }

    /// After the model's test ran without showing the fix: the figure search, which may keep a
    /// version of it that does (the check and verdict then are that version's).
    async fn search(
        &mut self,
        run: &mut dyn RunHandle,
        checked: &mut Checked,
        output: &mut String,
    ) -> Result<(), Ending> {
        let Some(test_file) = self
            .figures
            .then(|| self.phases.figure_search(&checked.check, checked.verdict))
            .flatten()
        else {
            return Ok(());
        };
        match figures::search_figures(run, &test_file).await? {
            FigureSearch::Found(found) => {
                // The failing output is of an assert that is gone now: its traceback would
                // cost the next round some 450 tokens (~4 s for the embedded model) and tell
                // the model nothing more.
                if let Some(range) = checked.report.failure.clone()
                    && let Some(excerpt) = checked.report.text.get(range.clone())
                {
                    let short = figures::replaced_failure(excerpt).map_err(Ending::infra)?;
                    checked.report.text.replace_range(range, &short);
                }
                // The edit's answer ends with the lines of the version that was just
                // replaced; the note shows the kept one. Both cost the next round (which is
                // usually `done`) some 150 tokens.
                if let Some(at) = output.find(EDITED_LINES_HEADER) {
                    output.truncate(at);
                    output.push_str(&figures::kept_version_below().map_err(Ending::infra)?);
                }
                checked
                    .report
                    .text
                    .push_str(&figures::note(&found, &test_file).map_err(Ending::infra)?);
                // The kept version is the model's test now, judged both ways.
                checked.check = PhaseCheck::BothWays(test_file.into());
                checked.verdict = CheckVerdict {
                    now: TestVerdict::Passes,
                    original: Some(TestVerdict::Fails),
                    same_failure: false,
                    broke_old: false,
                    broke_code: false,
                    passes_more: false,
                };
            }
            FigureSearch::NoneShowed(tries) => {
                checked
                    .report
                    .text
                    .push_str(&figures::none_showed(tries).map_err(Ending::infra)?);
            }
            FigureSearch::NotTried => {}
        }
        Ok(())
    }
}

impl Guided {
    /// `call` as it will run: `before_tool` may send it to the code's file.
    fn as_it_runs<'c>(&self, call: &'c ToolCall) -> std::borrow::Cow<'c, ToolCall> {
        match self.phases.to_the_code(call) {
            Some((arguments, _)) => std::borrow::Cow::Owned(ToolCall {
                arguments,
                ..call.clone()
            }),
            None => std::borrow::Cow::Borrowed(call),
        }
    }
}

/// What a write was, as the phases see it: tests (a test file, or test functions added beside
/// the code in a Rust file whose code it left alone), else a change of the code. `None` when the
/// call writes nothing.
fn check_for(phases: &Phases, run: &dyn RunHandle, call: &ToolCall) -> Option<PhaseCheck> {
    let path = written_path(call)?;
    if is_test_file(path) {
        return Some(phases.check_after_test(Written::from(path)));
    }
    if path.ends_with(".rs")
        && let (Some(before), Some(after)) = (run.read_before(path), run.read(path))
        && before != after
        && rust_tests::with_tests_of(&before, &after).as_deref() == Some(after.as_str())
    {
        let targets = rust_tests::changed_test_functions(Some(&before), &after, false);
        if !targets.is_empty() {
            return Some(phases.check_after_test(Written {
                path: path.to_string(),
                targets,
            }));
        }
    }
    Some(phases.check_after_code())
}

/// At most three test ids, each shortened, then how many more.
fn listed(ids: &[String]) -> String {
    let shown: Vec<String> = ids
        .iter()
        .take(3)
        .map(|id| plumb_verify::shown_id(id))
        .collect();
    match ids.len().saturating_sub(3) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// A check after a write, and what it showed.
struct Checked {
    check: PhaseCheck,
    verdict: CheckVerdict,
    report: PhaseReport,
}

#[async_trait]
impl Policy for Guided {
    fn shape_request(&self, shape: &mut RequestShape) -> Result<(), TemplateError> {
        shape.allowed_tools = self.phases.allowed_tools();
        shape.next_step = self
            .phases
            .next_step()
            .map(|step| words::next_step(&step, self.figures))
            .transpose()?;
        Ok(())
    }

    fn trial(&self, call: &ToolCall) -> Option<Trial> {
        self.phases.trial(&self.as_it_runs(call))
    }

    async fn judge(
        &self,
        run: &mut dyn RunHandle,
        call: &ToolCall,
        _trial: &Trial,
    ) -> Result<Option<Judgement>, Ending> {
        let Some(check) = check_for(&self.phases, run, &self.as_it_runs(call)) else {
            return Ok(None);
        };
        if let Some(state) = self.code_state(run, &check)
            && let Some((round, showed)) = self.tried.failed_before(&state)
        {
            let showed = words::showed(showed).map_err(Ending::infra)?;
            return Ok(Some(Judgement {
                wanted: false,
                confirmed: false,
                verdict: format!("the code as tried in round {round}, when {showed}"),
                undone: true,
            }));
        }
        let (verdict, _) = run_phase_check(run, &check).await?;
        let mut wanted = self.phases.wanted(&check, verdict);
        let undone = self.phases.undoes(&check, verdict);
        let mut said = describe(&check, verdict, self.phases.own_test());
        if self.figures
            && let Some(test_file) = self.phases.figure_search(&check, verdict)
            && let FigureSearch::Found(found) = figures::search_figures(run, &test_file).await?
        {
            wanted = true;
            said.push_str(&format!(
                "; with {} (the figure search) it shows the fix",
                found.change()
            ));
        }
        let mut confirmed = false;
        if self.figures
            && let Some((test_file, example)) = self.phases.probe_after(&check, verdict)
        {
            match figures::probe_fix(run, &test_file, &example).await? {
                FigureSearch::Found(_) => {
                    confirmed = true;
                    said.push_str("; the fix probe finds a figure of the ticket");
                }
                FigureSearch::NoneShowed(_) => {
                    wanted = false;
                    said.push_str("; the fix probe finds no figure of the ticket");
                }
                FigureSearch::NotTried => {}
            }
        }
        Ok(Some(Judgement {
            wanted,
            confirmed,
            verdict: said,
            undone,
        }))
    }

    fn before_tool(&self, call: &ToolCall) -> Gate {
        if let Some(note) = self.phases.refusal(call) {
            return match words::note(&note) {
                Ok(note) => Gate::Refuse(note),
                Err(error) => Gate::Fail(error.to_string()),
            };
        }
        match self
            .phases
            .to_the_code(call)
            .or_else(|| self.phases.rebase_on_undone(call))
        {
            Some((arguments, note)) => match words::answer_start(&note) {
                Ok(note) => Gate::Rewrite { arguments, note },
                Err(error) => Gate::Fail(error.to_string()),
            },
            None => Gate::Run,
        }
    }

    async fn after_tool(
        &mut self,
        run: &mut dyn RunHandle,
        call: &ToolCall,
        outcome: &mut ToolOutcome,
    ) -> Result<(), Ending> {
        if !outcome.ok {
            // A function of the reproduction's file, which the tool would send the model to.
            if outcome.ran
                && let Some(note) = self
                    .phases
                    .name_in_the_reproduction(call, &|path| run.read(path))
            {
                outcome.text = words::note(&note).map_err(Ending::infra)?;
                outcome.summary = outcome.text.lines().next().unwrap_or_default().to_string();
                return Ok(());
            }
            // An edit that could not be made, of the file the figure trace names.
            if outcome.ran
                && let Some(note) = self.phases.after_failed_edit(call)
            {
                outcome.text.push('\n');
                outcome
                    .text
                    .push_str(&words::note(&note).map_err(Ending::infra)?);
            }
            return Ok(());
        }
        let Some(check) = check_for(&self.phases, run, call) else {
            return Ok(());
        };
        let state = self.code_state(run, &check);
        if let Some((round, showed)) = state
            .as_deref()
            .and_then(|state| self.tried.failed_before(state))
        {
            run.undo()?;
            let showed = words::showed(showed).map_err(Ending::infra)?;
            let text = words::undone(&Undone::SameAsBefore {
                path: written_path(call).unwrap_or_default(),
                round,
                showed: &showed,
            })
            .map_err(Ending::infra)?;
            undone(outcome, text);
            return Ok(());
        }
        let (verdict, report) = run_phase_check(run, &check).await?;
        let mut checked = Checked {
            check,
            verdict,
            report,
        };
        self.search(run, &mut checked, &mut outcome.text).await?;
        let Checked {
            check,
            verdict,
            report,
        } = checked;
        let mut report = report.text;
        let mut shown = self.phases.shown_after(&check, verdict);
        let mut undo = self.phases.undoes(&check, verdict);
        let mut unconfirmed = false;
        if self.figures
            && let Some((test_file, example)) = self.phases.probe_after(&check, verdict)
        {
            let search = figures::probe_fix(run, &test_file, &example).await?;
            let note = figures::probe_note(&search).map_err(Ending::infra)?;
            report.push_str(&note.unwrap_or_default());
            report.push('\n');
            unconfirmed = matches!(search, FigureSearch::NoneShowed(_));
        }
        // A fix undone before any was kept: the first time, the figure trace finds the line that
        // makes the ticket's figure, named from then on.
        let fix_undone = unconfirmed || (undo && matches!(check, PhaseCheck::Existing(_)));
        if self.trace
            && fix_undone
            && let Some((test_file, example, source_file)) = self.phases.trace_with()
        {
            let pointer = trace::trace_figures(run, &test_file, &example, &source_file).await?;
            self.phases
                .point_at(pointer.as_ref())
                .map_err(Ending::infra)?;
        }
        let sentence = if unconfirmed {
            undo = true;
            shown = None;
            self.phases.reject_unconfirmed().map_err(Ending::infra)?
        } else {
            let recorded = self.phases.record(&check, verdict);
            let mut sentence = words::recorded(recorded, self.figures).map_err(Ending::infra)?;
            if undo && let Some(pointer) = self.phases.pointer() {
                // A line of its own: lines past 500 characters are cut in what the model is
                // shown, and a long path or line of code can get there.
                sentence.push('\n');
                sentence.push_str(pointer);
            }
            sentence
        };
        let shown = shown.unwrap_or_default();
        if let Some(state) = &state {
            self.tried
                .remember(state, run.round(), &check, verdict, undo);
        }
        if undo {
            self.phases.remember_undone(call);
            // The last checkpoint is the code as it was before the edit.
            run.undo()?;
            // Undone, it counts as a failed action: the same breaking edit sent again and
            // again ends the run as stuck, and a model that can sample again does rather than
            // repeat it. The tool's own text shows the edited lines, which are gone again: a
            // model shown them went on editing them.
            let text = words::undone(&Undone::Checked {
                path: written_path(call).unwrap_or_default(),
                report: &report,
                sentence: &sentence,
                shown: &shown,
            })
            .map_err(Ending::infra)?;
            undone(outcome, text);
        } else {
            outcome.text.push_str(&report);
            outcome.text.push_str(&sentence);
            outcome.text.push_str(&shown);
        }
        if let Some(explained) = report_explanation(&check, verdict, &report) {
            outcome.text.push(' ');
            outcome
                .text
                .push_str(&words::note(&explained).map_err(Ending::infra)?);
        }
        outcome.report = report;
        Ok(())
    }

    fn at_done(&mut self) {
        self.phases.done_called();
    }
}

/// Marks `outcome` as a write plumb undid (a failed action, for stuck detection), `text` saying
/// so and why.
fn undone(outcome: &mut ToolOutcome, text: String) {
    outcome.ok = false;
    outcome.undone = true;
    outcome.text = text;
}

/// A tried write's verdict in words, for the journal.
fn describe(check: &PhaseCheck, verdict: CheckVerdict, own_test: bool) -> String {
    let word = |verdict: TestVerdict| match verdict {
        TestVerdict::Passes => "passes",
        TestVerdict::Fails => "fails",
        TestVerdict::FailsInTheTest => "fails on a mistake in the test",
        TestVerdict::Broken => "could not run",
    };
    let now = word(verdict.now);
    if verdict.broke_code {
        return "the code stops on an error after it that the original code did not raise".into();
    }
    match (check, verdict.original) {
        (PhaseCheck::Existing(_), _) => format!(
            "the existing tests after it: {}",
            if verdict.now == TestVerdict::Passes {
                "no test that passed before fails"
            } else {
                "tests that passed before fail"
            }
        ),
        (PhaseCheck::BothWays(_), Some(original)) => format!(
            "its test {now} with the fix and {} on the original code",
            word(original)
        ),
        _ if own_test => format!("the model's test {now} after it"),
        _ => format!("the tests that show the bug, after it: {now}"),
    }
}
