//! `parse_log_pytest`, the parser of every pytest repository of SWE-bench (marshmallow, flask,
//! xarray…): a line that starts with a status and a test id (the `-rA` short summary), or a test
//! id followed by a status (the `-v` progress lines).
//!
//! The id is one run of non-space characters, so a parametrized id whose parameters hold a space
//! ends at the space: `PASSED tests/test_x.py::test_y[a b]` names `tests/test_x.py::test_y[a`,
//! which is what the records hold. On a `FAILED` line ` - ` becomes a space before the id is
//! taken. A `SKIPPED [2] tests/test_x.py:12: reason` line (how `-rA` folds skips) names no test
//! and is passed over; `XPASS` is no status at all, so an unexpectedly passing test is missing.

use std::sync::LazyLock;

use regex::Regex;

use crate::result::TestStatus;

/// The statuses of SWE-bench's `TestStatus`, in its order.
const STATUSES: &str = "FAILED|PASSED|SKIPPED|ERROR|XFAIL";

static STATUS_FIRST: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(&format!(r"^({STATUSES})\s+(\S+)")).ok());
static TEST_FIRST: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(&format!(r"^(\S+)\s+({STATUSES})(?:\s|$)")).ok());
static SKIP_COUNT: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\[\d+\]").ok());

/// One line of the log: the test it names and its status.
pub(super) fn line(line: &str) -> Option<(String, TestStatus)> {
    if let Some(found) = STATUS_FIRST.as_ref()?.captures(line) {
        let status = found.get(1)?.as_str();
        let mut id = found.get(2)?.as_str().to_owned();
        if status == "FAILED" {
            id = line
                .replace(" - ", " ")
                .split_whitespace()
                .nth(1)?
                .to_owned();
        }
        if status == "SKIPPED" && SKIP_COUNT.as_ref()?.is_match(&id) {
            return None;
        }
        return Some((id, status_of(status)?));
    }
    let found = TEST_FIRST.as_ref()?.captures(line)?;
    Some((
        found.get(1)?.as_str().to_owned(),
        status_of(found.get(2)?.as_str())?,
    ))
}

fn status_of(word: &str) -> Option<TestStatus> {
    Some(match word {
        // SWE-bench's `test_passed` counts an expected failure as a pass.
        "PASSED" | "XFAIL" => TestStatus::Passed,
        "FAILED" => TestStatus::Failed,
        "ERROR" => TestStatus::Error,
        "SKIPPED" => TestStatus::Skipped,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use crate::result::TestStatus;
    use crate::score::parse::{LogFormat, StatusMap, parse};

    fn map(entries: &[(&str, TestStatus)]) -> StatusMap {
        entries
            .iter()
            .map(|(id, status)| ((*id).to_owned(), *status))
            .collect()
    }

    /// The end of a real `pytest -rA -v` run (pytest 9.2) over parametrized ids with spaces, a
    /// failure whose message holds ` - `, a fold of skips, an xfail, an xpass and an error.
    const LOG: &str = "\
============================= test session starts ==============================
collecting ... collected 8 items

tests/test_a.py::test_p[a b] PASSED                                      [ 12%]
tests/test_a.py::test_p[c] PASSED                                        [ 25%]
tests/test_a.py::test_fail FAILED                                        [ 37%]
tests/test_a.py::test_skip SKIPPED (nope)                                [ 50%]
tests/test_a.py::test_xf XFAIL                                           [ 62%]
tests/test_a.py::test_xp XPASS                                           [ 75%]
tests/test_a.py::test_err ERROR                                          [ 87%]
tests/test_a.py::TestC::test_m[x - y] PASSED                             [100%]

==================================== ERRORS ====================================
__________________________ ERROR at setup of test_err __________________________
E       RuntimeError
=================================== FAILURES ===================================
__________________________________ test_fail ___________________________________
>       assert False, \"boom - here\"
E       AssertionError: boom - here
==================================== PASSES ====================================
=========================== short test summary info ============================
PASSED tests/test_a.py::test_p[a b]
PASSED tests/test_a.py::test_p[c]
PASSED tests/test_a.py::TestC::test_m[x - y]
SKIPPED [1] tests/test_a.py:7: nope
XFAIL tests/test_a.py::test_xf
XPASS tests/test_a.py::test_xp
ERROR tests/test_a.py::test_err - RuntimeError
FAILED tests/test_a.py::test_fail - AssertionError: boom - here
= 1 failed, 3 passed, 1 skipped, 1 xfailed, 1 xpassed, 1 error in 0.05s =
";

    #[test]
    fn ids_are_cut_where_the_official_parser_cuts_them() {
        let actual = parse(LogFormat::Pytest, LOG);

        let expected = map(&[
            // The ERRORS section's title (`____ ERROR at setup of test_err ____`) reads as a
            // test named by underscores, in the official parser too; no record names it.
            ("__________________________", TestStatus::Error),
            ("tests/test_a.py::TestC::test_m[x", TestStatus::Passed),
            ("tests/test_a.py::test_err", TestStatus::Error),
            ("tests/test_a.py::test_fail", TestStatus::Failed),
            ("tests/test_a.py::test_p[a", TestStatus::Passed),
            ("tests/test_a.py::test_p[c]", TestStatus::Passed),
            ("tests/test_a.py::test_skip", TestStatus::Skipped),
            ("tests/test_a.py::test_xf", TestStatus::Passed),
        ]);
        assert_eq!(actual, expected);
    }

    /// marshmallow-1359's records hold `test_make_error[required-Missing` for the test pytest
    /// names `test_make_error[required-Missing data for required field.]`.
    #[test]
    fn the_marshmallow_1359_id_form_is_what_the_parser_reads() {
        let log = "\
PASSED tests/test_fields.py::TestErrorMessages::test_make_error[required-Missing data for required field.]
PASSED tests/test_x.py::test_y[a b]
FAILED tests/test_fields.py::TestErrorMessages::test_fail[null-Field may not be null.] - assert 1
";

        let actual = parse(LogFormat::Pytest, log);

        let expected = map(&[
            (
                "tests/test_fields.py::TestErrorMessages::test_fail[null-Field",
                TestStatus::Failed,
            ),
            (
                "tests/test_fields.py::TestErrorMessages::test_make_error[required-Missing",
                TestStatus::Passed,
            ),
            ("tests/test_x.py::test_y[a", TestStatus::Passed),
        ]);
        assert_eq!(actual, expected);
    }

    /// Lines that look like results but are not: an indented one, a status glued to a word, a
    /// bare status, a later line winning over an earlier one.
    #[test]
    fn only_result_lines_count_and_the_last_one_wins() {
        let log = "\
=== short test summary info ===
  PASSED tests/test_a.py::test_indented
PASSEDtests/test_a.py::test_glued
FAILED
tests/test_a.py::test_twice PASSED
FAILED tests/test_a.py::test_twice
tests/test_a.py::test_word PASSEDISH
";

        let actual = parse(LogFormat::Pytest, log);

        let expected = map(&[("tests/test_a.py::test_twice", TestStatus::Failed)]);
        assert_eq!(actual, expected);
    }
}
