//! patch / changed_files: content, determinism, applicability, refusals.

use std::fs;
use std::path::Path;

use pretty_assertions::assert_eq;
use tempfile::TempDir;

use plumb_workspace::{ChangeKind, Entry, EntryMode, Workspace, WorkspaceError, sha256_hex};

use super::{git, listing, plain_source, write, write_bytes};

/// Copies a folder (`.git` included) with plain file operations.
fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            fs::copy(entry.path(), dest).unwrap();
        }
    }
}

/// A git repository holding `plain_source`'s files, committed.
fn committed_source(tmp: &TempDir) -> std::path::PathBuf {
    let src = plain_source(tmp.path());
    git(&src, &["init", "-q"]);
    git(&src, &["add", "-A"]);
    git(&src, &["commit", "-q", "-m", "base"]);
    src
}

/// Modifies a.py, adds pkg/new.py and an empty file, deletes b.py, renames pkg/d.py to moved/d.py (with a
/// small edit), and makes pkg/c.py executable.
fn edit(root: &Path) {
    write(root, "a.py", "A = 1\nA2 = 2\n");
    write(root, "pkg/new.py", "NEW = True\n");
    write(root, "empty.txt", "");
    fs::remove_file(root.join("b.py")).unwrap();
    fs::create_dir_all(root.join("moved")).unwrap();
    fs::rename(root.join("pkg/d.py"), root.join("moved/d.py")).unwrap();
    let moved = fs::read_to_string(root.join("moved/d.py")).unwrap();
    fs::write(
        root.join("moved/d.py"),
        moved.replacen("line\n", "first line\n", 1),
    )
    .unwrap();
    super::make_executable(root, "pkg/c.py");
}

#[test]
fn patch_with_new_deleted_and_renamed_files_applies_onto_the_source() {
    let tmp = TempDir::new().unwrap();
    let src = committed_source(&tmp);
    let ws = Workspace::prepare(&src, &tmp.path().join("run")).unwrap();
    edit(ws.root());

    let patch = ws.patch().unwrap();
    let target = tmp.path().join("target");
    copy_dir(&src, &target);
    fs::write(tmp.path().join("change.patch"), &patch.text).unwrap();
    let patch_file = tmp.path().join("change.patch").display().to_string();
    git(&target, &["apply", "--check", &patch_file]);
    git(&target, &["apply", &patch_file]);
    let files: Vec<(ChangeKind, String)> = patch
        .files
        .iter()
        .map(|file| (file.status.clone(), file.path.clone()))
        .collect();
    let actual = (listing(&target), files, patch.sha256.clone());

    let expected = (
        listing(ws.root()),
        vec![
            (ChangeKind::Modified, "a.py".to_string()),
            (ChangeKind::Deleted, "b.py".to_string()),
            (ChangeKind::Added, "empty.txt".to_string()),
            (
                ChangeKind::Renamed {
                    from: "pkg/d.py".into(),
                },
                "moved/d.py".to_string(),
            ),
            (ChangeKind::Modified, "pkg/c.py".to_string()),
            (ChangeKind::Added, "pkg/new.py".to_string()),
        ],
        sha256_hex(patch.text.as_bytes()),
    );
    assert_eq!(actual, expected);
}

#[test]
fn changed_files_match_the_patch() {
    let tmp = TempDir::new().unwrap();
    let src = plain_source(tmp.path());
    let ws = Workspace::prepare(&src, &tmp.path().join("run")).unwrap();
    edit(ws.root());

    let actual = ws.changed_files().unwrap();

    let expected = ws.patch().unwrap().files;
    assert_eq!(actual, expected);
}

/// One side of a changed file as the listing gives it: its mode and the stored text.
fn side(ws: &Workspace, entry: Option<&Entry>) -> Option<(EntryMode, Option<String>)> {
    entry.map(|entry| (entry.mode, ws.blob_text(entry).unwrap()))
}

