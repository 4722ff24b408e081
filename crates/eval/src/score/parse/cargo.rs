//! `parse_log_cargo`: libtest's `test path::name ... ok` lines (`cargo test` prints one per test
//! of every test binary). The name is one run of non-space characters, so doctests
//! (`test src/lib.rs - f (line 3) ... ok`) are never named, as in the official parser.
//! `ignored` is read as skipped (the official parser leaves it out, which grades the same:
//! neither is a pass).

use std::sync::LazyLock;

use regex::Regex;

use crate::result::TestStatus;

static RESULT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^test\s+(\S+)\s+\.\.\.\s+(\w+)$").ok());

pub(super) fn line(line: &str) -> Option<(String, TestStatus)> {
    let found = RESULT.as_ref()?.captures(line.trim())?;
    let status = match found.get(2)?.as_str() {
        "ok" => TestStatus::Passed,
        "FAILED" => TestStatus::Failed,
        "ignored" => TestStatus::Skipped,
        _ => return None,
    };
    Some((found.get(1)?.as_str().to_owned(), status))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use crate::result::TestStatus;
    use crate::score::parse::{LogFormat, StatusMap, parse};

    /// A real `cargo test` log: a unit-test binary, an integration binary, the doctests.
    #[test]
    fn libtest_lines_name_each_test() {
        let log = "\
   Compiling adder v0.1.0 (/work/adder)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.61s
     Running unittests src/lib.rs (target/debug/deps/adder-0c0ffee)

running 3 tests
test tests::adds ... ok
test tests::slow ... ignored
test tests::subtracts ... FAILED

failures:

---- tests::subtracts stdout ----
thread 'tests::subtracts' panicked at src/lib.rs:12:9:
assertion `left == right` failed

failures:
    tests::subtracts

test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running tests/api.rs (target/debug/deps/api-1234)

running 1 test
test round_trip ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

   Doc-tests adder

running 1 test
test src/lib.rs - add (line 3) ... ok
";

        let actual = parse(LogFormat::Cargo, log);

        let expected: StatusMap = [
            ("round_trip", TestStatus::Passed),
            ("tests::adds", TestStatus::Passed),
            ("tests::slow", TestStatus::Skipped),
            ("tests::subtracts", TestStatus::Failed),
        ]
        .into_iter()
        .map(|(id, status)| (id.to_owned(), status))
        .collect();
        assert_eq!(actual, expected);
    }
}
