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
//! … == …` lines; at most [`MAX_TRIES`] versions, and [`figure_inputs::MAX_TRIES`] more with another
//! input, all written into the file as tests of their own and run together, once with the fix and
//! once on the original code.

use plumb_verify::{Runner, TestOutcome};

use crate::figure_inputs::{self, Input};
use crate::run::{Ending, Run};

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

/// One version to try: the function's new text, the assert line before and after, and the setup
/// line before and after when an input was changed too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Version {
    pub text: String,
    pub written: String,
    pub kept: String,
    pub input: Option<Input>,
}

impl Run {
    /// Tries the figure search on `test_file`; on success the workspace holds the version found.
    /// The file is left as it was when nothing showed the fix.
    pub(crate) async fn search_figures(&mut self, test_file: &str) -> Result<FigureSearch, Ending> {
        let Some(text) = self.pytest_file(test_file) else {
            return Ok(FigureSearch::NotTried);
        };
        let path = self.workspace.root().join(test_file);
        let baseline = self.workspace.baseline_text(test_file).ok().flatten();
        let lines: Vec<&str> = text.lines().collect();
        // A test of the project renamed looks new by its name: the search never rewrites one.
        if renames_a_test(&lines, baseline.as_deref()) {
            return Ok(FigureSearch::NotTried);
        }
        let Some(function) = new_tests(&lines, baseline.as_deref()).pop() else {
            return Ok(FigureSearch::NotTried);
        };
        let body = lines[function.start..function.end].join("\n");
        let versions = self.ticket_versions(&body, &text, Inputs::AlsoChanged);
        let tries = versions.len();
        if tries == 0 {
            return Ok(FigureSearch::NotTried);
        }
        // Every version at once, each a test of its own (`name__figure_N`): two test runs in all,
        // with the fix and on the original code, instead of two per version.
        let all = renamed_versions(&versions, &function.name);
        let tried = with_function(&lines, &function, &all, text.ends_with('\n'));
        let index = match self
            .first_that_shows(test_file, &text, tried, &function.name, &versions)
            .await?
        {
            Shown::At(index) => index,
            Shown::NoneOf | Shown::MadeBefore => return Ok(FigureSearch::NoneShowed(tries)),
            Shown::Unknown => return Ok(FigureSearch::NotTried),
        };
        let version = &versions[index];
        let kept = with_function(&lines, &function, &version.text, text.ends_with('\n'));
        std::fs::write(&path, kept).map_err(Ending::infra)?;
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
        &mut self,
        test_file: &str,
        example: &str,
    ) -> Result<FigureSearch, Ending> {
        let Some(text) = self.pytest_file(test_file) else {
            return Ok(FigureSearch::NotTried);
        };
        let Some(name) = example.lines().find_map(test_name) else {
            return Ok(FigureSearch::NotTried);
        };
        let probe = example.replacen(&format!("def {name}("), &format!("def {PROBE}("), 1);
        // The closest test's inputs are the project's own: only its asserts are varied.
        let versions = self.ticket_versions(&probe, &text, Inputs::AsWritten);
        let tries = versions.len();
        if tries == 0 {
            return Ok(FigureSearch::NotTried);
        }
        let all = renamed_versions(&versions, PROBE);
        let tried = format!("{}\n\n\n{all}\n", text.trim_end());
        Ok(
            match self
                .first_that_shows(test_file, &text, tried, PROBE, &versions)
                .await?
            {
                Shown::At(index) => FigureSearch::Found(FigureFound {
                    written: versions[index].written.clone(),
                    kept: versions[index].kept.clone(),
                    input: versions[index].input.clone(),
                    function: versions[index].text.clone(),
                }),
                Shown::NoneOf => FigureSearch::NoneShowed(tries),
                // No confirmation, and no grounds to undo the fix either: a fix that moves a
                // value the original code has to where the ticket wants it looks the same.
                Shown::MadeBefore | Shown::Unknown => FigureSearch::NotTried,
            },
        )
    }

