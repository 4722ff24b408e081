//! cargo test: libtest's `test result:` lines (one per test binary and for the doc-tests, summed),
//! its `failures:` blocks, narrowing by name filter, and per-test outcomes from its
//! `test name ... ok` lines (libtest's JSON output needs a nightly toolchain).
//!
//! libtest does not say which binary a line came from (cargo prints `Running …` on stderr), so a
//! test id is the test's path inside its crate (`tests::adds`, `src/lib.rs - add_one (line 3)`);
//! two binaries with a test of the same name give one id with the worse outcome.

use std::path::Path;

use plumb_protocol::TestCounts;

use super::{FinishedRun, RunnerAdapter, rust_failure};
use crate::command::guess;
use crate::failure::{FailureReading, TestPlaces};
use crate::results::{Outcomes, TestResults};
use crate::{Runner, TestOutcome, VerifyError, output};

/// `cargo test`'s adapter (libtest's output).
pub(crate) struct Libtest;

impl RunnerAdapter for Libtest {
    fn runner(&self) -> Runner {
        Runner::Cargo
    }

    fn narrow(&self, argv: &[String], tests: &[String]) -> Result<Vec<String>, VerifyError> {
        Ok(narrow(argv, guess(argv).program, tests))
    }

    fn with_report(&self, argv: &[String], _report_path: &Path) -> Vec<String> {
        with_report(argv, guess(argv).program)
    }

    fn results(&self, run: &FinishedRun<'_>) -> Option<TestResults> {
        results(run.text)
    }

    fn counts(&self, text: &str) -> Option<TestCounts> {
        counts(text)
    }

    fn excerpt(&self, stdout: &str, stderr: &str) -> String {
        excerpt(stdout, stderr)
    }

    /// By the target that did not build, else by the panic (see `rust_failure.rs`).
    fn read_failure(&self, excerpt: &str, _places: &dyn TestPlaces) -> FailureReading {
        read_failure(excerpt)
    }

    fn test_id_example(&self) -> Option<&'static str> {
        Some("tests::adds")
    }
}

pub(crate) use rust_failure::read as read_failure;

/// What libtest appends to a test's name for its mode: `test x - should panic ... ok`.
const TEST_MODES: &[&str] = &[" - should panic", " - compile fail", " - compile"];

/// Cargo's own progress words on stderr, which say nothing about failures.
const CARGO_STATUS: &[&str] = &[
    "Compiling",
    "Checking",
    "Finished",
    "Running",
    "Doc-tests",
    "Downloading",
    "Downloaded",
    "Updating",
    "Locking",
    "Adding",
    "Blocking",
    "Fresh",
];

/// Sums every `test result: ok. 3 passed; 1 failed; 2 ignored; 0 measured; 1 filtered out` line:
/// ignored tests count as skipped, filtered-out ones as deselected.
pub(crate) fn counts(text: &str) -> Option<TestCounts> {
    let mut counts = TestCounts::default();
    let mut found = false;
    for line in text.lines() {
        let Some(result) = line.trim().strip_prefix("test result: ") else {
            continue;
        };
        let Some((_status, numbers)) = result.split_once(". ") else {
            continue;
        };
        found = true;
        for part in numbers.split("; ") {
            match output::count_and_word(part) {
                Some((count, "passed")) => counts.passed += count,
                Some((count, "failed")) => counts.failed += count,
                Some((count, "ignored")) => counts.skipped += count,
                Some((count, "filtered out")) => counts.deselected += count,
                Some(_) | None => {}
            }
        }
    }
    found.then_some(counts)
}

/// Each `failures:` block up to its `test result:` line; without any (a build error, a crash),
/// the last lines of stderr without cargo's progress lines, after stdout.
pub(crate) fn excerpt(stdout: &str, stderr: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let mut inside = false;
    for line in stdout.lines() {
        if !inside && line.trim_end() == "failures:" {
            inside = true;
        }
        if inside {
            kept.push(line);
            if line.starts_with("test result:") {
                inside = false;
            }
        }
    }
    if !kept.is_empty() {
        return kept.join("\n");
    }
    let stderr: Vec<&str> = stderr
        .lines()
        .filter(|line| !is_cargo_status(line))
        .collect();
    output::tail(&output::joined(stdout, &stderr.join("\n")))
}

