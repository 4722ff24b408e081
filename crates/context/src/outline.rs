//! The definitions of one source file — classes, functions, methods, types, constants — for the repo map and the
//! `list_files` tool.
//!
//! Only the top level of a file and the bodies of classes, impls, traits and interfaces are visited (depth 0 and
//! 1), so outlining costs little beyond the parse. Lines are 1-based and point at the definition itself, not at a
//! decorator or attribute above it. Module-level constants are included where the language marks them (`const` in
//! Rust and Go, an UPPER_CASE name in Python and JavaScript/TypeScript).

use std::ops::Range;

use tree_sitter::Node;

use crate::parser;
use crate::syntax::Language;

mod c_family;

/// What a definition is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DefKind {
    Class,
    Function,
    /// A function inside a class, impl, trait or interface, or a Go method.
    Method,
    Struct,
    Enum,
    Trait,
    Interface,
    Impl,
    /// A Rust `mod` or a TypeScript namespace.
    Module,
    Const,
    Static,
    /// A type alias or a Go type that is neither struct nor interface.
    Type,
    Macro,
}

impl DefKind {
    /// The word the outline shows before the name, in the language's own terms where it has one.
    pub fn keyword(self, lang: Language) -> &'static str {
        match self {
            DefKind::Function | DefKind::Method => match lang {
                Language::Python => "def",
                Language::Rust => "fn",
                Language::Go => "func",
                Language::JavaScript
                | Language::TypeScript
                | Language::Tsx
                | Language::Java
                | Language::C
                | Language::Cpp => {
                    if self == DefKind::Method {
                        "method"
                    } else {
                        "function"
                    }
                }
            },
            DefKind::Module => match lang {
                Language::Rust => "mod",
                Language::Python
                | Language::JavaScript
                | Language::TypeScript
                | Language::Tsx
                | Language::Go
                | Language::Java
                | Language::C
                | Language::Cpp => "namespace",
            },
            DefKind::Class => "class",
            DefKind::Struct => "struct",
            DefKind::Enum => "enum",
            DefKind::Trait => "trait",
            DefKind::Interface => "interface",
            DefKind::Impl => "impl",
            DefKind::Const => "const",
            DefKind::Static => "static",
            DefKind::Type => "type",
            DefKind::Macro => "macro",
        }
    }
}

/// One definition in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    pub kind: DefKind,
    /// The defined name; for a Rust impl the implemented type, e.g. `Invoice` or `Display for Invoice`.
    pub name: String,
    /// 1-based line of the definition.
    pub line: usize,
    /// 0 at the top level, 1 inside a class, impl, trait or interface.
    pub depth: usize,
}

/// The definitions of `source`, in source order. A file with syntax errors yields what tree-sitter recovered.
pub fn definitions(lang: Language, source: &str) -> Vec<Definition> {
    collect(lang, source).defs
}

/// The definitions of `source` with the bytes each one spans: from its keyword (a decorator or
/// attribute above it is not part of it) to the end of its body.
pub fn definition_spans(lang: Language, source: &str) -> Vec<(Definition, Range<usize>)> {
    let out = collect(lang, source);
    out.defs.into_iter().zip(out.spans).collect()
}

fn collect(lang: Language, source: &str) -> Collector<'_> {
    let mut out = Collector {
        source,
        defs: Vec::new(),
        spans: Vec::new(),
        prototypes: Vec::new(),
    };
    let Some(tree) = parser::parse(lang, source) else {
        return out;
    };
    let root = tree.root_node();
    match lang {
        Language::Python => python_block(&mut out, root, 0),
        Language::Rust => rust_block(&mut out, root, 0),
        Language::JavaScript | Language::TypeScript | Language::Tsx => js_block(&mut out, root, 0),
        Language::Go => go_file(&mut out, root),
        Language::Java => java_block(&mut out, root, 0),
        Language::C | Language::Cpp => {
            c_family::block(&mut out, root, 0);
            c_family::drop_defined_prototypes(&mut out);
        }
    }
    out
}