    /// The text of `test_file` in the workspace when pytest runs it (the only runner whose test
    /// ids the search can name), else `None`.
    fn pytest_file(&self, test_file: &str) -> Option<String> {
        (self.test_command.runner == Runner::Pytest && test_file.ends_with(".py"))
            .then(|| {
                self.workspace
                    .tree()
                    .read_text(test_file, plumb_tools::MAX_READ_BYTES)
                    .ok()
            })
            .flatten()
    }

    /// The versions of `function` (in `file`) with the ticket's figures, at most [`MAX_TRIES`];
    /// then, with `Inputs::AlsoChanged`, those with an input changed to a figure of the ticket.
    fn ticket_versions(&self, function: &str, file: &str, inputs: Inputs) -> Vec<Version> {
        let figures: Vec<String> = plumb_context::relevant::figures(&self.spec.ticket)
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
            found.extend(figure_inputs::versions(function, &figures, file));
        }
        found
    }

    /// Writes `tried` (the versions as tests `NAME__figure_N`) to `test_file`, runs the file with
    /// the fix and on the original code, and puts `text` back. The first version that passed
    /// with the fix and failed on the original, if any; `Unknown` when a run gave no per-test
    /// results (nothing can be concluded from it, least of all that no version showed the fix).
    async fn first_that_shows(
        &mut self,
        test_file: &str,
        text: &str,
        tried: String,
        name: &str,
        versions: &[Version],
    ) -> Result<Shown, Ending> {
        let path = self.workspace.root().join(test_file);
        std::fs::write(&path, tried).map_err(Ending::infra)?;
        let root = self.workspace.root().to_path_buf();
        let with_fix = self.run_tests_in(&root, &[test_file.to_string()]).await;
        let on_original = match &with_fix {
            Ok(_) => Some(self.run_on_original_source(test_file).await),
            Err(_) => None,
        };
        std::fs::write(&path, text).map_err(Ending::infra)?;
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
        Ok(pick(versions, &with_fix, &on_original))
    }
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

/// What to tell the model after the fix probe, when it ran.
pub(crate) fn probe_note(search: &FigureSearch) -> Option<String> {
    match search {
        FigureSearch::Found(found) => Some(format!(
            "\n\nplumb checked your fix with the example of the closest test: with it {} passes, a figure the ticket gives, and on the original code it fails. So the fix changes what the ticket is about.",
            found.change()
        )),
        FigureSearch::NoneShowed(_) => Some(
            "\n\nBut plumb checked your change with the example of the closest test, and none of the values the tests there check comes out as a figure the ticket gives with it (and differently without it): it does not fix what the ticket describes.".to_string(),
        ),
        FigureSearch::NotTried => None,
    }
}

/// Stands in for the lines an edit showed of a test the figure search then replaced.
pub(crate) const KEPT_VERSION_BELOW: &str = "The version of the test plumb kept is shown below.\n";

/// The note for the model when a version was kept.
pub(crate) fn note(found: &FigureFound, test_file: &str) -> String {
    match &found.input {
        None if checked(&found.written) == checked(&found.kept) => format!(
            "\n\nplumb tried your test's asserts one at a time: `{}` alone passes with your fix and fails on the original code, so {test_file} now has this version of your test (its other asserts left out):\n{}\n",
            found.kept.trim(),
            found.function
        ),
        None => format!(
            "\n\nplumb tried your test with each figure the ticket gives in place of the one an assert expects: with `{}` instead of `{}` it passes with your fix and fails on the original code, so {test_file} now has this version of your test (its other asserts left out):\n{}\n",
            found.kept.trim(),
            found.written.trim(),
            found.function
        ),
        Some(input) => format!(
            "\n\nplumb tried your test with the ticket's figures: none of them as the figure an assert expects shows the fix, but with the ticket's figure as an input, `{}` instead of `{}`, and `{}`, it passes with your fix and fails on the original code. So {test_file} now has this version of your test (its other asserts left out):\n{}\n",
            input.kept.trim(),
            input.written.trim(),
            found.kept.trim(),
            found.function
        ),
    }
}

