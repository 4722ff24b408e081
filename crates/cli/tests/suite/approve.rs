//! A person's approval at a real pseudo-terminal, and bringing the change home: `plumb fix` on
//! BILL-412 asks, and only `yes` applies; no, the end of input, Ctrl-C, a timeout, a patch file
//! changed after it was shown, or a file the user edited meanwhile all leave the repository as it
//! was. Then `plumb apply --sha`, `plumb undo`, `plumb runs` and `plumb show` from the run folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use expectrl::{ControlCode, Eof, Session};
use plumb_test_support::{billing_example, git, tree_digest};
use pretty_assertions::assert_eq;

use super::common::{Fixture, plumb, plumb_command, report, stderr};

const FIXED_LINE: &str = "tax = compute_gst(net, rate)";

/// The repository's files without `.git`.
fn files(repo: &Path) -> BTreeMap<String, String> {
    tree_digest(repo)
        .into_iter()
        .filter(|(path, _)| !path.starts_with(".git/"))
        .collect()
}

/// `plumb fix` on BILL-412 at a terminal, stopped at the question.
fn fix_at_terminal(fixture: &Fixture, extra: &[&str]) -> Session {
    let script = billing_example().join("bill-412.script.jsonl");
    let mut command = plumb_command(fixture.home.path());
    command
        .args(["fix", "--repo"])
        .arg(fixture.repo_path())
        .arg("--ticket")
        .arg(fixture.ticket())
        .arg("--model")
        .arg(format!("script:{}", script.display()))
        .args(["--sandbox", "none"])
        .args(extra)
        .env("PAGER", "")
        .env("NO_COLOR", "1")
        .env("TERM", "dumb");
    let mut session = Session::spawn(command).unwrap();
    session.set_expect_timeout(Some(Duration::from_secs(600)));
    session.expect("Type yes to apply it").unwrap();
    session
}

/// Everything the session prints until it ends.
fn rest(mut session: Session) -> String {
    let captured = session.expect(Eof).unwrap();
    String::from_utf8_lossy(captured.as_bytes()).into_owned()
}

/// The only run folder of the fixture's home.
fn run_dir(fixture: &Fixture) -> PathBuf {
    let runs = fixture.home.path().join("runs");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.pop().unwrap()
}

#[test]
fn yes_applies_the_change_and_undo_puts_the_files_back() {
    let fixture = Fixture::billing();
    let before = files(fixture.repo_path());
    let mut session = fix_at_terminal(&fixture, &[]);
    session.send_line("yes").unwrap();
    let said = rest(session);
    let after = files(fixture.repo_path());
    let run = run_dir(&fixture);
    let id = run.file_name().unwrap().to_string_lossy().into_owned();
    let invoice =
        std::fs::read_to_string(fixture.repo_path().join("billing/invoice_totals.py")).unwrap();

    assert!(said.contains("applied to "), "{said}");
    assert!(invoice.contains(FIXED_LINE), "{invoice}");
    assert_ne!(after, before);
    let listed = plumb(fixture.home.path(), &["runs"]);
    let table = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert!(
        table.contains(&id) && table.contains("working tree"),
        "{table}"
    );

    let undo = plumb(fixture.home.path(), &["undo", &id]);

    assert_eq!(undo.status.code(), Some(0), "{}", stderr(&undo));
    assert_eq!(files(fixture.repo_path()), before);
}

#[test]
fn any_answer_but_yes_the_end_of_input_ctrl_c_or_a_timeout_keeps_the_files() {
    let cases: [(&str, &[&str], &str); 4] = [
        ("no", &[], "not applied: the answer was \"no\", not yes"),
        ("eof", &[], "not applied: no answer (the input ended)"),
        ("ctrl-c", &[], "not applied: cancelled with Ctrl-C"),
        (
            "wait",
            &["-c", "approval.timeout_secs=1"],
            "not applied: no answer within 1 s (approval.timeout_secs)",
        ),
    ];
    for (answer, extra, expected) in cases {
        let fixture = Fixture::billing();
        let before = tree_digest(fixture.repo_path());
        let mut session = fix_at_terminal(&fixture, extra);
        match answer {
            "no" => session.send_line("no").unwrap(),
            "eof" => session.send(ControlCode::EndOfTransmission).unwrap(),
            "ctrl-c" => session.send(ControlCode::EndOfText).unwrap(),
            _ => {}
        }
        let said = rest(session);

        assert!(said.contains(expected), "{answer}: {said}");
        assert!(said.contains("plumb apply"), "{answer}: {said}");
        assert_eq!(tree_digest(fixture.repo_path()), before, "{answer}");
    }
}

