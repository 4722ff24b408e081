//! `plumb doctor` end to end: one line per check, in a fixed order, each `ok` or `FAIL` with what
//! was found, and a `fix:` line under each failure. Its exit code follows the default sandbox
//! alone (0 when bwrap works, 3 when it does not); a missing tool is reported but does not
//! change it.

use pretty_assertions::assert_eq;

use super::{fake_program, path_with};
use crate::suite::common::{plumb_command, stderr};

const CHECKS: [&str; 6] = [
    "user namespaces",
    "bwrap",
    "cgroups",
    "runsc",
    "git",
    "python3",
];

/// (mark, check name) of each check line, in order; the other lines as they are.
fn lines(stdout: &[u8]) -> (Vec<(String, String)>, Vec<String>) {
    let text = String::from_utf8_lossy(stdout);
    let mut checks = Vec::new();
    let mut other = Vec::new();
    for line in text.lines() {
        let mark = line.get(..4).unwrap_or_default();
        match (
            mark,
            CHECKS
                .iter()
                .find(|name| line.get(6..).is_some_and(|rest| rest.starts_with(*name))),
        ) {
            ("ok  " | "FAIL", Some(name)) => {
                checks.push((mark.trim().to_string(), name.to_string()))
            }
            _ => other.push(line.trim().to_string()),
        }
    }
    (checks, other)
}

fn doctor(bin: Option<&std::path::Path>) -> std::process::Output {
    let home = tempfile::tempdir().unwrap();
    let mut command = plumb_command(home.path());
    command.arg("doctor");
    if let Some(bin) = bin {
        command.env("PATH", path_with(bin));
    }
    command.output().unwrap()
}

#[test]
fn doctor_names_each_check_and_exits_0_where_bwrap_works() {
    let output = doctor(None);

    let (checks, other) = lines(&output.stdout);
    let names: Vec<&str> = checks.iter().map(|(_, name)| name.as_str()).collect();
    // The tests need bwrap, runsc, git and python3, so they work here; the namespace and cgroup
    // checks depend on the machine.
    let ok: Vec<&str> = checks
        .iter()
        .filter(|(mark, _)| mark == "ok")
        .map(|(_, name)| name.as_str())
        .filter(|name| ["bwrap", "runsc", "git", "python3"].contains(name))
        .collect();
    let actual = (
        output.status.code(),
        names,
        ok,
        other.iter().any(|l| l.contains("does not work")),
    );
    let expected = (
        Some(0),
        CHECKS.to_vec(),
        vec!["bwrap", "runsc", "git", "python3"],
        false,
    );
    assert_eq!(
        actual,
        expected,
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&output.stdout),
        stderr(&output)
    );
}

#[test]
fn doctor_exits_3_with_the_fix_when_bwrap_cannot_run_and_reports_a_broken_git_without_failing() {
    let home = tempfile::tempdir().unwrap();
    let broken_bwrap = home.path().join("no-bwrap");
    fake_program(
        &broken_bwrap,
        "bwrap",
        "echo 'bwrap: Creating new namespace failed: Operation not permitted' >&2\nexit 1\n",
    );
    let broken_git = home.path().join("no-git");
    fake_program(&broken_git, "git", "exit 127\n");

    let without_bwrap = doctor(Some(&broken_bwrap));
    let without_git = doctor(Some(&broken_git));

    let text = String::from_utf8_lossy(&without_bwrap.stdout).into_owned();
    let bwrap_line = text.lines().position(|l| l.starts_with("FAIL  bwrap"));
    let fix_follows = bwrap_line
        .and_then(|at| text.lines().nth(at + 1))
        .is_some_and(|next| next.trim_start().starts_with("fix: "));
    let mark = |output: &std::process::Output, name: &str| {
        lines(&output.stdout)
            .0
            .into_iter()
            .find(|(_, check)| check == name)
            .map(|(mark, _)| mark)
    };
    let actual = (
        without_bwrap.status.code(),
        mark(&without_bwrap, "bwrap"),
        text.contains("Creating new namespace failed: Operation not permitted"),
        fix_follows,
        text.lines().last().map(str::to_string),
        without_git.status.code(),
        mark(&without_git, "git"),
        mark(&without_git, "bwrap"),
    );
    let expected = (
        Some(3),
        Some("FAIL".to_string()),
        true,
        true,
        Some("the default sandbox (bwrap) does not work here; fix it as above or pass --sandbox none".to_string()),
        Some(0),
        Some("FAIL".to_string()),
        Some("ok".to_string()),
    );
    assert_eq!(actual, expected, "stdout:\n{text}");
}
