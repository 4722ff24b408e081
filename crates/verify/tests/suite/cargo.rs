//! The cargo adapter against captured `cargo test` output (`fixtures/cargo/capture.sh`); the live
//! run of a tiny crate is in `results_cargo.rs`.

use plumb_protocol::TestCounts;
use plumb_verify::{Runner, failure_excerpt, parse_counts};
use pretty_assertions::assert_eq;

use super::fixtures;

fn counts(name: &str) -> Option<TestCounts> {
    let (stdout, stderr) = fixtures::output("cargo", name);
    parse_counts(Runner::Cargo, &stdout, &stderr)
}

#[test]
fn counts_summed_over_every_result_line() {
    let names = [
        "all_ok",
        "lib_failed",
        "no_fail_fast",
        "filtered",
        "compile_error",
    ];
    let actual: Vec<(&str, Option<TestCounts>)> =
        names.iter().map(|name| (*name, counts(name))).collect();
    let none = TestCounts::default();
    let expected = vec![
        (
            "all_ok",
            Some(TestCounts {
                passed: 4,
                skipped: 1,
                ..none
            }),
        ),
        (
            "lib_failed",
            Some(TestCounts {
                passed: 1,
                failed: 1,
                skipped: 1,
                ..none
            }),
        ),
        (
            "no_fail_fast",
            Some(TestCounts {
                passed: 3,
                failed: 1,
                skipped: 1,
                ..none
            }),
        ),
        (
            "filtered",
            Some(TestCounts {
                passed: 1,
                failed: 1,
                deselected: 2,
                ..none
            }),
        ),
        // Nothing compiled, nothing ran.
        ("compile_error", None),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn excerpt_is_the_failures_block() {
    let (stdout, stderr) = fixtures::output("cargo", "no_fail_fast");
    let excerpt = failure_excerpt(Runner::Cargo, &stdout, &stderr);
    let lines: Vec<&str> = excerpt.lines().collect();
    let actual = (
        lines[..6].to_vec(),
        lines[lines.len() - 4..].to_vec(),
        excerpt.contains("integration_ok"),
    );
    let expected = (
        vec![
            "failures:",
            "",
            "---- tests::adds_wrong stdout ----",
            "",
            "thread 'tests::adds_wrong' (8126) panicked at src/lib.rs:19:9:",
            "assertion `left == right` failed: one plus one",
        ],
        vec![
            "failures:",
            "    tests::adds_wrong",
            "",
            "test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; \
             finished in 0.06s",
        ],
        false,
    );
    assert_eq!(actual, expected);
}

#[test]
fn excerpt_of_a_build_error_is_the_compiler_output() {
    let (stdout, stderr) = fixtures::output("cargo", "compile_error");
    let actual = failure_excerpt(Runner::Cargo, &stdout, &stderr);
    let expected = "\
error: this file contains an unclosed delimiter
  --> src/lib.rs:26:19
   |
26 | pub fn broken( {}
   |              -   ^
   |              |
   |              unclosed delimiter

error: could not compile `demo` (lib) due to 1 previous error
warning: build failed, waiting for other jobs to finish...
error: could not compile `demo` (lib test) due to 1 previous error";
    assert_eq!(actual, expected);
}