#[test]
fn a_patch_changed_after_it_was_shown_or_a_file_edited_meanwhile_is_not_applied() {
    // The patch file in the run folder is rewritten while the question is on screen.
    let fixture = Fixture::billing();
    let before = tree_digest(fixture.repo_path());
    let mut session = fix_at_terminal(&fixture, &[]);
    let patch = run_dir(&fixture).join("patch.diff");
    let shown = std::fs::read_to_string(&patch).unwrap();
    std::fs::write(&patch, shown.replace("+", "+ ")).unwrap();
    session.send_line("yes").unwrap();
    let said = rest(session);
    assert!(
        said.contains("no longer has the SHA-256 it was approved with"),
        "{said}"
    );
    assert_eq!(tree_digest(fixture.repo_path()), before);

    // The user edits a file the change touches while the question is on screen.
    let fixture = Fixture::billing();
    let mut session = fix_at_terminal(&fixture, &[]);
    let invoice = fixture.repo_path().join("billing/invoice_totals.py");
    let mine = format!(
        "{}# my own edit\n",
        std::fs::read_to_string(&invoice).unwrap()
    );
    std::fs::write(&invoice, &mine).unwrap();
    let before = tree_digest(fixture.repo_path());
    session.send_line("yes").unwrap();
    let said = rest(session);
    assert!(
        said.contains(
            "billing/invoice_totals.py changed since the run started, so plumb applied nothing"
        ),
        "{said}"
    );
    assert_eq!(tree_digest(fixture.repo_path()), before);
    assert!(run_dir(&fixture).join("patch.diff").is_file());
}

#[test]
fn branch_mode_commits_and_leaves_the_checked_out_branch_index_and_files_as_they_were() {
    let fixture = Fixture::billing();
    let repo = fixture.repo_path();
    let head = git(repo, &["rev-parse", "HEAD"]);
    let index = tree_digest(repo).get(".git/index").cloned();
    let before = files(repo);
    let mut session = fix_at_terminal(&fixture, &["--branch", "plumb/bill-412"]);
    session.send_line("yes").unwrap();
    let said = rest(session);

    assert!(
        said.contains("committed on the new branch plumb/bill-412"),
        "{said}"
    );
    assert_eq!(
        (
            git(repo, &["rev-parse", "HEAD"]),
            tree_digest(repo).get(".git/index").cloned(),
            files(repo),
            git(repo, &["rev-parse", "plumb/bill-412^"]),
        ),
        (head.clone(), index, before, head)
    );
    let fixed = git(repo, &["show", "plumb/bill-412:billing/invoice_totals.py"]);
    assert!(fixed.contains(FIXED_LINE), "{fixed}");
}

#[test]
fn apply_by_sha_later_refuses_a_stale_sha_and_applies_the_shown_one_once() {
    let fixture = Fixture::billing();
    let before = files(fixture.repo_path());
    let script = billing_example().join("bill-412.script.jsonl");
    // No terminal here: the run ends with the patch kept and nothing applied.
    let output = fixture.fix_with_script(&script, &[]);
    let fixed = report(&output);
    assert_eq!(files(fixture.repo_path()), before);
    let home = fixture.home.path();

    let stale = plumb(home, &["apply", &fixed.run_id, "--sha", &"0".repeat(64)]);
    let applied = plumb(
        home,
        &["apply", &fixed.run_id, "--sha", &fixed.patch_sha256],
    );
    let again = plumb(
        home,
        &["apply", &fixed.run_id, "--sha", &fixed.patch_sha256],
    );
    let shown = plumb(home, &["show", &fixed.run_id]);

    assert_eq!(stale.status.code(), Some(2), "{}", stderr(&stale));
    assert!(stderr(&stale).contains("is not the one of this run's patch"));
    assert_eq!(applied.status.code(), Some(0), "{}", stderr(&applied));
    assert!(
        stderr(&again).contains("is already applied (working tree)"),
        "{}",
        stderr(&again)
    );
    assert_eq!(String::from_utf8_lossy(&shown.stdout), fixed.patch);
    let invoice =
        std::fs::read_to_string(fixture.repo_path().join("billing/invoice_totals.py")).unwrap();
    assert!(invoice.contains(FIXED_LINE));
}

#[test]
fn show_prints_the_failed_attempt_of_a_run_that_rolled_back() {
    let fixture = Fixture::billing();
    let script = fixture.script_path("edit-then-stop.jsonl");
    std::fs::write(
        &script,
        r#"{"tool": "create_file", "args": {"path": "notes.txt", "content": "an attempt\n"}}"#,
    )
    .unwrap();
    let output = fixture.fix_with_script(&script, &[]);
    let failed = report(&output);

    let shown = plumb_command(fixture.home.path())
        .args(["show", &failed.run_id])
        .output()
        .unwrap();

    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    let diff = String::from_utf8_lossy(&shown.stdout);
    assert!(
        diff.contains("+++ b/notes.txt") && diff.contains("+an attempt"),
        "{diff}"
    );
    assert!(
        stderr(&shown).contains("failed attempt"),
        "{}",
        stderr(&shown)
    );
}

