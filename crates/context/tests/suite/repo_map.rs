use std::fs;
use std::path::Path;

use plumb_context::repo_map::{RepoMapError, RepoMapOptions, render_outline};
use pretty_assertions::assert_eq;
use tempfile::TempDir;

fn tree(root: &std::path::Path) -> plumb_workspace::Tree {
    plumb_workspace::Tree::new(root).unwrap()
}

fn write(root: &Path, rel: &str, content: &[u8]) {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(path, content).unwrap();
}

/// A small project: sources in three languages, an ignored build folder and log, build output no
/// .gitignore names, hidden folders, a nested .gitignore, a binary file, a large file and files of languages we do not parse.
fn project() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", b"build/\n*.log\n");
    write(root, ".git/HEAD", b"ref: refs/heads/main\n");
    write(
        root,
        ".github/workflows/ci.py",
        b"def hidden():\n    pass\n",
    );
    write(root, "README.md", b"# Billing\n");
    write(root, "debug.log", b"noise\n");
    write(root, "build/generated.py", b"def generated():\n    pass\n");
    write(
        root,
        "billing/invoice_totals.py",
        b"class InvoiceCalculator:\n    def total(self):\n        return 0\n\n\ndef compute_totals(invoices):\n    return []\n",
    );
    write(root, "billing/rates.json", b"{\"gst\": 0.1}\n");
    write(
        root,
        "billing/reports/monthly.py",
        b"def monthly():\n    pass\n",
    );
    write(root, "blob.py", b"\x00\x01\x02def not_parsed():\n");
    write(root, "big.py", "x = 1\n".repeat(200_000).as_bytes());
    // Build output a task's setup leaves without a .gitignore for it: a Cargo target folder
    // (tagged CACHEDIR.TAG), node_modules, __pycache__.
    write(
        root,
        "target/CACHEDIR.TAG",
        b"Signature: 8a477f597d28d172789f06886806bc55\n",
    );
    write(root, "target/debug/deps/lib.d", b"src/lib.rs\n");
    write(
        root,
        "node_modules/left-pad/index.js",
        b"function leftPad() {}\n",
    );
    write(
        root,
        "billing/__pycache__/rates.cpython-311.pyc",
        b"\x00\x01",
    );
    write(root, "src/.gitignore", b"*.tmp\n");
    write(root, "src/scratch.tmp", b"temporary\n");
    write(
        root,
        "src/lib.rs",
        b"pub struct Invoice;\n\nimpl Invoice {\n    pub fn total(&self) -> u32 {\n        0\n    }\n}\n",
    );
    write(
        root,
        "src/web/app.ts",
        b"export interface Line {\n  amount: number;\n}\n\nexport function render(lines: Line[]): string {\n  return \"\";\n}\n",
    );
    dir
}

fn unlimited() -> RepoMapOptions {
    RepoMapOptions {
        max_chars: usize::MAX,
        max_files: usize::MAX,
        tests_by_name: false,
    }
}

const FULL: &str = "\
README.md
big.py
billing/
  invoice_totals.py: class InvoiceCalculator (1) { def total (2) }, def compute_totals (6)
  rates.json
  reports/
    monthly.py: def monthly (1)
blob.py
src/
  lib.rs: struct Invoice (1), impl Invoice (3) { fn total (4) }
  web/
    app.ts: interface Line (1), function render (5)
";

#[test]
fn outline_of_the_whole_tree() {
    let dir = project();
    let actual = render_outline(&tree(dir.path()), None, &unlimited()).unwrap();
    assert_eq!(actual, FULL);
}

#[test]
fn test_files_can_be_listed_by_name_only() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "billing/tax.py",
        b"def compute_gst(value, rate):\n    return value\n",
    );
    write(
        root,
        "tests/test_tax.py",
        b"def test_gst():\n    assert True\n\n\ndef test_rounding():\n    assert True\n",
    );
    let opts = RepoMapOptions {
        tests_by_name: true,
        ..unlimited()
    };
    assert_eq!(
        render_outline(&tree(root), None, &opts).unwrap(),
        "billing/\n  tax.py: def compute_gst (1)\ntests/\n  test_tax.py\n"
    );
    assert_eq!(
        render_outline(&tree(root), None, &unlimited()).unwrap(),
        "billing/\n  tax.py: def compute_gst (1)\ntests/\n  test_tax.py: def test_gst (1), def test_rounding (5)\n"
    );
}

