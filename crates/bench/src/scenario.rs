//! The hand-written part of the generated repository and the task the harness benchmark runs on it
//! (BENCH-7): `billing_core/invoice_math.py`, whose `invoice_total` leaves shipping out, a pytest
//! suite of 20 quick tests that all pass (none passes shipping), the ticket, and an eight-round
//! script (search, read, list, create a test, run it, edit, run the suite, done) whose edit makes
//! the new test pass, so the run ends with a verified patch.

use serde_json::json;

/// The package that holds the module with the gap.
pub const FIX_PACKAGE: &str = "billing_core";
/// The module with the gap, relative to the repository root.
pub const FIX_MODULE: &str = "billing_core/invoice_math.py";

pub const INVOICE_MATH: &str = r#""""Invoice arithmetic: line totals, discounts, tax and the invoice total.

Money is a Decimal throughout and is rounded to the cent, half up.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Iterable

CENT = Decimal("0.01")
DEFAULT_TAX_RATE = Decimal("0.18")


def to_money(value) -> Decimal:
    """`value` as a Decimal rounded to the cent."""
    return Decimal(str(value)).quantize(CENT, rounding=ROUND_HALF_UP)


def line_total(unit_price: Decimal, quantity: int) -> Decimal:
    """The price of one invoice line before discount and tax."""
    if quantity < 0:
        raise ValueError("quantity cannot be negative")
    return to_money(unit_price * quantity)


def apply_discount(amount: Decimal, discount: Decimal) -> Decimal:
    """`amount` less a fixed discount, never below zero."""
    return max(to_money(amount - discount), Decimal("0.00"))


def tax_for(amount: Decimal, rate: Decimal = DEFAULT_TAX_RATE) -> Decimal:
    """The tax due on `amount`."""
    return to_money(amount * rate)


def invoice_total(
    lines: Iterable[Decimal],
    rate: Decimal = DEFAULT_TAX_RATE,
    shipping: Decimal = Decimal("0.00"),
) -> Decimal:
    """The invoice total: the lines, their tax, and shipping."""
    subtotal = to_money(sum(lines, Decimal("0.00")))
    tax = tax_for(subtotal, rate)
    return subtotal + tax  # shipping is not added yet
"#;

const TEST_INVOICE_MATH: &str = r#"from decimal import Decimal

import pytest

from billing_core.invoice_math import apply_discount, invoice_total, line_total, tax_for, to_money


def test_to_money_rounds_half_up():
    assert to_money("2.675") == Decimal("2.68")


def test_to_money_keeps_cents():
    assert to_money(Decimal("10.5")) == Decimal("10.50")


def test_line_total():
    assert line_total(Decimal("19.99"), 3) == Decimal("59.97")


def test_line_total_refuses_negative_quantity():
    with pytest.raises(ValueError):
        line_total(Decimal("1.00"), -1)


def test_apply_discount():
    assert apply_discount(Decimal("100.00"), Decimal("15.00")) == Decimal("85.00")


def test_discount_never_below_zero():
    assert apply_discount(Decimal("10.00"), Decimal("15.00")) == Decimal("0.00")


def test_tax_for():
    assert tax_for(Decimal("100.00")) == Decimal("18.00")


def test_invoice_total_without_shipping():
    assert invoice_total([Decimal("60.00"), Decimal("40.00")]) == Decimal("118.00")
"#;

const TEST_PACKAGES: &str = r#"import importlib

import pytest

PACKAGES = {packages}


@pytest.mark.parametrize("name", PACKAGES)
def test_package_has_a_docstring(name):
    assert importlib.import_module(name).__doc__
"#;

const TEST_MODULES: &str = r#"import importlib
from decimal import Decimal

import pytest

MODULES = {modules}


@pytest.mark.parametrize("name", MODULES)
def test_module_constants(name):
    module = importlib.import_module(name)
    assert module.CENT == Decimal("0.01")
    assert Decimal("0") < module.DEFAULT_RATE < Decimal("1")
"#;

pub const PYTEST_INI: &str = "[pytest]
testpaths = tests
pythonpath = .
addopts = -p no:cacheprovider
";

pub const GITIGNORE: &str = "__pycache__/\n*.pyc\n.pytest_cache/\n";

pub const README: &str = "# acme-billing (generated)

A generated Python code base for plumb's benchmark: sixty packages of billing modules, and a small
pytest suite under `tests/`. Run the tests with `python3 -m pytest -q`.
";

pub const TICKET: &str = "BENCH-7: invoice_total ignores shipping

An invoice of Rs 100.00 with 18% tax and Rs 5.00 shipping should total Rs 123.00, but
billing_core.invoice_math.invoice_total returns Rs 118.00: the shipping argument is accepted and
then left out. Add shipping to the total and cover it with a test.
";

const NEW_TEST: &str = r#"from decimal import Decimal

from billing_core.invoice_math import invoice_total


def test_invoice_total_adds_shipping():
    # BENCH-7: Rs 100.00 at 18% tax with Rs 5.00 shipping is Rs 123.00.
    assert invoice_total([Decimal("100.00")], shipping=Decimal("5.00")) == Decimal("123.00")
"#;

/// The suite's files: `(path, text)`. `packages` and `modules` are dotted names, six of each, that
/// the import tests load (6 + 6 + the 8 arithmetic tests = 20 tests).
pub fn test_files(packages: &[String], modules: &[String]) -> Vec<(&'static str, String)> {
    let list = |names: &[String]| format!("{names:?}");
    vec![
        ("tests/test_invoice_math.py", TEST_INVOICE_MATH.to_string()),
        (
            "tests/test_packages.py",
            TEST_PACKAGES.replace("{packages}", &list(packages)),
        ),
        (
            "tests/test_modules.py",
            TEST_MODULES.replace("{modules}", &list(modules)),
        ),
    ]
}

/// The eight rounds of the BENCH-7 script, as JSON Lines for `plumb_model::ScriptModel`.
pub fn script() -> String {
    let new_test = "tests/test_shipping.py";
    let turns = [
        json!({"tool": "search_code", "args": {"query": "invoice_total"}}),
        json!({"tool": "read_file", "args": {"path": FIX_MODULE, "start_line": 1, "lines": 60}}),
        json!({"tool": "list_files", "args": {"path": "tests"}}),
        json!({"tool": "create_file", "args": {"path": new_test, "content": NEW_TEST}}),
        json!({"tool": "run_tests", "args": {"tests": [new_test]}}),
        json!({"tool": "edit_file", "args": {
            "path": FIX_MODULE,
            "old_text": "    return subtotal + tax  # shipping is not added yet\n",
            "new_text": "    return subtotal + tax + to_money(shipping)\n",
        }}),
        json!({"tool": "run_tests", "args": {}}),
        json!({"tool": "done", "args": {"summary": "BENCH-7: invoice_total now adds shipping; tests/test_shipping.py covers it and the full suite passes."}}),
    ];
    turns.iter().map(|turn| format!("{turn}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn script_has_eight_rounds_and_loads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bench.script.jsonl");
        std::fs::write(&path, script()).unwrap();
        let model = plumb_model::ScriptModel::load(&path).unwrap();
        let actual: Vec<String> = model
            .turns()
            .iter()
            .map(|turn| turn.tool_calls[0].name.clone())
            .collect();
        let expected = [
            "search_code",
            "read_file",
            "list_files",
            "create_file",
            "run_tests",
            "edit_file",
            "run_tests",
            "done",
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn the_edit_matches_once() {
        let actual = INVOICE_MATH
            .matches("    return subtotal + tax  # shipping is not added yet\n")
            .count();
        assert_eq!(actual, 1);
    }
}
