//! Narrowing a parsed command to some tests.

use plumb_verify::{VerifyError, narrow, parse_command};
use pretty_assertions::assert_eq;

fn narrowed(command: &str, tests: &[&str]) -> Result<String, VerifyError> {
    let command = parse_command(command).unwrap();
    let tests: Vec<String> = tests.iter().map(|test| test.to_string()).collect();
    narrow(&command, &tests).map(shell_words::join)
}

#[test]
fn narrows_per_runner() {
    let actual = [
        narrowed(
            "python -m pytest -q",
            &["tests/test_a.py::test_x[a b]", "tests/test_b.py"],
        ),
        narrowed("python -m pytest -q", &[]),
        narrowed("cargo test", &["parser::tests::eof"]),
        narrowed("go test ./...", &["TestA", "TestB"]),
        narrowed("npm test --silent", &["src/a.test.js"]),
    ];
    let expected = [
        Ok("python -m pytest -q 'tests/test_a.py::test_x[a b]' tests/test_b.py".to_string()),
        Ok("python -m pytest -q".to_string()),
        Ok("cargo test parser::tests::eof".to_string()),
        Ok("go test ./... -run '^(TestA|TestB)$'".to_string()),
        Ok("npm test --silent -- src/a.test.js".to_string()),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn refuses_option_like_and_empty_ids_and_unknown_runners() {
    let actual = [
        narrowed("python -m pytest", &["tests/test_a.py", "--pdb"]),
        narrowed("cargo test", &["-q"]),
        narrowed("python -m pytest", &[" "]),
        narrowed("make test", &["a"]),
    ];
    let expected = [
        Err(VerifyError::OptionLikeTestId {
            id: "--pdb".to_string(),
        }),
        Err(VerifyError::OptionLikeTestId {
            id: "-q".to_string(),
        }),
        Err(VerifyError::EmptyTestId),
        Err(VerifyError::CannotNarrow {
            command: "make test".to_string(),
        }),
    ];
    assert_eq!(actual, expected);
}
