//! prepare / open: what the copy holds, what stays untouched, which inputs are refused.

use std::fs;

use pretty_assertions::assert_eq;
use tempfile::TempDir;

use plumb_workspace::{Workspace, WorkspaceError};

use super::{entries, git, listing, sample_repo, snapshot, write};

#[test]
fn copy_is_the_tree_as_it_stands_without_history_or_ignored_files() {
    let tmp = TempDir::new().unwrap();
    let repo = sample_repo(tmp.path());

    let ws = Workspace::prepare(&repo, &tmp.path().join("run")).unwrap();
    let actual = listing(ws.root());

    let expected = entries(&[
        (".env.example", "KEY=\n"),
        (".gitignore", "build/\n*.log\n"),
        ("README.md", "# sample\n"),
        ("docs/", ""),
        ("docs/.gitignore", "draft.md\n"),
        ("docs/guide.md", "guide\n"),
        ("link.txt", "-> README.md"),
        ("run.sh", "[x] #!/bin/sh\necho run\n"),
        ("src/", ""),
        ("src/app.py", "def answer():\n    return 42\n"),
        ("src/new.py", "NEW = 1\n"),
        ("src/util.py", "def helper():\n    return 'help'\n"),
    ]);
    assert_eq!(actual, expected);
}

#[test]
fn plumbignore_leaves_out_what_the_agent_must_not_see() {
    let tmp = TempDir::new().unwrap();
    let repo = tmp.path().join("repo");
    write(&repo, ".plumbignore", "answers.jsonl\nsecrets/\n");
    write(&repo, "answers.jsonl", "{}\n");
    write(&repo, "secrets/key.txt", "k\n");
    write(&repo, "src/app.py", "X = 1\n");

    let ws = Workspace::prepare(&repo, &tmp.path().join("run")).unwrap();
    let actual = listing(ws.root());

    let expected = entries(&[
        (".plumbignore", "answers.jsonl\nsecrets/\n"),
        ("src/", ""),
        ("src/app.py", "X = 1\n"),
    ]);
    assert_eq!(actual, expected);
}

#[test]
fn copy_has_no_git_dir_and_the_shadow_sits_outside_it() {
    let tmp = TempDir::new().unwrap();
    let repo = sample_repo(tmp.path());
    write(&repo, "vendor/sub/.git", "gitdir: ../../.git/modules/sub\n");
    write(&repo, "vendor/sub/lib.py", "X = 1\n");

    let ws = Workspace::prepare(&repo, &tmp.path().join("run")).unwrap();
    let actual = (
        ws.root().join(".git").exists(),
        ws.root().join("vendor/sub/.git").exists(),
        ws.root().join("vendor/sub/lib.py").exists(),
        ws.git_dir().starts_with(ws.root()),
        ws.git_dir() == ws.run_dir().join("shadow.git"),
    );
    assert_eq!(actual, (false, false, true, false, true));
}

#[test]
fn gitignore_is_honoured_without_a_git_dir() {
    let tmp = TempDir::new().unwrap();
    let src = tmp.path().join("src");
    write(&src, ".gitignore", "*.tmp\nout/\n");
    write(&src, "keep.py", "K = 1\n");
    write(&src, "scratch.tmp", "x\n");
    write(&src, "out/result.txt", "x\n");

    let ws = Workspace::prepare(&src, &tmp.path().join("run")).unwrap();
    let actual = listing(ws.root());

    let expected = entries(&[(".gitignore", "*.tmp\nout/\n"), ("keep.py", "K = 1\n")]);
    assert_eq!(actual, expected);
}

#[test]
fn source_stays_byte_identical_and_its_git_status_unchanged() {
    let tmp = TempDir::new().unwrap();
    let repo = sample_repo(tmp.path());
    // --no-optional-locks keeps the test's own `git status` from refreshing the source's index.
    let state = || {
        let status = ["--no-optional-locks", "status", "--porcelain", "--ignored"];
        (snapshot(&repo), git(&repo, &status))
    };
    let before = state();

    let ws = Workspace::prepare(&repo, &tmp.path().join("run")).unwrap();
    write(ws.root(), "src/app.py", "def answer():\n    return 43\n");
    write(ws.root(), "src/brand_new.py", "N = 1\n");
    fs::remove_file(ws.root().join("src/util.py")).unwrap();
    let first = ws.checkpoint("edit").unwrap();
    write(ws.root(), "README.md", "changed\n");
    ws.checkpoint("second").unwrap();
    ws.rollback(&first).unwrap();
    ws.patch().unwrap();
    ws.rollback(ws.baseline()).unwrap();
    let after = state();

    assert_eq!(after, before);
}

