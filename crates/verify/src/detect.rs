//! Finding the project's test command from the files at its root.
//!
//! Checked in this order, first match wins: pytest (its configuration, `tox.ini`, a root
//! `conftest.py`, or a `tests`/`test` folder holding `test_*.py`, `*_test.py` or `conftest.py`),
//! cargo (`Cargo.toml`), go (`go.mod`), Maven (`pom.xml`), Gradle (`build.gradle[.kts]` or
//! `settings.gradle[.kts]`), npm (`package.json` with a real `scripts.test`, not the placeholder
//! `npm init` writes). Python comes first because mixed repositories (a Python package with a
//! Rust extension or a web front end) are usually tested through pytest, and the JVM builds come
//! before npm because a Java project's `package.json` is usually its web front end.
//!
//! Maven and Gradle run through the project's wrapper (`./mvnw`, `./gradlew`) when it has one.
//! An npm test script that is only a call to jest or vitest (`jest --ci`, `vitest run`) makes the
//! command jest's or vitest's, so that its per-test report can be asked for; any other script
//! stays plain npm.

use std::fs;
use std::path::Path;

use crate::command::guess;
use crate::{Runner, TestCommand};

/// How deep below `tests/` to look for test files.
const TEST_FOLDER_DEPTH: usize = 3;

/// The project's test command, or `None` when nothing is found.
pub fn detect(root: &Path) -> Option<TestCommand> {
    let command = |words: &[&str], runner| TestCommand {
        argv: words.iter().map(|word| word.to_string()).collect(),
        runner,
    };
    if uses_pytest(root) {
        return Some(command(
            &["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            Runner::Pytest,
        ));
    }
    if root.join("Cargo.toml").is_file() {
        return Some(command(&["cargo", "test"], Runner::Cargo));
    }
    if root.join("go.mod").is_file() {
        return Some(command(&["go", "test", "./..."], Runner::Go));
    }
    if root.join("pom.xml").is_file() {
        let maven = if root.join("mvnw").is_file() {
            "./mvnw"
        } else {
            "mvn"
        };
        return Some(command(
            &[maven, "-B", "--no-transfer-progress", "test"],
            Runner::Maven,
        ));
    }
    if GRADLE_FILES.iter().any(|name| root.join(name).is_file()) {
        let gradle = if root.join("gradlew").is_file() {
            "./gradlew"
        } else {
            "gradle"
        };
        return Some(command(
            &[gradle, "test", "--console", "plain"],
            Runner::Gradle,
        ));
    }
    let script = npm_test_script(root)?;
    Some(command(
        &["npm", "test", "--silent"],
        script_runner(&script),
    ))
}

/// The files that make a folder a Gradle project.
const GRADLE_FILES: &[&str] = &[
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle",
    "settings.gradle.kts",
];

/// The runner of an npm test script: jest or vitest when the script only runs it (after
/// variable settings or `cross-env`), else npm.
fn script_runner(script: &str) -> Runner {
    let Ok(words) = shell_words::split(script) else {
        return Runner::Npm;
    };
    if words
        .iter()
        .any(|word| ["&&", "||", ";", "|", "&", ">", "<"].contains(&word.as_str()))
    {
        return Runner::Npm;
    }
    let command: Vec<String> = words
        .into_iter()
        .skip_while(|word| word == "cross-env" || is_setting(word))
        .collect();
    match guess(&command).runner {
        runner @ (Runner::Jest | Runner::Vitest) => runner,
        _ => Runner::Npm,
    }
}

/// A settings file of the project at `root`, through the confined reader (a link out, a FIFO or a
/// file over a megabyte reads as absent).
fn settings_text(root: &Path, name: &str) -> Option<String> {
    let tree = plumb_workspace::Tree::new(root).ok()?;
    tree.read_text(name, 1024 * 1024).ok()
}

/// `NAME=value` before a command.
fn is_setting(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn uses_pytest(root: &Path) -> bool {
    let file_has = |name: &str, needle: &str| {
        settings_text(root, name).is_some_and(|text| text.contains(needle))
    };
    [
        "pytest.ini",
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        "tox.ini",
        "conftest.py",
    ]
    .iter()
    .any(|name| root.join(name).is_file())
        || file_has("pyproject.toml", "[tool.pytest")
        || file_has("setup.cfg", "[tool:pytest]")
        || ["tests", "test"]
            .iter()
            .any(|folder| has_python_tests(&root.join(folder), TEST_FOLDER_DEPTH))
}

fn has_python_tests(folder: &Path, depth: usize) -> bool {
    let Ok(entries) = fs::read_dir(folder) else {
        return false;
    };
    let mut subfolders = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            subfolders.push(entry.path());
        } else if name == "conftest.py"
            || (name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py")))
        {
            return true;
        }
    }
    depth > 0
        && subfolders
            .iter()
            .any(|subfolder| has_python_tests(subfolder, depth - 1))
}

/// The `scripts.test` of package.json, unless it is empty or `npm init`'s placeholder.
fn npm_test_script(root: &Path) -> Option<String> {
    let text = settings_text(root, "package.json")?;
    let package = serde_json::from_str::<serde_json::Value>(&text).ok()?;
    package["scripts"]["test"]
        .as_str()
        .filter(|script| !script.trim().is_empty() && !script.contains("no test specified"))
        .map(String::from)
}
