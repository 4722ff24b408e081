//! Figure search, part of the guided phases: when the model's new test runs but does not show the
//! fix (it passes on the original code too, or fails with the fix), plumb tries the test again with
//! each of its asserts alone, then with each figure the ticket writes in place of the figure one of
//! its asserts expects, one assert at a time — on the value the assert checks, then on each other
//! value the file's tests check on the same variable — and keeps the first version that passes
//! with the fix and fails on the original code. The same search on the existing test closest to the ticket is the fix probe: it tells
//! whether a fix that keeps the old tests passing changes a value to a figure of the ticket.
//!
//! Why: a 1.5B model builds the ticket's example correctly far more often than it picks the figure
//! to assert. On BILL-412 it asserted the bug's own Rs 180 ("the invoice shows Rs 180"), or a total
//! it worked out itself, where the ticket says GST should be Rs 162. Which of the ticket's figures
//! is the expected one is a question the two test runs answer, not a reading of the prose: only a
//! figure the fix produces passes with it, and only one the original code does not produce fails
//! without it. The kept test asserts a figure written in the ticket, and is judged like any other.
//!
//! When none of those shows the fix, the versions whose setup gives one of the ticket's figures in
//! place of a number the ticket does not give are next (`figure_inputs.rs`): a test built on a
//! wrong input (a discount of 150 where the ticket says 100) fails with the right fix whatever it
//! asserts.
//!
//! Only Python tests run by pytest, only a test function this run added, only single-line `assert
//! … == …` lines; at most [`MAX_TRIES`] versions, and [`inputs::MAX_TRIES`] more with another
//! input, all written into the file as tests of their own and run together, once with the fix and
//! once on the original code.

use plumb_context::templates::{TemplateError, render};
use plumb_verify::{Runner, TestOutcome};
use serde::Serialize;

mod asserts;
mod inputs;

use asserts::{
    Input, Version, assert_sides, numbers_in, own_asserts, plain, versions, without_message,
};

use crate::ending::Ending;
use crate::policy::RunHandle;

/// At most this many versions of a test are tried (all in one test run with the fix and one on the
/// original code: a version costs a few milliseconds).
const MAX_TRIES: usize = 200;

/// What the search came to.
pub(crate) enum FigureSearch {
    /// Nothing to try (not pytest, no new test function, no `assert … == <number>`), or the runs
    /// gave no per-test results to judge by.
    NotTried,
    /// This many versions were tried and none showed the fix.
    NoneShowed(usize),
    Found(FigureFound),
}

/// A version of the model's test that showed the fix.
pub(crate) struct FigureFound {
    /// The assert as the model wrote it, and as plumb kept it.
    pub written: String,
    pub kept: String,
    /// The setup line that now gives a figure of the ticket as an input, if one does.
    pub input: Option<Input>,
    /// The test function as it now reads.
    pub function: String,
}

impl FigureFound {
    /// What changed, for a sentence: "`assert …`", or "`… discount=\"100.00\" …` and `assert …`".
    pub(crate) fn change(&self) -> String {
        match &self.input {
            Some(input) => format!("`{}` and `{}`", input.kept.trim(), self.kept.trim()),
            None => format!("`{}`", self.kept.trim()),
        }
    }
}

/// One test function of a file: its name and its lines `start..end` (0-based, trailing blank
/// lines left out).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Function {
    name: String,
    start: usize,
    end: usize,
}

