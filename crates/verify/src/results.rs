//! Per-test outcomes: how to run a test command so that each test's outcome can be read
//! ([`with_report`]), and reading them after the run ([`read_results`]).
//!
//! Where a runner writes a report file (pytest's JUnit XML, jest's and vitest's JSON, Surefire's
//! and Gradle's XML) the report is the source, and only a report written during this run counts:
//! a missing or older file means the suite never ran, never that it passed. Where a runner has no
//! report on stable toolchains (`cargo test`, nextest) or prints its events (`go test -json`), the
//! output is parsed. Test ids are in the runner's own form, so they can be handed back to
//! [`crate::narrow`].

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::SystemTime;

use plumb_protocol::TestCounts;
use plumb_workspace::Tree;
use serde::{Deserialize, Serialize};

use crate::runners::FinishedRun;
use crate::{Runner, TestCommand, output};

/// What became of one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestOutcome {
    Passed,
    Failed,
    /// The test could not run to its verdict: a broken fixture or setup, a file that failed to
    /// load, a package that did not build, a test that started and never finished.
    Error,
    Skipped,
    /// Expected to fail, and failed (pytest's `xfail`).
    #[serde(rename = "xfailed")]
    XFailed,
    /// Expected to fail, but passed.
    #[serde(rename = "xpassed")]
    XPassed,
}

impl TestOutcome {
    /// The outcome to keep when one id is reported twice (a pytest test that failed and then
    /// errored in teardown, two cargo test binaries with a test of the same name): the worse one,
    /// so that a duplicate never hides a failure, nor a skip a pass.
    pub(crate) fn worse(self, other: TestOutcome) -> TestOutcome {
        if other.badness() > self.badness() {
            other
        } else {
            self
        }
    }

    fn badness(self) -> u8 {
        match self {
            TestOutcome::Passed => 0,
            TestOutcome::XFailed => 1,
            TestOutcome::Skipped => 2,
            TestOutcome::XPassed => 3,
            TestOutcome::Failed => 4,
            TestOutcome::Error => 5,
        }
    }
}

/// The outcome of every test one run reported on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestResults {
    /// Test id in the runner's own form → outcome. pytest: `tests/test_x.py::TestC::test_y[1]`;
    /// cargo and nextest: `module::name`; go: `import/path/TestName/subtest`; jest and vitest:
    /// `path/x.test.js › describe › name`; Maven and Gradle: `pkg.Class#method`. A file or
    /// package that failed before any of its tests ran is an `Error` under its own path.
    pub tests: BTreeMap<String, TestOutcome>,
    /// What the runner said it collected, deselected tests included, when it says so: pytest's
    /// `collected N items` (not printed with `-q`), libtest's `running N tests` plus `filtered
    /// out`, nextest's `Starting N tests … (M skipped)`, jest's and vitest's `numTotalTests`, the
    /// JUnit `tests` attributes for Maven and Gradle. `None` for go.
    pub collected: Option<u32>,
    /// Derived from `tests`, plus the deselected count where the runner prints it (pytest,
    /// libtest).
    pub counts: TestCounts,
}

impl TestResults {
    pub(crate) fn new(tests: Outcomes, collected: Option<u32>, deselected: u32) -> TestResults {
        let tests = tests.0;
        let mut counts = TestCounts {
            deselected,
            ..TestCounts::default()
        };
        for outcome in tests.values() {
            let count = match outcome {
                TestOutcome::Passed => &mut counts.passed,
                TestOutcome::Failed => &mut counts.failed,
                TestOutcome::Error => &mut counts.errors,
                TestOutcome::Skipped => &mut counts.skipped,
                TestOutcome::XFailed => &mut counts.xfailed,
                TestOutcome::XPassed => &mut counts.xpassed,
            };
            *count += 1;
        }
        TestResults {
            tests,
            collected,
            counts,
        }
    }
}

/// Outcomes as a parser finds them; an id reported twice keeps the worse outcome.
#[derive(Debug, Default)]
pub(crate) struct Outcomes(BTreeMap<String, TestOutcome>);

impl Outcomes {
    pub(crate) fn add(&mut self, id: String, outcome: TestOutcome) {
        self.0
            .entry(id)
            .and_modify(|kept| *kept = kept.worse(outcome))
            .or_insert(outcome);
    }

    pub(crate) fn get(&self, id: &str) -> Option<TestOutcome> {
        self.0.get(id).copied()
    }
}

