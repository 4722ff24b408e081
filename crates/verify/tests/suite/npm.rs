//! The npm adapter: `node --test` output captured from Node 20 (`fixtures/npm/README.md`); jest,
//! vitest and mocha summaries typed in their documented formats (none of them is installed here).

use plumb_protocol::TestCounts;
use plumb_verify::{Runner, failure_excerpt, parse_counts};
use pretty_assertions::assert_eq;

use super::fixtures;

const JEST: &str = "\
FAIL src/sum.test.js
  ● sum › adds negative numbers

    expect(received).toBe(expected) // Object.is equality

PASS src/other.test.js

Test Suites: 1 failed, 1 passed, 2 total
Tests:       1 failed, 1 skipped, 1 todo, 3 passed, 6 total
Snapshots:   0 total
Time:        0.512 s
Ran all test suites.
";

const JEST_SUITE_BROKEN: &str = "\
FAIL src/broken.test.js
  ● Test suite failed to run

    SyntaxError: Unexpected token (3:7)

Test Suites: 1 failed, 1 passed, 2 total
Tests:       2 passed, 2 total
";

const VITEST: &str = "\
 \x1b[31m❯\x1b[39m src/sum.test.ts (3 tests | 1 failed) 5ms

 Test Files  1 failed | 2 passed (3)
      Tests  1 failed | 5 passed | 1 skipped (7)
   Start at  12:00:00
   Duration  1.20s (transform 20ms, setup 0ms, collect 30ms, tests 5ms)
";

const VITEST_NO_TESTS: &str = "\
 FAIL  src/broken.test.ts [ src/broken.test.ts ]
SyntaxError: Unexpected token

 Test Files  1 failed (1)
      Tests  no tests
";

const MOCHA: &str = "\
  sum
    ✔ adds
    1) subtracts
    - multiplies


  4 passing (12ms)
  1 pending
  1 failing

  1) sum
       subtracts:
     AssertionError: expected 1 to equal 2
";

#[test]
fn counts_of_every_format() {
    let (tap, _) = fixtures::output("npm", "node_test_tap");
    let (spec, _) = fixtures::output("npm", "node_test_spec");
    let actual = [
        parse_counts(Runner::Npm, "", JEST),
        parse_counts(Runner::Npm, "", JEST_SUITE_BROKEN),
        parse_counts(Runner::Npm, VITEST, ""),
        parse_counts(Runner::Npm, VITEST_NO_TESTS, ""),
        parse_counts(Runner::Npm, MOCHA, ""),
        parse_counts(Runner::Npm, &tap, ""),
        parse_counts(Runner::Npm, &spec, ""),
        parse_counts(Runner::Npm, "sh: 1: jest: not found\n", ""),
    ];
    let none = TestCounts::default();
    let node = TestCounts {
        passed: 1,
        failed: 1,
        skipped: 2,
        ..none
    };
    let expected = [
        Some(TestCounts {
            passed: 3,
            failed: 1,
            skipped: 2,
            ..none
        }),
        Some(TestCounts {
            passed: 2,
            errors: 1,
            ..none
        }),
        Some(TestCounts {
            passed: 5,
            failed: 1,
            skipped: 1,
            ..none
        }),
        Some(TestCounts { errors: 1, ..none }),
        Some(TestCounts {
            passed: 4,
            failed: 1,
            skipped: 1,
            ..none
        }),
        Some(node),
        Some(node),
        None,
    ];
    assert_eq!(actual, expected);
}

#[test]
fn other_runner_tries_every_format() {
    let (tap, _) = fixtures::output("npm", "node_test_tap");
    let (pytest, _) = fixtures::output("pytest", "all_passed");
    let (cargo, _) = fixtures::output("cargo", "all_ok");
    let actual = [
        parse_counts(Runner::Other, &pytest, ""),
        parse_counts(Runner::Other, &cargo, ""),
        parse_counts(Runner::Other, &tap, ""),
        parse_counts(Runner::Other, "ok  \texample.com/m\t0.1s\n", ""),
        parse_counts(
            Runner::Other,
            "make: *** No rule to make target 'test'.  Stop.\n",
            "",
        ),
    ];
    let none = TestCounts::default();
    let expected = [
        Some(TestCounts { passed: 2, ..none }),
        Some(TestCounts {
            passed: 4,
            skipped: 1,
            ..none
        }),
        Some(TestCounts {
            passed: 1,
            failed: 1,
            skipped: 2,
            ..none
        }),
        Some(TestCounts { passed: 1, ..none }),
        None,
    ];
    assert_eq!(actual, expected);
}

#[test]
fn excerpt_is_the_tail_without_colours() {
    let actual = failure_excerpt(Runner::Npm, VITEST_NO_TESTS, "npm error Test failed.\n");
    let expected = "\
 FAIL  src/broken.test.ts [ src/broken.test.ts ]
SyntaxError: Unexpected token

 Test Files  1 failed (1)
      Tests  no tests
npm error Test failed.";
    assert_eq!(actual, expected);
}

#[test]
fn other_runner_excerpts_pytest_output_as_pytest() {
    let (stdout, stderr) = fixtures::output("pytest", "warnings");
    let actual = failure_excerpt(Runner::Other, &stdout, &stderr);
    let expected = failure_excerpt(Runner::Pytest, &stdout, &stderr);
    assert_eq!(actual, expected);
}