/// The failing output of a test whose assert the figure search then replaced, cut to the first
/// assertion line: what the replaced assert found is worth telling, the traceback of a test that
/// is gone is not.
pub(crate) fn replaced_failure(excerpt: &str) -> String {
    let first = excerpt
        .lines()
        .find_map(|line| line.strip_prefix("E "))
        .map(str::trim);
    match first {
        Some(line) => format!("(the failure, of an assert plumb then replaced: {line})\n"),
        None => String::new(),
    }
}

/// The note for the model when no version showed the fix.
pub(crate) fn none_showed(tries: usize) -> String {
    format!(
        "\nplumb also tried your test with each figure the ticket gives in place of the one an assert expects ({tries} versions): none passes with your fix and fails on the original code. So either the assert checks a value the ticket's figure is not about (assert the value the ticket names), or the fix does not produce the ticket's figure yet.\n"
    )
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

/// Versions of `function` to try: its lines without asserts, plus one of its `assert … == …` lines
/// with one figure on the right of `==` replaced by one of `figures` (written the same way:
/// `180.00` becomes `162.00`). The left side is the model's own, then each `root.attribute` that
/// `file`'s other asserts check on a variable of the same name (the model asserted
/// `totals.taxable_value` where the ticket's Rs 162 is `totals.tax`). In the order of the asserts,
/// then of the left sides, then of the figures.
pub(crate) fn versions(function: &str, figures: &[String], file: &str) -> Vec<Version> {
    let Some((setup, asserts)) = setup_and_asserts(function) else {
        return Vec::new();
    };
    let checked = checked_attributes(file);
    // (assert line, left side, the model's own side): every assert's own side first.
    let mut tries: Vec<(&str, String, bool)> = Vec::new();
    for line in &asserts {
        let own = assert_sides(line).map(|(own, _)| own.to_string());
        tries.extend(own.map(|own| (*line, own, true)));
    }
    for line in &asserts {
        let Some((own, _)) = assert_sides(line) else {
            continue;
        };
        let Some((root, _)) = own.split_once('.').filter(|(root, _)| is_name(root)) else {
            continue;
        };
        for (other_root, attribute) in &checked {
            let side = format!("{root}.{attribute}");
            if other_root == root
                && side != own
                && !tries.iter().any(|(l, s, _)| l == line && *s == side)
            {
                tries.push((line, side, false));
            }
        }
    }
    let mut out = Vec::new();
    for (line, side, is_own) in tries {
        let Some((_, right)) = assert_sides(line) else {
            continue;
        };
        // The assert's message is left out: it would keep the model's figure beside the one
        // kept (a benchmark run kept `== Decimal('162.00'), 'Expected GST to be Rs 810.00'`).
        let right = without_message(right);
        let indent = indent_of(line);
        for (start, token) in numbers_in(right) {
            for figure in figures {
                let written = same_form(figure, token);
                if is_own && plain(&written) == plain(token) {
                    continue;
                }
                let kept = format!(
                    "{indent}assert {side} {}{written}{}",
                    right.get(..start).unwrap_or_default(),
                    right.get(start + token.len()..).unwrap_or_default()
                );
                let mut text = setup.join("\n");
                text.push('\n');
                text.push_str(&kept);
                if out.iter().any(|v: &Version| v.text == text) {
                    continue;
                }
                out.push(Version {
                    text,
                    written: line.to_string(),
                    kept,
                    input: None,
                });
            }
        }
    }
    out
}

/// The versions of `function` that keep its setup and one of its single-line `assert … == …`
/// lines as written (without a message); none when an assert spans lines.
pub(crate) fn own_asserts(function: &str) -> Vec<Version> {
    let Some((setup, asserts)) = setup_and_asserts(function) else {
        return Vec::new();
    };
    let setup = setup.join("\n");
    asserts
        .iter()
        .filter_map(|line| {
            let (own, right) = assert_sides(line)?;
            let kept = format!("{}assert {own} {}", indent_of(line), without_message(right));
            Some(Version {
                text: format!("{setup}\n{kept}"),
                written: line.to_string(),
                kept,
                input: None,
            })
        })
        .collect()
}

/// The lines of `function` that are not asserts (its `def` line first), and its assert lines;
/// `None` when an assert spans lines: it cannot be taken apart line by line.
fn setup_and_asserts(function: &str) -> Option<(Vec<&str>, Vec<&str>)> {
    let is_assert = |line: &&str| line.trim_start().starts_with("assert ");
    let (asserts, setup): (Vec<&str>, Vec<&str>) = function.lines().partition(is_assert);
    asserts
        .iter()
        .all(|line| line.matches('(').count() == line.matches(')').count())
        .then_some((setup, asserts))
}

/// The whitespace `line` starts with.
fn indent_of(line: &str) -> &str {
    line.get(..line.len() - line.trim_start().len())
        .unwrap_or_default()
}

/// The two sides of a single-line `assert left == right`: `left` trimmed, and `right` from the
/// last `==` on.
pub(crate) fn assert_sides(line: &str) -> Option<(&str, &str)> {
    let at = line.rfind("==")?;
    let (left, right) = line.split_at(at);
    let own = left.trim_start().strip_prefix("assert ")?.trim();
    Some((own, right))
}

/// The comparison of an assert's right side without its message: up to the first comma outside
/// brackets and strings (`== Decimal('810.00'), 'Expected …'` → `== Decimal('810.00')`).
pub(crate) fn without_message(right: &str) -> &str {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (at, c) in right.char_indices() {
        if let Some(open) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == open {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => return right.get(..at).unwrap_or(right).trim_end(),
            _ => {}
        }
    }
    right
}

/// `(root, attribute)` of every `assert root.attribute == …` in `file`, in order, once each.
fn checked_attributes(file: &str) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    for line in file.lines() {
        let Some(rest) = line.trim_start().strip_prefix("assert ") else {
            continue;
        };
        let Some((left, _)) = rest.split_once("==") else {
            continue;
        };
        let Some((root, attribute)) = left.trim().split_once('.') else {
            continue;
        };
        if is_name(root) && is_name(attribute) {
            let pair = (root.to_string(), attribute.to_string());
            if !found.contains(&pair) {
                found.push(pair);
            }
        }
    }
    found
}

