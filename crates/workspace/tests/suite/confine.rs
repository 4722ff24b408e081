//! resolve: every refused and accepted shape of a model-given path.

use std::fs;
use std::path::Path;

use pretty_assertions::assert_eq;
use tempfile::TempDir;

use plumb_workspace::{ConfineError, Workspace};

use super::{link, plain_source, write};

/// `ok <path relative to root>` or `err <variant>`, for one table-shaped assertion.
fn outcome(root: &Path, result: Result<std::path::PathBuf, ConfineError>) -> String {
    match result {
        Ok(path) => match path.strip_prefix(root) {
            Ok(rel) => format!("ok {}", rel.display()),
            Err(_) => format!("OUTSIDE {}", path.display()),
        },
        Err(err) => {
            let debug = format!("{err:?}");
            format!("err {}", debug.split([' ', '{']).next().unwrap_or_default())
        }
    }
}

#[test]
fn paths_are_confined_to_the_copy() {
    let tmp = TempDir::new().unwrap();
    let src = plain_source(tmp.path());
    write(&src, "src/main.py", "print('hi')\n");
    let outside = tmp.path().join("outside");
    write(&outside, "secret.txt", "secret\n");
    write(tmp.path(), "outside.txt", "secret\n");
    let ws = Workspace::prepare(&src, &tmp.path().join("run")).unwrap();
    let root = ws.root();
    // Links an agent's command could create inside the copy.
    link(root, "out_dir", &outside);
    link(root, "out_file", outside.join("secret.txt"));
    link(root, "out_relative", "../../outside/secret.txt");
    link(root, "procroot", "/proc/self/root");
    link(root, "dangling_out", "../../not-yet-there.txt");
    link(root, "loop", "loop");
    link(root, "inner", "src");
    link(root, "inner_abs", root.join("src"));
    link(
        root,
        "via_proc",
        format!("/proc/self/root{}", root.join("src").display()),
    );
    link(root, "dangling_in", "src/future.py");
    link(root, "to_git", ".git");
    link(root, "to_shadow", "../shadow.git");
    fs::create_dir(root.join(".git")).unwrap();

    let cases = [
        // refused
        "",
        "   ",
        "../outside.txt",
        "/etc/passwd",
        "a/../../x",
        "../run/work/a.py",
        "out_dir/secret.txt",
        "out_dir",
        "out_file",
        "out_relative",
        "/proc/self/root/etc/passwd",
        "procroot/etc/passwd",
        "dangling_out",
        "loop",
        "loop/x",
        ".git/config",
        "src/.git/hooks/pre-commit",
        ".GIT/config",
        "to_git/config",
        "to_shadow/config",
        "a.py/x",
        "a\0b",
        // accepted
        "src/new_dir/new.py",
        "src/new_dir/../a.py",
        "new/deeper/../../../x",
        "./a.py",
        "a/../a.py",
        "a.py",
        "src/../src/main.py",
        ".",
        "inner/main.py",
        "inner_abs/main.py",
        "via_proc/main.py",
        "dangling_in",
        "pkg/",
        ".gitignore",
        ".github/workflows/ci.yml",
    ];
    let actual: Vec<(String, String)> = cases
        .iter()
        .map(|case| ((*case).to_owned(), outcome(root, ws.resolve(case))))
        .collect();

    let expected: Vec<(String, String)> = [
        ("", "err Empty"),
        ("   ", "err Empty"),
        ("../outside.txt", "err Escapes"),
        ("/etc/passwd", "err Absolute"),
        ("a/../../x", "err Escapes"),
        ("../run/work/a.py", "err Escapes"),
        ("out_dir/secret.txt", "err Escapes"),
        ("out_dir", "err Escapes"),
        ("out_file", "err Escapes"),
        ("out_relative", "err Escapes"),
        ("/proc/self/root/etc/passwd", "err Absolute"),
        ("procroot/etc/passwd", "err Escapes"),
        ("dangling_out", "err Escapes"),
        ("loop", "err TooManyLinks"),
        ("loop/x", "err TooManyLinks"),
        (".git/config", "err GitDir"),
        ("src/.git/hooks/pre-commit", "err GitDir"),
        (".GIT/config", "err GitDir"),
        ("to_git/config", "err GitDir"),
        ("to_shadow/config", "err Escapes"),
        ("a.py/x", "err NotADirectory"),
        ("a\0b", "err Invalid"),
        ("src/new_dir/new.py", "ok src/new_dir/new.py"),
        ("src/new_dir/../a.py", "ok src/a.py"),
        ("new/deeper/../../../x", "err Escapes"),
        ("./a.py", "ok a.py"),
        ("a/../a.py", "ok a.py"),
        ("a.py", "ok a.py"),
        ("src/../src/main.py", "ok src/main.py"),
        (".", "ok "),
        ("inner/main.py", "ok src/main.py"),
        ("inner_abs/main.py", "ok src/main.py"),
        ("via_proc/main.py", "ok src/main.py"),
        ("dangling_in", "ok src/future.py"),
        ("pkg/", "ok pkg"),
        (".gitignore", "ok .gitignore"),
        (".github/workflows/ci.yml", "ok .github/workflows/ci.yml"),
    ]
    .iter()
    .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
    .collect();
    assert_eq!(actual, expected);
}