struct Collector<'s> {
    source: &'s str,
    defs: Vec<Definition>,
    /// The bytes of each definition in `defs`.
    spans: Vec<Range<usize>>,
    /// C and C++: the indexes in `defs` of functions only declared (prototypes), for
    /// `c_family::drop_defined_prototypes`.
    prototypes: Vec<usize>,
}

impl Collector<'_> {
    /// The text of `node` with whitespace runs collapsed to one space.
    fn text(&self, node: Node<'_>) -> String {
        let raw = node.utf8_text(self.source.as_bytes()).unwrap_or_default();
        raw.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// Records `node` under the name in its `field`; returns whether it had one.
    fn push_named(&mut self, kind: DefKind, node: Node<'_>, field: &str, depth: usize) -> bool {
        match node.child_by_field_name(field) {
            Some(name) => {
                let name = self.text(name);
                self.push(kind, name, node, depth);
                true
            }
            None => false,
        }
    }

    fn push(&mut self, kind: DefKind, name: String, node: Node<'_>, depth: usize) {
        if name.is_empty() {
            return;
        }
        self.defs.push(Definition {
            kind,
            name,
            line: node.start_position().row + 1,
            depth,
        });
        self.spans.push(node.byte_range());
    }
}

fn function_or_method(depth: usize) -> DefKind {
    if depth == 0 {
        DefKind::Function
    } else {
        DefKind::Method
    }
}

/// An UPPER_CASE name (at least one letter), the convention for constants in Python and JavaScript.
fn is_constant_name(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Visits the body of a container (a class, impl, …) one level down, if we are not already there.
fn body<'t>(node: Node<'t>, depth: usize) -> Option<Node<'t>> {
    if depth == 0 {
        node.child_by_field_name("body")
    } else {
        None
    }
}

// --- Python ---

fn python_block(out: &mut Collector<'_>, block: Node<'_>, depth: usize) {
    let mut cursor = block.walk();
    for child in block.named_children(&mut cursor) {
        python_item(out, child, depth);
    }
}

fn python_item(out: &mut Collector<'_>, node: Node<'_>, depth: usize) {
    match node.kind() {
        "decorated_definition" => {
            if let Some(definition) = node.child_by_field_name("definition") {
                python_item(out, definition, depth);
            }
        }
        "function_definition" => {
            out.push_named(function_or_method(depth), node, "name", depth);
        }
        "class_definition" => {
            if out.push_named(DefKind::Class, node, "name", depth)
                && let Some(block) = body(node, depth)
            {
                python_block(out, block, depth + 1);
            }
        }
        "expression_statement" if depth == 0 => {
            let assignment = node.named_child(0).filter(|n| n.kind() == "assignment");
            let left = assignment.and_then(|a| a.child_by_field_name("left"));
            if let Some(left) = left.filter(|l| l.kind() == "identifier") {
                let name = out.text(left);
                if is_constant_name(&name) {
                    out.push(DefKind::Const, name, node, depth);
                }
            }
        }
        _ => {}
    }
}

// --- Rust ---

fn rust_block(out: &mut Collector<'_>, block: Node<'_>, depth: usize) {
    let mut cursor = block.walk();
    for child in block.named_children(&mut cursor) {
        rust_item(out, child, depth);
    }
}

