//! Finding the project's test command from the files at its root.
//!
//! Checked in this order, first match wins: pytest (its configuration, `tox.ini`, a root
//! `conftest.py`, or a `tests`/`test` folder holding `test_*.py`, `*_test.py` or `conftest.py`),
//! cargo (`Cargo.toml`), go (`go.mod`), npm (`package.json` with a real `scripts.test`, not the
//! placeholder `npm init` writes). Python comes first because mixed repositories (a Python package
//! with a Rust extension or a web front end) are usually tested through pytest.

use std::fs;
use std::path::Path;

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
    if has_npm_test_script(root) {
        return Some(command(&["npm", "test", "--silent"], Runner::Npm));
    }
    None
}

fn uses_pytest(root: &Path) -> bool {
    let file_has = |name: &str, needle: &str| {
        fs::read_to_string(root.join(name)).is_ok_and(|text| text.contains(needle))
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

fn has_npm_test_script(root: &Path) -> bool {
    let Ok(text) = fs::read_to_string(root.join("package.json")) else {
        return false;
    };
    let Ok(package) = serde_json::from_str::<serde_json::Value>(&text) else {
        return false;
    };
    package["scripts"]["test"]
        .as_str()
        .is_some_and(|script| !script.trim().is_empty() && !script.contains("no test specified"))
}
