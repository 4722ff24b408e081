//! Whose mistake a Rust test failure shows (`cargo test` and nextest print the same compiler
//! errors and panics).
//!
//! A Rust test cannot use a name it never defined at run time: that mistake stops the build. So
//! the build says whose it is. cargo names the target that did not compile: `error: could not
//! compile `calc` (lib)` is the code (the library without its tests), `(lib test)` or
//! `(test "api")` only the tests. A test that ran and failed panicked: on an assertion
//! (`assertion `left == right` failed`, `assertion failed: …`), or in the code (an index out of
//! bounds, an `unwrap` on `None`), which is a bug that raises.

use crate::failure::{FailureKind, FailureReading};

/// The reading of a cargo or nextest excerpt.
pub(crate) fn read(excerpt: &str) -> FailureReading {
    let first_error = excerpt.lines().find(|line| {
        let line = line.trim_start();
        line.starts_with("error[")
            || (line.starts_with("error:") && !line.contains("could not compile"))
    });
    let targets: Vec<&str> = excerpt.lines().filter_map(failed_target).collect();
    if !targets.is_empty() {
        let code = targets.iter().any(|target| !is_test_target(target));
        let kind = if code {
            FailureKind::CodeStopped
        } else {
            FailureKind::TestMistake
        };
        return FailureReading::new(kind, first_error);
    }
    let lines: Vec<&str> = excerpt.lines().collect();
    let mut compared: Vec<String> = Vec::new();
    let mut panic: Option<&str> = None;
    for (at, line) in lines.iter().enumerate() {
        if !line.contains("panicked at") {
            continue;
        }
        // Since Rust 1.73 the message is on the line after `panicked at src/lib.rs:15:9:`;
        // before, it followed on the same line in quotes.
        let message = match line.split_once("panicked at '") {
            Some((_, rest)) => rest.split("', ").next().unwrap_or(rest),
            None => lines.get(at + 1).copied().unwrap_or_default(),
        };
        if message.trim_start().starts_with("assertion") {
            compared.push(message.trim().to_string());
            compared.extend(
                lines
                    .iter()
                    .skip(at + 2)
                    .map(|line| line.trim())
                    .take_while(|line| line.starts_with("left:") || line.starts_with("right:"))
                    .map(String::from),
            );
        } else if panic.is_none() {
            panic = Some(message);
        }
    }
    if !compared.is_empty() {
        let mut reading =
            FailureReading::new(FailureKind::Assertion, compared.first().map(String::as_str));
        reading.compared = compared;
        return reading;
    }
    match panic {
        Some(message) => FailureReading::new(FailureKind::Other, Some(message)),
        None => FailureReading::other(),
    }
}

/// The target of `error: could not compile `calc` (lib test) due to 1 previous error`:
/// `lib test`. Older cargo leaves the target out; that reads as the code's.
fn failed_target(line: &str) -> Option<&str> {
    let rest = line
        .trim_start()
        .strip_prefix("error: could not compile `")?;
    let (_, after) = rest.split_once('`')?;
    let target = after
        .trim_start()
        .strip_prefix('(')
        .and_then(|inner| inner.split_once(')'))
        .map_or("", |(target, _)| target);
    Some(target)
}