#[test]
fn same_tree_gives_the_same_baseline_commit() {
    let tmp = TempDir::new().unwrap();
    let repo = sample_repo(tmp.path());

    let one = Workspace::prepare(&repo, &tmp.path().join("run1")).unwrap();
    let two = Workspace::prepare(&repo, &tmp.path().join("run2")).unwrap();
    let actual = (two.baseline().clone(), two.base_tree().to_owned());

    let expected = (one.baseline().clone(), one.base_tree().to_owned());
    assert_eq!(actual, expected);
}

#[test]
fn open_finds_the_same_workspace() {
    let tmp = TempDir::new().unwrap();
    let repo = sample_repo(tmp.path());
    let ws = Workspace::prepare(&repo, &tmp.path().join("run")).unwrap();
    write(ws.root(), "src/app.py", "changed\n");
    let head = ws.checkpoint("edit").unwrap();

    let reopened = Workspace::open(&tmp.path().join("run")).unwrap();
    let actual = (
        reopened.root().to_path_buf(),
        reopened.git_dir().to_path_buf(),
        reopened.baseline().clone(),
        reopened.base_tree().to_owned(),
        reopened.head().unwrap(),
    );

    let expected = (
        ws.root().to_path_buf(),
        ws.git_dir().to_path_buf(),
        ws.baseline().clone(),
        ws.base_tree().to_owned(),
        head,
    );
    assert_eq!(actual, expected);
}

/// The variant name of an error and whether it counts as infrastructure.
fn classify(err: &WorkspaceError) -> (String, bool) {
    let debug = format!("{err:?}");
    let name = debug
        .split([' ', '{', '('])
        .next()
        .unwrap_or_default()
        .to_owned();
    (name, err.is_infra())
}

#[test]
fn bad_input_is_refused_and_is_not_infrastructure() {
    let tmp = TempDir::new().unwrap();
    let repo = sample_repo(tmp.path());
    let full = tmp.path().join("full");
    write(&full, "something", "x\n");
    let missing = tmp.path().join("missing");

    let actual: Vec<(String, bool)> = [
        Workspace::prepare(&missing, &tmp.path().join("r1")),
        Workspace::prepare(&repo.join("README.md"), &tmp.path().join("r2")),
        Workspace::prepare(&repo, &full),
        Workspace::prepare(&repo, &full.join("something")),
        Workspace::prepare(&repo, &repo.join(".plumb/run")),
        Workspace::open(&tmp.path().join("missing-run")),
        Workspace::open(&full),
    ]
    .iter()
    .map(|result| classify(result.as_ref().unwrap_err()))
    .collect();

    let expected: Vec<(String, bool)> = [
        "SourceMissing",
        "SourceNotDirectory",
        "RunDirNotEmpty",
        "RunDirNotEmpty",
        "RunDirInsideSource",
        "NotPrepared",
        "NotPrepared",
    ]
    .iter()
    .map(|name| ((*name).to_owned(), false))
    .collect();
    assert_eq!(actual, expected);
    // Refusing a run directory inside the source must not have created anything there.
    assert_eq!(repo.join(".plumb").exists(), false);
}

#[test]
fn error_messages_name_the_input_and_what_to_change() {
    let tmp = TempDir::new().unwrap();
    let missing = tmp.path().join("nowhere");

    let actual = Workspace::prepare(&missing, &tmp.path().join("run"))
        .unwrap_err()
        .to_string();

    let expected = format!(
        "the source {} does not exist; pass the path of the repository folder to work on",
        missing.display()
    );
    assert_eq!(actual, expected);
}

#[test]
fn an_empty_existing_run_dir_is_accepted() {
    let tmp = TempDir::new().unwrap();
    let repo = sample_repo(tmp.path());
    let run = tmp.path().join("empty-run");
    fs::create_dir(&run).unwrap();

    let actual = Workspace::prepare(&repo, &run)
        .map(|ws| ws.root().to_path_buf())
        .unwrap();

    assert_eq!(actual, run.canonicalize().unwrap().join("work"));
}
