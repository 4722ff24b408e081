//! What C and C++ declarators say about a function: its name, which in C++ may carry the class or
//! namespace it belongs to (`Ledger::post`, `~Ledger`, `operator==`).
//!
//! A function's name sits at the bottom of a chain of declarators: `int *total(…)` is a pointer
//! declarator around a function declarator around the identifier, `Ledger &Ledger::add(…)` a
//! reference declarator around a function declarator around a qualified identifier.

use tree_sitter::Node;

/// The function declarator `node` (a declarator, or a definition or declaration holding one in
/// its `declarator` field) ends in, if any.
pub(crate) fn function_declarator(node: Node<'_>) -> Option<Node<'_>> {
    let mut current = node;
    for _ in 0..16 {
        if current.kind() == "function_declarator" {
            return Some(current);
        }
        current = current.child_by_field_name("declarator")?;
    }
    None
}

/// The name a function declarator gives, as written without whitespace: `total`,
/// `Ledger::post`, `~Ledger`, `operator==`.
pub(crate) fn declared_name(declarator: Node<'_>, source: &str) -> Option<String> {
    let name = declarator.child_by_field_name("declarator")?;
    let text = name.utf8_text(source.as_bytes()).ok()?;
    let text: String = text.split_whitespace().collect();
    (!text.is_empty()).then_some(text)
}

/// `Ledger::post` → (`post`, `Some("Ledger")`); `total` → (`total`, `None`). A template's
/// arguments in the owner are kept (`Box<T>::get` → `Box<T>`).
pub(crate) fn split_owner(name: &str) -> (String, Option<String>) {
    match name.rsplit_once("::") {
        Some((owner, short)) if !owner.is_empty() => (short.to_string(), Some(owner.to_string())),
        Some((_, short)) => (short.to_string(), None),
        None => (name.to_string(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn owners_split_off_at_the_last_scope() {
        let actual = ["total", "Ledger::post", "ns::Ledger::~Ledger", "::main"].map(split_owner);

        assert_eq!(
            actual,
            [
                ("total".to_string(), None),
                ("post".to_string(), Some("Ledger".to_string())),
                ("~Ledger".to_string(), Some("ns::Ledger".to_string())),
                ("main".to_string(), None),
            ]
        );
    }
}