#[test]
fn refusals_tell_the_model_what_to_do() {
    let tmp = TempDir::new().unwrap();
    let src = plain_source(tmp.path());
    let ws = Workspace::prepare(&src, &tmp.path().join("run")).unwrap();

    let actual: Vec<String> = ["../outside.txt", "/etc/passwd", ".git/config", ""]
        .iter()
        .map(|case| ws.resolve(case).unwrap_err().to_string())
        .collect();

    let expected = vec![
        "../outside.txt leads outside the project folder; you can only use files inside the project folder",
        "/etc/passwd is an absolute path; you can only use paths inside the project folder, written relative \
         to it (e.g. src/main.py)",
        ".git/config is inside a .git folder, which is off limits; work on the project's files instead",
        "the path is empty; give a path relative to the project folder, e.g. src/main.py",
    ];
    assert_eq!(actual, expected);
}

#[test]
fn names_with_hidden_or_direction_changing_characters_are_refused() {
    let tmp = TempDir::new().unwrap();
    let src = plain_source(tmp.path());
    let ws = Workspace::prepare(&src, &tmp.path().join("run")).unwrap();
    let root = ws.root().to_path_buf();
    let actual: Vec<String> = [
        "src/evil\u{202E}yp.txt",
        "src/a\u{200B}b.py",
        "src/tab\there.py",
        "src/new\nline.py",
        "src/\u{2066}x.py",
        "src/café.py",
    ]
    .iter()
    .map(|case| outcome(&root, ws.resolve(case)))
    .collect();
    let expected = vec![
        "err Hidden",
        "err Hidden",
        "err Hidden",
        "err Hidden",
        "err Hidden",
        "ok src/café.py",
    ];
    assert_eq!(actual, expected);
    assert_eq!(
        ws.resolve("evil\u{202E}yp.txt").unwrap_err().to_string(),
        "the path \"evil\\u{202e}yp.txt\" contains U+202E, a character that is invisible or changes how the name shows; give a path of plain visible characters"
    );
}

#[test]
fn a_huge_path_is_refused_in_a_sentence_of_bounded_length() {
    let tmp = TempDir::new().unwrap();
    let src = plain_source(tmp.path());
    let ws = Workspace::prepare(&src, &tmp.path().join("run")).unwrap();
    let huge = "a".repeat(200_000);
    let message = ws.resolve(&huge).unwrap_err().to_string();
    assert!(message.chars().count() < 400, "{} chars", message.len());
}
