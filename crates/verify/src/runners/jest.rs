//! jest and vitest: their JSON reports (`jest --json --outputFile=…`, vitest's `json` reporter,
//! which writes the same shape), and narrowing by file and test name.
//!
//! The report lists each test file (`testResults[].name`, an absolute path) with its tests
//! (`assertionResults[]`: `ancestorTitles`, `title`, `status`). A test id is the file relative
//! to the project root, then the describe blocks and the title, joined by ` › ` as jest prints
//! them: `src/sum.test.js › sum › adds`. A file that failed without a failed test (it did not
//! load, a hook threw) is an `Error` under the file's own id.

use std::path::Path;

use plumb_protocol::TestCounts;
use serde::Deserialize;

use super::{FinishedRun, RunnerAdapter, js_failure, npm};
use crate::command::{guess, program_name};
use crate::failure::{FailureReading, TestPlaces};
use crate::results::{Outcomes, TestResults, fresh_report};
use crate::{Runner, TestOutcome, VerifyError, output};

/// The adapter of jest or vitest, called directly or as the whole `test` script.
pub(crate) struct JestLike(Flavor);

pub(crate) const JEST: JestLike = JestLike(Flavor::Jest);
pub(crate) const VITEST: JestLike = JestLike(Flavor::Vitest);

impl RunnerAdapter for JestLike {
    fn runner(&self) -> Runner {
        match self.0 {
            Flavor::Jest => Runner::Jest,
            Flavor::Vitest => Runner::Vitest,
        }
    }

    fn narrow(&self, argv: &[String], tests: &[String]) -> Result<Vec<String>, VerifyError> {
        Ok(narrow(argv, guess(argv).program, self.0, tests))
    }

    fn with_report(&self, argv: &[String], report_path: &Path) -> Vec<String> {
        with_report(argv, guess(argv).program, self.0, report_path)
    }

    fn results(&self, run: &FinishedRun<'_>) -> Option<TestResults> {
        results(
            &fresh_report(run.root, run.report_path, run.started)?,
            run.root,
        )
    }

    fn counts(&self, text: &str) -> Option<TestCounts> {
        npm::counts(text)
    }

    fn excerpt(&self, stdout: &str, stderr: &str) -> String {
        output::tail(&output::joined(stdout, stderr))
    }

    fn read_failure(&self, excerpt: &str, places: &dyn TestPlaces) -> FailureReading {
        js_failure::read(excerpt, places)
    }

    fn test_id_example(&self) -> Option<&'static str> {
        Some("src/sum.test.js")
    }
}

/// Between the parts of a test id, as jest prints a test's path.
const SEPARATOR: &str = " › ";

