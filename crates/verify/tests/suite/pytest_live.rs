//! detect → narrow → run → parse against a real pytest (python3 with pytest must be installed).

use std::fs;
use std::path::Path;
use std::process::Command;

use plumb_protocol::TestCounts;
use plumb_verify::{Runner, TestCommand, detect, narrow, parse_counts};
use pretty_assertions::assert_eq;

const TESTS: &str = r#"import pytest

def test_ok():
    assert True

def test_fail():
    assert 1 == 2

@pytest.mark.skip(reason="later")
def test_skip():
    pass

@pytest.mark.xfail
def test_xfail():
    assert False

@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert n > 0
"#;

fn run(root: &Path, argv: &[String]) -> Option<TestCounts> {
    let output = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap_or_else(|err| panic!("cannot run {argv:?}: {err}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("No module named pytest"),
        "this test needs a real pytest: install it with `python3 -m pip install pytest`"
    );
    parse_counts(Runner::Pytest, &stdout, &stderr)
}

#[test]
fn real_pytest_detected_narrowed_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir(root.join("tests")).unwrap();
    fs::write(root.join("tests/test_demo.py"), TESTS).unwrap();

    let command = detect(root).unwrap();
    assert_eq!(
        command,
        TestCommand {
            argv: ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
                .map(String::from)
                .to_vec(),
            runner: Runner::Pytest,
        }
    );

    let narrowed_one = narrow(&command, &["tests/test_demo.py::test_ok".to_string()]).unwrap();
    let narrowed_param = narrow(
        &command,
        &[
            "tests/test_demo.py::test_param[2]".to_string(),
            "tests/test_demo.py::test_fail".to_string(),
        ],
    )
    .unwrap();
    let narrowed_missing =
        narrow(&command, &["tests/test_demo.py::test_nothing".to_string()]).unwrap();

    let actual = [
        run(root, &command.argv),
        run(root, &narrowed_one),
        run(root, &narrowed_param),
        run(root, &narrowed_missing),
    ];
    let none = TestCounts::default();
    let expected = [
        Some(TestCounts {
            passed: 3,
            failed: 1,
            skipped: 1,
            xfailed: 1,
            ..none
        }),
        Some(TestCounts { passed: 1, ..none }),
        Some(TestCounts {
            passed: 1,
            failed: 1,
            ..none
        }),
        // pytest reports an unknown node id as an error and runs nothing.
        Some(none),
    ];
    assert_eq!(actual, expected);
}
