//! The tags of one source file: the names it defines and the names it uses, found by the tags queries
//! each tree-sitter grammar ships (`queries/tags.scm`, the ones GitHub's code navigation runs), not by
//! keywords.
//!
//! Definitions and references of every file are what the ranked repo map is built from: a file that
//! uses a name points at the files that define it (`crate::rank`). The queries are compiled once per
//! language and shared by every thread. TypeScript and TSX run JavaScript's query and TypeScript's own
//! together, as the TypeScript grammar's query is written as an addition to JavaScript's.
//!
//! Text predicates in the queries (`#eq?`, `#not-match?`, …) are applied by tree-sitter's query cursor;
//! the queries' doc-comment directives (`#strip!`, `#select-adjacent!`) are not needed here and are
//! ignored.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use streaming_iterator::StreamingIterator;
use tree_sitter::{Query, QueryCursor};

use crate::parser;
use crate::syntax::Language;

/// Whether a tag defines its name or uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TagKind {
    Definition,
    Reference,
}

/// One name a file defines or uses.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Tag {
    /// 1-based line of the name.
    pub line: usize,
    pub kind: TagKind,
    /// What the query calls it: `function`, `class`, `method`, `call`, `type`, …
    pub role: String,
    pub name: String,
    /// For a definition, its line of source (trimmed, at most [`MAX_LINE_CHARS`] characters): the
    /// signature the repo map shows. Empty for a reference.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
}

/// How much of a definition's line is kept.
pub const MAX_LINE_CHARS: usize = 160;

/// Names longer than this are not tags a person would search for (minified code, generated tables).
const MAX_NAME_CHARS: usize = 200;

/// Every tag of `source`, in source order, without repeats of the same name, kind and line.
///
/// A file whose language has no query, or that does not parse, has no tags.
pub fn tags(lang: Language, source: &str) -> Vec<Tag> {
    let Some(query) = query(lang) else {
        return Vec::new();
    };
    let Some(tree) = parser::parse(lang, source) else {
        return Vec::new();
    };
    let names = query.capture_names();
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, tree.root_node(), source.as_bytes());
    while let Some(found_match) = matches.next() {
        let mut name_node = None;
        let mut kind_and_role = None;
        for capture in found_match.captures {
            let Some(capture_name) = names.get(capture.index as usize) else {
                continue;
            };
            if *capture_name == "name" {
                name_node = Some(capture.node);
            } else if let Some(role) = capture_name.strip_prefix("definition.") {
                kind_and_role = Some((TagKind::Definition, role));
            } else if let Some(role) = capture_name.strip_prefix("reference.") {
                kind_and_role = Some((TagKind::Reference, role));
            }
        }
        let (Some(node), Some((kind, role))) = (name_node, kind_and_role) else {
            continue;
        };
        let Ok(name) = node.utf8_text(source.as_bytes()) else {
            continue;
        };
        if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
            continue;
        }
        let row = node.start_position().row;
        let text = match kind {
            TagKind::Definition => lines
                .get(row)
                .map(|line| line.trim().chars().take(MAX_LINE_CHARS).collect())
                .unwrap_or_default(),
            TagKind::Reference => String::new(),
        };
        found.push(Tag {
            line: row + 1,
            kind,
            role: role.to_owned(),
            name: name.to_owned(),
            text,
        });
    }
    found.sort();
    found.dedup_by(|a, b| a.line == b.line && a.kind == b.kind && a.name == b.name);
    found
}

/// The compiled tags query of a language; `None` if it does not compile against the grammar, which
/// the tests rule out for every language.
fn query(lang: Language) -> Option<&'static Query> {
    static QUERIES: OnceLock<Vec<Option<Query>>> = OnceLock::new();
    QUERIES
        .get_or_init(|| {
            Language::ALL
                .iter()
                .map(|&lang| Query::new(&lang.grammar(), &query_source(lang)).ok())
                .collect()
        })
        .get(lang.index())?
        .as_ref()
}

