//! Whose mistake a Maven or Gradle test failure shows.
//!
//! In Java a test's own mistake (a method or class that does not exist, a wrong argument list)
//! stops the build: javac names the file (`src/test/java/…/CalcTest.java:5: error: cannot find
//! symbol`; Maven writes it `[ERROR] /w/src/test/java/…/CalcTest.java:[5,23] cannot find
//! symbol`), and the file says whose mistake it is; without a file, the goal or task that failed
//! does (`testCompile`, `:compileTestJava` are the tests'). A test that ran and failed on JUnit's
//! `AssertionFailedError`, `AssertionError` or `ComparisonFailure` failed on an assertion; any
//! other exception is the code raising.

use crate::failure::{FailureKind, FailureReading, Place, TestPlaces, place_at};

/// The names of the exceptions JUnit, AssertJ and Hamcrest fail an assertion with.
const ASSERTION_ERRORS: &[&str] = &[
    "AssertionFailedError",
    "AssertionError",
    "ComparisonFailure",
    "MultipleFailuresError",
];

/// The source files javac and kotlinc report on.
const SOURCE_EXTENSIONS: &[&str] = &["java", "kt"];

/// The reading of a Maven or Gradle excerpt.
pub(crate) fn read(excerpt: &str, places: &dyn TestPlaces) -> FailureReading {
    let mut test_error = None;
    let mut code_error = None;
    for line in excerpt.lines() {
        let Some((place, rest)) = compiler_error(line) else {
            continue;
        };
        if !(rest.contains("error") || line.starts_with("[ERROR]") || line.starts_with("e: ")) {
            continue;
        }
        let slot = if places.is_test(&place) {
            &mut test_error
        } else {
            &mut code_error
        };
        slot.get_or_insert(line);
    }
    let failed_goal = |words: &[&str]| {
        excerpt
            .lines()
            .find(|line| words.iter().any(|w| line.contains(w)))
    };
    let code_goal = failed_goal(&[
        ":compile (default-compile)",
        "Task :compileJava FAILED",
        "Task :compileKotlin FAILED",
        "task ':compileJava'",
    ]);
    let test_goal = failed_goal(&[
        ":testCompile (default-testCompile)",
        "Task :compileTestJava FAILED",
        "Task :compileTestKotlin FAILED",
        "task ':compileTestJava'",
    ]);
    if let Some(line) = code_error.or(code_goal.filter(|_| test_error.is_none())) {
        return FailureReading::new(FailureKind::CodeStopped, Some(line));
    }
    if let Some(line) = test_error.or(test_goal) {
        return FailureReading::new(FailureKind::TestMistake, Some(line));
    }
    let compared: Vec<String> = excerpt.lines().filter_map(assertion_message).collect();
    let named = excerpt
        .lines()
        .find(|line| ASSERTION_ERRORS.iter().any(|name| line.contains(name)));
    if !compared.is_empty() || named.is_some() {
        let evidence = compared.first().map(String::as_str).or(named);
        let mut reading = FailureReading::new(FailureKind::Assertion, evidence);
        let mut unique = Vec::new();
        for line in compared {
            if !unique.contains(&line) {
                unique.push(line);
            }
        }
        reading.compared = unique;
        return reading;
    }
    match excerpt.lines().find(|line| exception_name(line).is_some()) {
        Some(line) => FailureReading::new(FailureKind::Other, Some(line)),
        None => FailureReading::other(),
    }
}

/// A compiler error's place: javac's `path/X.java:5: error: …`, Maven's `[ERROR]
/// /w/path/X.java:[5,23] …`, kotlinc's `e: file:///w/path/X.kt:5:3 …`.
fn compiler_error(line: &str) -> Option<(Place<'_>, &str)> {
    let line = line.strip_prefix("[ERROR]").unwrap_or(line).trim_start();
    let line = line.strip_prefix("e: ").unwrap_or(line);
    let line = line.strip_prefix("file://").unwrap_or(line);
    if let Some((path, rest)) = SOURCE_EXTENSIONS.iter().find_map(|ext| {
        let marker = format!(".{ext}:[");
        line.find(&marker).map(|at| {
            (
                line.get(..at + ext.len() + 1),
                line.get(at + marker.len()..),
            )
        })
    }) {
        let (path, rest) = (path?, rest?);
        let number = rest.split([',', ']']).next()?.parse().ok();
        return Some((Place { path, line: number }, rest));
    }
    place_at(line, SOURCE_EXTENSIONS)
}

/// The failed comparison a line states, from the assertion error's name on (`expected: <5> but
/// was: <-1>`), without the test's name and line Surefire's summary puts before it.
fn assertion_message(line: &str) -> Option<String> {
    let line = line.strip_prefix("[ERROR]").unwrap_or(line).trim();
    if let Some(name) = ASSERTION_ERRORS.iter().find(|name| line.contains(*name)) {
        let at = line.find(name)?;
        let message = line.get(at + name.len()..)?.trim_start_matches(':').trim();
        // Gradle's `AssertionFailedError at CalcTest.java:10` says where, not what.
        return (!message.is_empty() && !message.starts_with("at ")).then(|| message.to_string());
    }
    // Surefire's summary: `  CalcTest.adds:10 expected: <5> but was: <-1>`.
    let (_, message) = line.split_once(' ')?;
    (message.contains("expected") && message.contains("but was"))
        .then(|| message.trim().to_string())
}

/// `java.lang.ArrayIndexOutOfBoundsException: …` → the exception's name.
fn exception_name(line: &str) -> Option<&str> {
    let line = line.strip_prefix("[ERROR]").unwrap_or(line).trim();
    let (name, _) = line.split_once(':').unwrap_or((line, ""));
    let simple = name.rsplit('.').next()?;
    let qualified = name.contains('.') && !name.contains(' ');
    (qualified && (simple.ends_with("Exception") || simple.ends_with("Error"))).then_some(name)
}

#[cfg(test)]
mod tests;
