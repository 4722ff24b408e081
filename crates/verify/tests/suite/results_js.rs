//! Per-test outcomes of jest and vitest from their JSON reports, captured from real runs of
//! jest 29 and vitest 3 (`fixtures/jest/capture.sh`; neither is installed for the tests).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use plumb_protocol::TestCounts;
use plumb_verify::{
    Runner, TestCommand, TestOutcome, TestResults, detect, parse_counts, read_results, with_report,
};
use pretty_assertions::assert_eq;

use super::fixtures;

/// A project whose package.json runs `script`, with the captured report of `runner` written
/// where [`with_report`] asked for it; the command detected and the report path.
fn project(root: &Path, script: &str, runner: &str) -> (TestCommand, std::path::PathBuf) {
    fs::write(
        root.join("package.json"),
        format!(r#"{{"scripts": {{"test": "{script}"}}}}"#),
    )
    .unwrap();
    fs::create_dir_all(root.join(".plumb-report")).unwrap();
    let report_path = root.join(".plumb-report/report.json");
    let report = fixtures::read("jest", &format!("{runner}.json"))
        .replace("@ROOT@", &root.display().to_string());
    fs::write(&report_path, report).unwrap();
    (detect(root).unwrap(), report_path)
}

fn expected(collected: u32) -> TestResults {
    let tests: BTreeMap<String, TestOutcome> = [
        // The file failed to load: none of its tests ran.
        ("src/broken.test.js", TestOutcome::Error),
        ("src/sum.test.js › sum › adds", TestOutcome::Passed),
        ("src/sum.test.js › sum › adds wrong", TestOutcome::Failed),
        ("src/sum.test.js › sum › later", TestOutcome::Skipped),
        ("src/sum.test.js › sum › nested › deep", TestOutcome::Passed),
        ("src/sum.test.js › sum › skipped one", TestOutcome::Skipped),
        ("src/sum.test.js › top level", TestOutcome::Passed),
    ]
    .iter()
    .map(|(id, outcome)| (id.to_string(), *outcome))
    .collect();
    TestResults {
        tests,
        collected: Some(collected),
        counts: TestCounts {
            passed: 3,
            failed: 1,
            skipped: 2,
            errors: 1,
            ..TestCounts::default()
        },
    }
}

#[test]
fn reports_of_real_jest_and_vitest_runs() {
    let jest_dir = tempfile::tempdir().unwrap();
    let vitest_dir = tempfile::tempdir().unwrap();
    let started = SystemTime::now() - Duration::from_secs(1);
    let (jest, jest_report) = project(jest_dir.path(), "jest --ci", "jest");
    let (vitest, vitest_report) = project(vitest_dir.path(), "vitest run", "vitest");
    let (jest_out, jest_err) = fixtures::output("jest", "jest");
    let (vitest_out, vitest_err) = fixtures::output("jest", "vitest");

    let actual = [
        (
            jest.runner,
            with_report(&jest, &jest_report).join(" "),
            read_results(&jest, &jest_report, started, &jest_out, &jest_err),
            parse_counts(jest.runner, &jest_out, &jest_err),
        ),
        (
            vitest.runner,
            with_report(&vitest, &vitest_report).join(" "),
            read_results(&vitest, &vitest_report, started, &vitest_out, &vitest_err),
            parse_counts(vitest.runner, &vitest_out, &vitest_err),
        ),
    ];
    let jest_path = jest_report.display();
    let vitest_path = vitest_report.display();
    let results = expected(6);
    let expected = [
        (
            Runner::Jest,
            format!("npm test --silent -- --json --outputFile={jest_path}"),
            Some(results.clone()),
            // The console's own counts agree (the broken file counted as one error).
            Some(results.counts),
        ),
        (
            Runner::Vitest,
            format!(
                "npm test --silent -- --reporter=default --reporter=json \
                 --outputFile.json={vitest_path}"
            ),
            Some(results.clone()),
            Some(results.counts),
        ),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn a_report_from_before_the_run_never_ran() {
    let dir = tempfile::tempdir().unwrap();
    let (jest, report) = project(dir.path(), "jest", "jest");
    let started = SystemTime::now() + Duration::from_secs(5);
    let missing = dir.path().join(".plumb-report/other.json");
    let actual = [
        read_results(&jest, &report, started, "", ""),
        read_results(&jest, &missing, SystemTime::UNIX_EPOCH, "", ""),
    ];
    assert_eq!(actual, [None, None]);
}
