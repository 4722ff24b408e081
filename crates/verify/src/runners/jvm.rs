//! Maven (Surefire) and Gradle: their console summaries, narrowing with `-Dtest=` and `--tests`,
//! and per-test outcomes from the JUnit XML reports each module writes:
//! `target/surefire-reports/TEST-*.xml` (Maven) and `build/test-results/<task>/TEST-*.xml`
//! (Gradle), in the root project and in every module below it.
//!
//! A test id is `pkg.Class#method` (`#method()` for Gradle with JUnit 5, as it names methods).
//! Only reports written during the run count, so the reports of an earlier build, or of a module
//! this run did not test, are never taken for this run's results.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use plumb_protocol::TestCounts;

use super::{FinishedRun, RunnerAdapter, jvm_failure};
use crate::command::guess;
use crate::failure::{FailureReading, TestPlaces};
use crate::results::{Outcomes, TestResults, fresh_report};
use crate::runners::cargo;
use crate::{Runner, VerifyError, junit, output};

/// The adapter of a JVM build's tests: Maven's Surefire or Gradle's `test` task.
pub(crate) struct Jvm(Build);

pub(crate) const MAVEN: Jvm = Jvm(Build::Maven);
pub(crate) const GRADLE: Jvm = Jvm(Build::Gradle);

impl RunnerAdapter for Jvm {
    fn runner(&self) -> Runner {
        match self.0 {
            Build::Maven => Runner::Maven,
            Build::Gradle => Runner::Gradle,
        }
    }

    fn narrow(&self, argv: &[String], tests: &[String]) -> Result<Vec<String>, VerifyError> {
        Ok(narrow(argv, guess(argv).program, self.0, tests))
    }

    fn with_report(&self, argv: &[String], _report_path: &Path) -> Vec<String> {
        with_report(argv, guess(argv).program, self.0)
    }

    fn results(&self, run: &FinishedRun<'_>) -> Option<TestResults> {
        results(self.0, run.root, run.started)
    }

    fn counts(&self, text: &str) -> Option<TestCounts> {
        match self.0 {
            Build::Maven => maven_counts(text),
            Build::Gradle => gradle_counts(text),
        }
    }

    /// Maven's `[ERROR]` lines; Gradle's last lines.
    fn excerpt(&self, stdout: &str, stderr: &str) -> String {
        match self.0 {
            Build::Maven => maven_excerpt(stdout, stderr),
            Build::Gradle => output::tail(&output::joined(stdout, stderr)),
        }
    }

    fn read_failure(&self, excerpt: &str, places: &dyn TestPlaces) -> FailureReading {
        read_failure(excerpt, places)
    }

    fn test_id_example(&self) -> Option<&'static str> {
        Some("com.example.CalcTest#adds")
    }
}

pub(crate) use jvm_failure::read as read_failure;

/// How many folders deep below the root to look for modules.
const MODULE_DEPTH: usize = 6;

