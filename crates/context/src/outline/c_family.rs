//! The outline of a C or C++ file: functions (and the prototypes a header declares), structs,
//! unions, enums, typedefs, classes with their methods, and namespaces.
//!
//! A namespace is shown as a definition, and what is inside it stays at the depth of the
//! namespace, not one level down: most C++ files wrap everything in one, and the methods of a
//! class inside it are worth more to a map than the namespace. Templates, `extern "C"` blocks and
//! preprocessor conditionals are looked through. A prototype whose function the same file also
//! defines is left out, so a function is listed once.

use tree_sitter::Node;

use super::{Collector, DefKind, function_or_method};
use crate::c_family::{declared_name, function_declarator};

/// The items of a translation unit, a namespace's body or a preprocessor block.
pub(super) fn block(out: &mut Collector<'_>, block: Node<'_>, depth: usize) {
    let mut cursor = block.walk();
    for child in block.named_children(&mut cursor) {
        item(out, child, depth);
    }
}

/// Drops the prototypes (recorded in `out.prototypes` during the walk) whose function the file
/// also defines with a body (a class of the name does not count: that is its constructor).
/// Called once, after the walk.
pub(super) fn drop_defined_prototypes(out: &mut Collector<'_>) {
    let is_prototype = |index: usize| out.prototypes.contains(&index);
    let defined: Vec<&str> = out
        .defs
        .iter()
        .enumerate()
        .filter(|(index, def)| {
            !is_prototype(*index) && matches!(def.kind, DefKind::Function | DefKind::Method)
        })
        .map(|(_, def)| def.name.as_str())
        .collect();
    let keep: Vec<bool> = out
        .defs
        .iter()
        .enumerate()
        .map(|(index, def)| !(is_prototype(index) && defined.contains(&def.name.as_str())))
        .collect();
    let mut kept = keep.iter();
    out.defs.retain(|_| kept.next().copied().unwrap_or(true));
    let mut kept = keep.iter();
    out.spans.retain(|_| kept.next().copied().unwrap_or(true));
    out.prototypes.clear();
}

fn item(out: &mut Collector<'_>, node: Node<'_>, depth: usize) {
    match node.kind() {
        "function_definition" => {
            if let Some(name) = function_declarator(node).and_then(|d| declared_name(d, out.source))
            {
                out.push(function_or_method(depth), name, node, depth);
            }
        }
        // A prototype (`int total(int);`, a method declared in its class) or a variable holding a
        // struct, union or enum it defines (`struct point { … } origin;`).
        "declaration" | "field_declaration" => {
            if let Some(name) = function_declarator(node).and_then(|d| declared_name(d, out.source))
            {
                out.prototypes.push(out.defs.len());
                out.push(function_or_method(depth), name, node, depth);
            } else if let Some(ty) = node.child_by_field_name("type") {
                specifier(out, ty, depth);
            }
        }
        "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier" => {
            specifier(out, node, depth);
        }
        // `typedef struct { … } Point;`: the struct by the typedef's name when it has none.
        "type_definition" => {
            let Some(declarator) = node.child_by_field_name("declarator") else {
                return;
            };
            let name = out.text(declarator);
            let ty = node.child_by_field_name("type");
            let anonymous_body = ty.filter(|t| {
                t.child_by_field_name("body").is_some() && t.child_by_field_name("name").is_none()
            });
            match anonymous_body.map(|t| t.kind()) {
                Some("enum_specifier") => out.push(DefKind::Enum, name, node, depth),
                Some(_) => out.push(DefKind::Struct, name, node, depth),
                None => {
                    if let Some(ty) = ty {
                        specifier(out, ty, depth);
                    }
                    out.push(DefKind::Type, name, node, depth);
                }
            }
        }
        "namespace_definition" => {
            if let Some(name) = node.child_by_field_name("name") {
                let name = out.text(name);
                out.push(DefKind::Module, name, node, depth);
            }
            if let Some(body) = node.child_by_field_name("body") {
                block(out, body, depth);
            }
        }
        "template_declaration" => {
            let mut cursor = node.walk();
            let inner = node.named_children(&mut cursor).last();
            if let Some(inner) = inner {
                item(out, inner, depth);
            }
        }
        "linkage_specification" => {
            if let Some(body) = node.child_by_field_name("body") {
                match body.kind() {
                    "declaration_list" => block(out, body, depth),
                    _ => item(out, body, depth),
                }
            }
        }
        "preproc_if" | "preproc_ifdef" | "preproc_else" | "preproc_elif" | "preproc_elifdef" => {
            block(out, node, depth);
        }
        _ => {}
    }
}

/// A struct, union, enum or class specifier with a body (a definition, not a use of the type);
/// a class's or struct's methods one level down.
fn specifier(out: &mut Collector<'_>, node: Node<'_>, depth: usize) {
    let kind = match node.kind() {
        "struct_specifier" | "union_specifier" => DefKind::Struct,
        "enum_specifier" => DefKind::Enum,
        "class_specifier" => DefKind::Class,
        _ => return,
    };
    let Some(body) = node.child_by_field_name("body") else {
        return;
    };
    if !out.push_named(kind, node, "name", depth) || depth > 0 || kind == DefKind::Enum {
        return;
    }
    let mut cursor = body.walk();
    for member in body.named_children(&mut cursor) {
        item(out, member, depth + 1);
    }
}