/// A plain Python name (`totals`, `tax_rate`).
fn is_name(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with(|c: char| c.is_ascii_digit())
        && text.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// The numbers written in `text` (`180`, `180.00`), with their byte offsets; digits that are part
/// of a name (`x2`) are not numbers.
pub(crate) fn numbers_in(text: &str) -> Vec<(usize, &str)> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        let starts = bytes[index].is_ascii_digit()
            && (index == 0
                || !(bytes[index - 1].is_ascii_alphanumeric() || bytes[index - 1] == b'_'));
        if !starts {
            index += 1;
            continue;
        }
        let mut end = index;
        while end < bytes.len() && (bytes[end].is_ascii_digit() || bytes[end] == b'.') {
            end += 1;
        }
        let token = text
            .get(index..end)
            .unwrap_or_default()
            .trim_end_matches('.');
        found.push((index, token));
        index = end;
    }
    found
}

/// `figure` written with as many decimals as `like` has (`162` like `180.00` is `162.00`); a
/// figure with decimals of its own is left as it is.
pub(crate) fn same_form(figure: &str, like: &str) -> String {
    match like.split_once('.') {
        Some((_, decimals)) if !figure.contains('.') => {
            format!("{figure}.{}", "0".repeat(decimals.len()))
        }
        _ => figure.to_string(),
    }
}

