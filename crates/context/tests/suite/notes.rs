//! Project notes from the root down to the folders in play, read through the confined reader.

use std::fs;
use std::path::Path;

use plumb_context::notes::{MAX_CHARS, MAX_TOTAL_CHARS, NotesFile, project_notes};
use plumb_workspace::Tree;
use pretty_assertions::assert_eq;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn note(path: &str, text: &str) -> NotesFile {
    NotesFile {
        path: path.into(),
        text: text.into(),
    }
}

/// A monorepo: notes at the root, in `services/` (as CLAUDE.md), in `services/billing/` (as
/// .plumb/notes.md beside nothing else) and in `services/search/`, which is not in play.
fn monorepo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "AGENTS.md", "Run the tests with make test.\n");
    write(root, "services/CLAUDE.md", "Services share lib/.\n");
    write(
        root,
        "services/billing/.plumb/notes.md",
        "Money is in cents.\n",
    );
    write(root, "services/billing/tax.py", "def tax(): pass\n");
    write(
        root,
        "services/search/AGENTS.md",
        "Never touch the index.\n",
    );
    dir
}

#[test]
fn notes_of_the_root_and_of_each_folder_down_to_the_one_in_play_root_first() {
    let dir = monorepo();
    let tree = Tree::new(dir.path()).unwrap();

    let actual = project_notes(&tree, &["services/billing".to_string()]);

    assert_eq!(
        actual.files,
        [
            note("AGENTS.md", "Run the tests with make test.\n"),
            note("services/CLAUDE.md", "Services share lib/.\n"),
            note("services/billing/.plumb/notes.md", "Money is in cents.\n"),
        ]
    );
    assert_eq!(actual.warnings, Vec::<String>::new());
}

#[test]
fn with_no_folder_in_play_only_the_roots_notes_are_read() {
    let dir = monorepo();
    let tree = Tree::new(dir.path()).unwrap();

    let actual = project_notes(&tree, &[]);

    assert_eq!(
        actual.files,
        [note("AGENTS.md", "Run the tests with make test.\n")]
    );
}

#[test]
fn agents_md_wins_over_claude_md_in_one_folder_and_long_notes_are_cut() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "AGENTS.md", &"a".repeat(MAX_CHARS + 10));
    write(root, "CLAUDE.md", "never read: AGENTS.md is there\n");
    let tree = Tree::new(root).unwrap();

    let actual = project_notes(&tree, &[]);

    assert_eq!(actual.files, [note("AGENTS.md", &"a".repeat(MAX_CHARS))]);
}

#[test]
fn notes_past_the_total_are_left_out_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let full = "n".repeat(MAX_CHARS);
    write(root, "AGENTS.md", &full);
    write(root, "a/AGENTS.md", &full);
    write(root, "a/b/AGENTS.md", "one more\n");
    let tree = Tree::new(root).unwrap();
    assert_eq!(MAX_TOTAL_CHARS, 2 * MAX_CHARS);

    let actual = project_notes(&tree, &["a/b".to_string()]);

    let paths: Vec<&str> = actual.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["AGENTS.md", "a/AGENTS.md"]);
    assert_eq!(
        actual.warnings,
        [format!(
            "the project notes a/b/AGENTS.md were left out: the notes before it already fill the {MAX_TOTAL_CHARS} characters every request can hold"
        )]
    );
}

#[test]
fn a_nested_notes_file_linked_out_of_the_tree_is_not_read() {
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.md", "TOKEN=abc\n");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("svc")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.md"), root.join("svc/AGENTS.md"))
        .unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("linked")).unwrap();
    let tree = Tree::new(root).unwrap();

    let actual = project_notes(&tree, &["svc".to_string(), "linked".to_string()]);

    assert_eq!(actual.files, Vec::<NotesFile>::new());
    assert!(
        actual.warnings.len() >= 2
            && actual
                .warnings
                .iter()
                .all(|w| w.starts_with("the project notes were not read:") && !w.contains("TOKEN")),
        "{:?}",
        actual.warnings
    );
}
