//! A new Rust test sent with `replace_function`: the file does not define the name, and the code
//! is a test (`#[test]`, or a name starting with `test`), so it is added to the file's
//! `#[cfg(test)]` module instead of refused. A small model asked for a test "in the
//! `#[cfg(test)] mod tests` of src/lib.rs" sends it as `replace_function` more often than as an
//! `edit_file` of the module's last lines: in the eval (HumanEvalFix Rust/14, Rust/27) the 1.5B
//! model spent three rounds of two minutes each on the refusal and on `old_text` copies that did
//! not match. (A module without `use super::` gets one when a test is added: `finish_edit`.)

use plumb_context::rust_tests::{self, inline_test_module, test_functions};

use crate::replace::reindented;

/// The file with the test added, the byte offset where the added text starts, the added text,
/// and the note for the model; `None` when `code` is not a test.
pub(crate) struct AddedTest {
    pub after: String,
    pub offset: usize,
    pub added: String,
    pub note: String,
}

/// `before` (a Rust file whose top level does not define `name`) with the test `code` in it: in
/// place of its test of that name, else added inside its inline `#[cfg(test)]` module, else in a
/// new one at the end. `None` when `code` is not a test.
pub(crate) fn rust_test(rel: &str, before: &str, name: &str, code: &str) -> Option<AddedTest> {
    let has_attribute = code
        .lines()
        .any(|line| line.trim_start().starts_with("#[") && line.contains("test]"));
    let existing = test_functions(before)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, span)| span);
    if !has_attribute && existing.is_none() && !name.starts_with("test") {
        return None;
    }
    // The attribute the code lacks goes on the line above it, at the indentation it gets.
    let test = |indent: &str| {
        let code = reindented(code, indent);
        if has_attribute {
            code
        } else {
            format!("{indent}#[test]\n{code}")
        }
    };
    if let Some(span) = existing {
        let line_start = before.get(..span.start)?.rfind('\n').map_or(0, |at| at + 1);
        let indent: String = before
            .get(line_start..span.start)?
            .chars()
            .take_while(|c| c.is_whitespace())
            .collect();
        let added = test(&indent);
        let added = added.get(indent.len()..).unwrap_or(&added).to_string();
        return Some(AddedTest {
            after: format!(
                "{}{added}{}",
                before.get(..span.start)?,
                before.get(span.end..)?
            ),
            offset: span.start,
            added,
            note: format!("plumb replaced the test {name} in {rel}'s test module.\n"),
        });
    }
    match inline_test_module(before) {
        Some(module) => {
            let at = module.end;
            let separator = if before.get(..at).is_some_and(|head| head.ends_with('\n')) {
                ""
            } else {
                "\n"
            };
            let added = format!("{separator}\n{}\n", test("    "));
            let after = format!("{}{added}{}", before.get(..at)?, before.get(at..)?);
            Some(AddedTest {
                after,
                offset: at,
                added,
                note: format!(
                    "{rel} defines no function named {name}, and the code is a test: plumb added it to the file's #[cfg(test)] module.\n"
                ),
            })
        }
        None => {
            let added = format!(
                "\n#[cfg(test)]\nmod tests {{\n    use super::*;\n\n{}\n}}\n",
                test("    ")
            );
            let head = if before.ends_with('\n') || before.is_empty() {
                before.to_string()
            } else {
                format!("{before}\n")
            };
            let offset = head.len();
            Some(AddedTest {
                after: format!("{head}{added}"),
                offset,
                added,
                note: format!(
                    "{rel} defines no function named {name}, and the code is a test: plumb added it at the end of the file, in a new #[cfg(test)] module.\n"
                ),
            })
        }
    }
}

/// Any edit of a Rust file that adds a test to a test module without a `use super::` line: the
/// file with `use super::*;` at the top of that module (see [`rust_tests::with_use_super`]), the
/// edit's offset moved past it, and the note for the model. Other edits come back as they are.
pub(crate) fn with_use_super(
    rel: &str,
    before: &str,
    after: String,
    offset: usize,
) -> (String, usize, String) {
    let added = rel
        .ends_with(".rs")
        .then(|| rust_tests::with_use_super(before, &after))
        .flatten();
    match added {
        Some((text, at, len)) => (
            text,
            if at < offset { offset + len } else { offset },
            format!(
                "plumb added `use super::*;` at the top of {rel}'s test module: without it a test there cannot call the file's functions by name. "
            ),
        ),
        None => (after, offset, String::new()),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    const BARE_MODULE: &str = "fn flip_case(s: String) -> String {\n    s\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn builds() {}\n}\n";

    #[test]
    fn a_test_goes_into_the_test_module() {
        let added = rust_test(
            "src/lib.rs",
            BARE_MODULE,
            "test_flip_case",
            "#[test]\nfn test_flip_case() {\n    assert_eq!(flip_case(String::from(\"a\")), \"A\");\n}",
        )
        .expect("a test");
        assert_eq!(
            added.after,
            "fn flip_case(s: String) -> String {\n    s\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn builds() {}\n\n    #[test]\n    fn test_flip_case() {\n        assert_eq!(flip_case(String::from(\"a\")), \"A\");\n    }\n}\n"
        );
        assert!(
            added
                .after
                .get(added.offset..)
                .is_some_and(|rest| rest.starts_with(&added.added))
        );
    }

    #[test]
    fn a_test_named_test_without_its_attribute_gets_one_and_a_new_module_when_there_is_none() {
        let added = rust_test(
            "src/lib.rs",
            "fn add(a: i32) -> i32 { a }",
            "test_add",
            "fn test_add() { assert_eq!(add(1), 1); }",
        )
        .expect("a test");
        assert_eq!(
            added.after,
            "fn add(a: i32) -> i32 { a }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn test_add() { assert_eq!(add(1), 1); }\n}\n"
        );
    }

    #[test]
    fn a_test_of_that_name_in_the_module_is_replaced() {
        let added = rust_test(
            "src/lib.rs",
            BARE_MODULE,
            "builds",
            "fn builds() {\n    assert!(true);\n}",
        )
        .expect("a test");
        assert_eq!(
            added.after,
            BARE_MODULE.replace(
                "fn builds() {}",
                "fn builds() {\n        assert!(true);\n    }"
            )
        );
    }

    #[test]
    fn code_that_is_not_a_test_is_not_added() {
        assert!(
            rust_test(
                "src/lib.rs",
                BARE_MODULE,
                "flip_case_fixed",
                "fn flip_case_fixed(s: String) -> String { s }",
            )
            .is_none()
        );
    }

    #[test]
    fn an_edit_that_adds_a_test_to_a_bare_module_gets_use_super_and_its_offset_moves() {
        let added =
            rust_test("src/lib.rs", BARE_MODULE, "test_flip", "fn test_flip() {}").expect("a test");
        let (text, offset, note) =
            with_use_super("src/lib.rs", BARE_MODULE, added.after.clone(), added.offset);
        assert!(
            text.contains("mod tests {\n    use super::*;\n") && !note.is_empty(),
            "{text}"
        );
        assert!(
            text.get(offset..)
                .is_some_and(|rest| rest.starts_with(&added.added)),
            "{text}"
        );
        let (same, _, note) = with_use_super("src/main.py", BARE_MODULE, added.after.clone(), 0);
        assert_eq!((same, note), (added.after, String::new()));
    }
}
