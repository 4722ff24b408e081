//! `parse_log_gotest`: `go test -v`'s `--- PASS: TestName (0.00s)` lines, subtests
//! (`    --- FAIL: TestName/case (0.00s)`) included once the line is trimmed. A package that does
//! not build prints no such line, so its tests are missing.

use std::sync::LazyLock;

use regex::Regex;

use crate::result::TestStatus;

static RESULT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^--- (PASS|FAIL|SKIP): (.+) \((.+)\)$").ok());

pub(super) fn line(line: &str) -> Option<(String, TestStatus)> {
    let found = RESULT.as_ref()?.captures(line.trim())?;
    let status = match found.get(1)?.as_str() {
        "PASS" => TestStatus::Passed,
        "FAIL" => TestStatus::Failed,
        "SKIP" => TestStatus::Skipped,
        _ => return None,
    };
    Some((found.get(2)?.as_str().to_owned(), status))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use crate::result::TestStatus;
    use crate::score::parse::{LogFormat, StatusMap, parse};

    /// A real `go test -v ./...` log with subtests, a skip and a package that failed to build.
    #[test]
    fn go_test_verbose_lines_name_each_test() {
        let log = "\
=== RUN   TestAdd
--- PASS: TestAdd (0.00s)
=== RUN   TestTable
=== RUN   TestTable/zero
=== RUN   TestTable/two_words (case)
--- FAIL: TestTable (0.00s)
    --- PASS: TestTable/zero (0.00s)
    --- FAIL: TestTable/two_words (case) (0.01s)
=== RUN   TestLater
    later_test.go:9: not yet
--- SKIP: TestLater (0.00s)
FAIL
FAIL\texample.com/m\t0.004s
# example.com/m/broken
broken/b.go:3:1: syntax error: non-declaration statement outside function body
FAIL\texample.com/m/broken [build failed]
";

        let actual = parse(LogFormat::Go, log);

        let expected: StatusMap = [
            ("TestAdd", TestStatus::Passed),
            ("TestLater", TestStatus::Skipped),
            ("TestTable", TestStatus::Failed),
            ("TestTable/two_words (case)", TestStatus::Failed),
            ("TestTable/zero", TestStatus::Passed),
        ]
        .into_iter()
        .map(|(id, status)| (id.to_owned(), status))
        .collect();
        assert_eq!(actual, expected);
    }
}
