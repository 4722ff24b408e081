//! go test: package lines (`ok`, `FAIL`, `?`) and, with `-v`, per-test `--- PASS/FAIL/SKIP` lines.
//!
//! With `-v` (any `=== RUN`, `--- PASS` or `--- SKIP` line) the top-level tests are counted;
//! subtests are left to the per-test outcomes. Without it only packages can be counted: a package
//! that passed is one passed, one that failed is one failed. A package that did not build is an
//! error either way, and so is a failed package with no failed test (a panic, a timeout).
//!
//! Per test, `go test -json` (test2json) prints one event a line: `{"Action":"pass","Package":
//! "example.com/m/calc","Test":"TestAdd/small",…}`. A test id is the package and the test,
//! subtests included: `example.com/m/calc/TestAdd/small`. A test that started and never
//! finished (the binary crashed or timed out in it) is an `Error`, and so is a package that failed
//! without a failed or unfinished test (it did not build, or died outside any test), under the
//! package's path.
//! The counts and the excerpt read the same output as the text go would have printed without
//! `-json`: the events' `Output`.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::Path;

use plumb_protocol::TestCounts;
use serde::Deserialize;

use super::{FinishedRun, RunnerAdapter, go_failure};
use crate::command::guess;
use crate::failure::{FailureReading, TestPlaces};
use crate::results::{Outcomes, TestResults};
use crate::runners::cargo;
use crate::{Runner, TestOutcome, VerifyError, output, test_files};

/// `go test`'s adapter.
pub(crate) struct GoTest;

impl RunnerAdapter for GoTest {
    fn runner(&self) -> Runner {
        Runner::Go
    }

    fn narrow(&self, argv: &[String], tests: &[String]) -> Result<Vec<String>, VerifyError> {
        Ok(narrow(argv, tests))
    }

    /// `-run` matches test names, so a test file becomes the test functions it declares.
    fn named_tests(&self, root: &Path, tests: &[String]) -> Vec<String> {
        test_files::go_tests_of_files(root, tests)
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

    fn read_failure(&self, excerpt: &str, places: &dyn TestPlaces) -> FailureReading {
        read_failure(excerpt, places)
    }

    fn test_id_example(&self) -> Option<&'static str> {
        Some("TestAdd")
    }
}

pub(crate) use go_failure::read as read_failure;

/// The prefixes of go's test, example, benchmark and fuzz functions.
const TEST_PREFIXES: &[&str] = &["Test", "Example", "Benchmark", "Fuzz"];

/// One test2json event; fields this crate does not read are left out.
#[derive(Debug, Deserialize)]
struct Event {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Package", default)]
    package: Option<String>,
    #[serde(rename = "Test", default)]
    test: Option<String>,
    #[serde(rename = "Output", default)]
    output: Option<String>,
}

/// What one package line of `go test` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Package {
    Passed,
    Failed,
    /// `[build failed]`, `[setup failed]`.
    Broken,
    /// `[no test files]`, `[no tests to run]`.
    NoTests,
}

pub(crate) fn counts(text: &str) -> Option<TestCounts> {
    let text = plain(text);
    let mut tests = TestCounts::default();
    let mut packages = TestCounts::default();
    let mut verbose = false;
    let mut found = false;
    let mut failed_test_in_package = false;
    for line in text.lines() {
        let top_level = !line.starts_with([' ', '\t']);
        let trimmed = line.trim_start();
        if trimmed.starts_with("=== RUN") {
            verbose = true;
            continue;
        }
        if let Some(result) = trimmed.strip_prefix("--- ") {
            let counted = match result.split(':').next() {
                Some("PASS") => {
                    verbose = true;
                    &mut tests.passed
                }
                Some("SKIP") => {
                    verbose = true;
                    &mut tests.skipped
                }
                Some("FAIL") => {
                    failed_test_in_package = true;
                    &mut tests.failed
                }
                _ => continue,
            };
            if top_level {
                *counted += 1;
            }
            found = true;
            continue;
        }
        let Some(package) = package_line(line) else {
            continue;
        };
        found = true;
        match package {
            Package::Passed => packages.passed += 1,
            Package::NoTests => {}
            Package::Failed => {
                packages.failed += 1;
                if !failed_test_in_package {
                    tests.errors += 1;
                }
            }
            Package::Broken => {
                packages.errors += 1;
                tests.errors += 1;
            }
        }
        failed_test_in_package = false;
    }
    if !found {
        return None;
    }
    Some(if verbose { tests } else { packages })
}

