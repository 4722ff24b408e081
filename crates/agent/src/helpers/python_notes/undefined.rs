//! A code edit undone because the tests failed with Python's `NameError`: the edited line uses a
//! name its function does not have. On BILL-412 the embedded model wrote `tax = compute_gst(gross,
//! rate * (1 - discount / gross))` in `line_totals`, where the discount is `item.discount`, and
//! sent the same line again round after round, told only that tests failed. The note names the
//! function, the names it has above the edited line, and the attribute spelled like the missing
//! name that the function already uses.

use plumb_tools::names::contains_word;

use super::PythonNote;
use super::unbound::{assigns, quoted_name};

/// The note for an edit whose tests failed as `report` shows, when they failed with `NameError`
/// on a name, and `old_text` (the text the edit replaced) is inside a function of `file_text`
/// (the file as it is again after the undo).
pub(crate) fn not_defined(report: &str, file_text: &str, old_text: &str) -> Option<PythonNote> {
    let name = undefined_name(report)?;
    let old = old_text.trim();
    if old.is_empty() {
        return None;
    }
    let lines: Vec<&str> = file_text.lines().collect();
    let at = file_text
        .find(old)
        .and_then(|at| file_text.get(..at))
        .map(|before| before.matches('\n').count())?;
    let indent = |line: &str| line.len() - line.trim_start().len();
    let line_indent = indent(lines.get(at)?);
    let def = (0..at).rev().find(|&i| {
        let line = lines[i];
        indent(line) < line_indent && line.trim_start().starts_with("def ")
    })?;
    let signature = lines[def].trim_start().strip_prefix("def ")?;
    let function = signature.split('(').next()?.trim();
    let mut names: Vec<String> = parameters(signature);
    for line in &lines[def + 1..at] {
        if let Some(assigned) = assigned_name(line.trim_start())
            && !names.contains(&assigned)
        {
            names.push(assigned);
        }
    }
    if names.iter().any(|n| n == &name) {
        return None;
    }
    let body = lines[def + 1..]
        .iter()
        .take_while(|line| line.trim().is_empty() || indent(line) > indent(lines[def]))
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    let attribute = names
        .iter()
        .map(|owner| format!("{owner}.{name}"))
        .find(|spelled| contains_word(&body, spelled));
    Some(PythonNote::Undefined {
        name,
        function: function.to_string(),
        names,
        attribute,
    })
}

/// The name in the first `NameError` of a test run's output: "name 'x' is not defined".
fn undefined_name(report: &str) -> Option<String> {
    let line = report.lines().find(|l| l.contains("NameError"))?;
    let after = line.split("name '").nth(1)?;
    quoted_name(after)
}

/// The parameter names of a `def` line's signature (`name(a: T, b=1, *args)`), `self` left out.
fn parameters(signature: &str) -> Vec<String> {
    let inside = signature
        .split_once('(')
        .map(|(_, rest)| rest.rsplit_once(')').map_or(rest, |(params, _)| params))
        .unwrap_or_default();
    inside
        .split(',')
        .filter_map(|param| {
            let name = param
                .split([':', '='])
                .next()?
                .trim()
                .trim_start_matches('*');
            (!name.is_empty() && name != "self" && name != "/").then(|| name.to_string())
        })
        .collect()
}

/// The name a (left-trimmed) line assigns, as [`assigns`] reads an assignment.
fn assigned_name(line: &str) -> Option<String> {
    let end = line
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(line.len());
    let name = line.get(..end)?;
    let valid = !name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit());
    (valid && assigns(line, name)).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "def check(item):\n    return item\n\n\ndef line_totals(item: LineItem) -> LineTotals:\n    \"\"\"Doc.\"\"\"\n    check_line(item)\n    gross = item.gross()\n    rate = rate_for_category(item.category)\n    tax = compute_gst(gross, rate)\n    net = apply_discount(gross, item.discount)\n    return net\n";

    #[test]
    fn the_note_names_the_function_its_names_and_the_attribute_it_uses() {
        let report = "E       NameError: name 'discount' is not defined\nFAILED tests/test_x.py::test_a - NameError: name 'discount' is not defined";
        let note = not_defined(report, FILE, "tax = compute_gst(gross, rate)").unwrap();
        let note = super::super::words(&note).unwrap();
        assert_eq!(
            note,
            "NameError: `discount` is not defined in `line_totals`: above your line it has `item`, `gross`, `rate`. The function already uses `item.discount`."
        );
    }

    #[test]
    fn a_name_the_function_has_or_another_error_gets_no_note() {
        let net = "E   NameError: name 'net' is not defined";
        // Assigned only by the replaced line itself: the edit took the assignment away.
        assert!(not_defined(net, FILE, "net = apply_discount(gross, item.discount)").is_some());
        let gross = "E   NameError: name 'gross' is not defined";
        assert_eq!(
            not_defined(gross, FILE, "tax = compute_gst(gross, rate)"),
            None
        );
        let other = "E   UnboundLocalError: cannot access local variable 'net'";
        assert_eq!(
            not_defined(other, FILE, "tax = compute_gst(gross, rate)"),
            None
        );
        assert_eq!(not_defined(net, FILE, ""), None);
        assert_eq!(not_defined(net, FILE, "not in the file"), None);
    }

    #[test]
    fn parameters_and_assignments_are_read_from_python_lines() {
        assert_eq!(
            parameters("f(self, a: int, b=1, *args, **kw) -> X:"),
            ["a", "b", "args", "kw"]
        );
        assert_eq!(assigned_name("net = 1"), Some("net".into()));
        assert_eq!(assigned_name("net: Decimal = ZERO"), Some("net".into()));
        assert_eq!(assigned_name("net += 1"), Some("net".into()));
        assert_eq!(assigned_name("net == 1"), None);
        assert_eq!(assigned_name("item.discount = 1"), None);
    }
}