/// Which of the two runners: their options differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    Jest,
    Vitest,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    #[serde(default)]
    num_total_tests: Option<u32>,
    #[serde(default)]
    test_results: Vec<FileResult>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileResult {
    name: String,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    assertion_results: Vec<Assertion>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Assertion {
    #[serde(default)]
    ancestor_titles: Vec<String>,
    title: String,
    status: String,
}

/// `argv` writing the JSON report to `report_path`; after `--` when a package manager runs the
/// script. vitest keeps its console reporter (unless the command names one) so that the output
/// still has its summary.
pub(crate) fn with_report(
    argv: &[String],
    program: usize,
    flavor: Flavor,
    report_path: &Path,
) -> Vec<String> {
    let mut argv = after_double_dash(argv, program);
    let path = report_path.display();
    match flavor {
        Flavor::Jest => {
            argv.push("--json".to_string());
            argv.push(format!("--outputFile={path}"));
        }
        Flavor::Vitest => {
            if !argv.iter().any(|word| word.starts_with("--reporter")) {
                argv.push("--reporter=default".to_string());
            }
            argv.push("--reporter=json".to_string());
            argv.push(format!("--outputFile.json={path}"));
        }
    }
    argv
}

/// The files of `tests` as path filters, and, when every id names a test, `-t` with their full
/// names anchored (jest and vitest match it against the describe titles and the test title
/// joined by spaces). An id that is a whole file runs the whole file. Both runners report the
/// tests `-t` leaves out as skipped.
pub(crate) fn narrow(
    argv: &[String],
    program: usize,
    flavor: Flavor,
    tests: &[String],
) -> Vec<String> {
    let mut argv = after_double_dash(argv, program);
    let mut files: Vec<&str> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut whole_file = false;
    for id in tests {
        let mut parts = id.split(SEPARATOR);
        let file = parts.next().unwrap_or(id);
        if !files.contains(&file) {
            files.push(file);
        }
        let name: Vec<&str> = parts.collect();
        if name.is_empty() {
            whole_file = true;
        } else {
            let name = escape(&name.join(" "));
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    for file in files {
        // jest reads a path as a regular expression, vitest as a plain substring.
        argv.push(match flavor {
            Flavor::Jest => escape(file),
            Flavor::Vitest => file.to_string(),
        });
    }
    if !whole_file && !names.is_empty() {
        argv.push("-t".to_string());
        argv.push(format!("^(?:{})$", names.join("|")));
    }
    argv
}

/// `argv`, with `--` added when a package manager runs the script (`npm test -- …`).
fn after_double_dash(argv: &[String], program: usize) -> Vec<String> {
    let mut argv = argv.to_vec();
    let manager = argv
        .get(program)
        .is_some_and(|word| matches!(program_name(word).as_str(), "npm" | "yarn" | "pnpm" | "bun"));
    if manager && !argv.iter().any(|word| word == "--") {
        argv.push("--".to_string());
    }
    argv
}

/// A JavaScript regular expression matching `text` literally.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\^$.*+?()[]{}|/".contains(c) {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// Per-test outcomes from the JSON report `json`; file paths are made relative to `root`.
/// `None` when the report is not jest's shape.
pub(crate) fn results(json: &str, root: &Path) -> Option<TestResults> {
    let report: Report = serde_json::from_str(json).ok()?;
    let mut outcomes = Outcomes::default();
    for file in &report.test_results {
        let file_id = relative(&file.name, root);
        let mut failed = false;
        for test in &file.assertion_results {
            let outcome = outcome(&test.status);
            failed |= matches!(outcome, TestOutcome::Failed | TestOutcome::Error);
            let mut id = file_id.clone();
            for part in test.ancestor_titles.iter().chain([&test.title]) {
                id.push_str(SEPARATOR);
                id.push_str(part);
            }
            outcomes.add(id, outcome);
        }
        if file.status.as_deref() == Some("failed") && !failed {
            outcomes.add(file_id, TestOutcome::Error);
        }
    }
    Some(TestResults::new(outcomes, report.num_total_tests, 0))
}

/// jest's statuses: passed, failed, pending (`.skip`), todo, skipped, disabled; anything else
/// (a status a later version adds) is taken as an error rather than guessed to be a pass.
fn outcome(status: &str) -> TestOutcome {
    match status {
        "passed" => TestOutcome::Passed,
        "failed" => TestOutcome::Failed,
        "pending" | "skipped" | "todo" | "disabled" => TestOutcome::Skipped,
        _ => TestOutcome::Error,
    }
}

/// `path` relative to `root` with `/` separators, or as it is when it is not under `root`.
fn relative(path: &str, root: &Path) -> String {
    match Path::new(path).strip_prefix(root) {
        Ok(relative) if !root.as_os_str().is_empty() => relative
            .components()
            .map(|part| part.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Ok(_) | Err(_) => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(String::from).collect()
    }

    fn ids(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|id| id.to_string()).collect()
    }

    #[test]
    fn narrows_by_file_and_name() {
        let actual = [
            narrow(
                &words("npm test --silent"),
                0,
                Flavor::Jest,
                &ids(&["src/sum.test.js › sum › adds", "src/sum.test.js › top (1)"]),
            ),
            narrow(
                &words("npx vitest run"),
                1,
                Flavor::Vitest,
                &ids(&["src/a.test.ts › x", "src/b.test.ts"]),
            ),
        ];
        let expected = [
            vec![
                "npm",
                "test",
                "--silent",
                "--",
                "src\\/sum\\.test\\.js",
                "-t",
                "^(?:sum adds|top \\(1\\))$",
            ],
            vec!["npx", "vitest", "run", "src/a.test.ts", "src/b.test.ts"],
        ]
        .map(|words| {
            words
                .iter()
                .map(|word| word.to_string())
                .collect::<Vec<_>>()
        });
        assert_eq!(actual, expected);
    }

    #[test]
    fn report_options() {
        let path = Path::new("/w/.plumb-report/report.json");
        let actual = [
            with_report(&words("npm test"), 0, Flavor::Jest, path),
            with_report(&words("npx vitest run"), 1, Flavor::Vitest, path),
            with_report(
                &words("vitest run --reporter=verbose"),
                0,
                Flavor::Vitest,
                path,
            ),
        ];
        let expected = [
            words("npm test -- --json --outputFile=/w/.plumb-report/report.json"),
            words(
                "npx vitest run --reporter=default --reporter=json \
                 --outputFile.json=/w/.plumb-report/report.json",
            ),
            words(
                "vitest run --reporter=verbose --reporter=json \
                 --outputFile.json=/w/.plumb-report/report.json",
            ),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn paths_relative_to_the_root() {
        let actual = [
            relative("/w/src/a.test.js", Path::new("/w")),
            relative("/elsewhere/a.test.js", Path::new("/w")),
            relative("/w/a.test.js", Path::new("")),
        ];
        assert_eq!(
            actual,
            ["src/a.test.js", "/elsewhere/a.test.js", "/w/a.test.js"].map(String::from)
        );
    }
}