/// Tries the figure search on `test_file`; on success the workspace holds the version found.
/// The file is left as it was when nothing showed the fix.
pub(crate) async fn search_figures(
    run: &mut dyn RunHandle,
    test_file: &str,
) -> Result<FigureSearch, Ending> {
    let Some(text) = pytest_file(run, test_file) else {
        return Ok(FigureSearch::NotTried);
    };
    let baseline = run.read_original(test_file);
    let lines: Vec<&str> = text.lines().collect();
    // A test of the project renamed looks new by its name: the search never rewrites one.
    if renames_a_test(&lines, baseline.as_deref()) {
        return Ok(FigureSearch::NotTried);
    }
    let Some(function) = new_tests(&lines, baseline.as_deref()).pop() else {
        return Ok(FigureSearch::NotTried);
    };
    let body = lines[function.start..function.end].join("\n");
    let versions = ticket_versions(run.ticket(), &body, &text, Inputs::AlsoChanged);
    let tries = versions.len();
    if tries == 0 {
        return Ok(FigureSearch::NotTried);
    }
    // Every version at once, each a test of its own (`name__figure_N`): two test runs in all,
    // with the fix and on the original code, instead of two per version.
    let all = renamed_versions(&versions, &function.name);
    let tried = with_function(&lines, &function, &all, text.ends_with('\n'));
    let index =
        match first_that_shows(run, test_file, &text, tried, &function.name, &versions).await? {
            Shown::At(index) => index,
            Shown::NoneOf | Shown::Ungrounded | Shown::MadeBefore => {
                return Ok(FigureSearch::NoneShowed(tries));
            }
            Shown::Unknown => return Ok(FigureSearch::NotTried),
        };
    let version = &versions[index];
    let kept = with_function(&lines, &function, &version.text, text.ends_with('\n'));
    run.write(test_file, &kept)?;
    Ok(FigureSearch::Found(FigureFound {
        written: version.written.clone(),
        kept: version.kept.clone(),
        input: version.input.clone(),
        function: version.text.clone(),
    }))
}

/// Checks a fix that kept the old tests passing against the existing test closest to the
/// ticket (`example`, in `test_file`): its setup with one assert of a value the file's tests
/// check and a figure the ticket gives, in every combination. Found: one that passes with the
/// fix and fails on the original code, so the fix changes a value the ticket talks about to
/// the ticket's figure. Nothing is kept: the model still writes its own test.
pub(crate) async fn probe_fix(
    run: &mut dyn RunHandle,
    test_file: &str,
    example: &str,
) -> Result<FigureSearch, Ending> {
    let Some(text) = pytest_file(run, test_file) else {
        return Ok(FigureSearch::NotTried);
    };
    let Some(name) = example.lines().find_map(test_name) else {
        return Ok(FigureSearch::NotTried);
    };
    let probe = example.replacen(&format!("def {name}("), &format!("def {PROBE}("), 1);
    // The closest test's inputs are the project's own: only its asserts are varied.
    let versions = ticket_versions(run.ticket(), &probe, &text, Inputs::AsWritten);
    let tries = versions.len();
    if tries == 0 {
        return Ok(FigureSearch::NotTried);
    }
    let all = renamed_versions(&versions, PROBE);
    let tried = format!("{}\n\n\n{all}\n", text.trim_end());
    Ok(
        match first_that_shows(run, test_file, &text, tried, PROBE, &versions).await? {
            Shown::At(index) => FigureSearch::Found(FigureFound {
                written: versions[index].written.clone(),
                kept: versions[index].kept.clone(),
                input: versions[index].input.clone(),
                function: versions[index].text.clone(),
            }),
            Shown::NoneOf => FigureSearch::NoneShowed(tries),
            // No confirmation, and no grounds to undo the fix either: a fix that moves a
            // value the original code has to where the ticket wants it looks the same; and
            // when no figure of the ticket is a value the closest test's setup gives on the
            // original code (a ticket whose numbers are ids or counts), the figures say nothing
            // about the fix.
            Shown::MadeBefore | Shown::Ungrounded | Shown::Unknown => FigureSearch::NotTried,
        },
    )
}

/// The text of `test_file` in the workspace when pytest runs it (the only runner whose test
/// ids the search can name), else `None`.
fn pytest_file(run: &dyn RunHandle, test_file: &str) -> Option<String> {
    (run.runner() == Runner::Pytest && test_file.ends_with(".py"))
        .then(|| run.read(test_file))
        .flatten()
}

