//! Per-test outcomes of `cargo test` and `cargo nextest run`: captured outputs
//! (`fixtures/cargo/capture.sh`, `fixtures/nextest/capture.sh`) and one live run of both on a
//! tiny crate (cargo and cargo-nextest must be installed).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::SystemTime;

use plumb_protocol::TestCounts;
use plumb_verify::{
    Runner, TestCommand, TestOutcome, TestResults, detect, failure_excerpt, parse_command,
    parse_counts, read_results, with_report,
};
use pretty_assertions::assert_eq;

use super::fixtures;

fn tests(entries: &[(&str, TestOutcome)]) -> BTreeMap<String, TestOutcome> {
    entries
        .iter()
        .map(|(id, outcome)| (id.to_string(), *outcome))
        .collect()
}

/// Results of a captured run; the report path is not used by these runners.
fn captured(runner: &str, name: &str) -> Option<TestResults> {
    let (stdout, stderr) = fixtures::output(runner, name);
    let cmd = match runner {
        "nextest" => parse_command("cargo nextest run").unwrap(),
        _ => parse_command("cargo test").unwrap(),
    };
    read_results(
        &cmd,
        Path::new("/nowhere/.plumb-report/report"),
        SystemTime::now(),
        &stdout,
        &stderr,
    )
}

#[test]
fn cargo_test_outcomes_from_captured_runs() {
    let actual = [
        captured("cargo", "no_fail_fast"),
        captured("cargo", "filtered"),
        captured("cargo", "compile_error"),
    ];
    let expected = [
        Some(TestResults {
            tests: tests(&[
                ("integration_ok", TestOutcome::Passed),
                ("src/lib.rs - add_one (line 3)", TestOutcome::Passed),
                ("tests::adds", TestOutcome::Passed),
                ("tests::adds_wrong", TestOutcome::Failed),
                ("tests::slow", TestOutcome::Skipped),
            ]),
            collected: Some(5),
            counts: TestCounts {
                passed: 3,
                failed: 1,
                skipped: 1,
                ..TestCounts::default()
            },
        }),
        Some(TestResults {
            tests: tests(&[
                ("tests::adds", TestOutcome::Passed),
                ("tests::adds_wrong", TestOutcome::Failed),
            ]),
            collected: Some(4),
            counts: TestCounts {
                passed: 1,
                failed: 1,
                deselected: 2,
                ..TestCounts::default()
            },
        }),
        // The crate did not build: no test binary ran.
        None,
    ];
    assert_eq!(actual, expected);
}

#[test]
fn nextest_outcomes_from_captured_runs() {
    let (stdout, stderr) = fixtures::output("nextest", "mixed");
    let actual = (
        [
            captured("nextest", "mixed"),
            captured("nextest", "narrowed"),
            captured("nextest", "compile_error"),
        ],
        parse_counts(Runner::Nextest, &stdout, &stderr),
    );
    let expected = (
        [
            Some(TestResults {
                tests: tests(&[
                    ("adds", TestOutcome::Passed),
                    ("integration_ok", TestOutcome::Passed),
                    ("tests::aborts", TestOutcome::Failed),
                    ("tests::adds", TestOutcome::Passed),
                    ("tests::adds_wrong", TestOutcome::Failed),
                    ("tests::panics", TestOutcome::Passed),
                    ("tests::slow", TestOutcome::Skipped),
                ]),
                collected: Some(7),
                counts: TestCounts {
                    passed: 4,
                    failed: 2,
                    skipped: 1,
                    ..TestCounts::default()
                },
            }),
            // nextest reports the tests a filter left out as skipped.
            Some(TestResults {
                tests: tests(&[
                    ("adds", TestOutcome::Skipped),
                    ("integration_ok", TestOutcome::Passed),
                    ("tests::aborts", TestOutcome::Skipped),
                    ("tests::adds", TestOutcome::Passed),
                    ("tests::adds_wrong", TestOutcome::Skipped),
                    ("tests::panics", TestOutcome::Skipped),
                    ("tests::slow", TestOutcome::Skipped),
                ]),
                collected: Some(7),
                counts: TestCounts {
                    passed: 2,
                    skipped: 5,
                    ..TestCounts::default()
                },
            }),
            None,
        ],
        Some(TestCounts {
            passed: 4,
            failed: 2,
            skipped: 1,
            ..TestCounts::default()
        }),
    );
    assert_eq!(actual, expected);
}

