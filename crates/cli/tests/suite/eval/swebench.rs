//! SWE-bench's own records as published (`data/swebench/lite-dev.jsonl`) with the trees of the two
//! marshmallow instances (`--repos data/swebench`): the oracle resolves both, and plumb's ladder
//! agrees. The setup is SWE-bench's for marshmallow: Python 3.9 and `pip install -e '.[dev]'`
//! from PyPI (the one step with the network); the tests run without it.

use std::path::PathBuf;

use pretty_assertions::assert_eq;

use super::{ids, results, root};
use crate::suite::common::{plumb, stderr};

/// Python 3.9: `PLUMB_TEST_PYTHON39`, else pyenv's, else `python3.9` on the PATH.
fn python39() -> PathBuf {
    if let Some(path) = std::env::var_os("PLUMB_TEST_PYTHON39") {
        return PathBuf::from(path);
    }
    let pyenv = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pyenv")));
    if let Some(versions) = pyenv.map(|p| p.join("versions"))
        && let Ok(entries) = std::fs::read_dir(&versions)
    {
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with("3.9."))
            .map(|e| e.path().join("bin/python3.9"))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        if let Some(path) = found.pop() {
            return path;
        }
    }
    let on_path = std::process::Command::new("python3.9")
        .arg("-c")
        .arg("import sys; print(sys.executable)")
        .output();
    match on_path {
        Ok(out) if out.status.success() => {
            PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
        }
        _ => panic!(
            "this test needs Python 3.9 (SWE-bench's version for marshmallow): install it (pyenv install 3.9) or set PLUMB_TEST_PYTHON39 to its python3.9"
        ),
    }
}

#[test]
fn the_oracle_resolves_both_marshmallow_tasks_and_the_ladder_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let data = root().join("data/swebench");
    let out = dir.path().join("out");
    let setup = format!(
        "setup_command=sh -c '{} -m venv .venv && .venv/bin/pip install -q -e .[dev]'",
        python39().display()
    );
    let output = plumb(
        home.path(),
        &[
            "-c",
            "setup_network=true",
            "-c",
            &setup,
            "-c",
            "test_command=.venv/bin/python -m pytest",
            "eval",
            data.join("lite-dev.jsonl").to_str().unwrap(),
            "--repos",
            data.to_str().unwrap(),
            "--filter",
            "^marshmallow-code__",
            "--model",
            "oracle",
            "--jobs",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let results = results(&out);
    let both = vec![
        "marshmallow-code__marshmallow-1343".to_owned(),
        "marshmallow-code__marshmallow-1359".to_owned(),
    ];
    let actual = (
        output.status.code(),
        ids(&results, |r| r.resolved()),
        ids(&results, |r| r.verified()),
    );
    assert_eq!(actual, (Some(0), both.clone(), both), "{}", stderr(&output));
}