#[test]
fn outline_within_the_budget_keeps_whole_files() {
    let dir = project();
    let opts = RepoMapOptions {
        max_chars: 200,
        max_files: usize::MAX,
        tests_by_name: false,
    };
    let actual = render_outline(&tree(dir.path()), None, &opts).unwrap();
    let expected = "\
README.md
big.py
billing/
  invoice_totals.py: class InvoiceCalculator (1) { def total (2) }, def compute_totals (6)
  rates.json
… 4 more files not shown; use list_files PATH for a folder.
";
    assert_eq!(actual, expected);
    assert!(actual.chars().count() <= opts.max_chars);
}

#[test]
fn outline_stops_at_max_files() {
    let dir = project();
    let opts = RepoMapOptions {
        max_chars: usize::MAX,
        max_files: 2,
        tests_by_name: false,
    };
    let actual = render_outline(&tree(dir.path()), None, &opts).unwrap();
    let expected = "\
README.md
big.py
… 6 more files not shown; use list_files PATH for a folder.
";
    assert_eq!(actual, expected);
}

#[test]
fn outline_exactly_at_the_budget_shows_everything() {
    let dir = project();
    let opts = RepoMapOptions {
        max_chars: FULL.chars().count(),
        max_files: 8,
        tests_by_name: false,
    };
    let actual = render_outline(&tree(dir.path()), None, &opts).unwrap();
    assert_eq!(actual, FULL);
    let one_less = RepoMapOptions {
        max_chars: FULL.chars().count() - 1,
        max_files: 8,
        tests_by_name: false,
    };
    let actual = render_outline(&tree(dir.path()), None, &one_less).unwrap();
    let expected = "\
README.md
big.py
billing/
  invoice_totals.py: class InvoiceCalculator (1) { def total (2) }, def compute_totals (6)
  rates.json
  reports/
    monthly.py: def monthly (1)
blob.py
… 2 more files not shown; use list_files PATH for a folder.
";
    assert_eq!(actual, expected);
}

#[test]
fn outline_of_a_folder() {
    let dir = project();
    let actual =
        render_outline(&tree(dir.path()), Some(Path::new("billing")), &unlimited()).unwrap();
    let expected = "\
billing/
  invoice_totals.py: class InvoiceCalculator (1) { def total (2) }, def compute_totals (6)
  rates.json
  reports/
    monthly.py: def monthly (1)
";
    assert_eq!(actual, expected);
}

#[test]
fn outline_of_a_single_file() {
    let dir = project();
    let sub = Path::new("billing/reports/monthly.py");
    let actual = render_outline(&tree(dir.path()), Some(sub), &unlimited()).unwrap();
    assert_eq!(
        actual,
        "billing/\n  reports/\n    monthly.py: def monthly (1)\n"
    );
}

#[test]
fn outline_of_an_ignored_folder_is_empty() {
    let dir = project();
    let actual = render_outline(&tree(dir.path()), Some(Path::new("build")), &unlimited()).unwrap();
    assert_eq!(
        actual,
        "no files here (hidden and ignored files are not listed).\n"
    );
}

#[test]
fn outline_of_a_missing_folder_says_so() {
    let dir = project();
    let actual = render_outline(&tree(dir.path()), Some(Path::new("nope")), &unlimited());
    let message = match actual {
        Err(err @ RepoMapError::NotFound { .. }) => err.to_string(),
        other => format!("unexpected: {other:?}"),
    };
    assert_eq!(message, "there is no file or folder called nope.");
}

#[test]
fn outline_of_many_files_in_order_across_batches() {
    // More files than one parsing batch, so the order must survive the parallel batches.
    let dir = tempfile::tempdir().unwrap();
    for i in 0..300 {
        write(
            dir.path(),
            &format!("pkg/m{i:03}.py"),
            format!("def f{i}():\n    pass\n").as_bytes(),
        );
    }
    let actual = render_outline(&tree(dir.path()), None, &unlimited()).unwrap();
    let mut expected = String::from("pkg/\n");
    for i in 0..300 {
        expected.push_str(&format!("  m{i:03}.py: def f{i} (1)\n"));
    }
    assert_eq!(actual, expected);
}

#[test]
fn links_out_fifos_and_sockets_are_listed_by_name_and_never_opened() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    write(
        outside.path(),
        "secret.py",
        b"def host_secret():\n    pass\n",
    );
    write(dir.path(), "app.py", b"def run():\n    pass\n");
    std::os::unix::fs::symlink(outside.path().join("secret.py"), dir.path().join("leak.py"))
        .unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe.py"))
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo failed");
    let _socket = std::os::unix::net::UnixListener::bind(dir.path().join("sock.py")).unwrap();
    // Opening the FIFO for reading would block this test for ever.
    let actual = render_outline(&tree(dir.path()), None, &unlimited()).unwrap();
    assert_eq!(actual, "app.py: def run (1)\nleak.py\npipe.py\nsock.py\n");
}
