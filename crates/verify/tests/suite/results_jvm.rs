//! Per-test outcomes of Maven (Surefire) and Gradle from their JUnit XML reports. The reports are
//! hand-written (`fixtures/surefire/README.md`, `fixtures/gradle/README.md`): Maven is installed
//! here but cannot fetch Surefire without Maven Central, and Gradle is not installed.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::path::Path;
use std::time::{Duration, SystemTime};

use plumb_protocol::TestCounts;
use plumb_verify::{TestOutcome, TestResults, detect, narrow, read_results, with_report};
use pretty_assertions::assert_eq;

use super::fixtures;

fn tests(entries: &[(&str, TestOutcome)]) -> BTreeMap<String, TestOutcome> {
    entries
        .iter()
        .map(|(id, outcome)| (id.to_string(), *outcome))
        .collect()
}

/// Copies fixture `runner/name` to `root/folder/name`, last modified at `modified`.
fn place(root: &Path, folder: &str, runner: &str, name: &str, modified: SystemTime) {
    let folder = root.join(folder);
    fs::create_dir_all(&folder).unwrap();
    fs::write(folder.join(name), fixtures::read(runner, name)).unwrap();
    File::options()
        .write(true)
        .open(folder.join(name))
        .unwrap()
        .set_modified(modified)
        .unwrap();
}

#[test]
fn surefire_reports_of_every_module_written_during_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("pom.xml"), "<project/>").unwrap();
    fs::create_dir(root.join(".plumb-report")).unwrap();
    let report_path = root.join(".plumb-report/report");
    let started = SystemTime::now() - Duration::from_secs(60);
    let during = SystemTime::now();
    let before = started - Duration::from_secs(3600);
    place(
        root,
        "target/surefire-reports",
        "surefire",
        "TEST-com.example.shop.TaxTest.xml",
        during,
    );
    place(
        root,
        "core/target/surefire-reports",
        "surefire",
        "TEST-com.example.core.MoneyTest.xml",
        during,
    );
    // A module this run did not test: its report is from an earlier build.
    place(
        root,
        "legacy/target/surefire-reports",
        "surefire",
        "TEST-com.example.core.MoneyTest.xml",
        before,
    );
    let cmd = detect(root).unwrap();
    let results = read_results(&cmd, &report_path, started, "", "");
    let ids: Vec<String> = results
        .iter()
        .flat_map(|results| results.tests.keys().cloned())
        .collect();

    let actual = (
        with_report(&cmd, &report_path).join(" "),
        results,
        narrow(&cmd, &ids).unwrap().join(" "),
        // Nothing written during a later run: it never ran.
        read_results(
            &cmd,
            &report_path,
            SystemTime::now() + Duration::from_secs(5),
            "",
            "",
        ),
    );
    let expected = (
        "mvn --fail-at-end -B --no-transfer-progress test".to_string(),
        Some(TestResults {
            tests: tests(&[
                ("com.example.core.MoneyTest#addsPaise", TestOutcome::Passed),
                // Passed on a rerun.
                ("com.example.shop.TaxTest#clockedRate", TestOutcome::Passed),
                ("com.example.shop.TaxTest#exportRate", TestOutcome::Skipped),
                (
                    "com.example.shop.TaxTest#rates(int, int)[1]",
                    TestOutcome::Passed,
                ),
                (
                    "com.example.shop.TaxTest#rates(int, int)[2]",
                    TestOutcome::Passed,
                ),
                ("com.example.shop.TaxTest#reducedRate", TestOutcome::Failed),
                ("com.example.shop.TaxTest#roundsHalfUp", TestOutcome::Error),
                ("com.example.shop.TaxTest#standardRate", TestOutcome::Passed),
            ]),
            collected: Some(8),
            counts: TestCounts {
                passed: 5,
                failed: 1,
                skipped: 1,
                errors: 1,
                ..TestCounts::default()
            },
        }),
        "mvn -B --no-transfer-progress test -Dtest=MoneyTest#addsPaise,\
         TaxTest#clockedRate+exportRate+rates+reducedRate+roundsHalfUp+standardRate \
         -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false"
            .to_string(),
        None,
    );
    assert_eq!(actual, expected);
}

#[test]
fn gradle_reports_of_each_test_task() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("build.gradle.kts"), "").unwrap();
    fs::create_dir(root.join(".plumb-report")).unwrap();
    let report_path = root.join(".plumb-report/report");
    let started = SystemTime::now() - Duration::from_secs(60);
    place(
        root,
        "build/test-results/test",
        "gradle",
        "TEST-com.example.shop.TaxTest.xml",
        SystemTime::now(),
    );
    let cmd = detect(root).unwrap();
    let ids = ["com.example.shop.TaxTest#reducedRate()".to_string()];

    let actual = (
        with_report(&cmd, &report_path).join(" "),
        read_results(&cmd, &report_path, started, "", ""),
        narrow(&cmd, &ids).unwrap().join(" "),
    );
    let expected = (
        "gradle --continue test --console plain".to_string(),
        Some(TestResults {
            tests: tests(&[
                (
                    "com.example.shop.TaxTest#exportRate()",
                    TestOutcome::Skipped,
                ),
                (
                    "com.example.shop.TaxTest#reducedRate()",
                    TestOutcome::Failed,
                ),
                (
                    "com.example.shop.TaxTest#standardRate()",
                    TestOutcome::Passed,
                ),
            ]),
            collected: Some(3),
            counts: TestCounts {
                passed: 1,
                failed: 1,
                skipped: 1,
                ..TestCounts::default()
            },
        }),
        "gradle test --tests com.example.shop.TaxTest.reducedRate --console plain".to_string(),
    );
    assert_eq!(actual, expected);
}