fn is_cargo_status(line: &str) -> bool {
    let word = line.trim_start().split(' ').next().unwrap_or("");
    line.starts_with(' ') && CARGO_STATUS.contains(&word)
}

/// One test: the filter right after `cargo test`; several: after `--`, where libtest takes any
/// number of filters. An integration test file (`tests/NAME.rs`) is no filter libtest would match:
/// it becomes cargo's `--test NAME`, which runs that file's tests.
pub(crate) fn narrow(argv: &[String], program: usize, tests: &[String]) -> Vec<String> {
    let mut argv = argv.to_vec();
    let subcommand = subcommand_at(&argv, program, "test");
    let (files, filters): (Vec<&String>, Vec<&String>) = tests
        .iter()
        .partition(|test| integration_target(test).is_some() && subcommand.is_some());
    if let Some(at) = subcommand {
        for name in files
            .iter()
            .rev()
            .filter_map(|test| integration_target(test))
        {
            argv.splice(at + 1..at + 1, ["--test".to_owned(), name.to_owned()]);
        }
    }
    match (filters.as_slice(), subcommand) {
        ([], _) if !files.is_empty() => {}
        ([test], Some(at)) => argv.insert(at + 1, (*test).clone()),
        _ => {
            if !argv.iter().any(|word| word == "--") {
                argv.push("--".to_string());
            }
            argv.extend(filters.iter().map(|test| (*test).clone()));
        }
    }
    argv
}

/// `NAME` of an integration test file `tests/NAME.rs`.
fn integration_target(test: &str) -> Option<&str> {
    let name = test.strip_prefix("tests/")?.strip_suffix(".rs")?;
    (!name.is_empty() && !name.contains('/')).then_some(name)
}

/// The index of `subcommand` after the program word, before any `--`.
pub(crate) fn subcommand_at(argv: &[String], program: usize, subcommand: &str) -> Option<usize> {
    argv.iter()
        .enumerate()
        .skip(program + 1)
        .take_while(|(_, word)| *word != "--")
        .find(|(_, word)| *word == subcommand)
        .map(|(at, _)| at)
}

/// `argv` with `--no-fail-fast` after `test`, so that a failing test binary does not stop the
/// binaries after it (whose tests would be missing).
pub(crate) fn with_report(argv: &[String], program: usize) -> Vec<String> {
    if argv.iter().any(|word| word == "--no-fail-fast") {
        return argv.to_vec();
    }
    insert_after(
        argv,
        subcommand_at(argv, program, "test"),
        &["--no-fail-fast"],
    )
}

/// `words` inserted after index `at`, or appended when `at` is `None`.
pub(crate) fn insert_after(argv: &[String], at: Option<usize>, words: &[&str]) -> Vec<String> {
    let mut argv = argv.to_vec();
    let at = at.map_or(argv.len(), |at| at + 1).min(argv.len());
    argv.splice(at..at, words.iter().map(|word| word.to_string()));
    argv
}

/// Per-test outcomes from libtest's `test name ... ok|FAILED|ignored` lines; `None` when no test
/// binary started (no `running N tests` line: a build error). `collected` is the sum of the
/// `running N tests` lines plus the tests filtered out.
pub(crate) fn results(text: &str) -> Option<TestResults> {
    let mut outcomes = Outcomes::default();
    let mut running: Option<u32> = None;
    for line in text.lines() {
        if let Some(count) = running_count(line) {
            *running.get_or_insert(0) += count;
        } else if let Some((name, outcome)) = test_line(line) {
            outcomes.add(name, outcome);
        }
    }
    let running = running?;
    let deselected = counts(text).map_or(0, |counts| counts.deselected);
    Some(TestResults::new(
        outcomes,
        Some(running + deselected),
        deselected,
    ))
}