/// A branch name git gives another meaning (`HEAD`, `@`, an option, a range) or refuses is
/// refused before anything is written, naming the rule: by `plumb apply --branch`, and by `plumb
/// fix --branch` before the run starts. `plumb apply --branch HEAD` once made `refs/heads/HEAD`.
#[test]
fn a_branch_name_git_refuses_is_refused_by_its_rule_before_anything_is_written() {
    let fixture = Fixture::billing();
    let repo = fixture.repo_path();
    let script = billing_example().join("bill-412.script.jsonl");
    let fixed = report(&fixture.fix_with_script(&script, &[]));
    let home = fixture.home.path();
    let before = tree_digest(repo);
    let refs = git(repo, &["for-each-ref"]);
    let run = run_dir(&fixture);

    let said: Vec<(Option<i32>, String)> = ["HEAD", "@", "-D", "fix..main", "a b", "x.lock"]
        .into_iter()
        .map(|name| {
            // `--branch=NAME`, so a leading - reaches plumb (clap reads `--branch -D` as a flag).
            let flag = format!("--branch={name}");
            let out = plumb(
                home,
                &["apply", &fixed.run_id, "--sha", &fixed.patch_sha256, &flag],
            );
            (out.status.code(), stderr(&out).trim_end().to_string())
        })
        .collect();
    let fix = plumb(
        home,
        &[
            "fix",
            "--repo",
            &repo.display().to_string(),
            "--ticket-text",
            "anything",
            "--model",
            &format!("script:{}", script.display()),
            "--branch",
            "HEAD",
        ],
    );

    let refused = |name: &str, rule: &str| {
        (
            Some(2),
            format!(
                "plumb: the branch name {name:?} is refused: {rule}; choose another name with --branch"
            ),
        )
    };
    let expected = vec![
        refused(
            "HEAD",
            "HEAD is git's name for the checked-out commit, never a branch's",
        ),
        refused("@", "a lone @ is git's short name for HEAD"),
        refused("-D", "it starts with -, so git would read it as an option"),
        refused(
            "fix..main",
            "it holds .., which git reads as a range of commits (a..b)",
        ),
        refused(
            "a b",
            "it holds a space; git allows no space, ~, ^, :, ?, *, [ or \\ in a name",
        ),
        refused(
            "x.lock",
            "its part \"x.lock\" ends with .lock, the ending of git's lock files",
        ),
    ];
    assert_eq!(said, expected);
    assert_eq!(
        (fix.status.code(), stderr(&fix).trim_end().to_string()),
        refused(
            "HEAD",
            "HEAD is git's name for the checked-out commit, never a branch's"
        )
    );
    // Nothing written: the files, the refs, no record of an apply, and no second run.
    assert_eq!(
        (
            tree_digest(repo),
            git(repo, &["for-each-ref"]),
            run.join("applied.json").exists(),
            run_dir(&fixture),
        ),
        (before, refs, false, run.clone())
    );
}

/// An apply cut short (here: its record left at `applying`, as a crash after the last file moved
/// in leaves it) is neither applied again nor listed as applied: `plumb apply` names the state
/// and `plumb undo` finishes, bringing every file back.
#[test]
fn an_interrupted_apply_is_refused_and_undo_finishes_it() {
    let fixture = Fixture::billing();
    let before = files(fixture.repo_path());
    let script = billing_example().join("bill-412.script.jsonl");
    let fixed = report(&fixture.fix_with_script(&script, &[]));
    let home = fixture.home.path();
    let applied = plumb(
        home,
        &["apply", &fixed.run_id, "--sha", &fixed.patch_sha256],
    );
    assert_eq!(applied.status.code(), Some(0), "{}", stderr(&applied));
    let record = run_dir(&fixture).join("applied.json");
    let text = std::fs::read_to_string(&record).unwrap();
    std::fs::write(
        &record,
        text.replace("\"state\": \"applied\"", "\"state\": \"applying\""),
    )
    .unwrap();

    let again = plumb(
        home,
        &["apply", &fixed.run_id, "--sha", &fixed.patch_sha256],
    );
    let listed = plumb(home, &["runs", "--json"]);
    let undone = plumb(home, &["undo", &fixed.run_id]);

    let row: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(
        (
            again.status.code(),
            stderr(&again).trim_end().to_string(),
            row["applied"].clone(),
            row["apply_state"].clone(),
            undone.status.code(),
            files(fixture.repo_path()) == before,
        ),
        (
            Some(2),
            format!(
                "plumb: run {id} was interrupted while plumb was applying it, so each file it touches holds its old bytes or its new ones; plumb undo {id} puts them all back",
                id = fixed.run_id
            ),
            serde_json::Value::Null,
            serde_json::json!("applying"),
            Some(0),
            true,
        )
    );
}
