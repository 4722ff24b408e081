//! The test part of a Rust source file. Rust keeps unit tests in the file they test, inside
//! top-level items gated by `#[cfg(test)]` (`mod tests { … }`, or `mod tests;` naming a file that
//! is then compiled only for tests). The check ladder's reproduce step must run a change's new
//! tests on the code as it was: for a file holding both, that is the file as it was with its test
//! items as they are now ([`with_tests_of`]), and the tests to run are the `#[test]` functions
//! that are new or changed ([`changed_test_functions`]).
//!
//! Items are read with tree-sitter: a brace counter would be fooled by `'{'` or `"}"` in the code.
//! A file that does not parse cleanly has no test part here, so the caller treats it as code.

use tree_sitter::Node;

use crate::parser;
use crate::syntax::Language;

/// One top-level item with its attributes and doc comments.
struct Item<'a> {
    /// What identifies it between two versions of the file: kind and name (`mod_item tests`),
    /// or the text itself for an item without a name (a `use`).
    key: String,
    text: &'a str,
    start: usize,
    end: usize,
}

/// The top-level items of `source` gated by `#[cfg(test)]`, in order; `None` when the file does
/// not parse cleanly.
fn test_items(source: &str) -> Option<Vec<Item<'_>>> {
    let tree = parser::parse(Language::Rust, source)?;
    let root = tree.root_node();
    if root.has_error() {
        return None;
    }
    let mut items = Vec::new();
    let mut attributes_from: Option<usize> = None;
    let mut gated = false;
    let mut cursor = root.walk();
    for node in root.named_children(&mut cursor) {
        match node.kind() {
            "attribute_item" => {
                attributes_from.get_or_insert(node.start_byte());
                gated |= is_cfg_test(text_of(node, source));
            }
            "line_comment" | "block_comment" => {
                attributes_from.get_or_insert(node.start_byte());
            }
            _ => {
                let start = attributes_from.take().unwrap_or(node.start_byte());
                if std::mem::take(&mut gated) {
                    let end = node.end_byte();
                    let text = source.get(start..end)?;
                    let key = match node.child_by_field_name("name") {
                        Some(name) => format!("{} {}", node.kind(), text_of(name, source)),
                        None => text_of(node, source).to_owned(),
                    };
                    items.push(Item {
                        key,
                        text,
                        start,
                        end,
                    });
                }
            }
        }
    }
    Some(items)
}

fn text_of<'a>(node: Node<'_>, source: &'a str) -> &'a str {
    source.get(node.byte_range()).unwrap_or("")
}

/// `#[cfg(test)]`, or a `cfg` whose condition names `test` (`#[cfg(all(test, unix))]`).
fn is_cfg_test(attribute: &str) -> bool {
    let compact: String = attribute.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(condition) = compact
        .strip_prefix("#[cfg(")
        .and_then(|rest| rest.strip_suffix(")]"))
    else {
        return false;
    };
    condition
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| word == "test")
}

/// `baseline` with its test items replaced by those of `patched`: an item of both (same kind and
/// name) takes `patched`'s text, one only `baseline` has is removed, and those only `patched`
/// has are appended. Everything else stays as `baseline` has it. `None` when either file does
/// not parse cleanly.
pub fn with_tests_of(baseline: &str, patched: &str) -> Option<String> {
    let old = test_items(baseline)?;
    let new = test_items(patched)?;
    let mut used = vec![false; new.len()];
    let mut out = String::with_capacity(baseline.len() + patched.len() / 2);
    let mut at = 0;
    for item in &old {
        out.push_str(baseline.get(at..item.start)?);
        let twin = new
            .iter()
            .enumerate()
            .find(|(i, n)| !used[*i] && n.key == item.key);
        if let Some((i, twin)) = twin {
            used[i] = true;
            out.push_str(twin.text);
        }
        at = item.end;
    }
    out.push_str(baseline.get(at..)?);
    for (item, _) in new.iter().zip(&used).filter(|(_, used)| !**used) {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
        out.push_str(item.text);
        out.push('\n');
    }
    Some(out)
}

/// Whether the test items of the two versions differ.
pub fn test_items_differ(baseline: &str, patched: &str) -> bool {
    let texts = |source| {
        test_items(source).map(|items| items.iter().map(|i| i.text.to_owned()).collect::<Vec<_>>())
    };
    texts(baseline) != texts(patched)
}

/// The names of `#[cfg(test)] mod NAME;` declarations: modules whose file is compiled only for
/// tests.
pub fn test_module_declarations(source: &str) -> Vec<String> {
    let Some(items) = test_items(source) else {
        return Vec::new();
    };
    items
        .iter()
        .filter(|item| item.text.trim_end().ends_with(';'))
        .filter_map(|item| item.key.strip_prefix("mod_item "))
        .map(str::to_owned)
        .collect()
}

/// The first `#[cfg(test)] mod NAME { … }` of `source` with a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InlineTestModule {
    /// Just after its opening brace.
    pub body_start: usize,
    /// The start of the line holding its closing brace (where a new test goes), or the brace
    /// itself when it closes on the line of its last item.
    pub end: usize,
    /// It has a `use super::` line: a test there sees the file's items only through one.
    pub uses_super: bool,
}

