//! Tests that live in source files, as the ladder's reproduce step needs them. A Rust project's
//! unit tests sit in `src/` beside the code — `#[cfg(test)] mod tests { … }` in the file, or
//! `#[cfg(test)] mod NAME;` naming a file compiled only for tests — so no test *file* (by
//! `is_test_file`'s path rules) changes when the agent adds one, and the reproduce step found
//! "no new or changed test" and held every such fix back.
//!
//! For each changed Rust source file this finds the tests it adds or changes (libtest filters:
//! function names) and what the file is in the reproduce tree: a file compiled only for tests is
//! taken whole; a file holding code and tests is its baseline text with only its test items
//! taken from the change (`plumb_context::rust_tests::with_tests_of`), so the new tests run
//! against the code as it was.

use std::path::Path;

use plumb_context::rust_tests;
use plumb_verify::tamper::{ChangeStatus, FileChange, is_test_file};

/// The inline tests of a change.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct InlineTests {
    /// Files to write into the reproduce tree (path, text there).
    pub(crate) overlay: Vec<(String, String)>,
    /// The new or changed test functions, by name.
    pub(crate) tests: Vec<String>,
}

pub(crate) fn inline_tests(changes: &[FileChange]) -> InlineTests {
    let rust: Vec<(&FileChange, &str)> = changes
        .iter()
        .filter(|c| !matches!(c.status, ChangeStatus::Deleted))
        .filter(|c| c.path.ends_with(".rs") && !is_test_file(&c.path))
        .filter_map(|c| Some((c, c.after.as_deref()?)))
        .collect();
    let test_only: Vec<String> = rust
        .iter()
        .flat_map(|(change, after)| declared_test_files(&change.path, after))
        .collect();
    let mut found = InlineTests::default();
    for (change, after) in rust {
        let before = change.before.as_deref();
        let named = if test_only.contains(&change.path) {
            found.overlay.push((change.path.clone(), after.to_owned()));
            rust_tests::changed_test_functions(before, after, true)
        } else {
            let Some(before) = before else {
                // A new source file's tests need its new code: nothing runs on the baseline.
                continue;
            };
            // Test items the same in both: the old code with them is the old file.
            let Some(text) = rust_tests::with_tests_of(before, after).filter(|t| t != before)
            else {
                continue;
            };
            found.overlay.push((change.path.clone(), text));
            rust_tests::changed_test_functions(Some(before), after, false)
        };
        for name in named {
            if !found.tests.contains(&name) {
                found.tests.push(name);
            }
        }
    }
    found
}

/// The files that the `#[cfg(test)] mod NAME;` declarations of `path` (with text `text`) name:
/// `NAME.rs` or `NAME/mod.rs` in the folder of its module (`src/` for `src/lib.rs`, `main.rs`
/// or `mod.rs`; `src/foo/` for `src/foo.rs`).
fn declared_test_files(path: &str, text: &str) -> Vec<String> {
    let file = Path::new(path);
    let parent = file.parent().unwrap_or(Path::new(""));
    let folder = match file.file_name().and_then(|n| n.to_str()) {
        Some("lib.rs" | "main.rs" | "mod.rs") => parent.to_path_buf(),
        _ => parent.join(file.file_stem().unwrap_or_default()),
    };
    rust_tests::test_module_declarations(text)
        .into_iter()
        .flat_map(|name| {
            [
                folder.join(format!("{name}.rs")),
                folder.join(&name).join("mod.rs"),
            ]
        })
        .map(|p| p.to_string_lossy().into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn change(status: ChangeStatus, path: &str, before: Option<&str>, after: &str) -> FileChange {
        FileChange {
            status,
            path: path.to_owned(),
            before: before.map(str::to_owned),
            after: Some(after.to_owned()),
            before_mode: None,
            after_mode: None,
        }
    }

    const LIB: &str = "fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn builds() {}\n}\n";

    #[test]
    fn a_test_only_file_and_the_line_that_declares_it_reach_the_reproduce_tree_without_the_fix() {
        let fixed = format!(
            "{}\n#[cfg(test)]\nmod hidden;\n",
            LIB.replace("a - b", "a + b")
        );
        let hidden = "use super::*;\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 2), 4);\n    }\n}\n";
        let changes = [
            change(ChangeStatus::Modified, "src/lib.rs", Some(LIB), &fixed),
            change(ChangeStatus::Added, "src/hidden.rs", None, hidden),
        ];

        let actual = inline_tests(&changes);

        let expected = InlineTests {
            overlay: vec![
                (
                    "src/lib.rs".to_owned(),
                    format!("{LIB}\n#[cfg(test)]\nmod hidden;\n"),
                ),
                ("src/hidden.rs".to_owned(), hidden.to_owned()),
            ],
            tests: vec!["adds".to_owned()],
        };
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_test_added_beside_the_code_is_named_and_a_code_only_change_has_none() {
        let with_test = LIB
            .replace("a - b", "a + b")
            .replace("fn builds() {}\n", "fn builds() {}\n\n    #[test]\n    fn two() {\n        assert_eq!(super::add(2, 2), 4);\n    }\n");
        let added = inline_tests(&[change(
            ChangeStatus::Modified,
            "src/lib.rs",
            Some(LIB),
            &with_test,
        )]);
        let code_only = inline_tests(&[change(
            ChangeStatus::Modified,
            "src/lib.rs",
            Some(LIB),
            &LIB.replace("a - b", "a + b"),
        )]);

        let actual = (
            added.tests,
            added.overlay[0].1.contains("a - b"),
            added.overlay[0].1.contains("fn two()"),
            code_only,
        );
        assert_eq!(
            actual,
            (vec!["two".to_owned()], true, true, InlineTests::default())
        );
    }

    #[test]
    fn test_modules_are_looked_for_where_rust_looks() {
        let text = "#[cfg(test)]\nmod checks;\n";
        let actual = [
            declared_test_files("src/lib.rs", text),
            declared_test_files("src/parse.rs", text),
        ];
        let expected = [
            vec!["src/checks.rs".to_owned(), "src/checks/mod.rs".to_owned()],
            vec![
                "src/parse/checks.rs".to_owned(),
                "src/parse/checks/mod.rs".to_owned(),
            ],
        ];
        assert_eq!(actual, expected);
    }
}
