//! `search_code`'s engine against real trees on disk.

use std::fs;
use std::path::{Path, PathBuf};

use plumb_tools::search::{SearchError, SearchHit, SearchRequest, SearchResult, render, search};
use pretty_assertions::assert_eq;

/// A temporary tree, canonical as the tool's root always is.
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Tree {
    fn new(files: &[(&str, &[u8])]) -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for (path, content) in files {
            let path = root.join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, content).unwrap();
        }
        Tree { _dir: dir, root }
    }

    fn search(&self, query: &str, regex: bool) -> Result<SearchResult, SearchError> {
        self.search_in(None, query, regex)
    }

    fn search_in(
        &self,
        dir: Option<&Path>,
        query: &str,
        regex: bool,
    ) -> Result<SearchResult, SearchError> {
        search(&SearchRequest {
            tree: &plumb_workspace::Tree::new(&self.root).unwrap(),
            dir,
            query,
            regex,
            limit: 50,
        })
    }
}

fn hit(path: &str, line: u64, text: &str) -> SearchHit {
    SearchHit {
        path: path.to_string(),
        line,
        text: text.to_string(),
    }
}

#[test]
fn honours_gitignore_and_skips_git_and_binary_files() {
    // A NUL byte far past the searcher's first buffer: the matches before it must go too.
    let mut late_binary = b"needle\n".to_vec();
    late_binary.extend(b"filler line\n".repeat(50_000));
    late_binary.extend(b"\0needle\n");
    let tree = Tree::new(&[
        ("late.bin", &late_binary),
        (".gitignore", b"ignored.txt\nbuild/\n"),
        ("ignored.txt", b"needle\n"),
        ("build/out.txt", b"needle\n"),
        (".git/HEAD", b"needle\n"),
        (".github/ci.yml", b"  needle: yes\n"),
        ("kept.txt", b"a needle here\n"),
        ("bin.dat", b"needle\n\0\x01\x02needle\n"),
        ("sub/.gitignore", b"*.tmp\n"),
        ("sub/x.tmp", b"needle\n"),
        ("sub/x.py", b"def needle():\n    pass\n"),
    ]);
    let actual = tree.search("needle", false).unwrap();
    let expected = SearchResult {
        hits: vec![
            hit(".github/ci.yml", 1, "needle: yes"),
            hit("kept.txt", 1, "a needle here"),
            hit("sub/x.py", 1, "def needle():"),
        ],
        total: 3,
        files: 3,
    };
    assert_eq!(actual, expected);
}

#[test]
fn over_the_limit_keeps_the_first_rows_and_counts_all() {
    let many: String = (1..=60).map(|n| format!("needle {n}\n")).collect();
    let tree = Tree::new(&[
        ("src/many.txt", many.as_bytes()),
        ("b.txt", b"x\nneedle b\n"),
        ("a.txt", b"needle a\n"),
    ]);
    let actual = tree.search("needle", false).unwrap();
    let mut hits = vec![hit("a.txt", 1, "needle a"), hit("b.txt", 2, "needle b")];
    hits.extend((1..=48).map(|n| hit("src/many.txt", n, &format!("needle {n}"))));
    let expected = SearchResult {
        hits,
        total: 62,
        files: 3,
    };
    assert_eq!(actual, expected);

    let rendered = render(&actual, "needle", 50);
    let lines: Vec<&str> = rendered.lines().collect();
    let actual = (lines.len(), lines[0], lines[49], lines[50]);
    let expected = (
        51,
        "a.txt:1: needle a",
        "src/many.txt:48: needle 48",
        "… 62 matches in 3 files in all; only the first 50 are shown. \
         Search again with a more specific query or a path.",
    );
    assert_eq!(actual, expected);
}