const LIB: &str = r#"/// Adds one.
///
/// ```
/// assert_eq!(tiny::add_one(1), 2);
/// ```
pub fn add_one(x: i32) -> i32 {
    x + 1
}

#[cfg(test)]
mod tests {
    #[test]
    fn adds() {
        assert_eq!(super::add_one(1), 2);
    }

    #[test]
    fn adds_wrong() {
        assert_eq!(super::add_one(1), 3, "boom");
    }

    #[test]
    #[ignore = "slow"]
    fn later() {}

    #[test]
    #[should_panic]
    fn panics() {
        panic!("expected");
    }
}
"#;

/// The integration tests hold a test of the same name as a failing unit test, which passes.
const INTEGRATION: &str = r#"#[test]
fn integration_ok() {
    assert_eq!(tiny::add_one(0), 1);
}

mod tests {
    #[test]
    fn adds_wrong() {}
}
"#;

struct Run {
    results: Option<TestResults>,
    counts: Option<TestCounts>,
    excerpt_has_the_panic: bool,
}

fn run(root: &Path, cmd: &TestCommand) -> Run {
    let report_path = root.join(".plumb-report/report");
    let argv = with_report(cmd, &report_path);
    let started = SystemTime::now();
    let output = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(root)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap_or_else(|err| panic!("cannot run {argv:?}: {err}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("no such command: `nextest`"),
        "this test needs cargo-nextest: install it with `cargo install cargo-nextest --locked`"
    );
    Run {
        results: read_results(cmd, &report_path, started, &stdout, &stderr),
        counts: parse_counts(cmd.runner, &stdout, &stderr),
        excerpt_has_the_panic: failure_excerpt(cmd.runner, &stdout, &stderr).contains("boom"),
    }
}

/// One crate, built once, run by both runners (the slow test of this file).
#[test]
fn real_cargo_test_and_nextest_per_test() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::create_dir_all(root.join("tests")).unwrap();
    fs::create_dir_all(root.join(".plumb-report")).unwrap();
    fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    fs::write(root.join("src/lib.rs"), LIB).unwrap();
    fs::write(root.join("tests/it.rs"), INTEGRATION).unwrap();

    let cargo = detect(root).unwrap();
    let nextest = parse_command("cargo nextest run").unwrap();
    let cargo_run = run(root, &cargo);
    let nextest_run = run(root, &nextest);

    let actual = [
        (
            cargo.runner,
            cargo_run.results,
            cargo_run.counts,
            cargo_run.excerpt_has_the_panic,
        ),
        (
            nextest.runner,
            nextest_run.results,
            nextest_run.counts,
            nextest_run.excerpt_has_the_panic,
        ),
    ];
    let unit_and_integration = [
        ("integration_ok", TestOutcome::Passed),
        ("tests::adds", TestOutcome::Passed),
        // Failed in the unit tests, passed in the integration tests: the worse is kept.
        ("tests::adds_wrong", TestOutcome::Failed),
        ("tests::later", TestOutcome::Skipped),
        ("tests::panics", TestOutcome::Passed),
    ];
    let mut with_doc_test = unit_and_integration.to_vec();
    with_doc_test.push(("src/lib.rs - add_one (line 3)", TestOutcome::Passed));
    let expected = [
        (
            Runner::Cargo,
            Some(TestResults {
                tests: tests(&with_doc_test),
                collected: Some(7),
                counts: TestCounts {
                    passed: 4,
                    failed: 1,
                    skipped: 1,
                    ..TestCounts::default()
                },
            }),
            // libtest counts per binary: both `adds_wrong` tests.
            Some(TestCounts {
                passed: 5,
                failed: 1,
                skipped: 1,
                ..TestCounts::default()
            }),
            true,
        ),
        (
            Runner::Nextest,
            Some(TestResults {
                tests: tests(&unit_and_integration),
                collected: Some(6),
                counts: TestCounts {
                    passed: 3,
                    failed: 1,
                    skipped: 1,
                    ..TestCounts::default()
                },
            }),
            Some(TestCounts {
                passed: 4,
                failed: 1,
                skipped: 1,
                ..TestCounts::default()
            }),
            true,
        ),
    ];
    assert_eq!(actual, expected);
}
