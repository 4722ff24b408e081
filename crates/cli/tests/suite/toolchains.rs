//! `plumb fix --sandbox bwrap` on Rust crates with the host's rustup toolchain: a plain crate
//! with `#[cfg(test)]` tests, one failing, that a scripted model fixes (with a test file of
//! its own, or a test added to the crate's inline tests) is verified (exit 0).
//! With `sandbox_toolchains = false` the same run is what every run was before the toolchains
//! were shown: rustup's shim finds no toolchain, the baseline has no test summary, exit 2. A
//! crate with a crates.io dependency gets it from a setup command with the network (`cargo
//! fetch`) and is then tested offline.

use std::path::Path;
use std::process::Output;

use plumb_protocol::Outcome;
use plumb_test_support::{Script, git_repo_from};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::common::{plumb, report, stderr};

const TICKET: &str = "# ADD-1\n\n`add(2, 2)` returns 0; it should return 4.\n";

/// A git repository holding a crate whose `add` subtracts, with a test that says so.
fn crate_repo(manifest: &str, lib_head: &str) -> tempfile::TempDir {
    let src = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(src.path().join("src")).unwrap();
    std::fs::write(src.path().join("Cargo.toml"), manifest).unwrap();
    std::fs::write(src.path().join(".gitignore"), "/target\n").unwrap();
    std::fs::write(src.path().join("ADD-1.md"), TICKET).unwrap();
    std::fs::write(
        src.path().join("src/lib.rs"),
        format!(
            "{lib_head}pub fn add(a: i32, b: i32) -> i32 {{\n    a - b\n}}\n\n\
             #[cfg(test)]\nmod tests {{\n    #[test]\n    fn adds() {{\n        assert_eq!(super::add(2, 2), 4);\n    }}\n\n\
             \x20   #[test]\n    fn zero() {{\n        assert_eq!(super::add(0, 0), 0);\n    }}\n}}\n"
        ),
    )
    .unwrap();
    git_repo_from(src.path())
}

/// `plumb fix --sandbox bwrap` with a script that adds a test of `add` and fixes it, JSON report.
fn fix(repo: &Path, home: &Path, extra: &[&str]) -> Output {
    let test = json!({"path": "tests/add.rs", "content": "#[test]\nfn two_and_two() {\n    assert_eq!(adder::add(2, 2), 4);\n}\n"});
    fix_with(repo, home, extra, ("create_file", test))
}

/// The same with the script's first call, which adds the test, given.
fn fix_with(repo: &Path, home: &Path, extra: &[&str], test: (&str, serde_json::Value)) -> Output {
    let script = home.join("fix.jsonl");
    Script::new()
        .tool(test.0, test.1)
        .tool(
            "edit_file",
            json!({"path": "src/lib.rs", "old_text": "    a - b\n", "new_text": "    a + b\n"}),
        )
        .tool("done", json!({"summary": "add adds"}))
        .write(&script);
    let model = format!("script:{}", script.display());
    let repo_arg = repo.display().to_string();
    let ticket = repo.join("ADD-1.md").display().to_string();
    let mut args = vec![
        "fix",
        "--repo",
        &repo_arg,
        "--ticket",
        &ticket,
        "--model",
        &model,
        "--json",
        "--sandbox",
        "bwrap",
    ];
    args.extend_from_slice(extra);
    plumb(home, &args)
}

const PLAIN: &str = "[package]\nname = \"adder\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";

#[test]
fn a_plain_crate_is_verified_under_bwrap_and_was_not_without_the_toolchains() {
    let repo = crate_repo(PLAIN, "");
    let home = tempfile::tempdir().unwrap();

    let without = fix(
        repo.path(),
        home.path(),
        &["-c", "sandbox_toolchains=false"],
    );
    let with = fix(repo.path(), home.path(), &[]);

    let with_report = report(&with);
    let actual = (
        without.status.code(),
        stderr(&without).contains("no test summary found"),
        with.status.code(),
        with_report.outcome,
        with_report.patch.contains("+    a + b"),
    );
    assert_eq!(
        actual,
        (Some(2), true, Some(0), Outcome::Success, true),
        "without: {}\nwith: {}",
        stderr(&without),
        stderr(&with)
    );
}

#[test]
fn a_crates_io_dependency_comes_from_the_setup_phase_and_the_tests_run_offline() {
    let manifest = format!("{PLAIN}\n[dependencies]\nitoa = \"=1.0.11\"\n");
    let lib_head =
        "pub fn text(n: u32) -> String {\n    itoa::Buffer::new().format(n).to_owned()\n}\n\n";
    let repo = crate_repo(&manifest, lib_head);
    let home = tempfile::tempdir().unwrap();

    let output = fix(
        repo.path(),
        home.path(),
        &[
            "-c",
            "setup_command=cargo fetch",
            "-c",
            "setup_network=true",
        ],
    );

    let report = report(&output);
    let actual = (output.status.code(), report.outcome);
    assert_eq!(actual, (Some(0), Outcome::Success), "{}", stderr(&output));
}

/// A test added beside the code, in the crate's own `#[cfg(test)] mod tests`, reproduces the bug:
/// the reproduce tree has the old `add` with the new test items. Before, no test *file* changed,
/// so the ladder found "no new or changed test" and held the fix back.
#[test]
fn a_test_added_to_the_inline_tests_module_reproduces_the_bug_and_the_fix_is_verified() {
    let repo = crate_repo(PLAIN, "");
    let home = tempfile::tempdir().unwrap();
    let inline_test = json!({
        "path": "src/lib.rs",
        "old_text": "mod tests {\n",
        "new_text": "mod tests {\n    #[test]\n    fn two_and_two() {\n        assert_eq!(super::add(2, 2), 4);\n    }\n\n",
    });

    let output = fix_with(repo.path(), home.path(), &[], ("edit_file", inline_test));

    let report = report(&output);
    let reproduce = report
        .checks
        .iter()
        .find(|check| check.step == plumb_protocol::CheckStep::Reproduce)
        .map(|check| check.evidence.clone())
        .unwrap_or_default();
    let actual = (
        output.status.code(),
        report.outcome,
        reproduce.contains("two_and_two"),
    );
    assert_eq!(
        actual,
        (Some(0), Outcome::Success, true),
        "reproduce: {reproduce}\n{}",
        stderr(&output)
    );
}
