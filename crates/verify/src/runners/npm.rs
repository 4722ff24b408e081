//! `npm test` and the runners behind it: jest, vitest, mocha and `node --test` (TAP or spec
//! reporter). The first summary format found wins, in that order.
//!
//! Jest and vitest count the tests of a file that failed to load nowhere in their `Tests` line;
//! such files are counted as errors when the failed files outnumber the failed tests (a heuristic
//! until per-test outcomes replace it).

use std::path::Path;

use plumb_protocol::TestCounts;

use super::{FinishedRun, RunnerAdapter, js_failure};
use crate::command::{guess, program_name};
use crate::failure::{FailureReading, TestPlaces};
use crate::results::TestResults;
use crate::{Runner, VerifyError, output};

/// The adapter of `npm test` and friends when plumb cannot tell which runner is behind them
/// (mocha, `node --test`, a script that does more than run one runner): counted from the
/// output, never read per test.
pub(crate) struct NodeScript;

impl RunnerAdapter for NodeScript {
    fn runner(&self) -> Runner {
        Runner::Npm
    }

    fn narrow(&self, argv: &[String], tests: &[String]) -> Result<Vec<String>, VerifyError> {
        Ok(narrow(argv, guess(argv).program, tests))
    }

    fn with_report(&self, argv: &[String], _report_path: &Path) -> Vec<String> {
        argv.to_vec()
    }

    fn reports_per_test(&self) -> bool {
        false
    }

    fn results(&self, _run: &FinishedRun<'_>) -> Option<TestResults> {
        None
    }

    fn counts(&self, text: &str) -> Option<TestCounts> {
        counts(text)
    }

    fn excerpt(&self, stdout: &str, stderr: &str) -> String {
        output::tail(&output::joined(stdout, stderr))
    }

    fn read_failure(&self, excerpt: &str, places: &dyn TestPlaces) -> FailureReading {
        js_failure::read(excerpt, places)
    }

    fn test_id_example(&self) -> Option<&'static str> {
        Some("test/sum.test.js")
    }
}

pub(crate) fn counts(text: &str) -> Option<TestCounts> {
    jest(text)
        .or_else(|| vitest(text))
        .or_else(|| node_test(text))
        .or_else(|| mocha(text))
}

/// `Tests:       1 failed, 1 skipped, 3 passed, 5 total` and `Test Suites: 1 failed, 2 total`.
fn jest(text: &str) -> Option<TestCounts> {
    let tests = last_labelled(text, "Tests:")?;
    let mut counts = TestCounts::default();
    for part in tests.split(", ") {
        add(&mut counts, part);
    }
    let failed_suites = last_labelled(text, "Test Suites:")
        .map(|suites| failed_in(suites.split(", ")))
        .unwrap_or(0);
    counts.errors += failed_suites.saturating_sub(counts.failed);
    Some(counts)
}

/// `Tests  1 failed | 5 passed | 1 skipped (7)`, `Test Files  1 failed | 2 passed (3)`, or
/// `Tests  no tests`.
fn vitest(text: &str) -> Option<TestCounts> {
    let tests = last_labelled(text, "Tests ")?;
    let mut counts = TestCounts::default();
    for part in without_total(tests).split(" | ") {
        add(&mut counts, part);
    }
    let failed_files = last_labelled(text, "Test Files ")
        .map(|files| failed_in(without_total(files).split(" | ")))
        .unwrap_or(0);
    counts.errors += failed_files.saturating_sub(counts.failed);
    Some(counts)
}

/// `node --test`: `# tests 4`, `# pass 1`, `# fail 1`, `# skipped 1`, `# todo 1`, `# cancelled 0`
/// (TAP), or the same with `ℹ` (spec reporter).
fn node_test(text: &str) -> Option<TestCounts> {
    let mut counts = TestCounts::default();
    let mut todo = 0;
    let mut found = false;
    for line in text.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("# ").or_else(|| line.strip_prefix("ℹ ")) else {
            continue;
        };
        let Some((word, count)) = rest.split_once(' ') else {
            continue;
        };
        let Ok(count) = count.trim().parse::<u32>() else {
            continue;
        };
        match word {
            "tests" => found = true,
            "pass" => counts.passed = count,
            "fail" => counts.failed = count,
            "skipped" => counts.skipped = count,
            "todo" => todo = count,
            "cancelled" => counts.errors = count,
            _ => {}
        }
    }
    counts.skipped += todo;
    found.then_some(counts)
}

/// Mocha: `3 passing (12ms)`, `1 failing`, `2 pending`.
fn mocha(text: &str) -> Option<TestCounts> {
    let mut counts = TestCounts::default();
    let mut found = false;
    for line in text.lines() {
        let Some((count, word)) = output::count_and_word(line) else {
            continue;
        };
        if word == "passing" || word.starts_with("passing (") {
            counts.passed = count;
            found = true;
        } else if word == "failing" {
            counts.failed = count;
            found = true;
        } else if word == "pending" {
            counts.skipped = count;
        }
    }
    found.then_some(counts)
}

/// The text after the last line that starts with `label` (after indentation).
fn last_labelled<'t>(text: &'t str, label: &str) -> Option<&'t str> {
    text.lines()
        .rev()
        .find_map(|line| line.trim().strip_prefix(label))
        .map(str::trim)
}

/// `1 failed | 2 passed (3)` without ` (3)`.
fn without_total(text: &str) -> &str {
    match text.rsplit_once(" (") {
        Some((counts, total)) if total.ends_with(')') => counts,
        _ => text,
    }
}

fn add(counts: &mut TestCounts, part: &str) {
    match output::count_and_word(part) {
        Some((count, "passed")) => counts.passed += count,
        Some((count, "failed")) => counts.failed += count,
        Some((count, "skipped" | "todo" | "pending")) => counts.skipped += count,
        Some(_) | None => {}
    }
}

fn failed_in<'p>(parts: impl Iterator<Item = &'p str>) -> u32 {
    parts
        .filter_map(output::count_and_word)
        .filter(|(_, word)| *word == "failed")
        .map(|(count, _)| count)
        .sum()
}

/// Test ids go after `--` for a package manager (`npm test -- ids`), straight on for a runner
/// called directly (`npx jest ids`).
pub(crate) fn narrow(argv: &[String], program: usize, tests: &[String]) -> Vec<String> {
    let mut argv = argv.to_vec();
    let manager = argv
        .get(program)
        .is_some_and(|word| matches!(program_name(word).as_str(), "npm" | "yarn" | "pnpm" | "bun"));
    if manager && !argv.iter().any(|word| word == "--") {
        argv.push("--".to_string());
    }
    argv.extend(tests.iter().cloned());
    argv
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(String::from).collect()
    }

    #[test]
    fn narrows_after_double_dash_for_package_managers() {
        let actual = [
            narrow(&words("npm test --silent"), 0, &words("src/a.test.js")),
            narrow(&words("npx jest"), 1, &words("a.test.js b.test.js")),
            narrow(&words("yarn test -- --ci"), 0, &words("a")),
        ];
        let expected = [
            words("npm test --silent -- src/a.test.js"),
            words("npx jest a.test.js b.test.js"),
            words("yarn test -- --ci a"),
        ];
        assert_eq!(actual, expected);
    }
}
