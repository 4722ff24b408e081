//! checkpoint / rollback / keep_ref / history.

use std::fs;

use pretty_assertions::assert_eq;
use tempfile::TempDir;

use plumb_workspace::{CommitId, Workspace, WorkspaceError};

use super::{git, listing, plain_source, shadow_git, write};

fn prepared(tmp: &TempDir) -> Workspace {
    let src = plain_source(tmp.path());
    Workspace::prepare(&src, &tmp.path().join("run")).unwrap()
}

#[test]
fn rollback_restores_each_checkpoint_exactly() {
    let tmp = TempDir::new().unwrap();
    let ws = prepared(&tmp);
    let at_baseline = listing(ws.root());

    write(ws.root(), "a.py", "A = 100\n");
    write(ws.root(), "pkg/new.py", "NEW = 1\n");
    fs::remove_file(ws.root().join("b.py")).unwrap();
    let first = ws.checkpoint("first edit").unwrap();
    let at_first = listing(ws.root());

    write(ws.root(), "a.py", "A = 200\n");
    write(ws.root(), "later/deep/file.py", "L = 1\n");
    fs::remove_file(ws.root().join("pkg/c.py")).unwrap();
    write(ws.root(), "__pycache__/a.cpython-312.pyc", "bytecode");
    ws.checkpoint("second edit").unwrap();
    write(ws.root(), "uncheckpointed.py", "U = 1\n");

    ws.rollback(&first).unwrap();
    let mut after_first = listing(ws.root());
    // Ignored build output survives a rollback; everything else is exactly the checkpoint.
    let kept_pycache = after_first
        .remove("__pycache__/a.cpython-312.pyc")
        .is_some();
    after_first.remove("__pycache__/");
    let head_after_first = ws.head().unwrap();
    ws.rollback(ws.baseline()).unwrap();
    let mut after_baseline = listing(ws.root());
    after_baseline.remove("__pycache__/a.cpython-312.pyc");
    after_baseline.remove("__pycache__/");
    let actual = (
        after_first,
        kept_pycache,
        head_after_first,
        after_baseline,
        ws.head().unwrap(),
    );

    let expected = (at_first, true, first, at_baseline, ws.baseline().clone());
    assert_eq!(actual, expected);
}

#[test]
fn unchanged_checkpoint_returns_head() {
    let tmp = TempDir::new().unwrap();
    let ws = prepared(&tmp);

    let first = ws.checkpoint("nothing changed").unwrap();
    write(ws.root(), "a.py", "A = 3\n");
    let second = ws.checkpoint("changed").unwrap();
    let third = ws.checkpoint("nothing changed again").unwrap();
    let actual = (first, third == second, second == *ws.baseline());

    let expected = (ws.baseline().clone(), true, false);
    assert_eq!(actual, expected);
}

#[test]
fn same_sequence_of_checkpoints_gives_the_same_ids() {
    let tmp = TempDir::new().unwrap();
    let src = plain_source(tmp.path());
    let run = |name: &str| {
        let ws = Workspace::prepare(&src, &tmp.path().join(name)).unwrap();
        write(ws.root(), "a.py", "A = 5\n");
        let one = ws.checkpoint("one").unwrap();
        write(ws.root(), "z.py", "Z = 1\n");
        let two = ws.checkpoint("two").unwrap();
        vec![ws.baseline().clone(), one, two]
    };

    let actual = run("first");

    let expected = run("second");
    assert_eq!(actual, expected);
}

#[test]
fn hostile_labels_are_sanitised() {
    let tmp = TempDir::new().unwrap();
    let ws = prepared(&tmp);

    for (n, label) in [
        "--upload-pack=x",
        "../../x",
        "first line\nsecond line\n-evil",
        "",
    ]
    .iter()
    .enumerate()
    {
        write(ws.root(), "a.py", &format!("A = {n}\n"));
        ws.checkpoint(label).unwrap();
    }
    let actual: Vec<String> = ws.history().unwrap().into_iter().map(|c| c.label).collect();

    let expected = vec![
        "checkpoint",
        "first line second line -evil",
        "../../x",
        "upload-pack=x",
        "baseline",
    ];
    assert_eq!(actual, expected);
}

#[test]
fn keep_ref_points_a_sanitised_ref_at_the_commit() {
    let tmp = TempDir::new().unwrap();
    let ws = prepared(&tmp);
    write(ws.root(), "a.py", "A = 9\n");
    let attempt = ws.checkpoint("attempt").unwrap();
    ws.rollback(ws.baseline()).unwrap();

    let names: Vec<String> = ["attempt-1", "--upload-pack=x", "../../baseline", "a\nb"]
        .iter()
        .map(|name| ws.keep_ref(name, &attempt).unwrap())
        .collect();
    let listed = shadow_git(
        ws.git_dir(),
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    );
    let actual = (names, listed);

    let expected = (
        vec![
            "refs/plumb/attempt-1".to_owned(),
            "refs/plumb/upload-pack-x".to_owned(),
            "refs/plumb/baseline".to_owned(),
            "refs/plumb/a-b".to_owned(),
        ],
        format!(
            "refs/heads/plumb {base}\nrefs/plumb-internal/baseline {base}\nrefs/plumb-internal/source {base}\nrefs/plumb/a-b {a}\n\
             refs/plumb/attempt-1 {a}\nrefs/plumb/baseline {a}\nrefs/plumb/upload-pack-x {a}\n",
            base = ws.baseline(),
            a = attempt
        ),
    );
    assert_eq!(actual, expected);
    // The kept ref named "baseline" did not move the real baseline.
    assert_eq!(
        Workspace::open(ws.run_dir()).unwrap().baseline(),
        ws.baseline()
    );
}

