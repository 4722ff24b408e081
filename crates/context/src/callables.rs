//! Every function and method of a source file, at any depth, found through tree-sitter for each
//! language the syntax check parses — what `replace_function` replaces by name.
//!
//! The outline ([`crate::outline`]) stops at the bodies of classes and impls, which is what a map
//! of the repository wants; a function to replace can be deeper: a Rust test in `mod tests`, a
//! Python helper nested in a function, a method of a nested class, a JavaScript function assigned
//! to `module.exports.name` or written as an object's method. Each callable carries its owner
//! (the class, impl, trait, module or function it is in; a Go method's receiver type), so a name
//! defined twice can be told apart as `Owner.name`.
//!
//! A callable's bytes run from its keyword (a decorator or attribute above it is not part of it)
//! to the end of its body; for a JavaScript function held by a `const`, from the `const`.

use std::ops::Range;

use tree_sitter::Node;

use crate::c_family::{declared_name, function_declarator, split_owner};
use crate::parser;
use crate::syntax::Language;

/// One function or method of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Callable {
    pub name: String,
    /// The innermost class, impl (`Display for Invoice`), trait, interface, module or function
    /// around it; a Go method's receiver type. `None` at the top level.
    pub owner: Option<String>,
    /// True when it is defined inside another function's body.
    pub nested: bool,
    /// 1-based line of its keyword.
    pub line: usize,
    pub span: Range<usize>,
}

/// The functions and methods of `source`, in source order. A file with syntax errors yields what
/// tree-sitter recovered.
pub fn callables(lang: Language, source: &str) -> Vec<Callable> {
    let Some(tree) = parser::parse(lang, source) else {
        return Vec::new();
    };
    let mut walk = Walk {
        lang,
        source,
        owners: Vec::new(),
        found: Vec::new(),
    };
    walk.visit(tree.root_node());
    walk.found
}

/// What an enclosing node is to the callables inside it.
#[derive(Debug, Clone)]
struct Owner {
    name: String,
    /// A function: what is inside is nested.
    function: bool,
}

struct Walk<'s> {
    lang: Language,
    source: &'s str,
    owners: Vec<Owner>,
    found: Vec<Callable>,
}

