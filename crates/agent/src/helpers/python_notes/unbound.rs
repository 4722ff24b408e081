//! A code edit undone because the tests failed with Python's `UnboundLocalError`: the edited
//! line uses a local variable above the line of the function that assigns it. It is a fix with
//! the right idea in the wrong place — on BILL-412 the embedded model's first fix was
//! `tax = compute_gst(net, rate)` one line above `net = apply_discount(…)` in two runs of ten,
//! and both runs then spent every round on variants of that line. The error says which name;
//! the file says where it is assigned; the note tells the model both, and how to make the edit
//! that puts the assignment first.

use super::PythonNote;

/// The note for an edit of `path` whose tests failed as `report` shows, when they failed with
/// `UnboundLocalError` on a name `file_text` (the file as it is again after the undo) assigns
/// below `old_text`, the text the edit replaced.
pub(crate) fn used_before_assignment(
    report: &str,
    path: &str,
    file_text: &str,
    old_text: &str,
) -> Option<PythonNote> {
    let name = unbound_name(report)?;
    // Below the replaced lines when they are still there, else anywhere in the file.
    let start = match old_text.trim() {
        "" => None,
        text => file_text
            .find(text)
            .and_then(|at| file_text.get(..at))
            .map(|before| before.matches('\n').count()),
    }
    .unwrap_or(0);
    let (index, line) = file_text
        .lines()
        .enumerate()
        .skip(start)
        .find(|(_, line)| assigns(line.trim_start(), &name))?;
    Some(PythonNote::Unbound {
        name,
        path: path.to_string(),
        line: index + 1,
        code: line.trim().to_string(),
    })
}

/// The name in the first `UnboundLocalError` of a test run's output: Python 3.11 and later say
/// "cannot access local variable 'x' where it is not associated with a value", earlier ones
/// "local variable 'x' referenced before assignment".
fn unbound_name(report: &str) -> Option<String> {
    let line = report.lines().find(|l| l.contains("UnboundLocalError"))?;
    let after = line.split("local variable '").nth(1)?;
    quoted_name(after)
}

/// The Python name before the first `'` of `text` (what an error message quotes), when it is one.
pub(crate) fn quoted_name(text: &str) -> Option<String> {
    let name = text.split('\'').next()?;
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    valid.then(|| name.to_string())
}

/// True when a (left-trimmed) line assigns `name`: `name = …`, `name: T = …` or `name += …`,
/// not a comparison.
pub(crate) fn assigns(line: &str, name: &str) -> bool {
    let Some(rest) = line.strip_prefix(name) else {
        return false;
    };
    let rest = rest.trim_start();
    if let Some(annotated) = rest.strip_prefix(':') {
        return annotated.contains('=') && !annotated.contains("==");
    }
    let operator = rest.trim_start_matches(['+', '-', '*', '/', '%', '|', '&']);
    operator.starts_with('=') && !operator.starts_with("==")
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "def line_totals(item):\n    gross = item.gross()\n    tax = compute_gst(gross, rate)\n    net = apply_discount(gross, item.discount)\n    return net\n";

    #[test]
    fn the_note_names_the_variable_and_the_line_that_assigns_it() {
        let report = "E       UnboundLocalError: cannot access local variable 'net' where it is not associated with a value\nFAILED tests/test_x.py::test_a - UnboundLocalError: cannot access local variable 'net'";
        let note = used_before_assignment(
            report,
            "billing/invoice_totals.py",
            FILE,
            "tax = compute_gst(gross, rate)",
        )
        .unwrap();
        let note = super::super::words(&note).unwrap();
        assert!(
            note.contains("uses `net` above the line that assigns it (billing/invoice_totals.py line 4: `net = apply_discount(gross, item.discount)`)"),
            "{note}"
        );
    }

    #[test]
    fn older_pythons_words_and_other_assignments_are_understood() {
        assert_eq!(
            unbound_name(
                "UnboundLocalError: local variable 'total_1' referenced before assignment"
            ),
            Some("total_1".to_string())
        );
        assert!(assigns("net = 1", "net"));
        assert!(assigns("net += 1", "net"));
        assert!(assigns("net: Decimal = ZERO", "net"));
        assert!(!assigns("net == 1", "net"));
        assert!(!assigns("network = 1", "net"));
        assert!(!assigns("net.value = 1", "net"));
    }

    #[test]
    fn without_the_error_or_the_assignment_there_is_no_note() {
        let other = "E       NameError: name 'nett' is not defined";
        assert_eq!(used_before_assignment(other, "a.py", FILE, ""), None);
        let unbound = "UnboundLocalError: cannot access local variable 'price' where it is not associated with a value";
        assert_eq!(used_before_assignment(unbound, "a.py", FILE, ""), None);
    }
}
