//! The figure search's second part: versions of the model's test whose setup gives one of the
//! ticket's figures in place of a number the ticket does not give.
//!
//! Why: a 1.5B model sometimes builds the ticket's example with a figure of its own. In a benchmark
//! run on BILL-412 it wrote the right fix, then a test with a discount of Rs 150 where the ticket
//! says Rs 100 and asserted the ticket's Rs 162: that test fails with the right fix whatever figure
//! it asserts, so the assert-only search could not rescue it, and the model spent its remaining
//! rounds piling factors onto the fixed line. With the ticket's figure as the input the test's own
//! assert shows the fix. As in the assert-only search, which figure belongs where is what the two
//! test runs decide: only a version that passes with the fix and fails on the original code is
//! kept.
//!
//! One input is changed per version: a number in a setup line (not the `def` line, not an assert,
//! not a comment) that is none of the ticket's figures and not zero, to a figure of the ticket that
//! no setup line writes already. Each such setup first with each of the model's asserts as
//! written, then with the assert-only search's versions.

use super::asserts::{
    Input, Version, numbers_in, own_asserts, plain, same_form, versions as assert_versions,
};

/// At most this many versions with a changed input are tried, after the assert-only ones.
pub(crate) const MAX_TRIES: usize = 200;

/// The versions of `function` with one input changed to a figure of `figures`: every changed setup
/// with the model's own asserts first, then with each figure in place of an assert's (`file`'s
/// other asserts give more left sides, as in the assert-only search). At most [`MAX_TRIES`]: a
/// setup with many numbers would give thousands, each compared with the others.
pub(crate) fn versions(function: &str, figures: &[String], file: &str) -> Vec<Version> {
    let setups = changed_setups(function, figures);
    let mut out: Vec<Version> = Vec::new();
    let push = |version: Version, out: &mut Vec<Version>| {
        if out.len() < MAX_TRIES && !out.iter().any(|v| v.text == version.text) {
            out.push(version);
        }
    };
    for (text, input) in &setups {
        for version in own_asserts(text) {
            push(
                Version {
                    input: Some(input.clone()),
                    ..version
                },
                &mut out,
            );
        }
    }
    for (text, input) in &setups {
        for version in assert_versions(text, figures, file) {
            push(
                Version {
                    input: Some(input.clone()),
                    ..version
                },
                &mut out,
            );
        }
    }
    out
}