#[test]
fn unknown_or_malformed_commits_are_bad_input() {
    let tmp = TempDir::new().unwrap();
    let ws = prepared(&tmp);
    let absent = CommitId::parse("0123456789abcdef0123456789abcdef01234567").unwrap();
    let tree_not_commit = CommitId::parse(ws.base_tree()).unwrap();

    let errors: Vec<WorkspaceError> = vec![
        ws.rollback(&absent).unwrap_err(),
        ws.keep_ref("x", &absent).unwrap_err(),
        ws.rollback(&tree_not_commit).unwrap_err(),
        CommitId::parse("HEAD~1").unwrap_err(),
        CommitId::parse("--upload-pack=x").unwrap_err(),
    ];
    let actual: Vec<(String, bool)> = errors
        .iter()
        .map(|e| (e.to_string(), e.is_infra()))
        .collect();

    let unknown = |id: &str| {
        (
            format!(
                "commit {id} is not one of this workspace's checkpoints; pass a commit returned by \
                 checkpoint(), head() or baseline()"
            ),
            false,
        )
    };
    let malformed = |v: &str| {
        (
            format!("`{v}` is not a commit id; expected 40 or 64 lowercase hexadecimal digits"),
            false,
        )
    };
    let expected = vec![
        unknown(absent.as_str()),
        unknown(absent.as_str()),
        unknown(ws.base_tree()),
        malformed("HEAD~1"),
        malformed("--upload-pack=x"),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn rollback_removes_repositories_the_agent_created() {
    let tmp = TempDir::new().unwrap();
    let ws = prepared(&tmp);
    let before = listing(ws.root());
    git(ws.root(), &["init", "-q"]);
    write(ws.root(), "nested/inner.py", "I = 1\n");
    git(&ws.root().join("nested"), &["init", "-q"]);
    git(&ws.root().join("nested"), &["add", "-A"]);
    git(&ws.root().join("nested"), &["commit", "-q", "-m", "x"]);

    ws.rollback(ws.baseline()).unwrap();
    let actual = (listing(ws.root()), ws.root().join(".git").exists());

    assert_eq!(actual, (before, false));
}

#[test]
fn a_git_config_in_the_copy_cannot_run_hooks() {
    let tmp = TempDir::new().unwrap();
    let ws = prepared(&tmp);
    let marker = tmp.path().join("hook-ran");
    write(
        ws.root(),
        ".git/hooks/pre-commit",
        &format!("#!/bin/sh\ntouch {}\n", marker.display()),
    );
    super::make_executable(ws.root(), ".git/hooks/pre-commit");
    write(
        ws.root(),
        ".git/config",
        "[core]\n\thooksPath = .git/hooks\n\tfsmonitor = .git/hooks/pre-commit\n",
    );

    write(ws.root(), "a.py", "A = 7\n");
    ws.checkpoint("edit").unwrap();
    ws.patch().unwrap();
    ws.rollback(ws.baseline()).unwrap();
    let actual = marker.exists();

    assert_eq!(actual, false);
}

#[test]
fn rebaseline_keeps_setup_output_out_of_the_patch() {
    let tmp = TempDir::new().unwrap();
    let mut ws = prepared(&tmp);
    let source_tree = ws.base_tree().to_string();
    write(ws.root(), "vendor/dep.py", "DEP = 1\n");

    let new_base = ws.rebaseline("setup").unwrap();
    write(ws.root(), "a.py", "A = 7\n");
    let patched: Vec<String> = ws
        .patch()
        .unwrap()
        .files
        .iter()
        .map(|f| f.path.clone())
        .collect();
    ws.rollback(ws.baseline()).unwrap();
    let reopened = Workspace::open(&tmp.path().join("run")).unwrap();

    let actual = (
        patched,
        ws.baseline() == &new_base,
        ws.root().join("vendor/dep.py").exists(),
        ws.base_tree() == source_tree,
        reopened.baseline() == &new_base,
        reopened.base_tree() == source_tree,
    );
    assert_eq!(
        actual,
        (vec!["a.py".to_string()], true, true, true, true, true)
    );
}

#[test]
fn materialize_writes_a_commit_tree_elsewhere_and_leaves_the_copy_alone() {
    let tmp = TempDir::new().unwrap();
    let ws = prepared(&tmp);
    let baseline_listing = listing(ws.root());
    write(ws.root(), "a.py", "A = 9\n");
    write(ws.root(), "new.py", "N = 1\n");
    ws.checkpoint("edit").unwrap();
    let edited_listing = listing(ws.root());
    let dest = tmp.path().join("baseline-view");

    ws.materialize(ws.baseline(), &dest).unwrap();

    let actual = (
        listing(&dest),
        listing(ws.root()),
        ws.changed_files().unwrap().len(),
    );
    assert_eq!(actual, (baseline_listing, edited_listing, 2));
}