fn query_source(lang: Language) -> String {
    match lang {
        Language::Python => tree_sitter_python::TAGS_QUERY.to_owned(),
        Language::Rust => tree_sitter_rust::TAGS_QUERY.to_owned(),
        Language::JavaScript => tree_sitter_javascript::TAGS_QUERY.to_owned(),
        Language::TypeScript | Language::Tsx => format!(
            "{}\n{}",
            tree_sitter_javascript::TAGS_QUERY,
            tree_sitter_typescript::TAGS_QUERY
        ),
        Language::Go => tree_sitter_go::TAGS_QUERY.to_owned(),
        Language::Java => tree_sitter_java::TAGS_QUERY.to_owned(),
        Language::C => format!("{}\n{C_REFERENCES}", tree_sitter_c::TAGS_QUERY),
        Language::Cpp => format!(
            "{}\n{C_REFERENCES}\n{CPP_REFERENCES}",
            tree_sitter_cpp::TAGS_QUERY
        ),
    }
}

/// The C and C++ grammars' tags queries name definitions only; without uses a file points at no
/// other and the ranking has no graph. These add calls and type uses, in the form the other
/// grammars' queries give them.
const C_REFERENCES: &str = r#"
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
(type_identifier) @name @reference.type
"#;

/// C++'s calls through a scope (`billing::total(…)`, `Ledger::make(…)`) and a template's name.
const CPP_REFERENCES: &str = r#"
(call_expression function: (qualified_identifier name: (identifier) @name)) @reference.call
(call_expression function: (template_function name: (identifier) @name)) @reference.call
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn named(tags: &[Tag], kind: TagKind) -> Vec<(usize, String)> {
        tags.iter()
            .filter(|t| t.kind == kind)
            .map(|t| (t.line, t.name.clone()))
            .collect()
    }

    #[test]
    fn every_language_has_a_query_that_compiles_against_its_grammar() {
        for lang in Language::ALL {
            let source = query_source(lang);
            if let Err(err) = Query::new(&lang.grammar(), &source) {
                panic!("{lang}: {err}");
            }
            assert!(query(lang).is_some(), "{lang}");
        }
    }

    #[test]
    fn python_definitions_and_calls() {
        let source = "class Invoice:\n    def total(self):\n        return line_totals(self.lines)\n\n\
                      def line_totals(lines):\n    return [l.amount() for l in lines]\n";
        let tags = tags(Language::Python, source);
        assert_eq!(
            named(&tags, TagKind::Definition),
            vec![
                (1, "Invoice".to_owned()),
                (2, "total".to_owned()),
                (5, "line_totals".to_owned())
            ]
        );
        assert_eq!(
            named(&tags, TagKind::Reference),
            vec![(3, "line_totals".to_owned()), (6, "amount".to_owned())]
        );
        let invoice = tags.iter().find(|t| t.name == "Invoice");
        assert_eq!(invoice.map(|t| t.role.as_str()), Some("class"));
        let total = tags.iter().find(|t| t.name == "total");
        assert_eq!(total.map(|t| t.text.as_str()), Some("def total(self):"));
        assert!(
            tags.iter()
                .filter(|t| t.kind == TagKind::Reference)
                .all(|t| t.text.is_empty())
        );
    }

    #[test]
    fn rust_items_and_uses() {
        let source = "pub struct Ledger;\n\nimpl Ledger {\n    pub fn post(&self) {\n        settle(1);\n    }\n}\n\n\
                      fn settle(n: u32) {\n    println!(\"{n}\");\n}\n";
        let tags = tags(Language::Rust, source);
        let defs = named(&tags, TagKind::Definition);
        assert!(defs.contains(&(1, "Ledger".to_owned())), "{defs:?}");
        assert!(defs.contains(&(4, "post".to_owned())), "{defs:?}");
        assert!(defs.contains(&(9, "settle".to_owned())), "{defs:?}");
        let refs = named(&tags, TagKind::Reference);
        assert!(refs.contains(&(3, "Ledger".to_owned())), "{refs:?}");
        assert!(refs.contains(&(5, "settle".to_owned())), "{refs:?}");
        assert!(refs.contains(&(10, "println".to_owned())), "{refs:?}");
    }

    #[test]
    fn javascript_and_typescript_share_the_javascript_tags() {
        let js = "class Cart {\n  total() { return sum(this.items); }\n}\nfunction sum(xs) { return xs.length; }\n";
        for lang in [Language::JavaScript, Language::TypeScript] {
            let tags = tags(lang, js);
            let defs = named(&tags, TagKind::Definition);
            assert!(defs.contains(&(1, "Cart".to_owned())), "{lang}: {defs:?}");
            assert!(defs.contains(&(2, "total".to_owned())), "{lang}: {defs:?}");
            assert!(defs.contains(&(4, "sum".to_owned())), "{lang}: {defs:?}");
            let refs = named(&tags, TagKind::Reference);
            assert!(refs.contains(&(2, "sum".to_owned())), "{lang}: {refs:?}");
        }
        let ts = "interface Priced { price(): number }\nfunction cost(p: Priced) { return p.price(); }\n";
        let tags = tags(Language::TypeScript, ts);
        assert!(
            named(&tags, TagKind::Definition).contains(&(1, "Priced".to_owned())),
            "{tags:?}"
        );
    }

    #[test]
    fn c_and_cpp_definitions_calls_and_type_uses() {
        let c = "struct line { int amount; };\n\nint sum(const struct line *xs, int n);\n\nint total(const struct line *xs, int n) {\n    return sum(xs, n);\n}\n";
        let tags_c = tags(Language::C, c);
        let defs = named(&tags_c, TagKind::Definition);
        assert!(defs.contains(&(1, "line".to_owned())), "{defs:?}");
        assert!(defs.contains(&(5, "total".to_owned())), "{defs:?}");
        let refs = named(&tags_c, TagKind::Reference);
        assert!(refs.contains(&(6, "sum".to_owned())), "{refs:?}");

        let cpp = "namespace billing { int rate(); }\nclass Ledger {\n  int total() { return billing::rate() + helper(); }\n};\nLedger make() { return Ledger(); }\n";
        let tags_cpp = tags(Language::Cpp, cpp);
        let defs = named(&tags_cpp, TagKind::Definition);
        assert!(defs.contains(&(2, "Ledger".to_owned())), "{defs:?}");
        assert!(defs.contains(&(3, "total".to_owned())), "{defs:?}");
        let refs = named(&tags_cpp, TagKind::Reference);
        for (line, name) in [(3, "rate"), (3, "helper"), (5, "Ledger")] {
            assert!(refs.contains(&(line, name.to_owned())), "{name}: {refs:?}");
        }
    }

    #[test]
    fn go_and_java_definitions_and_calls() {
        let go = "package bill\n\nfunc Total(xs []int) int {\n\treturn sum(xs)\n}\n\nfunc sum(xs []int) int { return len(xs) }\n";
        let tags_go = tags(Language::Go, go);
        let defs = named(&tags_go, TagKind::Definition);
        assert!(defs.contains(&(3, "Total".to_owned())), "{defs:?}");
        assert!(defs.contains(&(7, "sum".to_owned())), "{defs:?}");
        assert!(
            named(&tags_go, TagKind::Reference).contains(&(4, "sum".to_owned())),
            "{tags_go:?}"
        );

        let java = "class Bill {\n  int total() { return Util.sum(1); }\n}\n";
        let tags_java = tags(Language::Java, java);
        let defs = named(&tags_java, TagKind::Definition);
        assert!(defs.contains(&(1, "Bill".to_owned())), "{defs:?}");
        assert!(defs.contains(&(2, "total".to_owned())), "{defs:?}");
        assert!(
            named(&tags_java, TagKind::Reference).contains(&(2, "sum".to_owned())),
            "{tags_java:?}"
        );
    }

    #[test]
    fn a_file_that_does_not_parse_cleanly_still_gives_the_tags_it_can() {
        let source = "def ok():\n    return helper()\n\ndef broken(:\n";
        let found = tags(Language::Python, source);
        assert!(
            named(&found, TagKind::Definition).contains(&(1, "ok".to_owned())),
            "{found:?}"
        );
        assert!(tags(Language::Python, "").is_empty());
    }
}
