//! pytest: the final summary line, the failure sections, narrowing by node id, and per-test
//! outcomes from the JUnit XML report.
//!
//! The summary is pytest's last line, framed (`==== 1 failed, 2 passed in 0.12s ====`) or bare
//! with `-q` (`1 failed, 2 passed in 0.12s`), or `no tests ran in 0.01s`. It is read from the end,
//! so a test that prints something summary-like does not fool the parser.
//!
//! Per test, the JUnit report (xunit1, which records each test's file) is the source. Its
//! `classname` + `name` are pytest's node id with the path dotted (`tests.test_x.TestC` +
//! `test_y[1]`); the node id is rebuilt from the `file` attribute, or, for a test whose function
//! lives in another file (an inherited test), found among the node ids of the short summary. The
//! report writes an xpass as a plain pass, so the summary's `XPASS` lines mark those, and the
//! deselected count comes from the final summary line, since the report leaves them out.

use std::path::Path;

use plumb_protocol::TestCounts;

use super::{FinishedRun, RunnerAdapter, pytest_failure};
use crate::failure::{FailureReading, TestPlaces};
use crate::junit::{self, Case};
use crate::results::{Outcomes, TestResults, fresh_report};
use crate::{Runner, TestOutcome, VerifyError, output};

/// pytest's adapter.
pub(crate) struct Pytest;

impl RunnerAdapter for Pytest {
    fn runner(&self) -> Runner {
        Runner::Pytest
    }

    fn narrow(&self, argv: &[String], tests: &[String]) -> Result<Vec<String>, VerifyError> {
        Ok(narrow(argv, tests))
    }

    fn with_report(&self, argv: &[String], report_path: &Path) -> Vec<String> {
        with_report(argv, report_path)
    }

    fn results(&self, run: &FinishedRun<'_>) -> Option<TestResults> {
        results(
            &fresh_report(run.root, run.report_path, run.started)?,
            run.text,
        )
    }

    fn counts(&self, text: &str) -> Option<TestCounts> {
        counts(text)
    }

    fn excerpt(&self, stdout: &str, stderr: &str) -> String {
        excerpt(stdout, stderr)
    }

    fn read_failure(&self, excerpt: &str, _places: &dyn TestPlaces) -> FailureReading {
        read_failure(excerpt)
    }

    fn test_id_example(&self) -> Option<&'static str> {
        Some("tests/test_x.py::test_y")
    }
}

pub(crate) use pytest_failure::read as read_failure;

/// The sections of pytest's report that explain failures, in the order pytest prints them.
const FAILURE_SECTIONS: &[&str] = &["ERRORS", "FAILURES", SHORT_SUMMARY];

/// The title of the section with one line per test (`FAILED tests/test_x.py::test_y - …`).
const SHORT_SUMMARY: &str = "short test summary info";

/// The `-r` characters [`with_report`] asks for: failed, errors, skipped, xfailed, xpassed and
/// passed, so that the short summary names every test that has a node id there.
pub(crate) const REPORT_CHARS: &str = "-rfEsxXp";

/// The words that start a line of the short summary.
const SUMMARY_WORDS: &[&str] = &["PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS"];

pub(crate) fn counts(text: &str) -> Option<TestCounts> {
    text.lines().rev().find_map(summary_line)
}

/// Reads one final summary line, framed or bare. Words pytest counts that are not test results
/// (warnings, reruns, a plugin's "subtests passed") are skipped.
fn summary_line(line: &str) -> Option<TestCounts> {
    let line = line.trim().trim_matches('=').trim();
    let (body, duration) = line.rsplit_once(" in ")?;
    if !is_duration(duration) {
        return None;
    }
    let mut counts = TestCounts::default();
    if body == "no tests ran" {
        return Some(counts);
    }
    for part in body.split(", ") {
        let (count, word) = output::count_and_word(part)?;
        match word {
            "passed" => counts.passed += count,
            "failed" => counts.failed += count,
            "skipped" => counts.skipped += count,
            "deselected" => counts.deselected += count,
            "xfailed" => counts.xfailed += count,
            "xpassed" => counts.xpassed += count,
            "error" | "errors" => counts.errors += count,
            other if other.chars().all(|c| c.is_ascii_lowercase() || c == ' ') => {}
            _ => return None,
        }
    }
    Some(counts)
}