/// A number without its trailing zero decimals, to compare figures: `180.00` and `180` agree.
pub(crate) fn plain(number: &str) -> &str {
    if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_replaced_asserts_failure_is_cut_to_its_first_assertion_line() {
        let excerpt = "=================================== FAILURES ===================================\n\
            ____ test_new ____\n\n    def test_new():\n>       assert totals.taxable_value == Decimal('820.00')\n\
            E       AssertionError: assert Decimal('900.00') == Decimal('820.00')\n\
            E        +  where Decimal('900.00') = InvoiceTotals(...).taxable_value\n\n\
            tests/test_invoice_totals.py:137: AssertionError\n";

        let actual = [
            replaced_failure(excerpt),
            replaced_failure("ERROR collecting\n"),
        ];

        assert_eq!(
            actual,
            [
                "(the failure, of an assert plumb then replaced: AssertionError: assert Decimal('900.00') == Decimal('820.00'))\n"
                    .to_string(),
                String::new()
            ]
        );
    }

    const FILE: &str = "from decimal import Decimal\n\n\ndef test_old():\n    assert 1 == 1\n\n\ndef test_new():\n    totals = compute(item(\"1000.00\", discount=\"100.00\"))\n    assert totals.taxable_value == Decimal('900.00')\n    assert totals.tax == Decimal('180.00')\n\n\nx = 1\n";

    #[test]
    fn only_tests_the_run_added_are_searched() {
        let lines: Vec<&str> = FILE.lines().collect();
        let baseline = "def test_old():\n    pass\n";
        assert_eq!(
            new_tests(&lines, Some(baseline)),
            vec![Function {
                name: "test_new".into(),
                start: 7,
                end: 11
            }]
        );
        assert_eq!(new_tests(&lines, None).len(), 2);
        assert!(!renames_a_test(&lines, Some(baseline)));
        assert!(
            renames_a_test(&lines, Some("def test_gone():\n    pass\n")),
            "a project test renamed is not a new test to rewrite"
        );
        let replaced = with_function(
            &lines,
            &new_tests(&lines, Some(baseline))[0],
            "def test_new():\n    pass",
            true,
        );
        assert!(
            replaced.ends_with(
                "def test_old():\n    assert 1 == 1\n\n\ndef test_new():\n    pass\n\n\nx = 1\n"
            ),
            "{replaced}"
        );
    }

    #[test]
    fn each_assert_gets_each_figure_of_the_ticket_in_its_own_form() {
        let function = "def test_new():\n    totals = compute(item(\"1000.00\"))\n    assert totals.taxable_value == Decimal('900.00')\n    assert totals.tax == Decimal('180.00')";
        let figures = ["162".to_string(), "180".to_string(), "0.18".to_string()];
        let tried = versions(function, &figures, "");
        let kept: Vec<&str> = tried.iter().map(|v| v.kept.as_str()).collect();
        assert_eq!(
            kept,
            [
                "    assert totals.taxable_value == Decimal('162.00')",
                "    assert totals.taxable_value == Decimal('180.00')",
                "    assert totals.taxable_value == Decimal('0.18')",
                "    assert totals.tax == Decimal('162.00')",
                "    assert totals.tax == Decimal('0.18')",
            ],
            "the figure already there is not tried again"
        );
        assert_eq!(
            tried[3].text,
            "def test_new():\n    totals = compute(item(\"1000.00\"))\n    assert totals.tax == Decimal('162.00')",
            "the setup and one assert"
        );
        assert_eq!(
            tried[3].written,
            "    assert totals.tax == Decimal('180.00')"
        );
    }

    #[test]
    fn the_values_other_tests_check_on_the_same_variable_are_tried_too() {
        let file = "def test_old():\n    assert totals.tax == Decimal('180.00')\n    assert line.gross == 1\n    assert totals.taxable_value == 9\n    assert f(x).y == 2\n";
        assert_eq!(
            checked_attributes(file),
            [
                ("totals".to_string(), "tax".to_string()),
                ("line".to_string(), "gross".to_string()),
                ("totals".to_string(), "taxable_value".to_string()),
            ]
        );
        let function = "def test_new():\n    totals = compute()\n    assert totals.taxable_value == Decimal('162.00')";
        let kept: Vec<String> = versions(function, &["162".to_string(), "900".to_string()], file)
            .into_iter()
            .map(|v| v.kept)
            .collect();
        assert_eq!(
            kept,
            [
                "    assert totals.taxable_value == Decimal('900.00')",
                "    assert totals.tax == Decimal('162.00')",
                "    assert totals.tax == Decimal('900.00')",
            ],
            "the model's own value first; `line.gross` is another variable's"
        );
    }

    #[test]
    fn an_asserts_message_is_left_out_of_every_version() {
        assert_eq!(
            without_message("== Decimal('810.00'), 'Expected GST to be Rs 810.00, not 900'"),
            "== Decimal('810.00')"
        );
        assert_eq!(without_message("== f(1, 2)"), "== f(1, 2)");
        assert_eq!(without_message("== 'a,b'"), "== 'a,b'");
        let function = "def test_new():\n    totals = make()\n    assert totals.tax == Decimal('810.00'), 'Expected Rs 810.00'";
        let found = versions(function, &["162".to_string()], "");
        assert_eq!(
            found.iter().map(|v| v.kept.as_str()).collect::<Vec<_>>(),
            vec!["    assert totals.tax == Decimal('162.00')"]
        );
    }

    #[test]
    fn a_figure_the_original_code_gives_another_value_does_not_show_the_fix() {
        use TestOutcome::{Failed, Passed};
        let version = |kept: &str, input: Option<&str>| Version {
            text: String::new(),
            written: String::new(),
            kept: kept.to_string(),
            input: input.map(|line| Input {
                written: String::new(),
                kept: line.to_string(),
            }),
        };
        let versions = [
            version("    assert totals.tax == Decimal('162.00')", None),
            version(
                "    assert totals.total == Decimal('900.00'), 'moved'",
                None,
            ),
            version("    assert totals.taxable_value == Decimal('900.00')", None),
        ];
        let run = |outcomes: [TestOutcome; 3]| outcomes.map(Some);
        assert_eq!(
            pick(
                &versions,
                &run([Failed, Passed, Passed]),
                &run([Failed, Failed, Passed])
            ),
            Shown::MadeBefore,
            "the total came to the taxable value the original code gave"
        );
        assert_eq!(
            pick(
                &versions,
                &run([Passed, Passed, Passed]),
                &run([Failed, Failed, Passed])
            ),
            Shown::At(0)
        );
        assert_eq!(
            pick(
                &versions,
                &run([Failed, Passed, Failed]),
                &run([Failed, Failed, Failed])
            ),
            Shown::At(1),
            "no other value had the figure on the original code"
        );
        assert_eq!(
            pick(
                &versions,
                &run([Failed, Failed, Passed]),
                &run([Failed, Failed, Passed])
            ),
            Shown::NoneOf
        );
        let other_input = [
            version("    assert totals.total == Decimal('900.00')", None),
            version(
                "    assert totals.taxable_value == Decimal('900.00')",
                Some("x = 2"),
            ),
        ];
        assert_eq!(
            pick(
                &other_input,
                &[Some(Passed), Some(Passed)],
                &[Some(Failed), Some(Passed)]
            ),
            Shown::At(0),
            "a version of another setup says nothing about this one"
        );
    }

    #[test]
    fn a_multi_line_assert_or_a_name_with_digits_is_left_alone() {
        let multi = "def test_a():\n    assert f(\n        1) == 2\n";
        assert_eq!(versions(multi, &["3".to_string()], ""), vec![]);
        assert_eq!(
            numbers_in("== x2 + 18.5 + 7."),
            vec![(8, "18.5"), (15, "7")]
        );
        assert_eq!(same_form("162", "180.00"), "162.00");
        assert_eq!(same_form("162", "180"), "162");
        assert_eq!(same_form("0.18", "180.00"), "0.18");
        assert_eq!(plain("180.00"), "180");
    }
}
