//! Exit 3 (docs/contracts.md §7: an infrastructure failure) when plumb's own machinery fails, at
//! the start of a run and in the middle of one: the sandbox (a `bwrap` that cannot set up its
//! namespaces) and git (a `git` that cannot write). The fake program is first on the PATH of the
//! plumb child only; the message carries what the program said, and a run that had started ends
//! with a report, rolled back where git still works.

use plumb_protocol::Outcome;
use plumb_test_support::Script;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::{fake_program, path_with, real_program, rolled_back_keeping};
use crate::suite::common::{Fixture, plumb_command, report, stderr};

/// What the fake `bwrap` says when it fails, in bwrap's own form (exit 1, one `bwrap:` line).
const BWRAP_SAYS: &str = "Creating new namespace failed: Operation not permitted";
/// What the fake `git` says when it fails.
const GIT_SAYS: &str = "fatal: unable to write new index file";

/// `plumb fix` on the fixture with `script`, `extra` flags and the fake programs of `bin` first
/// on its PATH.
fn fix_with_path(
    fixture: &Fixture,
    script: Script,
    bin: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    let path = fixture.script_path("infra.jsonl");
    script.write(&path);
    let repo = fixture.repo_path().display().to_string();
    let ticket = fixture.ticket().display().to_string();
    let model = format!("script:{}", path.display());
    plumb_command(fixture.home.path())
        .args([
            "fix", "--repo", &repo, "--ticket", &ticket, "--model", &model, "--json",
        ])
        .args(extra)
        .env("PATH", path_with(bin))
        .output()
        .unwrap()
}

fn done() -> Script {
    Script::new().tool("done", json!({"summary": "nothing"}))
}

#[test]
fn a_sandbox_that_cannot_start_is_exit_3_naming_its_error() {
    let fixture = Fixture::billing();
    let bin = fixture.home.path().join("bin");
    fake_program(
        &bin,
        "bwrap",
        &format!("echo 'bwrap: {BWRAP_SAYS}' >&2\nexit 1\n"),
    );

    let output = fix_with_path(&fixture, done(), &bin, &[]);

    let err = stderr(&output);
    let actual = (
        output.status.code(),
        output.stdout.is_empty(),
        err.contains(&format!(
            "the bwrap sandbox could not be set up: {BWRAP_SAYS}"
        )),
        err.contains("plumb doctor"),
    );
    assert_eq!(actual, (Some(3), true, true, true), "stderr: {err}");
}

#[test]
fn a_sandbox_that_fails_mid_run_ends_it_as_exit_3_rolled_back() {
    let fixture = Fixture::billing();
    let bin = fixture.home.path().join("bin");
    // The real bwrap, except for the one test run whose arguments name the trigger.
    let real = real_program("bwrap");
    fake_program(
        &bin,
        "bwrap",
        &format!(
            "case \"$*\" in *test_sandbox_breaks*) echo 'bwrap: {BWRAP_SAYS}' >&2; exit 1;; esac\nexec '{}' \"$@\"\n",
            real.display()
        ),
    );
    let script = Script::new()
        .tool(
            "create_file",
            json!({"path": "notes.txt", "content": "half done\n"}),
        )
        .tool(
            "run_tests",
            json!({"tests": ["tests/test_sandbox_breaks.py"]}),
        )
        .tool("done", json!({"summary": "never reached"}));

    let output = fix_with_path(&fixture, script, &bin, &[]);

    let report = report(&output);
    let actual = (
        output.status.code(),
        report.outcome,
        report.rounds,
        report.reason.contains(BWRAP_SAYS),
        rolled_back_keeping(&report, "notes.txt"),
    );
    assert_eq!(
        actual,
        (Some(3), Outcome::InfraError, 2, true, true),
        "reason: {}\nstderr: {}",
        report.reason,
        stderr(&output)
    );
}

#[test]
fn a_git_that_fails_at_the_start_is_exit_3_naming_its_error() {
    let fixture = Fixture::billing();
    let bin = fixture.home.path().join("bin");
    fake_program(&bin, "git", &format!("echo '{GIT_SAYS}' >&2\nexit 128\n"));

    let output = fix_with_path(&fixture, done(), &bin, &["--sandbox", "none"]);

    let err = stderr(&output);
    let actual = (
        output.status.code(),
        output.stdout.is_empty(),
        err.contains(GIT_SAYS),
    );
    assert_eq!(actual, (Some(3), true, true), "stderr: {err}");
}

#[test]
fn a_git_that_fails_mid_run_ends_it_as_exit_3_saying_the_rollback_failed_too() {
    let fixture = Fixture::billing();
    let bin = fixture.home.path().join("bin");
    // The real git, except in a work tree that holds the trigger file.
    let real = real_program("git");
    fake_program(
        &bin,
        "git",
        &format!(
            "for arg in \"$@\"; do case \"$arg\" in --work-tree=*) if [ -e \"${{arg#--work-tree=}}/BREAK-GIT\" ]; then echo '{GIT_SAYS}' >&2; exit 128; fi;; esac; done\nexec '{}' \"$@\"\n",
            real.display()
        ),
    );
    let script = Script::new()
        .tool(
            "create_file",
            json!({"path": "BREAK-GIT", "content": "x\n"}),
        )
        .tool("done", json!({"summary": "never reached"}));

    let output = fix_with_path(&fixture, script, &bin, &["--sandbox", "none"]);

    let report = report(&output);
    let actual = (
        output.status.code(),
        report.outcome,
        report.rounds,
        report.reason.contains(GIT_SAYS),
        report.reason.contains("the rollback failed"),
        report.patch.is_empty(),
    );
    assert_eq!(
        actual,
        (Some(3), Outcome::InfraError, 1, true, true, true),
        "reason: {}\nstderr: {}",
        report.reason,
        stderr(&output)
    );
}