/// "0.12s", or "65.12s (0:01:05)" for long runs.
fn is_duration(text: &str) -> bool {
    text.split_whitespace()
        .next()
        .and_then(|first| first.strip_suffix('s'))
        .is_some_and(|seconds| !seconds.is_empty() && seconds.parse::<f64>().is_ok())
}

/// The ERRORS and FAILURES sections, the short test summary and the final line; without them
/// (a crash before collection, a usage error) the output without progress lines, then stderr.
/// Summary lines lose their duration (see [`without_duration`]), other lines the memory addresses
/// of Python's object reprs (see [`without_addresses`]).
pub(crate) fn excerpt(stdout: &str, stderr: &str) -> String {
    let lines: Vec<&str> = stdout.lines().collect();
    // pytest's own final summary; a test can print lines that look like one.
    let last_summary = lines.iter().rposition(|line| summary_line(line).is_some());
    let mut kept: Vec<String> = Vec::new();
    let mut keeping = false;
    let mut in_short_summary = false;
    let mut details_kept = false;
    for (at, line) in lines.iter().enumerate() {
        if let Some(title) = section_title(line) {
            if summary_line(line).is_some() {
                kept.push(without_duration(line));
                keeping = false;
                continue;
            }
            keeping = FAILURE_SECTIONS.contains(&title);
            in_short_summary = title == SHORT_SUMMARY;
            details_kept |= keeping && !in_short_summary;
        }
        // With `-rp` (see `with_report`) the short summary lists every passed test too; and after
        // a FAILURES or ERRORS section its lines are that section's messages once more.
        if keeping && !(in_short_summary && repeats_a_section(line, details_kept)) {
            kept.push(if Some(at) == last_summary {
                without_duration(line)
            } else {
                without_addresses(line)
            });
        }
    }
    let stderr = stderr.trim();
    if kept.is_empty() {
        let rest: Vec<String> = lines
            .iter()
            .enumerate()
            .filter(|(_, line)| !is_progress(line))
            .map(|(at, line)| {
                if Some(at) == last_summary {
                    without_duration(line)
                } else {
                    without_addresses(line)
                }
            })
            .collect();
        return output::tail(&output::joined(&rest.join("\n"), stderr));
    }
    if let Some(summary) = last_summary.map(|at| without_duration(lines[at]))
        && kept.last() != Some(&summary)
    {
        kept.push(summary);
    }
    output::joined(&kept.join("\n"), stderr)
}

/// A short-summary line the excerpt leaves out: a passed test's, and, when a FAILURES or ERRORS
/// section was kept, the rest of a failure's message after its `FAILED id - …` line (with CI set,
/// pytest prints the whole message there: for an assertion, every `+  where` line of the
/// FAILURES section again, each ~70 tokens of the model's prompt that say nothing new).
fn repeats_a_section(line: &str, section_kept: bool) -> bool {
    if line.starts_with("PASSED ") {
        return true;
    }
    const STATUSES: &[&str] = &["FAILED ", "ERROR ", "SKIPPED ", "XFAIL ", "XPASS "];
    // `!!!! Interrupted: 1 error during collection !!!!` closes the summary of a stopped run.
    section_kept
        && section_title(line).is_none()
        && !line.starts_with('!')
        && !STATUSES.iter().any(|status| line.starts_with(status))
}

/// A summary line without its duration (`==== 1 failed, 2 passed in 0.12s ====` becomes
/// `==== 1 failed, 2 passed ====`); any other line as it is. The time a run took tells the model
/// nothing, and differs from run to run: with it, two runs of one seed saw different prompts
/// and sampled different replies, so a benchmark seed was no replay.
fn without_duration(line: &str) -> String {
    if summary_line(line).is_none() {
        return line.to_string();
    }
    let Some((body, rest)) = line.rsplit_once(" in ") else {
        return line.to_string();
    };
    let mut words = rest.split_whitespace().peekable();
    words.next();
    // Long runs add the time as `(0:01:05)`.
    if words.peek().is_some_and(|word| word.starts_with('(')) {
        words.next();
    }
    let frame: Vec<&str> = words.collect();
    if frame.is_empty() {
        body.to_string()
    } else {
        format!("{body} {}", frame.join(" "))
    }
}