fn rust_item(out: &mut Collector<'_>, node: Node<'_>, depth: usize) {
    let simple = match node.kind() {
        "function_item" => Some(function_or_method(depth)),
        "function_signature_item" => Some(DefKind::Method),
        "struct_item" | "union_item" => Some(DefKind::Struct),
        "enum_item" => Some(DefKind::Enum),
        "mod_item" => Some(DefKind::Module),
        "const_item" => Some(DefKind::Const),
        "static_item" => Some(DefKind::Static),
        "type_item" => Some(DefKind::Type),
        "macro_definition" => Some(DefKind::Macro),
        "trait_item" => {
            if out.push_named(DefKind::Trait, node, "name", depth)
                && let Some(block) = body(node, depth)
            {
                rust_block(out, block, depth + 1);
            }
            None
        }
        "impl_item" if depth == 0 => {
            if let Some(ty) = node.child_by_field_name("type") {
                let ty = out.text(ty);
                let name = match node.child_by_field_name("trait") {
                    Some(tr) => format!("{} for {ty}", out.text(tr)),
                    None => ty,
                };
                out.push(DefKind::Impl, name, node, depth);
                if let Some(block) = body(node, depth) {
                    rust_block(out, block, depth + 1);
                }
            }
            None
        }
        _ => None,
    };
    if let Some(kind) = simple {
        out.push_named(kind, node, "name", depth);
    }
}

// --- JavaScript, TypeScript, TSX ---

fn js_block(out: &mut Collector<'_>, block: Node<'_>, depth: usize) {
    let mut cursor = block.walk();
    for child in block.named_children(&mut cursor) {
        js_item(out, child, depth);
    }
}

fn js_item(out: &mut Collector<'_>, node: Node<'_>, depth: usize) {
    match node.kind() {
        "export_statement" => {
            if let Some(declaration) = node.child_by_field_name("declaration") {
                js_item(out, declaration, depth);
            }
        }
        "ambient_declaration" => js_block(out, node, depth),
        "function_declaration" | "generator_function_declaration" | "function_signature" => {
            out.push_named(function_or_method(depth), node, "name", depth);
        }
        "class_declaration" | "abstract_class_declaration" => {
            if out.push_named(DefKind::Class, node, "name", depth)
                && let Some(block) = body(node, depth)
            {
                js_class_body(out, block);
            }
        }
        "lexical_declaration" | "variable_declaration" => js_variables(out, node, depth),
        "interface_declaration" => {
            out.push_named(DefKind::Interface, node, "name", depth);
        }
        "type_alias_declaration" => {
            out.push_named(DefKind::Type, node, "name", depth);
        }
        "enum_declaration" => {
            out.push_named(DefKind::Enum, node, "name", depth);
        }
        "internal_module" | "module" => {
            out.push_named(DefKind::Module, node, "name", depth);
        }
        // `namespace A {}` at the top level is an expression statement holding an internal_module.
        "expression_statement" => {
            if let Some(inner) = node
                .named_child(0)
                .filter(|n| n.kind() == "internal_module")
            {
                js_item(out, inner, depth);
            }
        }
        _ => {}
    }
}

fn js_class_body(out: &mut Collector<'_>, block: Node<'_>) {
    let mut cursor = block.walk();
    for member in block.named_children(&mut cursor) {
        match member.kind() {
            "method_definition" | "abstract_method_signature" | "method_signature" => {
                out.push_named(DefKind::Method, member, "name", 1);
            }
            // Class fields holding a function (`handleClick = () => {…}`) act as methods.
            "field_definition" | "public_field_definition" => {
                let holds_function = member
                    .child_by_field_name("value")
                    .is_some_and(|v| is_js_function(v.kind()));
                if holds_function {
                    let field = if member.kind() == "field_definition" {
                        "property"
                    } else {
                        "name"
                    };
                    out.push_named(DefKind::Method, member, field, 1);
                }
            }
            _ => {}
        }
    }
}

fn is_js_function(kind: &str) -> bool {
    matches!(
        kind,
        "arrow_function" | "function_expression" | "function" | "generator_function"
    )
}