/// Go prints `ok  \tpkg\t0.01s`, `FAIL\tpkg\t0.01s`, `FAIL\tpkg [build failed]` and
/// `?   \tpkg\t[no test files]`, always with these tabs.
fn package_line(line: &str) -> Option<Package> {
    if let Some(rest) = line.strip_prefix("ok  \t") {
        return Some(if rest.contains("[no tests to run]") {
            Package::NoTests
        } else {
            Package::Passed
        });
    }
    if line.starts_with("?   \t") {
        return Some(Package::NoTests);
    }
    let rest = line.strip_prefix("FAIL\t")?;
    Some(
        if rest.contains("[build failed]") || rest.contains("[setup failed]") {
            Package::Broken
        } else {
            Package::Failed
        },
    )
}

/// The output without what passed: no `=== RUN`, `--- PASS`, `--- SKIP`, `ok` or `?` lines.
pub(crate) fn excerpt(stdout: &str, stderr: &str) -> String {
    let joined = output::joined(stdout, stderr);
    let text = plain(&joined);
    let kept: Vec<&str> = text.lines().filter(|line| !is_noise(line)).collect();
    output::tail(&kept.join("\n"))
}

fn is_noise(line: &str) -> bool {
    let trimmed = line.trim_start();
    [
        "=== RUN",
        "=== PAUSE",
        "=== CONT",
        "=== NAME",
        "--- PASS",
        "--- SKIP",
    ]
    .iter()
    .any(|prefix| trimmed.starts_with(prefix))
        || line.starts_with("ok  \t")
        || line.starts_with("?   \t")
        || line == "PASS"
}