/// The versions of `function` (in `file`) with the ticket's figures, at most [`MAX_TRIES`];
/// then, with `Inputs::AlsoChanged`, those with an input changed to a figure of the ticket.
fn ticket_versions(ticket: &str, function: &str, file: &str, inputs: Inputs) -> Vec<Version> {
    let figures: Vec<String> = plumb_context::relevant::figures(ticket)
        .into_iter()
        .collect();
    // Each assert alone as written first: a test with one right assert and one wrong one
    // shows the fix with the right one alone; and an assert of the original code's own
    // figure, passing on it, tells `pick` which figures that code already gives.
    let mut found: Vec<Version> = own_asserts(function)
        .into_iter()
        .chain(versions(function, &figures, file))
        .take(MAX_TRIES)
        .collect();
    if inputs == Inputs::AlsoChanged {
        found.extend(inputs::versions(function, &figures, file));
    }
    found
}

/// Writes `tried` (the versions as tests `NAME__figure_N`) to `test_file`, runs the file with
/// the fix and on the original code, and puts `text` back. The first version that passed
/// with the fix and failed on the original, if any; `Unknown` when a run gave no per-test
/// results (nothing can be concluded from it, least of all that no version showed the fix).
async fn first_that_shows(
    run: &mut dyn RunHandle,
    test_file: &str,
    text: &str,
    tried: String,
    name: &str,
    versions: &[Version],
) -> Result<Shown, Ending> {
    run.write(test_file, &tried)?;
    let with_fix = run.run_tests(&[test_file.to_string()]).await;
    let on_original = match &with_fix {
        Ok(_) => Some(run.run_on_original(&[test_file.to_string()]).await),
        Err(_) => None,
    };
    run.write(test_file, text)?;
    let with_fix = with_fix?;
    let Some(on_original) = on_original.transpose()? else {
        return Ok(Shown::Unknown);
    };
    if with_fix.results.is_none() || on_original.results.is_none() {
        return Ok(Shown::Unknown);
    }
    let outcome = |run: &plumb_tools::TestRun, index: usize| {
        let suffix = format!("::{name}__figure_{index}");
        run.results.as_ref().and_then(|results| {
            results
                .tests
                .iter()
                .find(|(id, _)| id.ends_with(&suffix))
                .map(|(_, outcome)| *outcome)
        })
    };
    let with_fix: Vec<_> = (0..versions.len())
        .map(|index| outcome(&with_fix, index))
        .collect();
    let on_original: Vec<_> = (0..versions.len())
        .map(|index| outcome(&on_original, index))
        .collect();
    let shown = pick(versions, &with_fix, &on_original);
    // A figure of the ticket that a checked value has on the original code ties the ticket's
    // figures to what the test checks (on BILL-412, GST 180.00, the bug's own figure).
    let grounded = versions.iter().zip(&on_original).any(|(version, outcome)| {
        version.kept != version.written && *outcome == Some(TestOutcome::Passed)
    });
    Ok(match shown {
        Shown::NoneOf if !grounded => Shown::Ungrounded,
        other => other,
    })
}

/// Whether the search also tries versions with an input changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inputs {
    AsWritten,
    AlsoChanged,
}

/// What running the versions showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    /// This version passed with the fix and failed on the original code.
    At(usize),
    /// None did.
    NoneOf,
    /// None did, and no version with a figure of the ticket passed on the original code either:
    /// no value the test checks is one of the ticket's figures.
    Ungrounded,
    /// Only versions asserting a figure the original code already gives another value they
    /// check did (see [`pick`]).
    MadeBefore,
    /// The runs gave no per-test results.
    Unknown,
}

