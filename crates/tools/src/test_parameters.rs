//! Parameters of an appended Python test that pytest would take for fixtures that do not exist.
//! pytest fills a test's parameters from fixtures, so `def test_x(item):` fails with "fixture
//! 'item' not found" before the body runs. A small model writes such parameters in two ways: it
//! names a helper function of the file the body means to call (`item(...)`), or `self` copied
//! from a test class; or it names a value the body then computes itself (`def
//! test_x(totals):` whose body starts `totals = compute(...)`). Either way the parameter is
//! never a value the test uses, so it is taken out, with a note saying so.

use crate::names::contains_word;

/// `added` with the parameters of its test functions that are a helper function of the file (a
/// top-level `def` that is not a fixture), `self`, or a name the test's body sets before it
/// reads it, taken out, and a note saying so. `None` when there is none, or `rel` is not a
/// Python test file.
pub(crate) fn drop_helper_parameters(
    rel: &str,
    added: &str,
    file: &str,
) -> Option<(String, String)> {
    if !rel.ends_with(".py") || !plumb_verify::tamper::is_test_file(rel) {
        return None;
    }
    let helpers: Vec<String> = helpers(file).into_iter().chain(helpers(added)).collect();
    let mut dropped_helpers = Vec::new();
    let mut dropped_assigned = Vec::new();
    let added_lines: Vec<&str> = added.split('\n').collect();
    let lines: Vec<String> = added_lines
        .iter()
        .enumerate()
        .map(|(at, line)| {
            let Some((head, rest)) = line
                .strip_prefix("def test")
                .and_then(|_| line.split_once('('))
            else {
                return line.to_string();
            };
            let Some((params, tail)) = rest.split_once(')') else {
                return line.to_string();
            };
            let body = body_of(&added_lines[at + 1..]);
            let kept: Vec<&str> = params
                .split(',')
                .map(str::trim)
                .filter(|param| !param.is_empty())
                .filter(|param| {
                    let name = param.split([':', '=']).next().unwrap_or_default().trim();
                    // `self` on a top-level test is copied from a test class: never a fixture.
                    if name == "self" || helpers.iter().any(|h| h == name) {
                        dropped_helpers.push(name.to_string());
                        false
                    } else if set_before_read(name, &body) {
                        dropped_assigned.push(name.to_string());
                        false
                    } else {
                        true
                    }
                })
                .collect();
            format!("{head}({}){tail}", kept.join(", "))
        })
        .collect();
    if dropped_helpers.is_empty() && dropped_assigned.is_empty() {
        return None;
    }
    let quoted = |names: &[String]| -> String {
        names
            .iter()
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut reasons = Vec::new();
    if !dropped_helpers.is_empty() {
        reasons.push(format!(
            "{} {} no fixture (a helper function of the file is called directly in the body; `self` belongs to a test class)",
            quoted(&dropped_helpers),
            if dropped_helpers.len() == 1 {
                "is"
            } else {
                "are"
            }
        ));
    }
    if !dropped_assigned.is_empty() {
        reasons.push(format!(
            "the test sets {} itself",
            quoted(&dropped_assigned)
        ));
    }
    let all: Vec<String> = dropped_helpers
        .iter()
        .chain(&dropped_assigned)
        .cloned()
        .collect();
    Some((
        lines.join("\n"),
        format!(
            "Took {} out of the test's parameters: pytest fills a test's parameters from fixtures, and {}. ",
            quoted(&all),
            reasons.join("; ")
        ),
    ))
}

/// The top-level functions of `source` that are not fixtures or tests.
fn helpers(source: &str) -> Vec<String> {
    let lines: Vec<&str> = source.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter(|(index, _)| {
            !lines[..*index]
                .iter()
                .rev()
                .take_while(|l| l.starts_with('@'))
                .any(|l| l.contains("fixture"))
        })
        .filter_map(|(_, line)| {
            let rest = line.strip_prefix("def ")?;
            let name = rest.split('(').next()?.trim();
            (!name.starts_with("test")).then(|| name.to_string())
        })
        .collect()
}

/// The lines of a top-level function's body: the indented (and blank) lines after its `def`.
fn body_of<'a>(after: &[&'a str]) -> Vec<&'a str> {
    after
        .iter()
        .take_while(|line| line.trim().is_empty() || line.starts_with([' ', '\t']))
        .copied()
        .collect()
}