impl Runner {
    /// Whether [`read_results`] can give this runner's per-test outcomes. `Npm` (mocha,
    /// `node --test`, a script plumb cannot see into) cannot: there the caller has only
    /// [`crate::parse_counts`]. `Other` can only when its output names each test (see
    /// [`report_env`]), so it is not counted here.
    pub fn reports_per_test(self) -> bool {
        self.adapter().reports_per_test()
    }
}

/// The argv that runs `cmd` so that its per-test outcomes can be read afterwards:
/// pytest `--junitxml=<report_path> -o junit_family=xunit1 -rfEsxXp` (xunit1 for the file of
/// each test, the short summary for xpasses); `cargo test --no-fail-fast`; nextest
/// `--no-fail-fast --status-level skip`; `go test -json`; jest `--json --outputFile=<report_path>`;
/// vitest `--reporter=default --reporter=json --outputFile.json=<report_path>`; Maven
/// `--fail-at-end` and Gradle `--continue`, whose reports go to their own folders. `Npm` and
/// `Other` are returned unchanged.
///
/// `report_path` is an absolute path in a folder directly under the project root, such as
/// `<root>/.plumb-report/report`, which the caller creates, empties before each run (the
/// freshness check in [`read_results`] is the second guard, not the first) and keeps out of the
/// diff; Maven's and Gradle's reports and jest's file paths are found relative to that root.
/// cargo, nextest and go do not use it. Works the same on a command already narrowed (see
/// [`TestCommand::narrowed`]).
pub fn with_report(cmd: &TestCommand, report_path: &Path) -> Vec<String> {
    cmd.runner.adapter().with_report(&cmd.argv, report_path)
}

/// The per-test outcomes of a run of [`with_report`]'s argv that started at `started`. `None`
/// means the suite never ran: the report file is missing or was last modified before `started`
/// (a crash, an `os._exit` in a conftest, a build that failed), the output has no test results,
/// or the runner is one plumb cannot read per test (`Npm`; `Other` whose output does not name
/// every test it counts, see [`report_env`]). A run that never ran must never look like a pass,
/// so nothing here falls back from a missing report to the output (`Other` has no report: its
/// output is the only source). `Some` with no tests is a run that found nothing to run, which the caller judges the
/// same way. `report_path` must be the one given to [`with_report`]; `cmd` the command given to it
/// (narrowed or not).
pub fn read_results(
    cmd: &TestCommand,
    report_path: &Path,
    started: SystemTime,
    stdout: &str,
    stderr: &str,
) -> Option<TestResults> {
    let text = output::joined(stdout, stderr);
    let root = report_path
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new(""));
    cmd.runner.adapter().results(&FinishedRun {
        report_path,
        root,
        started,
        text: &text,
    })
}

/// The variables that make a command of `cmd`'s runner print what [`read_results`] reads. For
/// `Other` (a script or wrapper plumb cannot add options to): `PYTEST_ADDOPTS` asking pytest, if
/// that is what runs inside, for a short summary that names each test (the command's own `-r`
/// wins, as it comes later). Every other runner is asked through its argv ([`with_report`]).
pub fn report_env(cmd: &TestCommand) -> Vec<(String, String)> {
    cmd.runner.adapter().report_env()
}

/// The text of the file at `path` (under the tree at `root`) if it was written at or after
/// `started`. The test run that wrote it is the agent's, so it is read through the confined
/// reader: a report that is a link, a FIFO or larger than [`MAX_REPORT_BYTES`] is no report.
pub(crate) fn fresh_report(root: &Path, path: &Path, started: SystemTime) -> Option<String> {
    if !is_fresh(path, started) {
        return None;
    }
    Tree::new(root)
        .ok()?
        .read_entry_text(path, MAX_REPORT_BYTES)
        .ok()
}

/// The largest test report read (a JUnit or JSON report of a large suite is a few megabytes).
pub const MAX_REPORT_BYTES: u64 = 64 * 1024 * 1024;