/// `running 3 tests` → 3.
fn running_count(line: &str) -> Option<u32> {
    let rest = line.strip_prefix("running ")?;
    let (count, word) = rest.split_once(' ')?;
    if !matches!(word.trim_end(), "test" | "tests") {
        return None;
    }
    count.parse().ok()
}

/// `test tests::adds ... ok` → (`tests::adds`, Passed); `test x - should panic ... ok` → `x`;
/// `test x ... ignored, needs a database` → Skipped.
fn test_line(line: &str) -> Option<(String, TestOutcome)> {
    let (name, result) = line.strip_prefix("test ")?.rsplit_once(" ... ")?;
    let outcome = match result.trim_end() {
        "ok" => TestOutcome::Passed,
        "FAILED" => TestOutcome::Failed,
        result if result == "ignored" || result.starts_with("ignored, ") => TestOutcome::Skipped,
        _ => return None,
    };
    let mut name = name.trim_end();
    for mode in TEST_MODES {
        if let Some(stripped) = name.strip_suffix(mode) {
            name = stripped;
            break;
        }
    }
    Some((name.to_string(), outcome))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(String::from).collect()
    }

    #[test]
    fn narrows_one_or_several() {
        let actual = [
            narrow(
                &words("cargo test --workspace"),
                0,
                &words("parser::tests::eof"),
            ),
            narrow(&words("cargo test"), 0, &words("a b")),
            narrow(&words("cargo test -- --test-threads 1"), 0, &words("a b")),
        ];
        let expected = [
            words("cargo test parser::tests::eof --workspace"),
            words("cargo test -- a b"),
            words("cargo test -- --test-threads 1 a b"),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn an_integration_test_file_becomes_its_test_target() {
        let actual = [
            narrow(&words("cargo test"), 0, &words("tests/add.rs")),
            narrow(
                &words("cargo test"),
                0,
                &words("tests/add.rs tests/sub.rs adds"),
            ),
            narrow(&words("cargo test"), 0, &words("tests/sub/mod.rs")),
        ];

        let expected = [
            words("cargo test --test add"),
            words("cargo test adds --test add --test sub"),
            words("cargo test tests/sub/mod.rs"),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn status_lines() {
        let actual = [
            is_cargo_status("   Compiling demo v0.1.0 (/tmp/demo)"),
            is_cargo_status("     Running unittests src/lib.rs"),
            is_cargo_status("error: could not compile `demo`"),
            is_cargo_status("Running my own thing"),
        ];
        assert_eq!(actual, [true, true, false, false]);
    }

    #[test]
    fn test_lines() {
        let actual = [
            test_line("test tests::adds ... ok"),
            test_line("test tests::p - should panic ... ok"),
            test_line("test src/lib.rs - f (line 3) - compile fail ... ok"),
            test_line("test tests::net ... ignored, needs net"),
            test_line("test tests::bad ... FAILED"),
            test_line("test result: ok. 1 passed; 0 failed"),
            test_line("test tests::slow has been running for over 60 seconds"),
        ];
        let expected = [
            Some(("tests::adds".to_string(), TestOutcome::Passed)),
            Some(("tests::p".to_string(), TestOutcome::Passed)),
            Some(("src/lib.rs - f (line 3)".to_string(), TestOutcome::Passed)),
            Some(("tests::net".to_string(), TestOutcome::Skipped)),
            Some(("tests::bad".to_string(), TestOutcome::Failed)),
            None,
            None,
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn no_fail_fast_goes_before_the_test_arguments() {
        let actual = [
            with_report(&words("cargo test -- --test-threads 1"), 0),
            with_report(&words("cargo +nightly test --no-fail-fast"), 0),
            with_report(&words("env A=1 cargo test"), 2),
        ];
        let expected = [
            words("cargo test --no-fail-fast -- --test-threads 1"),
            words("cargo +nightly test --no-fail-fast"),
            words("env A=1 cargo test --no-fail-fast"),
        ];
        assert_eq!(actual, expected);
    }
}