/// Folders never searched for modules.
const NOT_MODULES: &[&str] = &["node_modules", "src", "target", "build"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Build {
    Maven,
    Gradle,
}

/// The sum of Surefire's `Tests run: 4, Failures: 1, Errors: 0, Skipped: 1` totals, one per
/// module; the per-class lines (with `Time elapsed`) are left out.
pub(crate) fn maven_counts(text: &str) -> Option<TestCounts> {
    let mut counts = TestCounts::default();
    let mut found = false;
    for line in text.lines() {
        let Some(at) = line.find("Tests run: ") else {
            continue;
        };
        if line.contains("Time elapsed") {
            continue;
        }
        let mut run = None;
        let mut failed = 0;
        let mut errors = 0;
        let mut skipped = 0;
        for part in line.get(at..).unwrap_or("").split(", ") {
            let Some((label, count)) = part.split_once(": ") else {
                continue;
            };
            let Ok(count) = count.trim().parse::<u32>() else {
                continue;
            };
            match label {
                "Tests run" => run = Some(count),
                "Failures" => failed = count,
                "Errors" => errors = count,
                "Skipped" => skipped = count,
                _ => {}
            }
        }
        let Some(run) = run else {
            continue;
        };
        found = true;
        counts.passed += run.saturating_sub(failed + errors + skipped);
        counts.failed += failed;
        counts.errors += errors;
        counts.skipped += skipped;
    }
    found.then_some(counts)
}

/// Gradle's `5 tests completed, 1 failed, 1 skipped`, which it prints only when a test failed:
/// a passing Gradle run has no counts in its output, only in its reports.
pub(crate) fn gradle_counts(text: &str) -> Option<TestCounts> {
    let mut counts = TestCounts::default();
    let mut found = false;
    for line in text.lines() {
        let line = line.trim();
        if !line.contains(" completed") {
            continue;
        }
        let mut total = None;
        let mut failed = 0;
        let mut skipped = 0;
        for part in line.split(", ") {
            match output::count_and_word(part) {
                Some((count, "tests completed" | "test completed")) => total = Some(count),
                Some((count, "failed")) => failed = count,
                Some((count, "skipped")) => skipped = count,
                Some(_) | None => {}
            }
        }
        let Some(total) = total else {
            continue;
        };
        found = true;
        counts.passed += total.saturating_sub(failed + skipped);
        counts.failed += failed;
        counts.skipped += skipped;
    }
    found.then_some(counts)
}

/// How many lines of a failed test's stack trace the excerpt keeps.
const TRACE_LINES: usize = 12;

/// Maven's `[ERROR]` lines (the failed tests with the head of their stack traces, compile errors,
/// the failed goal) up to its `-> [Help 1]` boilerplate, and the test totals; without any, the
/// last lines.
pub(crate) fn maven_excerpt(stdout: &str, stderr: &str) -> String {
    let text = output::joined(stdout, stderr);
    let mut kept: Vec<&str> = Vec::new();
    // Lines left of the stack trace after a failed test's line.
    let mut trace = 0;
    for line in text.lines() {
        if line.starts_with("[ERROR] -> [Help") {
            break;
        }
        if trace > 0 && !line.trim().is_empty() && !line.starts_with('[') {
            kept.push(line);
            trace -= 1;
            continue;
        }
        trace = 0;
        let is_error = line.starts_with("[ERROR]") && line.trim_end() != "[ERROR]";
        let is_total = line.contains("Tests run: ") && !line.contains("Time elapsed");
        if is_error || is_total {
            kept.push(line);
        }
        let failed_test = line.contains("<<< FAILURE!") || line.contains("<<< ERROR!");
        if failed_test && !line.contains("Tests run: ") {
            trace = TRACE_LINES;
        }
    }
    if kept.is_empty() {
        return output::tail(&text);
    }
    output::tail(&kept.join("\n"))
}

/// Maven: `-Dtest=Class#m1+m2,Other` with simple class names (Surefire matches class files, not
/// qualified names, so a class of the same name in another package runs too) and without
/// Surefire's parameter suffixes; no module fails for lacking the tests. Gradle: `--tests
/// pkg.Class.method` per id, after the `test` task.
pub(crate) fn narrow(
    argv: &[String],
    program: usize,
    build: Build,
    tests: &[String],
) -> Vec<String> {
    match build {
        Build::Maven => {
            // (simple class name, its methods); `None` runs the whole class.
            let mut classes: Vec<(String, Option<Vec<String>>)> = Vec::new();
            for id in tests {
                let (class, method) = split_id(id);
                let class = class.rsplit('.').next().unwrap_or(class);
                let at = match classes.iter().position(|(known, _)| known == class) {
                    Some(at) => at,
                    None => {
                        classes.push((class.to_string(), Some(Vec::new())));
                        classes.len() - 1
                    }
                };
                let Some((_, methods)) = classes.get_mut(at) else {
                    continue;
                };
                match (methods.as_mut(), method) {
                    (Some(known), Some(method)) if !known.contains(&method) => known.push(method),
                    (_, None) => *methods = None,
                    (Some(_) | None, Some(_)) => {}
                }
            }
            let spec: Vec<String> = classes
                .iter()
                .map(|(class, methods)| match methods {
                    Some(methods) if !methods.is_empty() => {
                        format!("{class}#{}", methods.join("+"))
                    }
                    Some(_) | None => class.clone(),
                })
                .collect();
            let mut argv = argv.to_vec();
            argv.push(format!("-Dtest={}", spec.join(",")));
            argv.push("-Dsurefire.failIfNoSpecifiedTests=false".to_string());
            argv.push("-DfailIfNoTests=false".to_string());
            argv
        }
        Build::Gradle => {
            let mut words: Vec<String> = Vec::new();
            for id in tests {
                let filter = match split_id(id) {
                    (class, Some(method)) => format!("{class}.{method}"),
                    (class, None) => class.to_string(),
                };
                words.push("--tests".to_string());
                words.push(filter);
            }
            let task = argv
                .iter()
                .enumerate()
                .skip(program + 1)
                .find(|(_, word)| *word == "test" || word.ends_with(":test"))
                .map(|(at, _)| at);
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            cargo::insert_after(argv, task, &words)
        }
    }
}

/// `pkg.Class#add(int)[1]` → (`pkg.Class`, `add`): the method without its parameter list or
/// invocation index, which neither `-Dtest` nor `--tests` matches.
fn split_id(id: &str) -> (&str, Option<String>) {
    match id.split_once('#') {
        Some((class, method)) => {
            let method = method.split(['(', '[']).next().unwrap_or(method).trim();
            (class, (!method.is_empty()).then(|| method.to_string()))
        }
        None => (id, None),
    }
}

/// `argv` going on past a failed module (`--fail-at-end`, `--continue`), so that every module's
/// tests have run.
pub(crate) fn with_report(argv: &[String], program: usize, build: Build) -> Vec<String> {
    let flag = match build {
        Build::Maven => "--fail-at-end",
        Build::Gradle => "--continue",
    };
    if argv
        .iter()
        .any(|word| word == flag || (build == Build::Maven && word == "-fae"))
    {
        return argv.to_vec();
    }
    cargo::insert_after(argv, Some(program), &[flag])
}

/// Per-test outcomes from every report under `root` written at or after `started`; `None` when
/// there is none (the build failed before the tests, or it never ran) or one cannot be read.
pub(crate) fn results(build: Build, root: &Path, started: SystemTime) -> Option<TestResults> {
    let mut files = Vec::new();
    find_reports(build, root, MODULE_DEPTH, &mut files);
    let mut outcomes = Outcomes::default();
    let mut declared = 0;
    let mut found = false;
    for file in files {
        let Some(xml) = fresh_report(root, &file, started) else {
            continue;
        };
        let report = junit::parse(&xml)?;
        found = true;
        declared += report.declared;
        for case in report.cases {
            let id = match (case.classname.is_empty(), case.name.is_empty()) {
                (false, false) => format!("{}#{}", case.classname, case.name),
                (false, true) => case.classname,
                (true, _) => case.name,
            };
            outcomes.add(id, case.outcome);
        }
    }
    found.then(|| TestResults::new(outcomes, Some(declared), 0))
}

/// The `TEST-*.xml` files of `folder` and of its modules, `depth` levels down.
fn find_reports(build: Build, folder: &Path, depth: usize, files: &mut Vec<PathBuf>) {
    let reports = match build {
        Build::Maven => vec![folder.join("target/surefire-reports")],
        Build::Gradle => subfolders(&folder.join("build/test-results")),
    };
    for reports in reports {
        let Ok(entries) = fs::read_dir(&reports) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| {
                path.file_name()
                    .map(|name| name.to_string_lossy())
                    .is_some_and(|name| name.starts_with("TEST-") && name.ends_with(".xml"))
            })
            .collect();
        found.sort();
        files.extend(found);
    }
    if depth == 0 {
        return;
    }
    for module in subfolders(folder) {
        let name = module
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !name.starts_with('.') && !NOT_MODULES.contains(&name.as_str()) {
            find_reports(build, &module, depth - 1, files);
        }
    }
}