/// The first `#[cfg(test)] mod NAME { … }` of `source` with a body; `None` when the file has no
/// such module or does not parse cleanly.
pub fn inline_test_module(source: &str) -> Option<InlineTestModule> {
    let items = test_items(source)?;
    let module = items
        .iter()
        .find(|item| item.key.starts_with("mod_item ") && item.text.trim_end().ends_with('}'))?;
    let keyword = module.text.find("mod ")?;
    let body_start = module.start + keyword + module.text.get(keyword..)?.find('{')? + 1;
    let brace = module.start + module.text.trim_end().len() - 1;
    let line_start = source.get(..brace)?.rfind('\n').map_or(0, |at| at + 1);
    let end = if source.get(line_start..brace)?.trim().is_empty() {
        line_start
    } else {
        brace
    };
    Some(InlineTestModule {
        body_start,
        end,
        uses_super: module.text.contains("use super::"),
    })
}

/// `after` with `use super::*;` at the top of its inline test module, when an edit from
/// `before` added a test there and the module has no `use super::` line: without one the test
/// cannot call the file's functions by name, and the crate does not compile (HumanEvalFix
/// Rust/41: the 1.5B model's test in the bare module failed on "cannot find function" for four
/// rounds). The offset and length of the inserted line; `None` when nothing was added.
pub fn with_use_super(before: &str, after: &str) -> Option<(String, usize, usize)> {
    let module = inline_test_module(after)?;
    if module.uses_super || changed_test_functions(Some(before), after, false).is_empty() {
        return None;
    }
    let line = "\n    use super::*;\n";
    let at = module.body_start;
    let rest = after.get(at..)?;
    // The module's first line break stays where it was: the use line goes right after the brace.
    let (line, skip) = match rest.strip_prefix('\n') {
        Some(_) => ("\n    use super::*;\n", 1),
        None => (line, 0),
    };
    let text = format!("{}{line}{}", after.get(..at)?, rest.get(skip..)?);
    Some((text, at, line.len() - skip))
}

/// The `#[test]` functions (also `#[tokio::test]` and the like) of `patched` whose text
/// `baseline` (the file before, if it existed) does not have: the new or changed tests. When
/// `all` is false only those inside the test items count; a file compiled only for tests counts
/// whole.
pub fn changed_test_functions(baseline: Option<&str>, patched: &str, all: bool) -> Vec<String> {
    let before = baseline
        .map(functions_with_test_attribute)
        .unwrap_or_default();
    let scope: Vec<(usize, usize)> = if all {
        vec![(0, patched.len())]
    } else {
        match test_items(patched) {
            Some(items) => items.iter().map(|i| (i.start, i.end)).collect(),
            None => return Vec::new(),
        }
    };
    let mut names = Vec::new();
    for (name, text, start) in functions_with_test_attribute(patched) {
        let inside = scope.iter().any(|(s, e)| *s <= start && start < *e);
        let known = before.iter().any(|(n, t, _)| *n == name && *t == text);
        if inside && !known && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// Every function in `source` marked as a test, with its bytes (attributes included), for an
/// edit that replaces one: `find` in the outline sees only top-level functions and methods.
pub fn test_functions(source: &str) -> Vec<(String, std::ops::Range<usize>)> {
    functions_with_test_attribute(source)
        .into_iter()
        .map(|(name, text, start)| (name, start..start + text.len()))
        .collect()
}

/// Every function in `source` marked as a test: name, text (attributes included) and start.
fn functions_with_test_attribute(source: &str) -> Vec<(String, String, usize)> {
    let Some(tree) = parser::parse(Language::Rust, source) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    collect_tests(tree.root_node(), source, &mut found);
    found
}

fn collect_tests(node: Node<'_>, source: &str, found: &mut Vec<(String, String, usize)>) {
    let mut cursor = node.walk();
    let mut test_attribute_at: Option<usize> = None;
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "attribute_item" => {
                if is_test_attribute(text_of(child, source)) {
                    test_attribute_at.get_or_insert(child.start_byte());
                }
            }
            "line_comment" | "block_comment" => {}
            kind => {
                if let (Some(start), "function_item") = (test_attribute_at, kind)
                    && let Some(name) = child.child_by_field_name("name")
                {
                    let text = source.get(start..child.end_byte()).unwrap_or("");
                    found.push((text_of(name, source).to_owned(), text.to_owned(), start));
                }
                test_attribute_at = None;
                if let Some(body) = child.child_by_field_name("body") {
                    collect_tests(body, source, found);
                }
            }
        }
    }
}

