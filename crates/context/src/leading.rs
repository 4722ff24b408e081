//! The comments, attributes and decorators written directly above a definition: its doc comment,
//! `#[inline]`, `@property`.
//!
//! A callable's bytes ([`crate::callables`]) start at its keyword, so what is written above it is
//! not part of it. When a model sends a definition with its doc comment (it copies what it was
//! shown: HumanEvalFix's Rust and JavaScript tasks have a `/* … */` above each function), putting
//! that code in the callable's place keeps the file's own comment above the new one, and the
//! comment is written twice; a Python method sent with its decorator gets the decorator twice.
//! [`leading`] finds where that block starts, so the caller can replace it with the code's, and
//! its attributes, so the caller can tell whether the code's block would lose one.
//!
//! The block is the run of comment and attribute nodes before the definition, each on a line of
//! its own, with no blank line between them and the definition: a comment that ends the line of
//! the statement before, or one separated by a blank line, belongs to something else.

use std::ops::Range;

use tree_sitter::Node;

use crate::parser;
use crate::syntax::Language;

/// What is written directly above a definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leading {
    /// The byte offset where its comments, attributes and decorators start; the definition's own
    /// start when there are none.
    pub start: usize,
    /// Its attributes and decorators (`#[inline]`, `@property`), each with its whitespace
    /// collapsed: what changes the code's meaning, unlike a comment.
    pub attributes: Vec<String>,
}

/// What is written directly above the definition at `span`: nothing when the definition is part
/// of a larger statement (`export function …`), or when `span` is not one node of `source`.
pub fn leading(lang: Language, source: &str, span: Range<usize>) -> Leading {
    let none = Leading {
        start: span.start,
        attributes: Vec::new(),
    };
    let Some(tree) = parser::parse(lang, source) else {
        return none;
    };
    let Some(mut node) = tree
        .root_node()
        .descendant_for_byte_range(span.start, span.end)
    else {
        return none;
    };
    if node.byte_range() != span {
        return none;
    }
    let mut found = none.clone();
    // A Python definition's decorators are part of the statement around it.
    if let Some(parent) = node
        .parent()
        .filter(|p| lang == Language::Python && p.kind() == "decorated_definition")
    {
        found.start = parent.start_byte();
        let mut cursor = parent.walk();
        found.attributes = parent
            .named_children(&mut cursor)
            .filter(|child| child.kind() == "decorator")
            .map(|child| collapsed(source, child))
            .collect();
        node = parent;
    }
    if !starts_its_line(source, found.start) {
        return none;
    }
    loop {
        let Some(before) = node.prev_named_sibling() else {
            // The first statement of a block that starts with it: a comment above it belongs to
            // the node around the block (tree-sitter-python puts it before a class's body).
            match node
                .parent()
                .filter(|p| p.start_byte() == node.start_byte())
            {
                Some(parent) => {
                    node = parent;
                    continue;
                }
                None => break,
            }
        };
        if !leads(lang, before)
            || !starts_its_line(source, before.start_byte())
            || !adjacent(source, before.end_byte(), found.start)
        {
            break;
        }
        if before.kind() == "attribute_item" {
            found.attributes.insert(0, collapsed(source, before));
        }
        found.start = before.start_byte();
        node = before;
    }
    found
}