fn subfolders(folder: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut folders: Vec<PathBuf> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .map(|entry| entry.path())
        .collect();
    folders.sort();
    folders
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(String::from).collect()
    }

    #[test]
    fn narrows_maven_and_gradle() {
        let ids =
            words("com.x.CalcTest#adds com.x.CalcTest#add(int)[2] com.y.Other com.x.CalcTest#adds");
        let actual = [
            narrow(&words("mvn -B test"), 0, Build::Maven, &ids),
            narrow(&words("mvn -B test"), 0, Build::Maven, &words("a.B#m a.B")),
            narrow(
                &words("./gradlew test --console=plain"),
                0,
                Build::Gradle,
                &words("com.x.CalcTest#adds() com.y.Other"),
            ),
        ];
        let expected = [
            words(
                "mvn -B test -Dtest=CalcTest#adds+add,Other \
                 -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false",
            ),
            words(
                "mvn -B test -Dtest=B -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false",
            ),
            words("./gradlew test --tests com.x.CalcTest.adds --tests com.y.Other --console=plain"),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn reports_go_on_past_failed_modules() {
        let actual = [
            with_report(&words("mvn -B test"), 0, Build::Maven),
            with_report(&words("mvn -fae test"), 0, Build::Maven),
            with_report(&words("gradle test"), 0, Build::Gradle),
        ];
        let expected = [
            words("mvn --fail-at-end -B test"),
            words("mvn -fae test"),
            words("gradle --continue test"),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn console_counts() {
        let maven = "\
[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 1, Time elapsed: 0.05 s <<< FAILURE! -- in com.x.CalcTest
[INFO] Results:
[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 1
[INFO] Tests run: 2, Failures: 0, Errors: 1, Skipped: 0
";
        let gradle = "CalcTest > fails() FAILED\n5 tests completed, 1 failed, 1 skipped\n";
        let actual = [
            maven_counts(maven),
            gradle_counts(gradle),
            maven_counts("BUILD SUCCESS"),
            gradle_counts("BUILD SUCCESSFUL in 2s"),
        ];
        let none = TestCounts::default();
        let expected = [
            Some(TestCounts {
                passed: 2,
                failed: 1,
                skipped: 1,
                errors: 1,
                ..none
            }),
            Some(TestCounts {
                passed: 3,
                failed: 1,
                skipped: 1,
                ..none
            }),
            None,
            None,
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn maven_excerpt_keeps_failures_and_totals() {
        let output = "\
[INFO]  T E S T S
[INFO] Running com.example.shop.TaxTest
[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 1, Time elapsed: 0.041 s <<< FAILURE! -- in com.example.shop.TaxTest
[ERROR] com.example.shop.TaxTest.reducedRate -- Time elapsed: 0.012 s <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <162> but was: <180>
\tat com.example.shop.TaxTest.reducedRate(TaxTest.java:21)

[INFO] Results:
[INFO]
[ERROR] Failures:
[ERROR]   TaxTest.reducedRate:21 expected: <162> but was: <180>
[INFO]
[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 1
[INFO] BUILD FAILURE
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test (default-test) on project shop: There are test failures.
[ERROR]
[ERROR] -> [Help 1]
[ERROR] Re-run Maven using the -X switch to enable full debug logging.
";
        let actual = maven_excerpt(output, "");
        let expected = "\
[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 1, Time elapsed: 0.041 s <<< FAILURE! -- in com.example.shop.TaxTest
[ERROR] com.example.shop.TaxTest.reducedRate -- Time elapsed: 0.012 s <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <162> but was: <180>
\tat com.example.shop.TaxTest.reducedRate(TaxTest.java:21)
[ERROR] Failures:
[ERROR]   TaxTest.reducedRate:21 expected: <162> but was: <180>
[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 1
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test (default-test) on project shop: There are test failures.";
        assert_eq!(actual, expected);
    }
}
