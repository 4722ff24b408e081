//! Detecting the test command from a repository's files.

use std::fs;

use plumb_verify::{Runner, TestCommand, detect};
use pretty_assertions::assert_eq;

/// Detects in a fresh folder holding `files`; the result as (runner, command line).
fn detect_in(files: &[(&str, &str)]) -> Option<(Runner, String)> {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }
    detect(dir.path()).map(|command: TestCommand| (command.runner, command.display()))
}

#[test]
fn detects_each_runner() {
    let pytest = Some((
        Runner::Pytest,
        "python3 -m pytest -q -p no:cacheprovider".to_string(),
    ));
    let cases: Vec<(&str, &[(&str, &str)])> = vec![
        ("pytest.ini", &[("pytest.ini", "[pytest]\n")]),
        (
            "pyproject.toml with [tool.pytest.ini_options]",
            &[(
                "pyproject.toml",
                "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n",
            )],
        ),
        (
            "setup.cfg with [tool:pytest]",
            &[("setup.cfg", "[tool:pytest]\ntestpaths = tests\n")],
        ),
        ("tox.ini", &[("tox.ini", "[tox]\nenvlist = py311\n")]),
        (
            "tests/test_*.py",
            &[("tests/test_x.py", "def test_x(): pass\n")],
        ),
        (
            "nested tests",
            &[("tests/unit/api/test_x.py", "def test_x(): pass\n")],
        ),
        ("test/conftest.py", &[("test/conftest.py", "")]),
        ("root conftest.py", &[("conftest.py", "")]),
        ("Cargo.toml", &[("Cargo.toml", "[package]\nname = \"x\"\n")]),
        ("go.mod", &[("go.mod", "module example.com/x\n")]),
        (
            "package.json running jest",
            &[("package.json", r#"{"scripts": {"test": "jest"}}"#)],
        ),
        (
            "package.json running vitest",
            &[(
                "package.json",
                r#"{"scripts": {"test": "cross-env NODE_ENV=test vitest run"}}"#,
            )],
        ),
        (
            "package.json running more than jest",
            &[(
                "package.json",
                r#"{"scripts": {"test": "eslint . && jest"}}"#,
            )],
        ),
        (
            "package.json running mocha",
            &[("package.json", r#"{"scripts": {"test": "mocha"}}"#)],
        ),
        ("pom.xml", &[("pom.xml", "<project/>")]),
        (
            "pom.xml with mvnw",
            &[("pom.xml", "<project/>"), ("mvnw", "#!/bin/sh\n")],
        ),
        ("build.gradle", &[("build.gradle", "")]),
        (
            "settings.gradle.kts with gradlew",
            &[("settings.gradle.kts", ""), ("gradlew", "#!/bin/sh\n")],
        ),
        (
            "java with a web front end: maven wins",
            &[
                ("pom.xml", "<project/>"),
                ("package.json", r#"{"scripts": {"test": "jest"}}"#),
            ],
        ),
        (
            "npm init placeholder",
            &[(
                "package.json",
                r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
            )],
        ),
        (
            "package.json without test",
            &[("package.json", r#"{"scripts": {"build": "tsc"}}"#)],
        ),
        ("broken package.json", &[("package.json", "{")]),
        (
            "pyproject.toml without pytest",
            &[("pyproject.toml", "[project]\nname = \"x\"\n")],
        ),
        (
            "tests folder without python tests",
            &[("tests/data.json", "{}")],
        ),
        ("nothing", &[("README.md", "# x\n")]),
        (
            "python and rust: pytest wins",
            &[("Cargo.toml", "[package]\n"), ("pytest.ini", "[pytest]\n")],
        ),
    ];
    let maven = |program: &str| {
        Some((
            Runner::Maven,
            format!("{program} -B --no-transfer-progress test"),
        ))
    };
    let actual: Vec<(&str, Option<(Runner, String)>)> = cases
        .iter()
        .map(|(name, files)| (*name, detect_in(files)))
        .collect();
    let expected = vec![
        ("pytest.ini", pytest.clone()),
        (
            "pyproject.toml with [tool.pytest.ini_options]",
            pytest.clone(),
        ),
        ("setup.cfg with [tool:pytest]", pytest.clone()),
        ("tox.ini", pytest.clone()),
        ("tests/test_*.py", pytest.clone()),
        ("nested tests", pytest.clone()),
        ("test/conftest.py", pytest.clone()),
        ("root conftest.py", pytest.clone()),
        (
            "Cargo.toml",
            Some((Runner::Cargo, "cargo test".to_string())),
        ),
        ("go.mod", Some((Runner::Go, "go test ./...".to_string()))),
        (
            "package.json running jest",
            Some((Runner::Jest, "npm test --silent".to_string())),
        ),
        (
            "package.json running vitest",
            Some((Runner::Vitest, "npm test --silent".to_string())),
        ),
        (
            "package.json running more than jest",
            Some((Runner::Npm, "npm test --silent".to_string())),
        ),
        (
            "package.json running mocha",
            Some((Runner::Npm, "npm test --silent".to_string())),
        ),
        ("pom.xml", maven("mvn")),
        ("pom.xml with mvnw", maven("./mvnw")),
        (
            "build.gradle",
            Some((Runner::Gradle, "gradle test --console plain".to_string())),
        ),
        (
            "settings.gradle.kts with gradlew",
            Some((Runner::Gradle, "./gradlew test --console plain".to_string())),
        ),
        ("java with a web front end: maven wins", maven("mvn")),
        ("npm init placeholder", None),
        ("package.json without test", None),
        ("broken package.json", None),
        ("pyproject.toml without pytest", None),
        ("tests folder without python tests", None),
        ("nothing", None),
        ("python and rust: pytest wins", pytest),
    ];
    assert_eq!(actual, expected);
}