pub(crate) fn is_fresh(path: &Path, started: SystemTime) -> bool {
    fs::metadata(path)
        .and_then(|metadata| metadata.modified())
        .is_ok_and(|modified| modified >= started)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_worse_outcome_wins() {
        let mut outcomes = Outcomes::default();
        outcomes.add("a".to_string(), TestOutcome::Failed);
        outcomes.add("a".to_string(), TestOutcome::Passed);
        outcomes.add("b".to_string(), TestOutcome::Passed);
        outcomes.add("b".to_string(), TestOutcome::Skipped);
        outcomes.add("c".to_string(), TestOutcome::Failed);
        outcomes.add("c".to_string(), TestOutcome::Error);
        let actual = TestResults::new(outcomes, Some(4), 1);
        let expected = TestResults {
            tests: BTreeMap::from([
                ("a".to_string(), TestOutcome::Failed),
                ("b".to_string(), TestOutcome::Skipped),
                ("c".to_string(), TestOutcome::Error),
            ]),
            collected: Some(4),
            counts: TestCounts {
                failed: 1,
                skipped: 1,
                errors: 1,
                deselected: 1,
                ..TestCounts::default()
            },
        };
        assert_eq!(actual, expected);
    }

    #[test]
    fn outcomes_serialise_in_pytest_words() {
        let actual = serde_json::to_string(&[
            TestOutcome::Passed,
            TestOutcome::Error,
            TestOutcome::XFailed,
            TestOutcome::XPassed,
        ])
        .unwrap();
        assert_eq!(actual, r#"["passed","error","xfailed","xpassed"]"#);
    }

    #[test]
    fn a_wrapped_runner_is_read_per_test_only_when_its_output_names_every_test() {
        let other = TestCommand {
            argv: ["sh", "-c", "python3 -m pytest -q"]
                .map(String::from)
                .to_vec(),
            runner: Runner::Other,
        };
        let read = |text: &str| {
            read_results(
                &other,
                Path::new("/nowhere/.r/r"),
                SystemTime::now(),
                text,
                "",
            )
        };
        let full = "\
..F.s                                                                    [100%]
=========================== short test summary info ============================
PASSED tests/test_a.py::test_one
PASSED tests/test_a.py::test_two[a-b]
SKIPPED [1] tests/test_a.py:9: later
FAILED tests/test_a.py::test_tax - AssertionError: assert 1 == 2
ERROR tests/test_b.py - ImportError: no module named c
1 failed, 2 passed, 1 skipped, 1 error in 0.05s
";
        // The command's own `-rfE` won over plumb's: the passes are not named.
        let cut = "\
=========================== short test summary info ============================
FAILED tests/test_a.py::test_tax - AssertionError: assert 1 == 2
1 failed, 2 passed in 0.05s
";
        let cargo = "\
running 2 tests
test tests::adds ... ok
test tests::subtracts ... FAILED

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
        let actual = [
            read(full).map(|r| (r.tests, r.counts)),
            read(cut).map(|r| (r.tests, r.counts)),
            read("2 passed in 0.01s\n").map(|r| (r.tests, r.counts)),
            read(cargo).map(|r| (r.tests, r.counts)),
        ];
        let expected = [
            Some((
                BTreeMap::from([
                    ("tests/test_a.py::test_one".to_string(), TestOutcome::Passed),
                    (
                        "tests/test_a.py::test_two[a-b]".to_string(),
                        TestOutcome::Passed,
                    ),
                    ("tests/test_a.py::test_tax".to_string(), TestOutcome::Failed),
                    ("tests/test_b.py".to_string(), TestOutcome::Error),
                ]),
                TestCounts {
                    passed: 2,
                    failed: 1,
                    errors: 1,
                    ..TestCounts::default()
                },
            )),
            None,
            None,
            Some((
                BTreeMap::from([
                    ("tests::adds".to_string(), TestOutcome::Passed),
                    ("tests::subtracts".to_string(), TestOutcome::Failed),
                ]),
                TestCounts {
                    passed: 1,
                    failed: 1,
                    ..TestCounts::default()
                },
            )),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn only_a_wrapper_gets_the_summary_variable() {
        let cmd = |runner| TestCommand {
            argv: vec!["x".to_string()],
            runner,
        };
        let actual = [
            report_env(&cmd(Runner::Other)),
            report_env(&cmd(Runner::Pytest)),
        ];
        let expected = [
            vec![("PYTEST_ADDOPTS".to_string(), "-rfEsxXp".to_string())],
            Vec::new(),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_report_older_than_the_run_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.xml");
        fs::write(&path, "<testsuite/>").unwrap();
        let before = SystemTime::UNIX_EPOCH;
        let after = SystemTime::now() + std::time::Duration::from_secs(60);
        let actual = [
            fresh_report(dir.path(), &path, before),
            fresh_report(dir.path(), &path, after),
            fresh_report(dir.path(), &dir.path().join("missing.xml"), before),
        ];
        assert_eq!(actual, [Some("<testsuite/>".to_string()), None, None]);
    }
}
