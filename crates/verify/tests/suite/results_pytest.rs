//! Per-test outcomes of real pytest runs (python3 with pytest must be installed): detect or parse
//! the command, add the report options, run it, read the results back.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use plumb_protocol::TestCounts;
use plumb_verify::{
    Runner, TestCommand, TestOutcome, TestResults, detect, failure_excerpt, parse_command,
    parse_counts, read_results, with_report,
};
use pretty_assertions::assert_eq;

const SHOP_TESTS: &str = r#"import pytest

def test_ok():
    pass

def test_fail():
    assert 1 + 1 == 3

@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")

def test_error(broken):
    pass

@pytest.mark.skip(reason="later")
def test_skipped():
    pass

@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False

@pytest.mark.xfail(reason="fixed already")
def test_xpass():
    pass

@pytest.mark.parametrize("rate", [5, "a b"])
def test_param(rate):
    pass

def test_deselected():
    pass

class TestCart:
    def test_total(self):
        pass
"#;

/// A test class whose test function lives in another file, so JUnit's `file` is not the node
/// id's file.
const HELPERS: &str = "class BaseChecks:\n    def test_inherited(self):\n        pass\n";
const SUB_TESTS: &str = "from helpers import BaseChecks\n\nclass TestSub(BaseChecks):\n    pass\n";

/// A project in a temporary folder, with the report folder the caller creates.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new(files: &[(&str, &str)]) -> Project {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join(".plumb-report")).unwrap();
        let project = Project { dir };
        for (path, text) in files {
            project.write(path, text);
        }
        project
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, path: &str, text: &str) {
        let path = self.root().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn report_path(&self) -> PathBuf {
        self.root().join(".plumb-report/junit.xml")
    }

    /// Runs `cmd` with the report options; its results, output and exit code.
    fn run(&self, cmd: &TestCommand) -> Run {
        let argv = with_report(cmd, &self.report_path());
        let started = SystemTime::now();
        let output = Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(self.root())
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .unwrap_or_else(|err| panic!("cannot run {argv:?}: {err}"));
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(
            !stderr.contains("No module named pytest"),
            "this test needs a real pytest: install it with `python3 -m pip install pytest`"
        );
        let results = read_results(cmd, &self.report_path(), started, &stdout, &stderr);
        Run {
            results,
            stdout,
            stderr,
            code: output.status.code(),
        }
    }
}

struct Run {
    results: Option<TestResults>,
    stdout: String,
    stderr: String,
    code: Option<i32>,
}

fn tests(entries: &[(&str, TestOutcome)]) -> BTreeMap<String, TestOutcome> {
    entries
        .iter()
        .map(|(id, outcome)| (id.to_string(), *outcome))
        .collect()
}

fn shop() -> Project {
    Project::new(&[
        ("pytest.ini", "[pytest]\naddopts = -k \"not deselected\"\n"),
        ("tests/test_shop.py", SHOP_TESTS),
        ("tests/helpers.py", HELPERS),
        ("tests/test_sub.py", SUB_TESTS),
    ])
}

#[test]
fn every_outcome_of_a_real_run() {
    let project = shop();
    // Not quiet, so that pytest says how many tests it collected.
    let cmd = parse_command("python3 -m pytest -p no:cacheprovider").unwrap();
    let run = project.run(&cmd);

    let actual = (
        run.results,
        parse_counts(Runner::Pytest, &run.stdout, &run.stderr),
    );
    let counts = TestCounts {
        passed: 5,
        failed: 1,
        skipped: 1,
        errors: 1,
        deselected: 1,
        xfailed: 1,
        xpassed: 1,
    };
    let expected = (
        Some(TestResults {
            tests: tests(&[
                (
                    "tests/test_shop.py::TestCart::test_total",
                    TestOutcome::Passed,
                ),
                ("tests/test_shop.py::test_error", TestOutcome::Error),
                ("tests/test_shop.py::test_fail", TestOutcome::Failed),
                ("tests/test_shop.py::test_ok", TestOutcome::Passed),
                ("tests/test_shop.py::test_param[5]", TestOutcome::Passed),
                ("tests/test_shop.py::test_param[a b]", TestOutcome::Passed),
                ("tests/test_shop.py::test_skipped", TestOutcome::Skipped),
                ("tests/test_shop.py::test_xfail", TestOutcome::XFailed),
                ("tests/test_shop.py::test_xpass", TestOutcome::XPassed),
                (
                    "tests/test_sub.py::TestSub::test_inherited",
                    TestOutcome::Passed,
                ),
            ]),
            collected: Some(11),
            counts,
        }),
        // The per-test counts agree with pytest's own summary line.
        Some(counts),
    );
    assert_eq!(actual, expected);
}

