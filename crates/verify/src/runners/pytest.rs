//! pytest: the final summary line, the failure sections, narrowing by node id.
//!
//! The summary is pytest's last line, framed (`==== 1 failed, 2 passed in 0.12s ====`) or bare
//! with `-q` (`1 failed, 2 passed in 0.12s`), or `no tests ran in 0.01s`. It is read from the end,
//! so a test that prints something summary-like does not fool the parser.

use plumb_protocol::TestCounts;

use crate::output;

/// The sections of pytest's report that explain failures, in the order pytest prints them.
const FAILURE_SECTIONS: &[&str] = &["ERRORS", "FAILURES", "short test summary info"];

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
pub(crate) fn excerpt(stdout: &str, stderr: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let mut keeping = false;
    for line in stdout.lines() {
        if let Some(title) = section_title(line) {
            if summary_line(line).is_some() {
                kept.push(line);
                keeping = false;
                continue;
            }
            keeping = FAILURE_SECTIONS.contains(&title);
        }
        if keeping {
            kept.push(line);
        }
    }
    let stderr = stderr.trim();
    if kept.is_empty() {
        let rest: Vec<&str> = stdout.lines().filter(|line| !is_progress(line)).collect();
        return output::tail(&output::joined(&rest.join("\n"), stderr));
    }
    let last_summary = stdout
        .lines()
        .rev()
        .find(|line| summary_line(line).is_some());
    if let Some(summary) = last_summary
        && kept.last() != Some(&summary)
    {
        kept.push(summary);
    }
    output::joined(&kept.join("\n"), stderr)
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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn reads_summary_lines() {
        let actual = [
            summary_line(
                "1 failed, 12 passed, 2 skipped, 1 deselected, 1 xfailed, 1 error in 0.12s",
            ),
            summary_line("===== 3 passed, 2 warnings in 65.12s (0:01:05) ====="),
            summary_line("== no tests ran in 0.01s =="),
            summary_line("2 errors in 0.30s"),
            summary_line("1 passed, 3 subtests passed in 0.01s"),
            summary_line("ran 3 tests in 0.1s"),
            summary_line("3 passed in no time"),
            summary_line("3 passed"),
        ];
        let expected = [
            Some(TestCounts {
                passed: 12,
                failed: 1,
                skipped: 2,
                errors: 1,
                deselected: 1,
                xfailed: 1,
                xpassed: 0,
            }),
            Some(TestCounts {
                passed: 3,
                ..TestCounts::default()
            }),
            Some(TestCounts::default()),
            Some(TestCounts {
                errors: 2,
                ..TestCounts::default()
            }),
            Some(TestCounts {
                passed: 1,
                ..TestCounts::default()
            }),
            None,
            None,
            None,
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn progress_lines() {
        let actual = [
            is_progress("..FsxXE                                                [100%]"),
            is_progress("tests/test_a.py::test_x PASSED                          [ 14%]"),
            is_progress("E       assert [1] == [2]"),
            is_progress("see [docs] 100%]"),
        ];
        assert_eq!(actual, [true, true, false, false]);
    }
}