/// `lib test`, `bin "x" test`, `test "api"`: a build of tests only.
fn is_test_target(target: &str) -> bool {
    target.ends_with(" test") || target.starts_with("test ") || target.starts_with("bench ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Runner;
    use pretty_assertions::assert_eq;

    /// cargo 1.9x's output (stdout, stderr) for a library whose test module calls a function
    /// that does not exist, whose code uses a name it never defined, and whose tests fail on an
    /// assertion and on an index out of bounds.
    const TEST_DOES_NOT_BUILD: &str = "   Compiling calc v0.1.0 (/tmp/rs-samples/rs)
error[E0425]: cannot find function `add_two` in this scope
  --> src/lib.rs:15:20
   |
15 |         assert_eq!(add_two(2, 3), 5);
   |                    ^^^^^^^ not found in this scope

For more information about this error, try `rustc --explain E0425`.
error: could not compile `calc` (lib test) due to 1 previous error
";

    const CODE_DOES_NOT_BUILD: &str = "   Compiling calc v0.1.0 (/tmp/rs-samples/rs)
error[E0425]: cannot find value `c` in this scope
 --> src/lib.rs:2:9
  |
2 |     a - c
  |         ^
  |
help: a local variable with a similar name exists
  |
2 -     a - c
2 +     a - a
  |

For more information about this error, try `rustc --explain E0425`.
error: could not compile `calc` (lib) due to 1 previous error
warning: build failed, waiting for other jobs to finish...
error: could not compile `calc` (lib test) due to 1 previous error
";

    const TESTS_FAIL: &str = "
running 2 tests
test tests::adds ... FAILED
test tests::picks ... FAILED

failures:

---- tests::adds stdout ----

thread 'tests::adds' (23049) panicked at src/lib.rs:15:9:
assertion `left == right` failed
  left: -1
 right: 5
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

---- tests::picks stdout ----

thread 'tests::picks' (23050) panicked at src/lib.rs:6:5:
index out of bounds: the len is 2 but the index is 5


failures:
    tests::adds
    tests::picks

test result: FAILED. 0 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";

    /// nextest 0.9's stderr for the same two failing tests.
    const NEXTEST_FAILS: &str = r#"   Compiling calc v0.1.0 (/tmp/rs-samples/rs)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.23s
────────────
 Nextest run ID d1e336cf-13ec-47d3-836f-1fb059abe7cf with nextest profile: default
    Starting 2 tests across 1 binary
        FAIL [   0.008s] (1/2) calc tests::picks
  stdout ───

    running 1 test
    test tests::picks ... FAILED

    failures:

    failures:
        tests::picks

    test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 1 filtered out; finished in 0.00s

  stderr ───

    thread 'tests::picks' (17478) panicked at src/lib.rs:6:5:
    index out of bounds: the len is 2 but the index is 5
    note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

        FAIL [   0.008s] (2/2) calc tests::adds
  stdout ───

    running 1 test
    test tests::adds ... FAILED

    failures:

    failures:
        tests::adds

    test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 1 filtered out; finished in 0.00s

  stderr ───

    thread 'tests::adds' (17479) panicked at src/lib.rs:15:9:
    assertion `left == right` failed
      left: -1
     right: 5
    note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

────────────
     Summary [   0.009s] 2 tests run: 0 passed, 2 failed, 0 skipped
        FAIL [   0.008s] (1/2) calc tests::picks
        FAIL [   0.008s] (2/2) calc tests::adds
error: test run failed
"#;

    #[test]
    fn nextest_reads_as_cargo() {
        let both = read(&crate::failure_excerpt(Runner::Nextest, "", NEXTEST_FAILS));
        assert_eq!(
            (both.kind, both.compared.len()),
            (FailureKind::Assertion, 3)
        );
        assert!(both.same_assertion(&read(&excerpt(TESTS_FAIL, ""))));
    }

    fn excerpt(stdout: &str, stderr: &str) -> String {
        crate::failure_excerpt(Runner::Cargo, stdout, stderr)
    }

    #[test]
    fn the_target_that_did_not_build_says_whose_mistake_it_is() {
        let test = read(&excerpt("", TEST_DOES_NOT_BUILD));
        assert_eq!(
            (test.kind, test.evidence.as_deref()),
            (
                FailureKind::TestMistake,
                Some("error[E0425]: cannot find function `add_two` in this scope")
            )
        );
        let code = read(&excerpt("", CODE_DOES_NOT_BUILD));
        assert_eq!(
            (code.kind, code.evidence.as_deref()),
            (
                FailureKind::CodeStopped,
                Some("error[E0425]: cannot find value `c` in this scope")
            )
        );
        let old_cargo =
            read("error[E0425]: x\nerror: could not compile `calc` due to previous error");
        assert_eq!(old_cargo.kind, FailureKind::CodeStopped);
    }

    #[test]
    fn an_assertion_is_told_from_a_panic_in_the_code() {
        let both = read(&excerpt(TESTS_FAIL, ""));
        assert_eq!(
            (both.kind, both.compared),
            (
                FailureKind::Assertion,
                ["assertion `left == right` failed", "left: -1", "right: 5"]
                    .map(String::from)
                    .to_vec()
            )
        );
        let picks_only = TESTS_FAIL.replace(
            "assertion `left == right` failed\n  left: -1\n right: 5\n",
            "index out of bounds: the len is 2 but the index is 5\n",
        );
        let panic = read(&excerpt(&picks_only, ""));
        assert_eq!(
            (panic.kind, panic.evidence.as_deref()),
            (
                FailureKind::Other,
                Some("index out of bounds: the len is 2 but the index is 5")
            )
        );
        // Moved lines move the panic's location, not what it compared.
        let moved = read(&excerpt(
            &TESTS_FAIL.replace("src/lib.rs:15:9", "src/lib.rs:17:9"),
            "",
        ));
        assert!(moved.same_assertion(&read(&excerpt(TESTS_FAIL, ""))));
    }
}