#[test]
fn ids_narrow_the_next_run() {
    let project = shop();
    let cmd = detect(project.root()).unwrap();
    let ids = [
        "tests/test_shop.py::test_param[a b]",
        "tests/test_sub.py::TestSub::test_inherited",
        "tests/test_shop.py::test_fail",
    ]
    .map(String::from);
    let run = project.run(&cmd.narrowed(&ids).unwrap());

    let passed_lines = failure_excerpt(Runner::Pytest, &run.stdout, &run.stderr)
        .lines()
        .filter(|line| line.starts_with("PASSED"))
        .count();
    let actual = (run.results, passed_lines);
    let expected = (
        Some(TestResults {
            tests: tests(&[
                ("tests/test_shop.py::test_fail", TestOutcome::Failed),
                ("tests/test_shop.py::test_param[a b]", TestOutcome::Passed),
                (
                    "tests/test_sub.py::TestSub::test_inherited",
                    TestOutcome::Passed,
                ),
            ]),
            // `-q`: pytest does not say what it collected.
            collected: None,
            counts: TestCounts {
                passed: 2,
                failed: 1,
                ..TestCounts::default()
            },
        }),
        // The short summary lists passed tests for the report; the excerpt leaves them out.
        0,
    );
    assert_eq!(actual, expected);
}

#[test]
fn a_collection_error_is_an_error_never_a_pass() {
    let project = Project::new(&[
        (
            "tests/test_bad.py",
            "import no_such_module\n\ndef test_a():\n    pass\n",
        ),
        ("tests/test_good.py", "def test_b():\n    pass\n"),
    ]);
    let quiet = detect(project.root()).unwrap();
    let framed = parse_command("python3 -m pytest -p no:cacheprovider").unwrap();
    let actual = [project.run(&quiet).results, project.run(&framed).results];
    let broken = |collected| {
        Some(TestResults {
            // pytest stops after a collection error: test_b never runs.
            tests: tests(&[("tests/test_bad.py", TestOutcome::Error)]),
            collected,
            counts: TestCounts {
                errors: 1,
                ..TestCounts::default()
            },
        })
    };
    assert_eq!(actual, [broken(None), broken(Some(1))]);
}

#[test]
fn a_run_that_exits_before_writing_its_report_never_ran() {
    let project = Project::new(&[("tests/test_ok.py", "def test_ok():\n    pass\n")]);
    let cmd = detect(project.root()).unwrap();
    let first = project.run(&cmd);
    // A conftest that ends pytest, with exit code 0, before any test runs: the report of the
    // first run is still there, older than this run.
    project.write("conftest.py", "import os\n\nos._exit(0)\n");
    let second = project.run(&cmd);
    let fresh = tempfile::tempdir().unwrap();
    fs::create_dir(fresh.path().join(".plumb-report")).unwrap();
    let never_written = read_results(
        &cmd,
        &fresh.path().join(".plumb-report/junit.xml"),
        SystemTime::now(),
        &second.stdout,
        &second.stderr,
    );

    let actual = (
        first.results.map(|results| results.counts),
        second.code,
        second.results,
        never_written,
    );
    let expected = (
        Some(TestCounts {
            passed: 1,
            ..TestCounts::default()
        }),
        Some(0),
        None,
        None,
    );
    assert_eq!(actual, expected);
}
