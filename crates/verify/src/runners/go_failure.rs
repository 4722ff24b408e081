//! Whose mistake a `go test` failure shows.
//!
//! A go test that uses a name it never defined does not build: go prints the compiler's
//! `calc/calc_test.go:6:12: undefined: AddTwo` at the start of a line and `FAIL pkg [build
//! failed]`, and the file named says whose mistake it is (a `_test.go` file is the test's). A test
//! that ran and failed says why in its own indented lines, `    calc_test.go:7: Add(2, 3) = -1,
//! want 5` (`t.Errorf`, `t.Fatalf`, testify's block): the assertion. A `panic:` without such a
//! line is the code raising.

use crate::failure::{FailureKind, FailureReading, Place, TestPlaces, place_at};

/// The reading of a `go test` excerpt (`-json` events already turned back into text).
pub(crate) fn read(excerpt: &str, places: &dyn TestPlaces) -> FailureReading {
    let is_test = |place: &Place<'_>| place.path.ends_with("_test.go") || places.is_test(place);
    let mut test_errors: Vec<&str> = Vec::new();
    let mut code_error: Option<&str> = None;
    for line in excerpt.lines() {
        if line.starts_with(char::is_whitespace) {
            continue;
        }
        let Some((place, rest)) = place_at(line, &["go"]) else {
            continue;
        };
        if !rest.starts_with(':') {
            continue;
        }
        if is_test(&place) {
            test_errors.push(line);
        } else if code_error.is_none() {
            code_error = Some(line);
        }
    }
    if let Some(line) = code_error {
        return FailureReading::new(FailureKind::CodeStopped, Some(line));
    }
    if let Some(line) = test_errors.first() {
        return FailureReading::new(FailureKind::TestMistake, Some(line));
    }
    let compared = test_messages(excerpt, &is_test);
    if !compared.is_empty() {
        let mut reading =
            FailureReading::new(FailureKind::Assertion, compared.first().map(String::as_str));
        reading.compared = compared;
        return reading;
    }
    match excerpt
        .lines()
        .find(|line| line.trim_start().starts_with("panic: "))
    {
        Some(line) => FailureReading::new(FailureKind::Other, Some(line)),
        None => FailureReading::other(),
    }
}

/// The lines a failing test wrote about itself: an indented `x_test.go:N: message` and the lines
/// indented deeper below it (testify's `Error:`, `expected:`, `actual:`, but not its `Error
/// Trace:`), trimmed.
fn test_messages(excerpt: &str, is_test: &dyn Fn(&Place<'_>) -> bool) -> Vec<String> {
    let mut compared = Vec::new();
    let mut block_indent: Option<usize> = None;
    for line in excerpt.lines() {
        let indent = line.len() - line.trim_start().len();
        if let Some(outer) = block_indent {
            if indent > outer && !line.trim().is_empty() {
                // testify's trace names the file by its absolute path, which differs between
                // the workspace and the tree of the original code.
                if !line.trim().starts_with("Error Trace:") {
                    compared.push(line.trim().to_string());
                }
                continue;
            }
            block_indent = None;
        }
        if indent == 0 {
            continue;
        }
        // A stack frame (`\t/w/calc_test.go:12 +0x1d`) has no message after its line.
        if let Some((place, rest)) = place_at(line, &["go"])
            && rest.starts_with(':')
            && is_test(&place)
        {
            compared.push(line.trim().to_string());
            block_indent = Some(indent);
        }
    }
    compared
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Runner;
    use crate::failure::TestFileNames;
    use pretty_assertions::assert_eq;

    /// go 1.19's output for a package whose test calls a function that does not exist, whose
    /// code uses a name it never defined, and whose tests fail on `t.Errorf` and on an index out
    /// of range (the `-json` run's excerpt is the same text).
    const TEST_DOES_NOT_BUILD: &str = "# example.com/m/calc [example.com/m/calc.test]
calc/calc_test.go:6:12: undefined: AddTwo
FAIL\texample.com/m/calc [build failed]
FAIL
";

    const CODE_DOES_NOT_BUILD: &str = "# example.com/m/calc [example.com/m/calc.test]
calc/calc.go:4:13: undefined: c
FAIL\texample.com/m/calc [build failed]
";

    const TESTS_FAIL: &str = "--- FAIL: TestAdd (0.00s)
    calc_test.go:7: Add(2, 3) = -1, want 5
--- FAIL: TestPick (0.00s)
panic: runtime error: index out of range [5] with length 2 [recovered]
\tpanic: runtime error: index out of range [5] with length 2

goroutine 19 [running]:
testing.tRunner.func1.2({0x518a00, 0xc0000ce048})
\t/usr/lib/go-1.19/src/testing/testing.go:1396 +0x24e
example.com/m/calc.Pick(...)
\t/tmp/rs-samples/go/calc/calc.go:8
example.com/m/calc.TestPick(0xc000096680?)
\t/tmp/rs-samples/go/calc/calc_test.go:12 +0x1d
FAIL\texample.com/m/calc\t0.004s
FAIL
";

    /// testify's `assert.Equal` block.
    const TESTIFY: &str = "--- FAIL: TestAdd (0.00s)
    calc_test.go:10: 
        \tError Trace:\t/w/calc/calc_test.go:10
        \tError:      \tNot equal: 
        \t            \texpected: 5
        \t            \tactual  : -1
        \tTest:       \tTestAdd
FAIL
FAIL\texample.com/m/calc\t0.004s
";

    fn reading(stdout: &str) -> FailureReading {
        read(
            &crate::failure_excerpt(Runner::Go, stdout, ""),
            &TestFileNames,
        )
    }

    #[test]
    fn the_file_that_did_not_build_says_whose_mistake_it_is() {
        let test = reading(TEST_DOES_NOT_BUILD);
        assert_eq!(
            (test.kind, test.evidence.as_deref()),
            (
                FailureKind::TestMistake,
                Some("calc/calc_test.go:6:12: undefined: AddTwo")
            )
        );
        let code = reading(CODE_DOES_NOT_BUILD);
        assert_eq!(
            (code.kind, code.evidence.as_deref()),
            (
                FailureKind::CodeStopped,
                Some("calc/calc.go:4:13: undefined: c")
            )
        );
    }

    #[test]
    fn a_test_that_reports_a_value_is_an_assertion_and_a_panic_the_code() {
        let both = reading(TESTS_FAIL);
        assert_eq!(
            (both.kind, both.compared),
            (
                FailureKind::Assertion,
                vec!["calc_test.go:7: Add(2, 3) = -1, want 5".to_string()]
            )
        );
        let panic_only = TESTS_FAIL.replace("    calc_test.go:7: Add(2, 3) = -1, want 5\n", "");
        let panic = reading(&panic_only);
        assert_eq!(
            (panic.kind, panic.evidence.as_deref()),
            (
                FailureKind::Other,
                Some("panic: runtime error: index out of range [5] with length 2 [recovered]")
            )
        );
        let testify = reading(TESTIFY);
        assert_eq!(testify.kind, FailureKind::Assertion);
        assert!(
            testify.compared.contains(&"expected: 5".to_string())
                && testify.compared.contains(&"actual  : -1".to_string()),
            "{:?}",
            testify.compared
        );
    }
}