/// `-run` with the names anchored: `^(TestA|TestB)$`. Go splits the pattern at `/` into one
/// pattern per subtest level, so a single `TestA/case` becomes `^(TestA)$/^(case)$`; with several
/// ids only their top-level names are used, which runs a few more tests than asked, never fewer.
/// Ids may start with their package (`example.com/m/calc/TestAdd`, as [`results`] names tests);
/// the package is left out of the pattern, so a test of the same name in another package runs
/// too.
pub(crate) fn narrow(argv: &[String], tests: &[String]) -> Vec<String> {
    let tests: Vec<String> = tests
        .iter()
        .map(|id| without_package(id).to_string())
        .collect();
    let pattern = match tests.as_slice() {
        [single] => single
            .split('/')
            .map(|level| format!("^({})$", escape(level)))
            .collect::<Vec<_>>()
            .join("/"),
        _ => {
            let mut names: Vec<String> = Vec::new();
            for test in &tests {
                let name = escape(test.split('/').next().unwrap_or(test));
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            format!("^({})$", names.join("|"))
        }
    };
    let mut argv = argv.to_vec();
    argv.push("-run".to_string());
    argv.push(pattern);
    argv
}

/// The test, example, benchmark and fuzz functions `text` (a go source file) declares at the top
/// level, in order: `func TestAdd(t *testing.T)` gives `TestAdd`. Methods (a testify suite's
/// `func (s *S) TestX()`) are left out: `-run` selects the suite's own `TestSuite` function.
pub(crate) fn test_functions(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("func ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let declares = rest
            .get(name.len()..)
            .is_some_and(|after| after.trim_start().starts_with(['(', '[']));
        if declares && is_test_function(&name) && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The test part of an id: from the first path segment that names a go test function
/// (`Test`, `Example`, `Benchmark` or `Fuzz`, then nothing or not a lower-case letter, as
/// `go test` requires). An id without such a segment is returned whole.
fn without_package(id: &str) -> &str {
    let mut start = 0;
    for segment in id.split('/') {
        if is_test_function(segment) {
            return id.get(start..).unwrap_or(id);
        }
        start += segment.len() + 1;
    }
    id
}

fn is_test_function(name: &str) -> bool {
    TEST_PREFIXES.iter().any(|prefix| {
        name.strip_prefix(prefix)
            .is_some_and(|rest| !rest.starts_with(|c: char| c.is_lowercase()))
    })
}

/// `argv` with `-json` after `test`.
pub(crate) fn with_report(argv: &[String], program: usize) -> Vec<String> {
    if argv.iter().any(|word| word == "-json" || word == "--json") {
        return argv.to_vec();
    }
    cargo::insert_after(
        argv,
        cargo::subcommand_at(argv, program, "test"),
        &["-json"],
    )
}

/// The text go prints without `-json`: each event's `Output`, and any line that is not an event
/// (stderr, a wrapper's messages) as it is. Text that holds no event is returned unchanged.
fn plain(text: &str) -> Cow<'_, str> {
    let mut plain = String::new();
    let mut found = false;
    for line in text.lines() {
        match event(line) {
            Some(event) => {
                found = true;
                plain.push_str(event.output.as_deref().unwrap_or(""));
            }
            None => {
                plain.push_str(line);
                plain.push('\n');
            }
        }
    }
    if found {
        Cow::Owned(plain)
    } else {
        Cow::Borrowed(text)
    }
}

fn event(line: &str) -> Option<Event> {
    let line = line.trim();
    if !line.starts_with('{') {
        return None;
    }
    serde_json::from_str(line).ok()
}

/// Per-test outcomes from the `-json` events in `text`; `None` when there is no event with a
/// package (go did not get as far as running anything: a bad flag, no go.mod).
pub(crate) fn results(text: &str) -> Option<TestResults> {
    let mut outcomes = Outcomes::default();
    let mut started: BTreeSet<(String, String)> = BTreeSet::new();
    let mut failed_packages: Vec<String> = Vec::new();
    let mut packages_with_failed_tests: BTreeSet<String> = BTreeSet::new();
    let mut found = false;
    for event in text.lines().filter_map(event) {
        let Some(package) = event.package else {
            continue;
        };
        found = true;
        let outcome = match event.action.as_str() {
            "pass" => TestOutcome::Passed,
            "fail" => TestOutcome::Failed,
            "skip" => TestOutcome::Skipped,
            "run" => {
                if let Some(test) = event.test {
                    started.insert((package, test));
                }
                continue;
            }
            _ => continue,
        };
        match event.test {
            Some(test) => {
                if outcome == TestOutcome::Failed {
                    packages_with_failed_tests.insert(package.clone());
                }
                outcomes.add(format!("{package}/{test}"), outcome);
            }
            // A package's own `skip` is "no test files"; its `pass` says nothing new.
            None if outcome == TestOutcome::Failed => failed_packages.push(package),
            None => {}
        }
    }
    if !found {
        return None;
    }
    for (package, test) in started {
        let id = format!("{package}/{test}");
        if outcomes.get(&id).is_none() {
            outcomes.add(id, TestOutcome::Error);
            // The test the binary died in explains its package's failure, so the package gets
            // no id of its own: a later run that passes reports none for it (a package's `pass`
            // names no test), and a fixed crash would read as "failed before, missing now".
            packages_with_failed_tests.insert(package);
        }
    }
    for package in failed_packages {
        if !packages_with_failed_tests.contains(&package) {
            outcomes.add(package, TestOutcome::Error);
        }
    }
    Some(TestResults::new(outcomes, None, 0))
}

fn escape(name: &str) -> String {
    let mut escaped = String::with_capacity(name.len());
    for c in name.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::collections::BTreeMap;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(String::from).collect()
    }

    fn outcomes_of(text: &str) -> BTreeMap<String, TestOutcome> {
        results(text)
            .map(|results| results.tests)
            .unwrap_or_default()
    }

    #[test]
    fn narrows_with_an_anchored_run_pattern() {
        let actual = [
            narrow(&words("go test ./..."), &words("TestA TestB TestA/sub")),
            narrow(&words("go test ./..."), &words("TestA/with_case")),
            narrow(&words("go test ./..."), &words("TestX.y")),
        ];
        let expected = [
            words("go test ./... -run ^(TestA|TestB)$"),
            words("go test ./... -run ^(TestA)$/^(with_case)$"),
            words("go test ./... -run ^(TestX\\.y)$"),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn narrows_ids_with_packages() {
        let actual = [
            narrow(
                &words("go test ./..."),
                &words("example.com/m/calc/TestAdd/small example.com/m/Testing/TestB"),
            ),
            narrow(
                &words("go test ./..."),
                &words("example.com/m/calc/TestAdd/small"),
            ),
            narrow(&words("go test ./..."), &words("example.com/m/calc")),
        ];
        let expected = [
            words("go test ./... -run ^(TestAdd|TestB)$"),
            words("go test ./... -run ^(TestAdd)$/^(small)$"),
            words("go test ./... -run ^(example\\.com)$/^(m)$/^(calc)$"),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn finds_the_test_functions_a_file_declares() {
        let text = "package calc\n\nfunc TestAdd(t *testing.T) {\n}\nfunc Testing() {}\nfunc Testify(t *testing.T) {}\nfunc (s *S) TestMethod() {}\nfunc BenchmarkAdd(b *testing.B) {}\n// func TestCommented(t *testing.T) {}\nfunc TestAdd(t *testing.T) {}\nfunc FuzzAdd (f *testing.F) {}\n";
        assert_eq!(test_functions(text), ["TestAdd", "BenchmarkAdd", "FuzzAdd"]);
    }

    #[test]
    fn json_events_become_outcomes() {
        let text = r#"{"Action":"start","Package":"m/a"}
{"Action":"run","Package":"m/a","Test":"TestA"}
{"Action":"run","Package":"m/a","Test":"TestA/sub"}
{"Action":"pass","Package":"m/a","Test":"TestA/sub","Elapsed":0}
{"Action":"pass","Package":"m/a","Test":"TestA","Elapsed":0}
{"Action":"run","Package":"m/a","Test":"TestHangs"}
{"Action":"output","Package":"m/a","Output":"panic: test timed out after 1s\n"}
{"Action":"fail","Package":"m/a","Elapsed":1}
{"Action":"skip","Package":"m/empty","Elapsed":0}
"#;
        let actual = outcomes_of(text);
        let expected = BTreeMap::from([
            ("m/a/TestA".to_string(), TestOutcome::Passed),
            ("m/a/TestA/sub".to_string(), TestOutcome::Passed),
            ("m/a/TestHangs".to_string(), TestOutcome::Error),
        ]);
        assert_eq!(actual, expected);
    }

    /// Go/76 of HumanEvalFix: the buggy code recursed until the stack overflowed inside the test.
    /// The fix's run reports the test passed and nothing for the package, so an id for the
    /// package at the baseline held the oracle's fix back as "failed before, not passing now".
    #[test]
    fn a_crash_inside_a_test_is_that_tests_error_and_a_crash_outside_is_the_packages() {
        let crashed_in_a_test = r#"{"Action":"run","Package":"m/a","Test":"TestPow"}
{"Action":"output","Package":"m/a","Output":"runtime: goroutine stack exceeds 1000000000-byte limit
"}
{"Action":"fail","Package":"m/a","Elapsed":1}
"#;
        let fixed = r#"{"Action":"run","Package":"m/a","Test":"TestPow"}
{"Action":"pass","Package":"m/a","Test":"TestPow","Elapsed":0}
{"Action":"pass","Package":"m/a","Elapsed":0}
"#;
        let crashed_outside = r#"{"Action":"output","Package":"m/b","Output":"panic: in init
"}
{"Action":"fail","Package":"m/b","Elapsed":0}
"#;
        let actual = [crashed_in_a_test, fixed, crashed_outside].map(outcomes_of);
        let expected = [
            BTreeMap::from([("m/a/TestPow".to_string(), TestOutcome::Error)]),
            BTreeMap::from([("m/a/TestPow".to_string(), TestOutcome::Passed)]),
            BTreeMap::from([("m/b".to_string(), TestOutcome::Error)]),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn json_is_read_as_the_text_go_would_print() {
        let text = r#"{"Action":"output","Package":"m/a","Test":"TestA","Output":"--- PASS: TestA (0.00s)\n"}
{"Action":"output","Package":"m/a","Output":"ok  \tm/a\t0.01s\n"}
"#;
        let actual = (plain(text).into_owned(), counts(text));
        let expected = (
            "--- PASS: TestA (0.00s)\nok  \tm/a\t0.01s\n".to_string(),
            Some(TestCounts {
                passed: 1,
                ..TestCounts::default()
            }),
        );
        assert_eq!(actual, expected);
    }
}