/// True when the first line of `body` that mentions `name` sets it (`name = …`, `name: T = …`)
/// from a value that does not mention it: the parameter's value would never be read.
fn set_before_read(name: &str, body: &[&str]) -> bool {
    let Some(first) = body
        .iter()
        .map(|line| line.trim())
        .find(|line| !line.starts_with('#') && contains_word(line, name))
    else {
        return false;
    };
    let Some(rest) = first.strip_prefix(name) else {
        return false;
    };
    let rest = rest.trim_start();
    let value = match rest.strip_prefix(':') {
        // An annotation: `name: T = value`.
        Some(annotated) => annotated.split_once('=').map(|(_, value)| value),
        None => rest
            .strip_prefix('=')
            .filter(|value| !value.starts_with('=')),
    };
    value.is_some_and(|value| !contains_word(value, name))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    const FILE: &str = "import pytest\n\n\ndef item(price):\n    return price\n\n\n@pytest.fixture\ndef totals():\n    return 1\n";

    #[test]
    fn a_test_parameter_named_like_a_helper_is_taken_out() {
        let added = "def test_a(item: LineItem, totals) -> None:\n    assert item('1') == '1'\n";
        let (text, note) = drop_helper_parameters("tests/test_a.py", added, FILE).unwrap();
        assert_eq!(
            text, "def test_a(totals) -> None:\n    assert item('1') == '1'\n",
            "a fixture stays"
        );
        assert!(
            note.starts_with("Took `item` out of the test's parameters"),
            "{note}"
        );
        assert_eq!(
            drop_helper_parameters("tests/test_a.py", "def test_b(totals):\n    pass\n", FILE),
            None
        );
        assert_eq!(
            drop_helper_parameters("tests/test_a.py", "def test_c(self):\n    pass\n", FILE)
                .unwrap()
                .0,
            "def test_c():\n    pass\n"
        );
        assert_eq!(drop_helper_parameters("billing/a.py", added, FILE), None);
    }

    #[test]
    fn a_test_parameter_the_body_sets_before_reading_it_is_taken_out() {
        let added = "def test_gst(result, monkeypatch):\n    # result is the totals\n    result = compute(invoice(item(\"1000.00\")))\n    assert result.tax == 162\n\n\ndef test_next(result):\n    assert result\n";
        let (text, note) = drop_helper_parameters("tests/test_a.py", added, FILE).unwrap();
        assert_eq!(
            text,
            added.replacen("test_gst(result, monkeypatch)", "test_gst(monkeypatch)", 1),
            "only the first test sets it; the second reads it"
        );
        assert_eq!(
            note,
            "Took `result` out of the test's parameters: pytest fills a test's parameters from fixtures, and the test sets `result` itself. "
        );
        for kept in [
            // Read before it is set, or set from itself: the parameter's value is used.
            "def test_a(total):\n    assert total\n    total = 1\n",
            "def test_a(total):\n    total = total + 1\n",
            "def test_a(total):\n    total == 1\n",
            "def test_a(total):\n    subtotal = 1\n",
        ] {
            assert_eq!(
                drop_helper_parameters("tests/test_a.py", kept, FILE),
                None,
                "{kept}"
            );
        }
        let (text, note) = drop_helper_parameters(
            "tests/test_a.py",
            "def test_a(item, total: int):\n    total: int = item('1')\n",
            FILE,
        )
        .unwrap();
        assert_eq!(text, "def test_a():\n    total: int = item('1')\n");
        assert!(
            note.starts_with("Took `item`, `total` out of the test's parameters: pytest fills a test's parameters from fixtures, and `item` is no fixture (a helper function"),
            "{note}"
        );
    }
}
