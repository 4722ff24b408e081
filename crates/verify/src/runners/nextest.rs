//! cargo nextest: its status lines (`PASS [ 0.004s] (1/4) demo tests::adds`, on stderr), its
//! `Summary` line, narrowing with libtest's `--exact`.
//!
//! nextest's libtest-JSON output is experimental (it needs `NEXTEST_EXPERIMENTAL_LIBTEST_JSON`)
//! and its JUnit report needs a config file, so per-test outcomes come from the status lines,
//! which [`with_report`] asks for down to `SKIP`. A test id is the test's name without its binary
//! (`tests::adds`), as for `cargo test`. With retries the last status of a test wins (`TRY 1 FAIL`
//! then `TRY 2 PASS` is a pass, nextest's "flaky"); across binaries the worse outcome wins.
//! nextest counts the tests a filter left out as skipped, so a narrowed run shows them as
//! skipped too.

use std::collections::BTreeMap;
use std::path::Path;

use plumb_protocol::TestCounts;

use super::{FinishedRun, RunnerAdapter};
use crate::command::guess;
use crate::failure::{FailureReading, TestPlaces};
use crate::results::{Outcomes, TestResults};
use crate::runners::cargo;
use crate::{Runner, TestOutcome, VerifyError, output};

/// `cargo nextest run`'s adapter.
pub(crate) struct Nextest;

impl RunnerAdapter for Nextest {
    fn runner(&self) -> Runner {
        Runner::Nextest
    }

    fn narrow(&self, argv: &[String], tests: &[String]) -> Result<Vec<String>, VerifyError> {
        Ok(narrow(argv, tests))
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

    /// As `cargo test`'s: nextest builds with cargo and prints each failing test's panic.
    fn read_failure(&self, excerpt: &str, _places: &dyn TestPlaces) -> FailureReading {
        cargo::read_failure(excerpt)
    }

    fn test_id_example(&self) -> Option<&'static str> {
        Some("tests::adds")
    }
}

/// A test binary's id and a test's name in it: (`demo::it`, `tests::adds`).
type BinaryTest = (String, String);

/// The final `Summary [   0.073s] 4 tests run: 3 passed, 1 failed, 2 skipped` line.
pub(crate) fn counts(text: &str) -> Option<TestCounts> {
    let line = text
        .lines()
        .rev()
        .find_map(|line| line.trim().strip_prefix("Summary ["))?;
    let (_, run) = line.split_once("] ")?;
    let (_, parts) = run
        .split_once(" tests run: ")
        .or_else(|| run.split_once(" test run: "))?;
    let mut counts = TestCounts::default();
    for part in parts.split(", ") {
        let Some((count, word)) = output::count_and_word(part) else {
            continue;
        };
        if word.starts_with("passed") {
            counts.passed += count;
        } else if word.starts_with("failed") || word.starts_with("timed out") {
            counts.failed += count;
        } else if word.starts_with("skipped") {
            counts.skipped += count;
        } else if word.starts_with("exec failed") {
            counts.errors += count;
        }
    }
    Some(counts)
}

/// The output without the status lines of passed and skipped tests and cargo's progress lines.
pub(crate) fn excerpt(stdout: &str, stderr: &str) -> String {
    let text = output::joined(stdout, stderr);
    let kept: Vec<&str> = text
        .lines()
        .filter(|line| {
            !matches!(
                status_line(line),
                Some((_, Some(TestOutcome::Passed | TestOutcome::Skipped)))
            ) && !is_cargo_progress(line)
        })
        .collect();
    output::tail(&kept.join("\n"))
}

fn is_cargo_progress(line: &str) -> bool {
    let word = line.trim_start().split(' ').next().unwrap_or("");
    line.starts_with(' ') && matches!(word, "Compiling" | "Finished" | "Running" | "Blocking")
}

/// Exact names after `--`, which nextest passes on as libtest's `--exact` filters.
pub(crate) fn narrow(argv: &[String], tests: &[String]) -> Vec<String> {
    let mut argv = argv.to_vec();
    if !argv.iter().any(|word| word == "--") {
        argv.push("--".to_string());
    }
    if !argv.iter().any(|word| word == "--exact") {
        argv.push("--exact".to_string());
    }
    argv.extend(tests.iter().cloned());
    argv
}

/// `argv` with `--no-fail-fast` and `--status-level skip` after `run`, unless it sets them.
pub(crate) fn with_report(argv: &[String], program: usize) -> Vec<String> {
    let mut words = Vec::new();
    if !argv.iter().any(|word| word == "--no-fail-fast") {
        words.push("--no-fail-fast");
    }
    if !argv.iter().any(|word| word.starts_with("--status-level")) {
        words.extend(["--status-level", "skip"]);
    }
    cargo::insert_after(argv, cargo::subcommand_at(argv, program, "run"), &words)
}

/// Per-test outcomes from the status lines; `None` when no run started (no `Starting` line:
/// a build error, a bad filter).
pub(crate) fn results(text: &str) -> Option<TestResults> {
    let mut collected = None;
    // The last status of each test of each binary.
    let mut last: BTreeMap<BinaryTest, TestOutcome> = BTreeMap::new();
    for line in text.lines() {
        if let Some(count) = starting_count(line) {
            collected = Some(count);
        } else if let Some((test, Some(outcome))) = status_line(line) {
            last.insert(test, outcome);
        }
    }
    let collected = collected?;
    let mut outcomes = Outcomes::default();
    for ((_binary, name), outcome) in last {
        outcomes.add(name, outcome);
    }
    Some(TestResults::new(outcomes, Some(collected), 0))
}

