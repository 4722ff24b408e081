//! Reading test outcomes from a scoring run's log, as SWE-bench's log parsers
//! (`swebench/harness/log_parsers/`) read them: the same lines, the same test ids, the same
//! statuses. The records' FAIL_TO_PASS and PASS_TO_PASS ids were written by these parsers, so
//! an id is only found if it is cut exactly where the official parser cuts it (pytest's `-rA`
//! line `PASSED tests/test_x.py::test_y[a b]` names `tests/test_x.py::test_y[a`).
//!
//! Each parser gives a map id → status in which a later line wins over an earlier one, as
//! Python's dict assignment in the originals does. `XFAIL` is kept as `Passed`, since SWE-bench's
//! `test_passed` counts it as a pass.

mod cargo;
mod go;
mod jest;
mod pytest;
mod tap;

use std::collections::BTreeMap;
use std::sync::LazyLock;

use plumb_verify::Runner;
use regex::Regex;

use crate::result::TestStatus;

/// Test id → status, as one parser read a log.
pub type StatusMap = BTreeMap<String, TestStatus>;

/// The log formats the scorer reads, one per official parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// `parse_log_pytest`: the `-rA` short summary (`PASSED id`, `FAILED id - msg`) and `-v`
    /// lines (`id PASSED`).
    Pytest,
    /// `parse_log_cargo`: libtest's `test path::name ... ok`.
    Cargo,
    /// `parse_log_gotest`: `go test -v`'s `--- PASS: Name (0.00s)`.
    Go,
    /// `parse_log_jest`: jest `--verbose`'s `✓ name (3 ms)`.
    Jest,
    /// `parse_log_vitest`: vitest `--reporter=verbose`'s `✓ name 3ms`.
    Vitest,
    /// `parse_log_tap`: TAP's `ok 1 - name` (node's `node --test`, tape, tap).
    Tap,
}

impl LogFormat {
    /// The format a runner's scoring log is in, once [`super::select`] has asked for it; `None`
    /// for runners SWE-bench has no parser for here (Maven, Gradle, nextest).
    pub fn for_runner(runner: Runner) -> Option<LogFormat> {
        match runner {
            // A command plumb does not recognise is read as pytest, the runner of nearly every
            // SWE-bench record; the scorer asks pytest for `-rA` through PYTEST_ADDOPTS there.
            Runner::Pytest | Runner::Other => Some(LogFormat::Pytest),
            Runner::Cargo => Some(LogFormat::Cargo),
            Runner::Go => Some(LogFormat::Go),
            Runner::Jest => Some(LogFormat::Jest),
            Runner::Vitest => Some(LogFormat::Vitest),
            // `node --test` (asked for TAP by the scorer) and the TAP-printing runners behind
            // `npm test` (tape, tap, node's runner in a script).
            Runner::Npm => Some(LogFormat::Tap),
            Runner::Nextest | Runner::Maven | Runner::Gradle => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            LogFormat::Pytest => "pytest",
            LogFormat::Cargo => "cargo",
            LogFormat::Go => "go test",
            LogFormat::Jest => "jest",
            LogFormat::Vitest => "vitest",
            LogFormat::Tap => "TAP",
        }
    }
}

/// Every test the log names in `format`, with its status.
pub fn parse(format: LogFormat, log: &str) -> StatusMap {
    let log = without_colour(log);
    let mut map = StatusMap::new();
    for line in log.split('\n') {
        let found = match format {
            LogFormat::Pytest => pytest::line(line),
            LogFormat::Cargo => cargo::line(line),
            LogFormat::Go => go::line(line),
            LogFormat::Jest => jest::jest_line(line),
            LogFormat::Vitest => jest::vitest_line(line),
            LogFormat::Tap => tap::line(line),
        };
        if let Some((id, status)) = found {
            map.insert(id, status);
        }
    }
    map
}

/// ANSI colour sequences (`ESC [ 32 m`) taken out, as `parse_log_pytest_v2` and the JavaScript
/// parsers' `ansi_escape` do; a log without an ESC byte is read exactly as it is.
fn without_colour(log: &str) -> std::borrow::Cow<'_, str> {
    static ANSI: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"\x1b\[[0-9;?]*[A-Za-z]").ok());
    match ANSI.as_ref() {
        Some(ansi) if log.contains('\u{1b}') => ansi.replace_all(log, ""),
        _ => std::borrow::Cow::Borrowed(log),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn colour_is_taken_out_before_parsing() {
        let log = "\u{1b}[32mPASSED\u{1b}[0m tests/test_x.py::test_y\n";

        let actual = parse(LogFormat::Pytest, log);

        let expected =
            StatusMap::from([("tests/test_x.py::test_y".to_owned(), TestStatus::Passed)]);
        assert_eq!(actual, expected);
    }
}