/// The first version that passed with the fix and failed on the original code — unless the
/// figure it asserts is one the original code already gives another value: a version with the same
/// figure and input, asserted of another value, passed on the original. Such a version shows a
/// figure moved, not made. In a benchmark run the fix `compute_gst(gross * (1 - item.discount /
/// 100), rate)` made GST 0 for the ticket's example, so the total came to Rs 900 — the ticket's
/// "18 percent of Rs 900", the taxable value the original code already gave — and both the fix
/// probe and the search on the model's test took `assert totals.total == Decimal("900.00")` as
/// showing the fix: the run ended verified with a wrong fix.
fn pick(
    versions: &[Version],
    with_fix: &[Option<TestOutcome>],
    on_original: &[Option<TestOutcome>],
) -> Shown {
    let outcome = |run: &[Option<TestOutcome>], index: usize| run.get(index).copied().flatten();
    let shows = |index: usize| {
        outcome(with_fix, index) == Some(TestOutcome::Passed)
            && outcome(on_original, index) == Some(TestOutcome::Failed)
    };
    let made_before = |index: usize| {
        let Some((side, figure)) = checked(&versions[index].kept) else {
            return false;
        };
        versions.iter().enumerate().any(|(other, version)| {
            version.input == versions[index].input
                && checked(&version.kept).is_some_and(|(s, f)| f == figure && s != side)
                && outcome(on_original, other) == Some(TestOutcome::Passed)
        })
    };
    let showing: Vec<usize> = (0..versions.len()).filter(|&i| shows(i)).collect();
    match showing.iter().find(|&&index| !made_before(index)) {
        Some(&index) => Shown::At(index),
        None if showing.is_empty() => Shown::NoneOf,
        None => Shown::MadeBefore,
    }
}

/// The left side of an `assert … == …` line and the figures on its right (plain, in order).
fn checked(assert: &str) -> Option<(String, String)> {
    let (side, right) = assert_sides(assert)?;
    let figures: Vec<&str> = numbers_in(without_message(right))
        .into_iter()
        .map(|(_, number)| plain(number))
        .collect();
    (!figures.is_empty()).then(|| (side.to_string(), figures.join(",")))
}

/// The name the fix probe's test versions are written under.
const PROBE: &str = "test_plumb_fix_probe";

/// The versions as tests of their own, `NAME__figure_N`, one after another.
fn renamed_versions(versions: &[Version], name: &str) -> String {
    versions
        .iter()
        .enumerate()
        .map(|(index, version)| {
            version.text.replacen(
                &format!("def {name}("),
                &format!("def {name}__figure_{index}("),
                1,
            )
        })
        .collect::<Vec<_>>()
        .join("\n\n\n")
}

/// What the figures helper tells the model (`figures/notes.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "case", rename_all = "snake_case")]
enum FiguresNote<'a> {
    ProbeFound {
        kept: &'a str,
        input_kept: Option<&'a str>,
    },
    ProbeNone,
    KeptVersionBelow,
    KeptAssert {
        kept: &'a str,
        test_file: &'a str,
        function: &'a str,
    },
    KeptFigure {
        kept: &'a str,
        written: &'a str,
        test_file: &'a str,
        function: &'a str,
    },
    KeptInput {
        input_kept: &'a str,
        input_written: &'a str,
        kept: &'a str,
        test_file: &'a str,
        function: &'a str,
    },
    ReplacedFailure {
        line: &'a str,
    },
    NoneShowed {
        tries: usize,
    },
}

/// The words of `note`, without the line end its template line leaves.
fn words(note: &FiguresNote<'_>) -> Result<String, TemplateError> {
    let mut text = render("figures/notes.md", note)?;
    if text.ends_with('\n') {
        text.pop();
    }
    Ok(text)
}

/// What to tell the model after the fix probe, when it ran.
pub(crate) fn probe_note(search: &FigureSearch) -> Result<Option<String>, TemplateError> {
    let note = match search {
        FigureSearch::Found(found) => FiguresNote::ProbeFound {
            kept: found.kept.trim(),
            input_kept: found.input.as_ref().map(|input| input.kept.trim()),
        },
        FigureSearch::NoneShowed(_) => FiguresNote::ProbeNone,
        FigureSearch::NotTried => return Ok(None),
    };
    words(&note).map(|text| Some(format!("\n\n{text}")))
}