#[test]
fn changed_files_carry_both_modes_and_the_stored_text_never_the_links_target_file() {
    let tmp = TempDir::new().unwrap();
    let outside = tmp.path().join("outside.txt");
    fs::write(&outside, "SECRET\n").unwrap();
    let src = plain_source(tmp.path());
    let ws = Workspace::prepare(&src, &tmp.path().join("run")).unwrap();
    edit(ws.root());
    // a.py becomes a link out of the tree; a nested repository is its files, its `.git` left out.
    fs::remove_file(ws.root().join("a.py")).unwrap();
    super::link(ws.root(), "a.py", &outside);
    super::link(ws.root(), "docs/readme", "../pkg/new.py");
    let nested = ws.root().join("vendor/lib");
    write(&nested, "lib.py", "LIB = 1\n");
    git(&nested, &["init", "-q"]);
    git(&nested, &["add", "-A"]);
    git(&nested, &["commit", "-q", "-m", "lib"]);

    let listed = ws.changed_files().unwrap();
    let actual: Vec<_> = listed
        .iter()
        .map(|file| {
            (
                file.status.letter(),
                file.path.as_str(),
                side(&ws, file.before.as_ref()),
                side(&ws, file.after.as_ref()),
            )
        })
        .collect();

    let text = |mode: EntryMode, text: &str| Some((mode, Some(text.to_string())));
    let link = outside.display().to_string();
    let expected = vec![
        (
            'M',
            "a.py",
            text(EntryMode::Regular, "A = 1\n"),
            text(EntryMode::Symlink, &link),
        ),
        ('D', "b.py", text(EntryMode::Regular, "B = 2\n"), None),
        (
            'A',
            "docs/readme",
            None,
            text(EntryMode::Symlink, "../pkg/new.py"),
        ),
        ('A', "empty.txt", None, text(EntryMode::Regular, "")),
        (
            'R',
            "moved/d.py",
            text(
                EntryMode::Regular,
                &fs::read_to_string(src.join("pkg/d.py")).unwrap(),
            ),
            text(
                EntryMode::Regular,
                &fs::read_to_string(ws.root().join("moved/d.py")).unwrap(),
            ),
        ),
        (
            'M',
            "pkg/c.py",
            text(
                EntryMode::Regular,
                &fs::read_to_string(src.join("pkg/c.py")).unwrap(),
            ),
            text(
                EntryMode::Executable,
                &fs::read_to_string(src.join("pkg/c.py")).unwrap(),
            ),
        ),
        (
            'A',
            "pkg/new.py",
            None,
            text(EntryMode::Regular, "NEW = True\n"),
        ),
        (
            'A',
            "vendor/lib/lib.py",
            None,
            text(EntryMode::Regular, "LIB = 1\n"),
        ),
    ];
    assert_eq!(actual, expected);
}

#[test]
fn patch_is_deterministic_byte_for_byte() {
    let tmp = TempDir::new().unwrap();
    let src = plain_source(tmp.path());
    let one = Workspace::prepare(&src, &tmp.path().join("run1")).unwrap();
    edit(one.root());
    let two = Workspace::prepare(&src, &tmp.path().join("run2")).unwrap();
    // A different history (extra checkpoints, a detour) reaching the same content.
    write(two.root(), "a.py", "detour\n");
    two.checkpoint("detour").unwrap();
    edit(two.root());
    two.checkpoint("edit").unwrap();

    let first = one.patch().unwrap();
    let actual = (one.patch().unwrap(), two.patch().unwrap());

    assert_eq!(actual, (first.clone(), first));
}