/// `line` without the ` at 0x7f…` of Python's default reprs (`<built-in method endswith of str
/// object at 0x7fdecab925b0>` becomes `<built-in method endswith of str object>`). pytest's
/// assertion rewriting prints them; the address differs from run to run and tells the model
/// nothing, and with it two benchmark runs of one seed saw different prompts from round 3 on.
fn without_addresses(line: &str) -> String {
    const MARK: &str = " at 0x";
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(MARK) {
        let after = rest.get(at + MARK.len()..).unwrap_or_default();
        let digits = after
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(after.len());
        out.push_str(rest.get(..at).unwrap_or_default());
        // Only what reads as a repr's address, ` at 0x…>`: other text with " at 0x" stays.
        if digits >= 4
            && after
                .get(digits..)
                .is_some_and(|tail| tail.starts_with('>'))
        {
            rest = after.get(digits..).unwrap_or_default();
        } else {
            out.push_str(MARK);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The title of a `==== title ====` line.
fn section_title(line: &str) -> Option<&str> {
    let line = line.trim_end();
    if !line.starts_with('=') || !line.ends_with('=') {
        return None;
    }
    let title = line.trim_matches('=').trim();
    (!title.is_empty()).then_some(title)
}

/// A progress line: `..F.s   [ 40%]`, `tests/test_a.py ..F   [100%]`, or a verbose
/// `tests/test_a.py::test_x PASSED   [ 50%]`.
fn is_progress(line: &str) -> bool {
    let line = line.trim_end();
    let Some(rest) = line.strip_suffix("%]") else {
        return false;
    };
    rest.rsplit_once('[')
        .is_some_and(|(_, percent)| percent.trim().parse::<u32>().is_ok())
}

/// pytest takes node ids and paths as arguments.
pub(crate) fn narrow(argv: &[String], tests: &[String]) -> Vec<String> {
    argv.iter().chain(tests).cloned().collect()
}

/// `argv` writing the JUnit report to `report_path`. The options go last, where pytest takes
/// them as well as anywhere, and where they win over the same options in `addopts`.
pub(crate) fn with_report(argv: &[String], report_path: &Path) -> Vec<String> {
    let mut argv = argv.to_vec();
    argv.push(format!("--junitxml={}", report_path.display()));
    argv.extend(["-o", "junit_family=xunit1", REPORT_CHARS].map(String::from));
    argv
}

/// Per-test outcomes from the JUnit report `xml` and the run's output `text` (colour removed).
pub(crate) fn results(xml: &str, text: &str) -> Option<TestResults> {
    let report = junit::parse(xml)?;
    let summary = short_summary(text);
    let mut outcomes = Outcomes::default();
    for case in &report.cases {
        let id = node_id(case, &summary);
        let xpassed = case.outcome == TestOutcome::Passed
            && summary
                .iter()
                .any(|(word, rest)| *word == "XPASS" && names(rest, &id));
        let outcome = if xpassed {
            TestOutcome::XPassed
        } else {
            case.outcome
        };
        outcomes.add(id, outcome);
    }
    let deselected = counts(text).map_or(0, |counts| counts.deselected);
    Some(TestResults::new(outcomes, collected(text), deselected))
}

/// Per-test outcomes from the output alone, for pytest run inside a wrapper plumb cannot add a
/// report option to: the lines of the last short test summary that name a test (`PASSED id`,
/// `FAILED id - message`, `ERROR id - message`, `XFAIL id - reason`, `XPASS id`; skips are
/// grouped by location there and have no id). `None` without such a summary. The id is what
/// comes before the first ` - `, so a test whose parameters hold ` - ` is named wrongly; the
/// caller checks the outcomes against the summary's counts, not the ids against the tests.
pub(crate) fn summary_results(text: &str) -> Option<TestResults> {
    let lines = short_summary(text);
    let mut outcomes = Outcomes::default();
    let mut found = false;
    for (word, rest) in lines {
        let outcome = match word {
            "PASSED" => TestOutcome::Passed,
            "FAILED" => TestOutcome::Failed,
            "ERROR" => TestOutcome::Error,
            "XFAIL" => TestOutcome::XFailed,
            "XPASS" => TestOutcome::XPassed,
            _ => continue,
        };
        let id = rest.split_once(" - ").map_or(rest, |(id, _)| id).trim();
        if id.is_empty() {
            continue;
        }
        found = true;
        outcomes.add(id.to_string(), outcome);
    }
    if !found {
        return None;
    }
    let deselected = counts(text).map_or(0, |counts| counts.deselected);
    Some(TestResults::new(outcomes, collected(text), deselected))
}

/// `collected 7 items / 1 deselected / 6 selected` → 7 (pytest prints it unless `-q`).
fn collected(text: &str) -> Option<u32> {
    text.lines().find_map(|line| {
        line.strip_prefix("collected ")?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    })
}

/// The lines of the last short test summary as (word, rest): `("FAILED", "tests/test_x.py::test_y
/// - assert 0")`, `("SKIPPED", "[1] tests/test_x.py:3: reason")`.
fn short_summary(text: &str) -> Vec<(&str, &str)> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines
        .iter()
        .rposition(|line| section_title(line) == Some(SHORT_SUMMARY))
    else {
        return Vec::new();
    };
    lines
        .iter()
        .skip(start + 1)
        .take_while(|line| section_title(line).is_none() && summary_line(line).is_none())
        .filter_map(|line| {
            let (word, rest) = line.split_once(' ')?;
            SUMMARY_WORDS.contains(&word).then_some((word, rest))
        })
        .collect()
}

/// Whether a short-summary line's `rest` is about the test `id`: the id, then the end of the line
/// or a space before the message.
fn names(rest: &str, id: &str) -> bool {
    rest.strip_prefix(id)
        .is_some_and(|after| after.is_empty() || after.starts_with(' '))
}

/// The pytest node id of a JUnit test case.
fn node_id(case: &Case, summary: &[(&str, &str)]) -> String {
    if let Some(id) = case
        .file
        .as_deref()
        .and_then(|file| id_in_file(file, &case.classname, &case.name))
    {
        return id;
    }
    let wanted = (case.classname.as_str(), case.name.as_str());
    for (_, rest) in summary {
        let ends = rest
            .match_indices(' ')
            .map(|(at, _)| at)
            .chain([rest.len()]);
        for end in ends {
            if let Some(candidate) = rest.get(..end) {
                let (classname, name) = junit_names(candidate);
                if (classname.as_str(), name.as_str()) == wanted {
                    return candidate.to_string();
                }
            }
        }
    }
    // Not a node id pytest will take back, but one that names the test and stays the same from
    // run to run.
    if case.classname.is_empty() {
        case.name.clone()
    } else {
        format!("{}::{}", case.classname, case.name)
    }
}

/// The node id of a test of `classname` + `name` defined in `file` (xunit1's `file`), when the
/// class name starts with the file's module: `tests/test_x.py` + `tests.test_x.TestC` +
/// `test_y` → `tests/test_x.py::TestC::test_y`. A collection error is reported as the module
/// itself (`classname=""`, `name="tests.test_x"`), whose node id is the file.
fn id_in_file(file: &str, classname: &str, name: &str) -> Option<String> {
    let module = dotted(file);
    if classname.is_empty() {
        return (name == module).then(|| file.to_string());
    }
    let classes = if classname == module {
        ""
    } else {
        classname.strip_prefix(module.as_str())?.strip_prefix('.')?
    };
    let mut id = file.to_string();
    for class in classes.split('.').filter(|class| !class.is_empty()) {
        id.push_str("::");
        id.push_str(class);
    }
    id.push_str("::");
    id.push_str(name);
    Some(id)
}

/// pytest's `mangle_test_address`: the JUnit (classname, name) of a node id.
fn junit_names(node_id: &str) -> (String, String) {
    let (path, params) = match node_id.split_once('[') {
        Some((path, params)) => (path, format!("[{params}")),
        None => (node_id, String::new()),
    };
    let mut names: Vec<String> = path.split("::").map(String::from).collect();
    if let Some(first) = names.first_mut() {
        *first = dotted(first);
    }
    let name = names.pop().unwrap_or_default() + &params;
    (names.join("."), name)
}

/// `tests/test_x.py` → `tests.test_x`, as pytest names a module in its JUnit report.
fn dotted(path: &str) -> String {
    let dotted = path.replace('/', ".");
    match dotted.strip_suffix(".py") {
        Some(module) => module.to_string(),
        None => dotted,
    }
}

#[cfg(test)]
mod tests;