#[test]
fn smart_case() {
    let tree = Tree::new(&[("f.txt", b"Needle\nneedle\nNEEDLE\n")]);
    let actual = [
        tree.search("needle", false).unwrap().hits,
        tree.search("Needle", false).unwrap().hits,
        tree.search("need.e", true).unwrap().hits,
    ];
    let expected = [
        vec![
            hit("f.txt", 1, "Needle"),
            hit("f.txt", 2, "needle"),
            hit("f.txt", 3, "NEEDLE"),
        ],
        vec![hit("f.txt", 1, "Needle")],
        vec![
            hit("f.txt", 1, "Needle"),
            hit("f.txt", 2, "needle"),
            hit("f.txt", 3, "NEEDLE"),
        ],
    ];
    assert_eq!(actual, expected);
}

#[test]
fn literal_by_default_regex_on_request() {
    let tree = Tree::new(&[("f.rs", b"a.b\naxb\nfoo(bar\n")]);
    let actual = [
        tree.search("a.b", false).unwrap().hits,
        tree.search("a.b", true).unwrap().hits,
        tree.search("foo(", false).unwrap().hits,
    ];
    let expected = [
        vec![hit("f.rs", 1, "a.b")],
        vec![hit("f.rs", 1, "a.b"), hit("f.rs", 2, "axb")],
        vec![hit("f.rs", 3, "foo(bar")],
    ];
    assert_eq!(actual, expected);
}

#[test]
fn bad_regex_is_a_sentence_for_the_model() {
    let tree = Tree::new(&[("f.rs", b"x\n")]);
    let actual = tree.search("foo(", true).unwrap_err().to_string();
    let expected =
        "the regex `foo(` is invalid: unclosed group; fix it or search with regex=false.";
    assert_eq!(actual, expected);
}

#[test]
fn a_path_narrows_the_search_and_keeps_root_relative_paths() {
    let tree = Tree::new(&[
        (".gitignore", b"*.log\n"),
        ("top.txt", b"needle\n"),
        ("src/a.py", b"needle = 1\n"),
        ("src/debug.log", b"needle\n"),
        ("src/deep/b.py", b"print(needle)\n"),
    ]);
    let src = tree.root.join("src");
    let file = tree.root.join("src/deep/b.py");
    let actual = [
        tree.search_in(Some(&src), "needle", false).unwrap(),
        tree.search_in(Some(&file), "needle", false).unwrap(),
    ];
    let expected = [
        SearchResult {
            hits: vec![
                hit("src/a.py", 1, "needle = 1"),
                hit("src/deep/b.py", 1, "print(needle)"),
            ],
            total: 2,
            files: 2,
        },
        SearchResult {
            hits: vec![hit("src/deep/b.py", 1, "print(needle)")],
            total: 1,
            files: 1,
        },
    ];
    assert_eq!(actual, expected);
}

#[test]
fn a_missing_path_is_an_error() {
    let tree = Tree::new(&[("f.txt", b"x\n")]);
    let missing = tree.root.join("nope/there");
    let actual = tree.search_in(Some(&missing), "x", false);
    let expected = Err(SearchError::NotFound {
        path: "nope/there".to_string(),
    });
    assert_eq!(actual, expected);
    let actual = actual.unwrap_err().to_string();
    assert_eq!(actual, "there is no file or folder called nope/there.");
}

#[test]
fn no_matches_renders_a_sentence() {
    let tree = Tree::new(&[("f.txt", b"x\n")]);
    let result = tree.search("needle", false).unwrap();
    let actual = (result.clone(), render(&result, "needle", 50));
    let expected = (
        SearchResult::default(),
        "No matches for `needle`.".to_string(),
    );
    assert_eq!(actual, expected);
}

#[test]
fn crlf_lines_and_invalid_utf8_are_shown_cleanly() {
    let tree = Tree::new(&[
        ("w.txt", b"first\r\n  needle here\r\n"),
        ("l.txt", b"caf\xe9 needle\n"),
    ]);
    let actual = tree.search("needle", false).unwrap().hits;
    let expected = vec![
        hit("l.txt", 1, "caf\u{fffd} needle"),
        hit("w.txt", 2, "needle here"),
    ];
    assert_eq!(actual, expected);
}
