//! The ladder on a go module under bwrap, with the host's go shown read-only. `go test -run`
//! selects tests by name, so the new test file the ladder targets is narrowed to the tests it
//! declares: a fix with a test of its own is verified. Narrowed to the file's path, go ran no
//! test and reported `ok`, which the reproduce step read as "already passes" and held the fix
//! back; a run of no test at all now says that nothing ran.

use std::path::Path;
use std::process::Output;

use plumb_protocol::{CheckStatus, CheckStep, Outcome};
use plumb_test_support::{Script, git_repo_from};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::common::{plumb, report, stderr};

const TICKET: &str = "# ADD-2\n\n`Add(2, 2)` returns 0; it should return 4.\n";

/// A git repository holding a go module whose `Add` subtracts, with a test that still passes.
fn module_repo() -> tempfile::TempDir {
    let src = tempfile::tempdir().unwrap();
    let files = [
        ("go.mod", "module example.com/adder\n\ngo 1.19\n"),
        (
            "adder.go",
            "package adder\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n",
        ),
        (
            "adder_test.go",
            "package adder\n\nimport \"testing\"\n\nfunc TestZero(t *testing.T) {\n\tif Add(0, 0) != 0 {\n\t\tt.Fatal(\"Add(0, 0) != 0\")\n\t}\n}\n",
        ),
        ("ADD-2.md", TICKET),
    ];
    for (name, text) in files {
        std::fs::write(src.path().join(name), text).unwrap();
    }
    git_repo_from(src.path())
}

/// `plumb fix --sandbox bwrap` with a script that writes `test_file`, fixes `Add` and is done.
fn fix(repo: &Path, home: &Path, test_file: &str) -> Output {
    let script = home.join("fix.jsonl");
    Script::new()
        .tool(
            "create_file",
            json!({"path": "add_test.go", "content": test_file}),
        )
        .tool(
            "edit_file",
            json!({"path": "adder.go", "old_text": "a - b", "new_text": "a + b"}),
        )
        .tool("done", json!({"summary": "Add adds"}))
        .write(&script);
    let model = format!("script:{}", script.display());
    let repo_arg = repo.display().to_string();
    let ticket = repo.join("ADD-2.md").display().to_string();
    plumb(
        home,
        &[
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
        ],
    )
}

fn reproduce_evidence(output: &Output) -> String {
    report(output)
        .checks
        .iter()
        .find(|check| check.step == CheckStep::Reproduce)
        .map(|check| format!("{:?}: {}", check.status, check.evidence))
        .unwrap_or_default()
}

#[test]
fn a_fix_with_a_new_go_test_file_is_verified() {
    let repo = module_repo();
    let home = tempfile::tempdir().unwrap();
    let test_file = "package adder\n\nimport \"testing\"\n\nfunc TestTwoAndTwo(t *testing.T) {\n\tif got := Add(2, 2); got != 4 {\n\t\tt.Fatalf(\"Add(2, 2) = %d\", got)\n\t}\n}\n";

    let output = fix(repo.path(), home.path(), test_file);

    let report = report(&output);
    let evidence = reproduce_evidence(&output);
    let actual = (
        output.status.code(),
        report.outcome,
        evidence.starts_with(&format!("{:?}", CheckStatus::Passed)),
        report.patch.contains("+\treturn a + b"),
    );
    assert_eq!(
        actual,
        (Some(0), Outcome::Success, true, true),
        "reproduce: {evidence}\n{}",
        stderr(&output)
    );
}

#[test]
fn a_go_test_file_without_tests_did_not_run_rather_than_passed() {
    let repo = module_repo();
    let home = tempfile::tempdir().unwrap();
    let test_file = "package adder\n\nfunc sum(a, b int) int {\n\treturn Add(a, b)\n}\n";

    let output = fix(repo.path(), home.path(), test_file);

    let evidence = reproduce_evidence(&output);
    let actual = (
        report(&output).outcome == Outcome::Success,
        evidence.contains("did not run on the baseline source: the test command ran no test"),
        evidence.contains("already pass"),
    );
    assert_eq!(
        actual,
        (false, true, false),
        "reproduce: {evidence}\n{}",
        stderr(&output)
    );
}