/// `function` with one number of a setup line that is none of `figures` replaced by a figure that
/// no setup line writes, written the same way (`150.00` becomes `100.00`); in the order of the
/// numbers, then of the figures.
fn changed_setups(function: &str, figures: &[String]) -> Vec<(String, Input)> {
    let lines: Vec<&str> = function.lines().collect();
    let is_setup = |line: &str| {
        let code = line.trim_start();
        !(code.is_empty() || code.starts_with('#') || code.starts_with("assert "))
    };
    let setup_lines: Vec<usize> = (1..lines.len()).filter(|&i| is_setup(lines[i])).collect();
    let given: Vec<&str> = figures.iter().map(|figure| plain(figure)).collect();
    let written: Vec<&str> = setup_lines
        .iter()
        .flat_map(|&i| numbers_in(lines[i]))
        .map(|(_, token)| plain(token))
        .collect();
    let unused: Vec<&String> = figures
        .iter()
        .filter(|figure| !written.contains(&plain(figure)))
        .collect();
    let mut out = Vec::new();
    for &index in &setup_lines {
        let line = lines[index];
        for (start, token) in numbers_in(line) {
            // A zero is the scenario, not a slip: `discount=Decimal("0.00")` in a test of the
            // price without a discount must not become a test of another case under that name.
            if given.contains(&plain(token)) || plain(token) == "0" {
                continue;
            }
            for figure in &unused {
                let kept_line = format!(
                    "{}{}{}",
                    line.get(..start).unwrap_or_default(),
                    same_form(figure, token),
                    line.get(start + token.len()..).unwrap_or_default()
                );
                let mut changed = lines.clone();
                changed[index] = &kept_line;
                out.push((
                    changed.join("\n"),
                    Input {
                        written: line.to_string(),
                        kept: kept_line.clone(),
                    },
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// BILL-412's figures, as `plumb_context::relevant::figures` gives them (sorted as text).
    fn figures() -> Vec<String> {
        plumb_context::relevant::figures(
            "BILL-412: an item costs Rs 1,000 with a Rs 100 discount. 18 percent GST should be Rs 162 (18 percent of Rs 900), but the invoice shows Rs 180.",
        )
        .into_iter()
        .collect()
    }

    #[test]
    fn an_input_the_ticket_does_not_give_is_tried_with_each_figure_it_does() {
        let function = "def test_new():\n    # Rs 1,000 with a discount\n    totals = compute(item(\"1000.00\", discount=\"150.00\"))\n    assert totals.tax == Decimal('162.00'), 'GST'\n    assert totals.total == Decimal('1012.00')";

        let tried = versions(function, &figures(), "");

        let first: Vec<(&str, &str)> = tried
            .iter()
            .take(3)
            .map(|v| {
                (
                    v.input.as_ref().map_or("", |input| input.kept.as_str()),
                    v.kept.as_str(),
                )
            })
            .collect();
        assert_eq!(
            first,
            [
                (
                    "    totals = compute(item(\"1000.00\", discount=\"100.00\"))",
                    "    assert totals.tax == Decimal('162.00')"
                ),
                (
                    "    totals = compute(item(\"1000.00\", discount=\"100.00\"))",
                    "    assert totals.total == Decimal('1012.00')"
                ),
                (
                    "    totals = compute(item(\"1000.00\", discount=\"162.00\"))",
                    "    assert totals.tax == Decimal('162.00')"
                ),
            ],
            "the model's own asserts first, the figures in order, 1000 (written already) not tried"
        );
        assert_eq!(
            tried[0].text,
            "def test_new():\n    # Rs 1,000 with a discount\n    totals = compute(item(\"1000.00\", discount=\"100.00\"))\n    assert totals.tax == Decimal('162.00')"
        );
        assert_eq!(
            tried[0].input.as_ref().map(|input| input.written.as_str()),
            Some("    totals = compute(item(\"1000.00\", discount=\"150.00\"))")
        );
        assert!(
            tried.iter().all(|v| v
                .input
                .as_ref()
                .is_some_and(|i| !i.kept.contains("1000.00\", discount=\"1000.00"))
                && !v.text.contains("# Rs 1,100")),
            "a comment, and a figure the setup writes already, are left as they are"
        );
        let with_other_figure = tried
            .iter()
            .position(|v| v.kept == "    assert totals.tax == Decimal('180.00')")
            .expect("the assert-only versions follow");
        assert!(with_other_figure > 8, "{with_other_figure}");
    }

    #[test]
    fn at_most_max_tries_versions_are_made() {
        let numbers: Vec<String> = (1..=30).map(|n| format!("{}", n * 7)).collect();
        let function = format!(
            "def test_new():\n    totals = compute([{}])\n    assert totals.tax == Decimal('162.00')\n    assert totals.total == 3",
            numbers.join(", ")
        );
        assert_eq!(versions(&function, &figures(), "").len(), MAX_TRIES);
    }

    #[test]
    fn a_test_built_on_the_tickets_figures_or_zero_has_no_input_to_change() {
        let function = "def test_new():\n    totals = compute(item(\"1000.00\", discount=\"100.00\"))\n    assert totals.tax == Decimal('180.00')";
        assert_eq!(versions(function, &figures(), ""), vec![]);
        let without_discount = "def test_new():\n    totals = compute(item(\"1000.00\", discount=\"0.00\"))\n    assert totals.tax == Decimal('180.00')";
        assert_eq!(
            versions(without_discount, &figures(), ""),
            vec![],
            "a zero input is the test's scenario"
        );
        let multi =
            "def test_new():\n    totals = compute(item(\"7\"))\n    assert f(\n        1) == 2";
        assert_eq!(own_asserts(multi), vec![]);
    }
}
