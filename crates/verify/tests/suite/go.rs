//! The go adapter. Go is not installed where these were written, so the outputs below are typed in
//! `go test`'s exact format (tabs included) rather than captured.

use plumb_protocol::TestCounts;
use plumb_verify::{Runner, failure_excerpt, parse_counts};
use pretty_assertions::assert_eq;

const PLAIN: &str = "\
--- FAIL: TestDivide (0.00s)
    calc_test.go:12: Divide(1, 0) = 0, want error
FAIL
FAIL\texample.com/calc\t0.002s
ok  \texample.com/calc/parse\t0.004s
ok  \texample.com/calc/format\t(cached)
?   \texample.com/calc/cmd\t[no test files]
FAIL
";

const VERBOSE: &str = "\
=== RUN   TestAdd
--- PASS: TestAdd (0.00s)
=== RUN   TestDivide
=== RUN   TestDivide/by_zero
    calc_test.go:12: Divide(1, 0) = 0, want error
=== RUN   TestDivide/by_one
--- FAIL: TestDivide (0.00s)
    --- FAIL: TestDivide/by_zero (0.00s)
    --- PASS: TestDivide/by_one (0.00s)
=== RUN   TestLater
    calc_test.go:30: not yet
--- SKIP: TestLater (0.00s)
FAIL
FAIL\texample.com/calc\t0.002s
=== RUN   TestParse
--- PASS: TestParse (0.00s)
PASS
ok  \texample.com/calc/parse\t0.004s
FAIL
";

const BUILD_FAILED: &str = "\
FAIL\texample.com/calc [build failed]
ok  \texample.com/calc/parse\t0.004s
FAIL
";

const BUILD_FAILED_STDERR: &str = "\
# example.com/calc
./calc.go:7:2: undefined: y
";

const PANIC_VERBOSE: &str = "\
=== RUN   TestHang
panic: test timed out after 10s
FAIL\texample.com/calc\t10.003s
FAIL
";

#[test]
fn counts_packages_or_verbose_tests() {
    let actual = [
        parse_counts(Runner::Go, PLAIN, ""),
        parse_counts(Runner::Go, VERBOSE, ""),
        parse_counts(Runner::Go, BUILD_FAILED, BUILD_FAILED_STDERR),
        parse_counts(Runner::Go, PANIC_VERBOSE, ""),
        parse_counts(Runner::Go, "?   \texample.com/calc\t[no test files]\n", ""),
        parse_counts(
            Runner::Go,
            "ok  \texample.com/calc\t0.001s [no tests to run]\n",
            "",
        ),
        parse_counts(Runner::Go, "", "go: cannot find main module\n"),
    ];
    let none = TestCounts::default();
    let expected = [
        // Without -v: one failed package, two passed ones.
        Some(TestCounts {
            passed: 2,
            failed: 1,
            ..none
        }),
        // With -v: top-level tests.
        Some(TestCounts {
            passed: 2,
            failed: 1,
            skipped: 1,
            ..none
        }),
        Some(TestCounts {
            passed: 1,
            errors: 1,
            ..none
        }),
        Some(TestCounts { errors: 1, ..none }),
        Some(none),
        Some(none),
        None,
    ];
    assert_eq!(actual, expected);
}

#[test]
fn excerpt_drops_what_passed() {
    let actual = failure_excerpt(Runner::Go, VERBOSE, "");
    let expected = "    calc_test.go:12: Divide(1, 0) = 0, want error
--- FAIL: TestDivide (0.00s)
    --- FAIL: TestDivide/by_zero (0.00s)
    calc_test.go:30: not yet
FAIL
FAIL\texample.com/calc\t0.002s
FAIL";
    assert_eq!(actual, expected);
}

#[test]
fn excerpt_of_a_build_failure_has_the_compiler_error() {
    let actual = failure_excerpt(Runner::Go, BUILD_FAILED, BUILD_FAILED_STDERR);
    let expected = "\
FAIL\texample.com/calc [build failed]
FAIL
# example.com/calc
./calc.go:7:2: undefined: y";
    assert_eq!(actual, expected);
}