/// `#[test]`, `#[tokio::test]`, `#[tokio::test(flavor = "multi_thread")]`, `#[rstest]`.
fn is_test_attribute(attribute: &str) -> bool {
    let compact: String = attribute.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(inner) = compact
        .strip_prefix("#[")
        .and_then(|rest| rest.strip_suffix(']'))
    else {
        return false;
    };
    let path = inner.split('(').next().unwrap_or(inner);
    let last = path.rsplit("::").next().unwrap_or(path);
    last == "test" || last == "rstest"
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const BASE: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn zero() {\n        assert_eq!(super::add(0, 0), 0);\n    }\n}\n";
    const FIXED_WITH_TESTS: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn zero() {\n        assert_eq!(super::add(0, 0), 0);\n    }\n\n    #[test]\n    fn two() {\n        assert_eq!(super::add(2, 2), 4);\n    }\n}\n\n#[cfg(test)]\nmod hidden;\n";

    #[test]
    fn the_old_code_takes_the_new_test_items() {
        let actual = with_tests_of(BASE, FIXED_WITH_TESTS).unwrap();
        let expected = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn zero() {\n        assert_eq!(super::add(0, 0), 0);\n    }\n\n    #[test]\n    fn two() {\n        assert_eq!(super::add(2, 2), 4);\n    }\n}\n\n#[cfg(test)]\nmod hidden;\n";
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_removed_test_item_goes_and_braces_in_strings_do_not_confuse() {
        let base = "fn f() -> &'static str {\n    \"}\"\n}\n\n#[cfg(test)]\nmod old {\n    #[test]\n    fn brace() { assert_eq!(super::f(), \"}\"); }\n}\n";
        let patched = "fn f() -> &'static str {\n    \"{\"\n}\n";
        assert_eq!(
            with_tests_of(base, patched).unwrap(),
            "fn f() -> &'static str {\n    \"}\"\n}\n\n\n"
        );
    }

    #[test]
    fn new_and_changed_tests_are_named_and_unchanged_ones_are_not() {
        let actual = [
            changed_test_functions(Some(BASE), FIXED_WITH_TESTS, false),
            changed_test_functions(None, FIXED_WITH_TESTS, false),
            changed_test_functions(Some(BASE), BASE, false),
            changed_test_functions(
                None,
                "use super::*;\n\n#[tokio::test]\nasync fn later() {}\n\nfn helper() {}\n",
                true,
            ),
        ];
        let names = |n: &[&str]| n.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let expected = [
            names(&["two"]),
            names(&["zero", "two"]),
            names(&[]),
            names(&["later"]),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn test_only_modules_and_differences_are_seen() {
        let actual = (
            test_module_declarations(FIXED_WITH_TESTS),
            test_items_differ(BASE, FIXED_WITH_TESTS),
            test_items_differ(BASE, &BASE.replace("a - b", "a + b")),
            is_cfg_test("#[cfg(all(test, unix))]"),
            is_cfg_test("#[cfg(feature = \"testing\")]"),
        );
        assert_eq!(
            actual,
            (vec!["hidden".to_owned()], true, false, true, false)
        );
    }

    #[test]
    fn a_file_that_does_not_parse_has_no_test_part() {
        assert_eq!(with_tests_of(BASE, "fn broken( {"), None);
    }

    #[test]
    fn a_new_test_goes_before_the_closing_brace_of_the_inline_test_module() {
        let source = "fn flip(s: String) -> String {\n    s\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn builds() {}\n}\n";
        let module = inline_test_module(source).expect("a test module");
        assert_eq!(
            (
                source.get(module.end..),
                source
                    .get(..module.body_start)
                    .map(|head| head.ends_with("mod tests {")),
                module.uses_super
            ),
            (Some("}\n"), Some(true), false)
        );
        let with_super = source.replace("mod tests {\n", "mod tests {\n    use super::*;\n");
        assert_eq!(
            inline_test_module(&with_super).map(|m| m.uses_super),
            Some(true)
        );
        let one_line = "fn a() {}\n#[cfg(test)]\nmod tests { fn b() {} }\n";
        let module = inline_test_module(one_line).expect("a test module");
        assert_eq!(one_line.get(module.end..), Some("}\n"));
        assert_eq!(
            inline_test_module("fn a() {}\n#[cfg(test)]\nmod hidden;\n"),
            None
        );
        assert_eq!(inline_test_module("fn a() {}\n"), None);
    }

    #[test]
    fn a_test_added_to_a_bare_module_gets_use_super_and_nothing_else_does() {
        let before = "fn one() -> i32 {\n    1\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn builds() {}\n}\n";
        let after = before.replace(
            "    fn builds() {}\n",
            "    fn builds() {}\n\n    #[test]\n    fn one_is_one() {\n        assert_eq!(one(), 1);\n    }\n",
        );
        let (text, at, len) = with_use_super(before, &after).expect("use super added");
        assert_eq!(text.get(at..at + len), Some("\n    use super::*;"));
        assert!(
            text.contains("mod tests {\n    use super::*;\n    #[test]\n    fn builds()"),
            "{text}"
        );
        // The code changed, not the tests; or the module has its use line already.
        assert_eq!(with_use_super(before, &before.replace("1\n", "2\n")), None);
        let with_super = after.replace("mod tests {\n", "mod tests {\n    use super::*;\n");
        assert_eq!(with_use_super(before, &with_super), None);
    }
}