/// `Starting 4 tests across 2 binaries (2 tests skipped)` → 6; older nextest writes `(2 skipped;
/// run ID: …)`.
fn starting_count(line: &str) -> Option<u32> {
    let rest = line.trim_start().strip_prefix("Starting ")?;
    let (count, rest) = rest.split_once(' ')?;
    let mut count: u32 = count.parse().ok()?;
    if let Some((_, skipped)) = rest.split_once('(') {
        let first = skipped.split([';', ')']).next().unwrap_or("");
        if first.contains("skipped")
            && let Some(skipped) = first
                .split_whitespace()
                .next()
                .and_then(|skipped| skipped.parse::<u32>().ok())
        {
            count += skipped;
        }
    }
    Some(count)
}

/// A status line: `PASS [   0.004s] (1/4) demo tests::adds`, `SKIP [         ] (───) demo x`,
/// `TRY 2 PASS [ 0.002s] demo::it x`, `SIGSEGV [ 0.1s] demo x`. The outcome is `None` for a
/// status that is not a verdict (`SLOW`, `START`, `RETRY`).
fn status_line(line: &str) -> Option<(BinaryTest, Option<TestOutcome>)> {
    let (status, rest) = line.trim_start().split_once(" [")?;
    let (_, rest) = rest.split_once("] ")?;
    let rest = match rest.strip_prefix('(') {
        Some(progress) => progress.split_once(") ")?.1,
        None => rest,
    };
    let (binary, name) = rest.split_once(' ')?;
    // `TRY 2 PASS`: the verdict is the last word; `FLAKY 2/3`: the first.
    let word = match status.split(' ').next() {
        Some("FLAKY") => "FLAKY",
        _ => status.rsplit(' ').next().unwrap_or(status),
    };
    if word.is_empty() || !word.chars().all(|c| c.is_ascii_uppercase() || c == '-') {
        return None;
    }
    let outcome = match word {
        "PASS" | "LEAK" | "FLAKY" => Some(TestOutcome::Passed),
        "SKIP" => Some(TestOutcome::Skipped),
        "FAIL" | "LEAK-FAIL" | "TIMEOUT" | "ABORT" => Some(TestOutcome::Failed),
        signal if signal.starts_with("SIG") => Some(TestOutcome::Failed),
        _ => None,
    };
    Some(((binary.to_string(), name.trim_end().to_string()), outcome))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(String::from).collect()
    }

    #[test]
    fn status_lines() {
        let lines = [
            "        PASS [   0.004s] (1/4) demo tests::adds",
            "        SKIP [         ] (───) demo tests::net",
            "  TRY 1 FAIL [   0.003s] fixture::basic test_flaky",
            "   FLAKY 2/3 [   0.002s] fixture::basic test_flaky",
            "     SIGSEGV [   0.100s] demo tests::crash",
            "        SLOW [> 60.000s] demo tests::slow",
            "     Summary [   0.073s] 4 tests run: 3 passed, 1 failed, 2 skipped",
            "    Starting 4 tests across 2 binaries (2 tests skipped)",
        ];
        let actual: Vec<_> = lines.iter().map(|line| status_line(line)).collect();
        let test = |binary: &str, name: &str| (binary.to_string(), name.to_string());
        let expected = vec![
            Some((test("demo", "tests::adds"), Some(TestOutcome::Passed))),
            Some((test("demo", "tests::net"), Some(TestOutcome::Skipped))),
            Some((
                test("fixture::basic", "test_flaky"),
                Some(TestOutcome::Failed),
            )),
            Some((
                test("fixture::basic", "test_flaky"),
                Some(TestOutcome::Passed),
            )),
            Some((test("demo", "tests::crash"), Some(TestOutcome::Failed))),
            Some((test("demo", "tests::slow"), None)),
            None,
            None,
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn starting_lines() {
        let actual = [
            starting_count("    Starting 4 tests across 2 binaries (2 tests skipped)"),
            starting_count("    Starting 1 test across 2 binaries (11 skipped; run ID: x)"),
            starting_count("    Starting 3 tests across 1 binary"),
            starting_count("Starting the engine"),
        ];
        assert_eq!(actual, [Some(6), Some(12), Some(3), None]);
    }

    #[test]
    fn narrows_and_reports() {
        let actual = [
            narrow(&words("cargo nextest run"), &words("a::b c")),
            narrow(&words("cargo nextest run -- --test-threads 1"), &words("a")),
            with_report(&words("cargo nextest run --workspace"), 0),
            with_report(
                &words("cargo nextest run --status-level all -- --exact a"),
                0,
            ),
        ];
        let expected = [
            words("cargo nextest run -- --exact a::b c"),
            words("cargo nextest run -- --test-threads 1 --exact a"),
            words("cargo nextest run --no-fail-fast --status-level skip --workspace"),
            words("cargo nextest run --no-fail-fast --status-level all -- --exact a"),
        ];
        assert_eq!(actual, expected);
    }
}
