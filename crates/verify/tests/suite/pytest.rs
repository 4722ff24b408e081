//! The pytest adapter against outputs captured from real pytest runs (`fixtures/pytest/capture.sh`).

use plumb_protocol::TestCounts;
use plumb_verify::{Runner, failure_excerpt, parse_counts};
use pretty_assertions::assert_eq;

use super::fixtures;

fn counts(name: &str) -> Option<TestCounts> {
    let (stdout, stderr) = fixtures::output("pytest", name);
    parse_counts(Runner::Pytest, &stdout, &stderr)
}

fn excerpt(name: &str) -> String {
    let (stdout, stderr) = fixtures::output("pytest", name);
    failure_excerpt(Runner::Pytest, &stdout, &stderr)
}

#[test]
fn counts_from_real_pytest_summaries() {
    let names = [
        "mixed_quiet",
        "mixed_framed",
        "mixed_verbose",
        "all_passed",
        "one_failed_framed",
        "warnings",
        "many_errors",
        "printed_summary",
        "all_deselected",
        "collection_error",
        "syntax_error",
        "no_tests",
        "no_tests_framed",
        "missing_path",
        "conftest_broken",
        "usage_error",
    ];
    let actual: Vec<(&str, Option<TestCounts>)> =
        names.iter().map(|name| (*name, counts(name))).collect();
    let mixed = TestCounts {
        passed: 2,
        failed: 1,
        skipped: 1,
        errors: 1,
        deselected: 1,
        xfailed: 1,
        xpassed: 1,
    };
    let none = TestCounts::default();
    let expected = vec![
        ("mixed_quiet", Some(mixed)),
        ("mixed_framed", Some(mixed)),
        ("mixed_verbose", Some(mixed)),
        ("all_passed", Some(TestCounts { passed: 2, ..none })),
        ("one_failed_framed", Some(TestCounts { failed: 1, ..none })),
        (
            "warnings",
            Some(TestCounts {
                passed: 1,
                failed: 1,
                ..none
            }),
        ),
        (
            "many_errors",
            Some(TestCounts {
                passed: 1,
                errors: 2,
                ..none
            }),
        ),
        // The test prints "3 passed in 0.01s"; the real summary is the last one.
        ("printed_summary", Some(TestCounts { failed: 1, ..none })),
        (
            "all_deselected",
            Some(TestCounts {
                deselected: 1,
                ..none
            }),
        ),
        ("collection_error", Some(TestCounts { errors: 1, ..none })),
        ("syntax_error", Some(TestCounts { errors: 1, ..none })),
        ("no_tests", Some(none)),
        ("no_tests_framed", Some(none)),
        ("missing_path", Some(none)),
        // A broken conftest and a usage error stop pytest before any summary: the suite never ran.
        ("conftest_broken", None),
        ("usage_error", None),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn excerpt_keeps_errors_failures_and_the_short_summary() {
    let actual = excerpt("mixed_quiet");
    let expected = "\
==================================== ERRORS ====================================
_________________________ ERROR at setup of test_error _________________________

    @pytest.fixture
    def broken():
>       raise RuntimeError(\"fixture broke\")
E       RuntimeError: fixture broke

test_mixed.py:27: RuntimeError
=================================== FAILURES ===================================
__________________________________ test_fail ___________________________________

    def test_fail():
        x = 3
>       assert x == 4, \"x should be four\"
E       AssertionError: x should be four
E       assert 3 == 4

test_mixed.py:11: AssertionError
=========================== short test summary info ============================
FAILED test_mixed.py::test_fail - AssertionError: x should be four
ERROR test_mixed.py::test_error - RuntimeError: fixture broke
1 failed, 2 passed, 1 skipped, 1 deselected, 1 xfailed, 1 xpassed, 1 error";
    assert_eq!(actual, expected);
}

#[test]
fn excerpt_is_the_same_whatever_the_verbosity() {
    let quiet = excerpt("mixed_quiet");
    // Without their durations (see `without_duration`).
    let framed_summary = "= 1 failed, 2 passed, 1 skipped, 1 deselected, 1 xfailed, 1 xpassed, \
                          1 error =";
    let quiet_summary = "1 failed, 2 passed, 1 skipped, 1 deselected, 1 xfailed, 1 xpassed, \
                         1 error";
    let expected = quiet.replace(quiet_summary, framed_summary);
    let actual = [excerpt("mixed_framed"), excerpt("mixed_verbose")];
    assert_eq!(actual, [expected.clone(), expected]);
}

#[test]
fn excerpt_leaves_out_warnings_and_progress() {
    let actual = excerpt("warnings");
    let expected = "\
=================================== FAILURES ===================================
__________________________________ test_fail ___________________________________

    def test_fail():
>       assert 0
E       assert 0

tests/test_w.py:7: AssertionError
=========================== short test summary info ============================
FAILED tests/test_w.py::test_fail - assert 0
1 failed, 1 passed, 1 warning";
    assert_eq!(actual, expected);
}

#[test]
fn excerpt_without_failure_sections() {
    let actual = [
        excerpt("all_passed"),
        excerpt("conftest_broken"),
        excerpt("missing_path"),
    ];
    let expected = [
        "2 passed".to_string(),
        format!(
            "ImportError while loading conftest '{}'.\n\
             conftest.py:1: in <module>\n    raise ImportError(\"conftest is broken\")\n\
             E   ImportError: conftest is broken",
            conftest_path()
        ),
        "no tests ran\nERROR: file or directory not found: tests/test_missing.py".to_string(),
    ];
    assert_eq!(actual, expected);
}

/// The absolute path pytest printed when the fixture was captured.
fn conftest_path() -> String {
    let (_, stderr) = fixtures::output("pytest", "conftest_broken");
    stderr
        .split('\'')
        .nth(1)
        .expect("a quoted conftest path")
        .to_string()
}

#[test]
fn excerpt_of_a_collection_error_ends_with_the_interruption() {
    let excerpt = excerpt("collection_error");
    let lines: Vec<&str> = excerpt.lines().collect();
    let actual = (lines.first().copied(), lines[lines.len() - 3..].to_vec());
    let expected = (
        Some("==================================== ERRORS ===================================="),
        vec![
            "ERROR tests/test_bad.py",
            "!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!",
            "1 error",
        ],
    );
    assert_eq!(actual, expected);
}

#[test]
fn coloured_output_parses_the_same() {
    let stdout = "\x1b[32m.\x1b[0m\x1b[31mF\x1b[0m [100%]\n\
                  \x1b[31m========= \x1b[31m\x1b[1m1 failed\x1b[0m, \x1b[32m1 passed\x1b[0m\x1b[31m in 0.01s\x1b[0m\x1b[31m =========\x1b[0m\n";
    let actual = parse_counts(Runner::Pytest, stdout, "");
    let expected = Some(TestCounts {
        passed: 1,
        failed: 1,
        ..TestCounts::default()
    });
    assert_eq!(actual, expected);
}