/// Stands in for the lines an edit showed of a test the figure search then replaced.
pub(crate) fn kept_version_below() -> Result<String, TemplateError> {
    words(&FiguresNote::KeptVersionBelow).map(|text| text + "\n")
}

/// The note for the model when a version was kept.
pub(crate) fn note(found: &FigureFound, test_file: &str) -> Result<String, TemplateError> {
    let kept = found.kept.trim();
    let function = found.function.as_str();
    let note = match &found.input {
        None if checked(&found.written) == checked(&found.kept) => FiguresNote::KeptAssert {
            kept,
            test_file,
            function,
        },
        None => FiguresNote::KeptFigure {
            kept,
            written: found.written.trim(),
            test_file,
            function,
        },
        Some(input) => FiguresNote::KeptInput {
            input_kept: input.kept.trim(),
            input_written: input.written.trim(),
            kept,
            test_file,
            function,
        },
    };
    words(&note).map(|text| format!("\n\n{text}\n"))
}

/// The failing output of a test whose assert the figure search then replaced, cut to the first
/// assertion line: what the replaced assert found is worth telling, the traceback of a test that
/// is gone is not.
pub(crate) fn replaced_failure(excerpt: &str) -> Result<String, TemplateError> {
    let first = excerpt
        .lines()
        .find_map(|line| line.strip_prefix("E "))
        .map(str::trim);
    match first {
        Some(line) => words(&FiguresNote::ReplacedFailure { line }).map(|text| text + "\n"),
        None => Ok(String::new()),
    }
}

/// The note for the model when no version showed the fix.
pub(crate) fn none_showed(tries: usize) -> Result<String, TemplateError> {
    words(&FiguresNote::NoneShowed { tries }).map(|text| format!("\n{text}\n"))
}

/// Test functions (`def test…` at the top level) of `lines` that `baseline` does not define.
fn new_tests(lines: &[&str], baseline: Option<&str>) -> Vec<Function> {
    let existing: Vec<&str> = baseline
        .map(|text| text.lines().filter_map(test_name).collect())
        .unwrap_or_default();
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let Some(name) = test_name(line) else {
            continue;
        };
        if existing.contains(&name) {
            continue;
        }
        let mut end = (start + 1..lines.len())
            .find(|&i| {
                let next = lines[i];
                !next.trim().is_empty() && !next.starts_with(char::is_whitespace)
            })
            .unwrap_or(lines.len());
        while end > start + 1 && lines[end - 1].trim().is_empty() {
            end -= 1;
        }
        found.push(Function {
            name: name.to_string(),
            start,
            end,
        });
    }
    found
}

/// True when a test `baseline` defines is no longer in `lines` (renamed or deleted).
fn renames_a_test(lines: &[&str], baseline: Option<&str>) -> bool {
    let now: Vec<&str> = lines.iter().copied().filter_map(test_name).collect();
    baseline.is_some_and(|text| {
        text.lines()
            .filter_map(test_name)
            .any(|name| !now.contains(&name))
    })
}

/// The name of the test a top-level `def test…(` line opens.
fn test_name(line: &str) -> Option<&str> {
    let rest = line
        .strip_prefix("def ")
        .or_else(|| line.strip_prefix("async def "))?;
    let name = rest.split('(').next()?.trim();
    name.starts_with("test").then_some(name)
}

/// `lines` with `function` replaced by `text`.
fn with_function(lines: &[&str], function: &Function, text: &str, newline_at_end: bool) -> String {
    let mut out: Vec<&str> = lines[..function.start].to_vec();
    out.push(text);
    out.extend_from_slice(&lines[function.end..]);
    let mut joined = out.join("\n");
    if newline_at_end {
        joined.push('\n');
    }
    joined
}

#[cfg(test)]
mod tests;