/// The text of `node` with its whitespace collapsed to single spaces.
fn collapsed(source: &str, node: Node<'_>) -> String {
    source
        .get(node.byte_range())
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `node` is written above a definition to describe or qualify it.
fn leads(lang: Language, node: Node<'_>) -> bool {
    match lang {
        Language::Rust => matches!(
            node.kind(),
            "line_comment" | "block_comment" | "attribute_item"
        ),
        Language::Java => matches!(node.kind(), "line_comment" | "block_comment"),
        Language::Python
        | Language::Go
        | Language::JavaScript
        | Language::TypeScript
        | Language::Tsx
        | Language::C
        | Language::Cpp => node.kind() == "comment",
    }
}

/// Whether only indentation comes before byte `at` on its line.
fn starts_its_line(source: &str, at: usize) -> bool {
    let head = source.get(..at).unwrap_or_default();
    let line = head.rsplit('\n').next().unwrap_or(head);
    line.trim().is_empty()
}

/// Whether the text from `end` to `start` is a line break and indentation, with no blank line.
fn adjacent(source: &str, end: usize, start: usize) -> bool {
    source
        .get(end..start)
        .is_some_and(|gap| gap.trim().is_empty() && gap.matches('\n').count() <= 1)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::callables::callables;

    /// The text from the block's start to the end of the definition named `name`.
    fn with_leading(lang: Language, source: &str, name: &str) -> String {
        let found = callables(lang, source);
        let span = found
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.span.clone())
            .unwrap_or_else(|| panic!("{name} not found in {source}"));
        source
            .get(leading(lang, source, span.clone()).start..span.end)
            .unwrap_or_else(|| panic!("the block of {name} is not on character boundaries"))
            .to_string()
    }

    #[test]
    fn a_rust_functions_doc_comments_and_attributes_lead_it() {
        let source = "use std::fmt;\n\n/*\n Adds.\n    two numbers\n*/\n#[inline]\n/// More.\npub fn add(a: i32) -> i32 {\n    a\n}\n";
        assert_eq!(
            with_leading(Language::Rust, source, "add"),
            "/*\n Adds.\n    two numbers\n*/\n#[inline]\n/// More.\npub fn add(a: i32) -> i32 {\n    a\n}"
        );
    }

    #[test]
    fn the_attributes_and_decorators_are_listed_without_the_comments() {
        let rust = "/* Adds. */\n#[inline]\n#[cfg(all(\n    unix\n))]\nfn add() {}\n";
        let span = callables(Language::Rust, rust)[0].span.clone();
        assert_eq!(
            leading(Language::Rust, rust, span),
            Leading {
                start: 0,
                attributes: vec!["#[inline]".to_string(), "#[cfg(all( unix ))]".to_string()],
            }
        );
        let python = "# Total.\n@cache\n@wraps(f)\ndef total():\n    pass\n";
        let span = callables(Language::Python, python)[0].span.clone();
        assert_eq!(
            leading(Language::Python, python, span).attributes,
            ["@cache", "@wraps(f)"]
        );
    }

    #[test]
    fn a_comment_after_a_blank_line_or_at_the_end_of_a_statement_does_not() {
        let rust = "// About the module.\n\nfn f() {}\n";
        assert_eq!(with_leading(Language::Rust, rust, "f"), "fn f() {}");
        let python = "x = 1  # one\ndef f():\n    pass\n";
        assert_eq!(
            with_leading(Language::Python, python, "f"),
            "def f():\n    pass"
        );
        let none = "fn g() {}\nfn f() {}\n";
        assert_eq!(with_leading(Language::Rust, none, "f"), "fn f() {}");
    }

    #[test]
    fn python_decorators_and_comments_lead_a_method() {
        let source =
            "class A:\n    # The total.\n    @property\n    def total(self):\n        return 1\n";
        assert_eq!(
            with_leading(Language::Python, source, "total"),
            "# The total.\n    @property\n    def total(self):\n        return 1"
        );
    }

    #[test]
    fn javascript_go_and_c_comments_lead_their_functions() {
        let js = "/* Sums.\n   >>> sum([1]) */\nconst sum = (xs) => {\n  return 0;\n};\n";
        assert_eq!(
            with_leading(Language::JavaScript, js, "sum"),
            "/* Sums.\n   >>> sum([1]) */\nconst sum = (xs) => {\n  return 0;\n};"
        );
        let go = "package m\n\n// Sum sums.\n// It is exported.\nfunc Sum() int {\n\treturn 0\n}\n";
        assert_eq!(
            with_leading(Language::Go, go, "Sum"),
            "// Sum sums.\n// It is exported.\nfunc Sum() int {\n\treturn 0\n}"
        );
        let c = "/* Sums. */\nint sum(void) {\n  return 0;\n}\n";
        assert_eq!(
            with_leading(Language::C, c, "sum"),
            "/* Sums. */\nint sum(void) {\n  return 0;\n}"
        );
    }

    #[test]
    fn an_exported_javascript_function_keeps_its_block_where_it_is() {
        let js = "// Sums.\nexport function sum() {\n  return 0;\n}\n";
        assert_eq!(
            with_leading(Language::JavaScript, js, "sum"),
            "function sum() {\n  return 0;\n}"
        );
    }
}