/// `const total = () => …`, `const Invoice = class {…}`, `const TAX_RATE = 0.2`.
fn js_variables(out: &mut Collector<'_>, declaration: Node<'_>, depth: usize) {
    let is_const = declaration
        .child_by_field_name("kind")
        .is_some_and(|k| k.kind() == "const");
    let mut cursor = declaration.walk();
    for declarator in declaration.named_children(&mut cursor) {
        if declarator.kind() != "variable_declarator" {
            continue;
        }
        let Some(name) = declarator
            .child_by_field_name("name")
            .filter(|n| n.kind() == "identifier")
        else {
            continue;
        };
        let name = out.text(name);
        let value = declarator.child_by_field_name("value").map(|v| v.kind());
        let kind = match value {
            Some(v) if is_js_function(v) => Some(function_or_method(depth)),
            Some("class") => Some(DefKind::Class),
            Some(_) if is_const && is_constant_name(&name) => Some(DefKind::Const),
            _ => None,
        };
        if let Some(kind) = kind {
            out.push(kind, name, declarator, depth);
        }
    }
}

// --- Go ---

fn go_file(out: &mut Collector<'_>, root: Node<'_>) {
    let mut cursor = root.walk();
    for item in root.named_children(&mut cursor) {
        match item.kind() {
            "function_declaration" => {
                out.push_named(DefKind::Function, item, "name", 0);
            }
            // Methods are declared at the top level in Go; they stay at depth 0.
            "method_declaration" => {
                out.push_named(DefKind::Method, item, "name", 0);
            }
            "type_declaration" => {
                let mut specs = item.walk();
                for spec in item.named_children(&mut specs) {
                    if !matches!(spec.kind(), "type_spec" | "type_alias") {
                        continue;
                    }
                    let kind = match spec.child_by_field_name("type").map(|t| t.kind()) {
                        Some("struct_type") => DefKind::Struct,
                        Some("interface_type") => DefKind::Interface,
                        _ => DefKind::Type,
                    };
                    out.push_named(kind, spec, "name", 0);
                }
            }
            "const_declaration" => {
                let mut specs = item.walk();
                for spec in item.named_children(&mut specs) {
                    if spec.kind() != "const_spec" {
                        continue;
                    }
                    let mut names = spec.walk();
                    for name in spec.children_by_field_name("name", &mut names) {
                        if name.kind() == "identifier" {
                            let text = out.text(name);
                            out.push(DefKind::Const, text, spec, 0);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

// --- Java ---

fn java_block(out: &mut Collector<'_>, block: Node<'_>, depth: usize) {
    let mut cursor = block.walk();
    for child in block.named_children(&mut cursor) {
        java_item(out, child, depth);
    }
}

fn java_item(out: &mut Collector<'_>, node: Node<'_>, depth: usize) {
    let container = match node.kind() {
        "class_declaration" | "record_declaration" => Some(DefKind::Class),
        "interface_declaration" | "annotation_type_declaration" => Some(DefKind::Interface),
        "enum_declaration" => Some(DefKind::Enum),
        "method_declaration" | "constructor_declaration" | "compact_constructor_declaration"
            if depth > 0 =>
        {
            out.push_named(DefKind::Method, node, "name", depth);
            None
        }
        // The methods of an enum follow its constants in an `enum_body_declarations` node.
        "enum_body_declarations" => {
            java_block(out, node, depth);
            None
        }
        _ => None,
    };
    if let Some(kind) = container
        && out.push_named(kind, node, "name", depth)
        && let Some(block) = body(node, depth)
    {
        java_block(out, block, depth + 1);
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn constant_names() {
        let actual =
            ["TAX_RATE", "V2", "_", "Tax", "tax_rate", "__all__", "A1_B"].map(is_constant_name);
        assert_eq!(actual, [true, true, false, false, false, false, true]);
    }

    #[test]
    fn keywords_follow_the_language() {
        let actual = [
            DefKind::Function.keyword(Language::Python),
            DefKind::Method.keyword(Language::Rust),
            DefKind::Method.keyword(Language::Go),
            DefKind::Method.keyword(Language::Tsx),
            DefKind::Module.keyword(Language::Rust),
            DefKind::Class.keyword(Language::Java),
        ];
        assert_eq!(actual, ["def", "fn", "func", "method", "mod", "class"]);
    }
}