impl Walk<'_> {
    fn text(&self, node: Node<'_>) -> String {
        let raw = node.utf8_text(self.source.as_bytes()).unwrap_or_default();
        raw.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    fn field_text(&self, node: Node<'_>, field: &str) -> Option<String> {
        node.child_by_field_name(field)
            .map(|n| self.text(n))
            .filter(|t| !t.is_empty())
    }

    fn visit(&mut self, node: Node<'_>) {
        let callable = self.callable(node);
        let owner = match &callable {
            Some((name, _, _)) => Some(Owner {
                name: name.clone(),
                function: true,
            }),
            None => self.container(node).map(|name| Owner {
                name,
                function: false,
            }),
        };
        if let Some((name, span_node, own_owner)) = callable {
            let owner = own_owner.or_else(|| self.owners.last().map(|o| o.name.clone()));
            self.found.push(Callable {
                name,
                owner,
                nested: self.owners.iter().any(|o| o.function),
                line: span_node.start_position().row + 1,
                span: span_node.byte_range(),
            });
        }
        let pushed = owner.is_some();
        if let Some(owner) = owner {
            self.owners.push(owner);
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.visit(child);
        }
        if pushed {
            self.owners.pop();
        }
    }

    /// The name of the callable `node` defines, the node its bytes are, and its owner when the
    /// definition itself says (a Go receiver, `Foo.prototype.bar = function`).
    fn callable<'t>(&self, node: Node<'t>) -> Option<(String, Node<'t>, Option<String>)> {
        let named = |field: &str| self.field_text(node, field).map(|n| (n, node, None));
        match (self.lang, node.kind()) {
            (Language::Python, "function_definition") => named("name"),
            (Language::Rust, "function_item" | "function_signature_item") => named("name"),
            (Language::Go, "function_declaration") => named("name"),
            (Language::Go, "method_declaration") => {
                let receiver = node
                    .child_by_field_name("receiver")
                    .and_then(|r| self.receiver_type(r));
                self.field_text(node, "name").map(|n| (n, node, receiver))
            }
            (
                Language::Java,
                "method_declaration"
                | "constructor_declaration"
                | "compact_constructor_declaration",
            ) => named("name"),
            (Language::JavaScript | Language::TypeScript | Language::Tsx, kind) => {
                self.js_callable(node, kind)
            }
            // `int total(…) {…}`; in C++ also `void Ledger::post(…) {…}`, owned by `Ledger`.
            (Language::C | Language::Cpp, "function_definition") => {
                let name = declared_name(function_declarator(node)?, self.source)?;
                let (short, owner) = split_owner(&name);
                Some((short, node, owner))
            }
            _ => None,
        }
    }

    fn js_callable<'t>(
        &self,
        node: Node<'t>,
        kind: &str,
    ) -> Option<(String, Node<'t>, Option<String>)> {
        let holds_function = |n: Node<'_>| {
            matches!(
                n.kind(),
                "arrow_function" | "function_expression" | "function" | "generator_function"
            )
        };
        match kind {
            "function_declaration"
            | "generator_function_declaration"
            | "function_signature"
            | "method_definition"
            | "method_signature"
            | "abstract_method_signature" => self.field_text(node, "name").map(|n| (n, node, None)),
            // `const total = () => …`: the whole declaration when it declares only this.
            "variable_declarator" => {
                let value = node.child_by_field_name("value")?;
                let name = node
                    .child_by_field_name("name")
                    .filter(|n| n.kind() == "identifier")?;
                if !holds_function(value) {
                    return None;
                }
                let whole = node
                    .parent()
                    .filter(|p| p.named_child_count() == 1)
                    .unwrap_or(node);
                Some((self.text(name), whole, None))
            }
            // `handleClick = () => {…}` in a class, `total: function () {…}` in an object.
            "field_definition" | "public_field_definition" | "pair" => {
                let value = node.child_by_field_name("value")?;
                let key = ["property", "name", "key"]
                    .iter()
                    .find_map(|field| node.child_by_field_name(field))?;
                holds_function(value).then(|| (self.text(key), node, None))
            }
            // `module.exports.total = function …`, `Invoice.prototype.total = …`.
            "assignment_expression" => {
                let right = node.child_by_field_name("right")?;
                if !holds_function(right) {
                    return None;
                }
                let left = node.child_by_field_name("left")?;
                let (name, owner) = match left.kind() {
                    "identifier" => (self.text(left), None),
                    "member_expression" => {
                        let object = left.child_by_field_name("object").map(|o| self.text(o));
                        let owner = object
                            .map(|o| o.trim_end_matches(".prototype").to_string())
                            .filter(|o| o != "module.exports" && o != "exports");
                        (self.field_text(left, "property")?, owner)
                    }
                    _ => return None,
                };
                // The statement around it, so a trailing `;` goes with it.
                let whole = node
                    .parent()
                    .filter(|p| p.kind() == "expression_statement")
                    .unwrap_or(node);
                Some((name, whole, owner))
            }
            _ => None,
        }
    }

    /// `(s *Store)` → `Store`; `(l List[T])` → `List`.
    fn receiver_type(&self, receiver: Node<'_>) -> Option<String> {
        let mut cursor = receiver.walk();
        let parameter = receiver
            .named_children(&mut cursor)
            .find(|n| n.kind() == "parameter_declaration")?;
        let text = self.text(parameter.child_by_field_name("type")?);
        let text = text.trim_start_matches('*');
        let name = text.split('[').next().unwrap_or(text).trim();
        (!name.is_empty()).then(|| name.to_string())
    }

    /// The name a container (class, impl, trait, interface, module) gives what is inside it.
    fn container(&self, node: Node<'_>) -> Option<String> {
        match (self.lang, node.kind()) {
            (Language::Python, "class_definition") => self.field_text(node, "name"),
            (Language::Rust, "trait_item" | "mod_item") => self.field_text(node, "name"),
            (Language::Rust, "impl_item") => {
                let ty = self.field_text(node, "type")?;
                Some(match self.field_text(node, "trait") {
                    Some(tr) => format!("{tr} for {ty}"),
                    None => ty,
                })
            }
            (
                Language::Java,
                "class_declaration"
                | "interface_declaration"
                | "enum_declaration"
                | "record_declaration"
                | "annotation_type_declaration",
            ) => self.field_text(node, "name"),
            (
                Language::JavaScript | Language::TypeScript | Language::Tsx,
                "class_declaration"
                | "abstract_class_declaration"
                | "interface_declaration"
                | "internal_module"
                | "module",
            ) => self.field_text(node, "name"),
            (
                Language::Cpp,
                "class_specifier" | "struct_specifier" | "union_specifier" | "namespace_definition",
            ) => self.field_text(node, "name"),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
