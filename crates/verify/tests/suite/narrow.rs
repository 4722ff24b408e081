//! Narrowing a parsed command to some tests, and the options that make it report per test.

use std::path::Path;

use plumb_verify::{VerifyError, narrow, parse_command, with_report};
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
        narrowed("cargo nextest run", &["tests::adds", "integration_ok"]),
        narrowed(
            "go test ./...",
            &["example.com/m/calc/TestAdd", "example.com/m/TestB/case"],
        ),
        narrowed("npx jest", &["src/a.test.js › sum › adds"]),
        narrowed("npx vitest run", &["src/a.test.ts › adds", "src/b.test.ts"]),
        narrowed(
            "mvn -B test",
            &["com.x.CalcTest#adds", "com.x.CalcTest#subs"],
        ),
        narrowed("./gradlew test", &["com.x.CalcTest#adds()"]),
    ];
    let expected = [
        Ok("python -m pytest -q 'tests/test_a.py::test_x[a b]' tests/test_b.py".to_string()),
        Ok("python -m pytest -q".to_string()),
        Ok("cargo test parser::tests::eof".to_string()),
        Ok("go test ./... -run '^(TestA|TestB)$'".to_string()),
        Ok("npm test --silent -- src/a.test.js".to_string()),
        Ok("cargo nextest run -- --exact tests::adds integration_ok".to_string()),
        Ok("go test ./... -run '^(TestAdd|TestB)$'".to_string()),
        Ok("npx jest 'src\\/a\\.test\\.js' -t '^(?:sum adds)$'".to_string()),
        Ok("npx vitest run src/a.test.ts src/b.test.ts".to_string()),
        Ok("mvn -B test '-Dtest=CalcTest#adds+subs' \
            '-Dsurefire.failIfNoSpecifiedTests=false' '-DfailIfNoTests=false'"
            .to_string()),
        Ok("./gradlew test --tests com.x.CalcTest.adds".to_string()),
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

#[test]
fn report_options_per_runner() {
    let report = Path::new("/w/.plumb-report/report");
    let commands = [
        "python -m pytest -q",
        "cargo test --workspace",
        "cargo nextest run",
        "go test -v ./...",
        "npx jest --ci",
        "npx vitest run",
        "mvn -B test",
        "./gradlew test",
        "npm test",
        "make test",
    ];
    let actual: Vec<String> = commands
        .iter()
        .map(|text| with_report(&parse_command(text).unwrap(), report).join(" "))
        .collect();
    let expected = [
        "python -m pytest -q --junitxml=/w/.plumb-report/report -o junit_family=xunit1 -rfEsxXp",
        "cargo test --no-fail-fast --workspace",
        "cargo nextest run --no-fail-fast --status-level skip",
        "go test -json -v ./...",
        "npx jest --ci --json --outputFile=/w/.plumb-report/report",
        "npx vitest run --reporter=default --reporter=json --outputFile.json=/w/.plumb-report/report",
        "mvn --fail-at-end -B test",
        "./gradlew --continue test",
        // mocha, `node --test`, a script plumb cannot see into: no per-test report.
        "npm test",
        "make test",
    ]
    .map(String::from);
    assert_eq!(actual, expected);
}
