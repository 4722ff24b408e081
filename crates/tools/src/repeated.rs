//! `replace_function`'s code cut after the definition it names, when what follows repeats
//! definitions the file already has.
//!
//! A small model shown a whole file (the "code up front" of the first message) often sends the
//! function it fixed followed by the rest of what it was shown: on HumanEvalFix Rust/8 the 1.5B
//! model sent a right fix of `sum_product` with a copy of the file's `#[cfg(test)] mod tests`
//! after it, two rounds running. Put in the function's place, that is a second `mod tests` — a
//! compile error, so the right fix was undone each time and the run ran out of budget. In Python
//! such a copy compiles, and the file's later original definition silently wins.
//!
//! So when every top-level definition after the named one in `code` is one the file already
//! defines at its top level (same kind, same name), only the named definition is used, and the
//! model is told what was left out. A definition the file does not have (a new helper the fix
//! needs) keeps the code whole, as before.

use plumb_context::outline::{Definition, definition_spans};
use plumb_context::syntax::Language;

/// `code` cut to the definition of `name`, and the note for the model; `None` when nothing after
/// it repeats the file (or nothing follows it).
pub(crate) fn without_repeated_tail(
    language: Language,
    file: &str,
    code: &str,
    name: &str,
) -> Option<(String, String)> {
    let in_code = definition_spans(language, code);
    let (_, named) = in_code
        .iter()
        .find(|(def, _)| def.depth == 0 && def.name == name)?;
    let after: Vec<&Definition> = in_code
        .iter()
        .filter(|(def, span)| def.depth == 0 && span.start >= named.end)
        .map(|(def, _)| def)
        .collect();
    if after.is_empty() {
        return None;
    }
    let in_file = definition_spans(language, file);
    let repeats = |def: &Definition| {
        in_file.iter().any(|(have, _)| {
            have.depth == 0 && have.kind == def.kind && have.name == def.name && have.name != name
        })
    };
    if !after.iter().all(|def| repeats(def)) {
        return None;
    }
    let left_out: Vec<String> = after
        .iter()
        .map(|def| format!("{} {}", def.kind.keyword(language), def.name))
        .collect();
    let note = format!(
        "plumb used only {name} from code: what followed it ({}) the file has already, and replace_function changes one definition. To change {}, call a tool for it on its own. ",
        left_out.join(", "),
        if left_out.len() == 1 { "that" } else { "those" }
    );
    Some((code.get(..named.end)?.to_string(), note))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    const LIB: &str = "use std::cmp::max;\n\nfn sum_product(numbers: Vec<i32>) -> (i32, i32) {\n    (0, 0)\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn builds() {}\n}\n";

    #[test]
    fn a_copy_of_the_test_module_after_the_function_is_left_out() {
        let code = "fn sum_product(numbers: Vec<i32>) -> (i32, i32) {\n    (numbers.iter().sum(), numbers.iter().product())\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn builds() {}\n}";

        let actual = without_repeated_tail(Language::Rust, LIB, code, "sum_product");

        let expected = Some((
            "fn sum_product(numbers: Vec<i32>) -> (i32, i32) {\n    (numbers.iter().sum(), numbers.iter().product())\n}".to_string(),
            "plumb used only sum_product from code: what followed it (mod tests) the file has already, and replace_function changes one definition. To change that, call a tool for it on its own. ".to_string(),
        ));
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_new_helper_after_the_function_keeps_the_code_whole() {
        let code = "def total(xs):\n    return _sum(xs)\n\n\ndef _sum(xs):\n    return sum(xs)\n";
        let file = "def total(xs):\n    return 0\n";

        let actual = without_repeated_tail(Language::Python, file, code, "total");

        assert_eq!(actual, None);
    }

    #[test]
    fn code_of_the_function_alone_is_left_as_it_is() {
        let code = "fn sum_product(numbers: Vec<i32>) -> (i32, i32) {\n    (1, 1)\n}\n";

        let actual = without_repeated_tail(Language::Rust, LIB, code, "sum_product");

        assert_eq!(actual, None);
    }

    #[test]
    fn python_copies_of_the_files_other_functions_are_left_out() {
        let file =
            "def total(xs):\n    return 0\n\n\ndef mean(xs):\n    return total(xs) / len(xs)\n";
        let code = "def total(xs):\n    return sum(xs)\n\n\ndef mean(xs):\n    return total(xs) / len(xs)\n";

        let actual =
            without_repeated_tail(Language::Python, file, code, "total").map(|(code, _)| code);

        assert_eq!(
            actual.as_deref(),
            Some("def total(xs):\n    return sum(xs)")
        );
    }
}