#[test]
fn unchanged_copy_gives_an_empty_patch_and_build_output_is_ignored() {
    let tmp = TempDir::new().unwrap();
    let src = plain_source(tmp.path());
    let ws = Workspace::prepare(&src, &tmp.path().join("run")).unwrap();
    write_bytes(ws.root(), "__pycache__/a.cpython-312.pyc", b"\0\x01binary");
    write_bytes(ws.root(), "pkg/__pycache__/c.pyc", b"\0\x01binary");
    write(ws.root(), ".pytest_cache/v/cache/lastfailed", "{}\n");
    write(
        ws.root(),
        "node_modules/left-pad/index.js",
        "module.exports = 1;\n",
    );
    write(ws.root(), "target/debug/app", "bin\n");
    write(ws.root(), ".mypy_cache/x.json", "{}\n");
    write(ws.root(), ".ruff_cache/x", "x\n");

    let patch = ws.patch().unwrap();
    let actual = (
        patch.text.as_str(),
        patch.files.len(),
        patch.sha256.as_str(),
        patch.is_empty(),
    );

    assert_eq!(actual, ("", 0, sha256_hex(b"").as_str(), true));
}

#[test]
fn binary_changes_are_refused_with_a_sentence_naming_them() {
    let tmp = TempDir::new().unwrap();
    let src = plain_source(tmp.path());
    let ws = Workspace::prepare(&src, &tmp.path().join("run")).unwrap();
    write(ws.root(), "a.py", "A = 2\n");
    write_bytes(ws.root(), "data/blob.bin", b"\0\x01\x02\x03");
    write_bytes(ws.root(), "img.png", b"\x89PNG\r\n\x1a\n\0\0\0");

    let err = ws.patch().unwrap_err();
    let actual = (
        err.to_string(),
        err.is_infra(),
        matches!(err, WorkspaceError::BinaryChange { .. }),
    );

    let expected = (
        "the change touches 2 binary files (data/blob.bin, img.png), which plumb cannot show as a text \
         patch; revert them or make the change in text files"
            .to_owned(),
        false,
        true,
    );
    assert_eq!(actual, expected);
}

#[test]
fn text_that_is_not_utf8_is_refused_with_its_file_named() {
    let tmp = TempDir::new().unwrap();
    let src = plain_source(tmp.path());
    let ws = Workspace::prepare(&src, &tmp.path().join("run")).unwrap();
    write_bytes(ws.root(), "latin1.txt", b"caf\xe9\n");

    let err = ws.patch().unwrap_err();
    let actual = (err.to_string(), err.is_infra());

    let expected = (
        "the change holds text that is not UTF-8 in latin1.txt; plumb cannot show it as a text patch, so \
         save the file as UTF-8 or revert it"
            .to_owned(),
        false,
    );
    assert_eq!(actual, expected);
}

#[test]
fn gitattributes_in_the_copy_cannot_rewrite_content() {
    let tmp = TempDir::new().unwrap();
    let src = tmp.path().join("src");
    write(
        &src,
        ".gitattributes",
        "* text=auto eol=lf\n*.py filter=evil\n",
    );
    write(&src, "crlf.py", "A = 1\r\n");
    let ws = Workspace::prepare(&src, &tmp.path().join("run")).unwrap();
    write(ws.root(), "crlf.py", "A = 2\r\n");

    let actual = ws.patch().unwrap().text;

    let expected = format!(
        "diff --git a/crlf.py b/crlf.py\nindex {old}..{new} 100644\n--- a/crlf.py\n+++ b/crlf.py\n\
         @@ -1 +1 @@\n-A = 1\r\n+A = 2\r\n",
        old = blob_id("A = 1\r\n"),
        new = blob_id("A = 2\r\n"),
    );
    assert_eq!(actual, expected);
}

/// The git blob id of `content`, computed outside any repository.
fn blob_id(content: &str) -> String {
    let tmp = TempDir::new().unwrap();
    let file = tmp.path().join("blob");
    fs::write(&file, content).unwrap();
    git(
        tmp.path(),
        &["hash-object", "--no-filters", &file.display().to_string()],
    )
    .trim()
    .to_owned()
}
