//! `x = x(...)` inside a Python function makes `x` a local name for the whole function, so the call
//! on the right fails with `UnboundLocalError` before it runs. It is the mistake a small model
//! makes most when it writes a test with the file's helpers (`item = item("1000.00")`, then
//! `invoice = invoice(item)`), and it rarely reads the fix from the error. The intent is never in
//! doubt — the call means the function, the variable is the result — so the written text gets the
//! variable another name (`item_1`) from that line to the end of the function, calls `x(` keep
//! meaning the function, and the tool's result says what was renamed.
//!
//! Only text the model is writing is changed, only inside a `def` that text contains, and only
//! where the name is used as a plain name (not in strings, not as an attribute, a call or a
//! keyword argument).

use crate::names::{contains_word, is_name_char};

/// The text with each shadowing variable renamed, and the renames as `(old, new)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unshadowed {
    pub text: String,
    pub renamed: Vec<(String, String)>,
}

/// A rename in force: the name, its replacement, and the indentation of the function body it
/// lives in (it ends at the first non-blank line indented less).
struct Active {
    name: String,
    new: String,
    body_indent: usize,
}

/// The sentence a tool's result starts with when it renamed.
pub(crate) fn note(renamed: &[(String, String)]) -> String {
    let parts: Vec<String> = renamed
        .iter()
        .map(|(old, new)| format!("`{old} = {old}(...)` is now `{new} = {old}(...)`"))
        .collect();
    format!(
        "Renamed so the calls work: {} (a name assigned in a function is local to all of it, so `{old}(...)` would have failed with UnboundLocalError); later uses of the variable in that function follow. ",
        parts.join(", "),
        old = renamed[0].0
    )
}

/// Renames every `x = x(...)` variable in the functions of `text` (Python). `None` when there is
/// none.
pub(crate) fn unshadow(text: &str) -> Option<Unshadowed> {
    let mut active: Vec<Active> = Vec::new();
    let mut renamed = Vec::new();
    let mut def_indents: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    for line in text.split('\n') {
        let indent = line.len() - line.trim_start().len();
        let content = line.trim_start();
        if !content.is_empty() {
            active.retain(|a| indent >= a.body_indent);
            def_indents.retain(|d| indent > *d);
        }
        if content.starts_with("def ") || content.starts_with("async def ") {
            def_indents.push(indent);
            out.push(line.to_string());
            continue;
        }
        let in_function = def_indents.last().is_some_and(|d| indent > *d);
        if in_function && let Some(name) = shadowing_assignment(content) {
            let new = fresh_name(text, &name);
            active.retain(|a| a.name != name);
            let rest = content.get(name.len()..).unwrap_or_default();
            let margin = line.get(..indent).unwrap_or_default();
            let line_out = format!("{margin}{new}{}", rename_uses(rest, &active));
            renamed.push((name.clone(), new.clone()));
            active.push(Active {
                name,
                new,
                body_indent: indent,
            });
            out.push(line_out);
            continue;
        }
        out.push(rename_uses(line, &active));
    }
    (!renamed.is_empty()).then(|| Unshadowed {
        text: out.join("\n"),
        renamed,
    })
}

/// `x` when `content` is `x = x(...)` (a plain name assigned a call of itself).
fn shadowing_assignment(content: &str) -> Option<String> {
    let name: String = content
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let rest = content.get(name.len()..)?.trim_start().strip_prefix('=')?;
    if rest.starts_with('=') {
        return None;
    }
    let call = rest.trim_start().strip_prefix(name.as_str())?;
    call.trim_start().starts_with('(').then_some(name)
}

/// A name not in `text`: `x_1`, `x_2`, …
fn fresh_name(text: &str, name: &str) -> String {
    (1..)
        .map(|n| format!("{name}_{n}"))
        .find(|candidate| !contains_word(text, candidate))
        .unwrap_or_else(|| format!("{name}_value"))
}

/// `line` with each plain use of an active name replaced, outside string literals.
fn rename_uses(line: &str, active: &[Active]) -> String {
    if active.is_empty() {
        return line.to_string();
    }
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut quote: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = quote {
            out.push(c);
            if c == '\\' && i + 1 < chars.len() {
                out.push(chars[i + 1]);
                i += 2;
                continue;
            }
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        if c == '#' {
            out.extend(&chars[i..]);
            break;
        }
        if c == '"' || c == '\'' {
            quote = Some(c);
            out.push(c);
            i += 1;
            continue;
        }
        if is_name_char(c) && (i == 0 || !is_name_char(chars[i - 1])) {
            let end = (i..chars.len())
                .find(|&j| !is_name_char(chars[j]))
                .unwrap_or(chars.len());
            let word: String = chars[i..end].iter().collect();
            let after: String = chars[end..].iter().collect();
            let after = after.trim_start();
            let attribute = i > 0 && chars[i - 1] == '.';
            let called = after.starts_with('(');
            let keyword = after.starts_with('=') && !after.starts_with("==");
            match active.iter().find(|a| a.name == word) {
                Some(a) if !attribute && !called && !keyword => out.push_str(&a.new),
                _ => out.push_str(&word),
            }
            i = end;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_variable_named_after_the_helper_it_calls_is_renamed_to_the_end_of_the_function() {
        let text = "def test_discount():\n    item = item('1000.00', discount='100.00')\n    invoice = invoice(item)\n    totals = compute_invoice_totals(invoice)\n    assert totals.tax == Decimal('162.00')\n\n\ndef test_other():\n    assert item('1.00')\n";
        let done = unshadow(text).unwrap();
        assert_eq!(
            done.text,
            "def test_discount():\n    item_1 = item('1000.00', discount='100.00')\n    invoice_1 = invoice(item_1)\n    totals = compute_invoice_totals(invoice_1)\n    assert totals.tax == Decimal('162.00')\n\n\ndef test_other():\n    assert item('1.00')\n"
        );
        assert_eq!(
            done.renamed,
            vec![
                ("item".to_string(), "item_1".to_string()),
                ("invoice".to_string(), "invoice_1".to_string())
            ]
        );
    }

    #[test]
    fn strings_attributes_keywords_and_calls_keep_the_name() {
        let text = "def test_x():\n    item = item(\"item\")\n    check(item, item=item.sku, label='item')  # item\n    item(2)\n";
        assert_eq!(
            unshadow(text).unwrap().text,
            "def test_x():\n    item_1 = item(\"item\")\n    check(item_1, item=item_1.sku, label='item')  # item\n    item(2)\n"
        );
    }

    #[test]
    fn nothing_changes_outside_a_function_or_without_the_pattern() {
        assert_eq!(unshadow("item = item(1)\n"), None, "module level is fine");
        assert_eq!(unshadow("def f():\n    x = y(1)\n    x == x(2)\n"), None);
        assert_eq!(unshadow("def f():\n    total = total_of(1)\n"), None);
        assert_eq!(unshadow("    item = item(1)\n"), None, "no def in the text");
    }

    #[test]
    fn a_fresh_name_avoids_names_already_there() {
        let text = "def f():\n    item_1 = 0\n    item = item(1)\n    return item\n";
        assert_eq!(
            unshadow(text).unwrap().text,
            "def f():\n    item_1 = 0\n    item_2 = item(1)\n    return item_2\n"
        );
    }
}
