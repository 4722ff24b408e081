//! The text of one generated Python module: a docstring, imports and constants, then classes and
//! functions drawn from a handful of templates until the module reaches its target length.
//!
//! The templates read like a billing code base (dataclasses with `total()`, services, validators,
//! discount and tax helpers), so common words such as `total`, `invoice` and `tax` occur about as
//! often as they would in a real one. Every template is valid Python; names are filled in with
//! [`fill`], which replaces `{key}` placeholders (Python's own braces are never keys).

use crate::rng::Lcg;

/// Nouns of the domain; also the first half of module names.
pub const NOUNS: [&str; 20] = [
    "invoice",
    "customer",
    "order",
    "payment",
    "ledger",
    "account",
    "tax",
    "discount",
    "refund",
    "shipment",
    "product",
    "price",
    "balance",
    "report",
    "credit",
    "subscription",
    "coupon",
    "receipt",
    "vendor",
    "statement",
];

/// The second half of module names.
pub const SUFFIXES: [&str; 12] = [
    "service", "store", "rules", "helpers", "views", "totals", "schema", "client", "jobs",
    "events", "queries", "forms",
];

const VERBS: [&str; 10] = [
    "compute",
    "load",
    "apply",
    "build",
    "merge",
    "collect",
    "summarize",
    "reconcile",
    "estimate",
    "recalculate",
];

const KEYS: [&str; 6] = [
    "customer_id",
    "currency",
    "status",
    "region",
    "month",
    "vendor_id",
];

const ADJECTIVES: [&str; 6] = [
    "open", "overdue", "settled", "draft", "archived", "disputed",
];

const HEADER: &str = r#""""{Noun} {suffix} for the {package} package.

Keeps the {noun} logic of {package} in one place: totals, tax and invoice lines
are computed here and nowhere else, so reports and exports agree.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Iterable, Optional

log = logging.getLogger(__name__)

CENT = Decimal("0.01")
DEFAULT_RATE = Decimal("0.{rate}")
MAX_ITEMS = {max_items}
"#;

const RECORD_CLASS: &str = r#"

@dataclass
class {Noun}Record:
    """A {noun} as the {package} package stores it."""

    id: str
    amount: Decimal = Decimal("0")
    tax: Decimal = Decimal("0")
    {other}_id: Optional[str] = None
    tags: list = field(default_factory=list)

    def total(self) -> Decimal:
        """The amount with tax, rounded to the cent."""
        return (self.amount + self.tax).quantize(CENT, rounding=ROUND_HALF_UP)

    def with_tax(self, rate: Decimal = DEFAULT_RATE) -> "{Noun}Record":
        """A copy whose tax is `rate` of the amount."""
        tax = (self.amount * rate).quantize(CENT, rounding=ROUND_HALF_UP)
        return {Noun}Record(self.id, self.amount, tax, self.{other}_id, list(self.tags))

    def is_{adj}(self) -> bool:
        """Whether the {noun} counts as {adj}."""
        return self.amount > 0 and "{adj}" in self.tags
"#;

const SERVICE_CLASS: &str = r#"

class {Noun}{Verb}Service:
    """Loads, checks and saves {noun}s through a repository object."""

    def __init__(self, repository, rate: Decimal = DEFAULT_RATE):
        self.repository = repository
        self.rate = rate
        self._cache: dict = {}

    def get(self, {noun}_id: str) -> dict:
        """The {noun} with this id, cached after the first load."""
        if {noun}_id not in self._cache:
            self._cache[{noun}_id] = self.repository.load({noun}_id)
        return self._cache[{noun}_id]

    def total(self, {noun}_ids: Iterable[str]) -> Decimal:
        """The total of several {noun}s, tax included."""
        total = Decimal("0")
        for {noun}_id in {noun}_ids:
            record = self.get({noun}_id)
            total += Decimal(str(record["amount"]))
        return total + (total * self.rate).quantize(CENT)

    def save(self, record: dict) -> None:
        """Stores `record` and forgets the cached copy."""
        if not record.get("id"):
            raise ValueError("a {noun} needs an id before it is saved")
        self.repository.save(record)
        self._cache.pop(record["id"], None)
"#;

const SUM_FUNCTION: &str = r#"

def {verb}_{noun}_total(items: Iterable[Decimal], rate: Decimal = DEFAULT_RATE) -> Decimal:
    """{Verb} the {noun} total of `items`, tax included."""
    total = Decimal("0")
    for amount in items:
        if amount < 0:
            raise ValueError("a {noun} amount cannot be negative")
        total += amount
    tax = (total * rate).quantize(CENT, rounding=ROUND_HALF_UP)
    log.debug("{noun} total %s, tax %s", total, tax)
    return total + tax
"#;

const GROUP_FUNCTION: &str = r#"

def group_{noun}s_by_{key}(records: Iterable[dict]) -> dict:
    """Groups {noun} records by their `{key}` field; records without one are left out."""
    grouped: dict = {}
    for record in records:
        key = record.get("{key}")
        if key is None:
            continue
        grouped.setdefault(key, []).append(record)
    return grouped
"#;

const VALIDATE_FUNCTION: &str = r#"

def validate_{noun}(record: dict) -> list:
    """The problems of a {noun} record; an empty list means it is valid."""
    problems = []
    if not record.get("id"):
        problems.append("missing id")
    amount = Decimal(str(record.get("amount", "0")))
    if amount < 0:
        problems.append("negative amount")
    if len(record.get("items", [])) > MAX_ITEMS:
        problems.append("too many items")
    return problems
"#;

const FORMAT_FUNCTION: &str = r#"

def format_{noun}_line(name: str, amount: Decimal, tax: Decimal) -> str:
    """One line of an invoice: name, amount, tax and total."""
    total = amount + tax
    return f"{name:<30} {amount:>10} {tax:>8} {total:>10}"
"#;

const DISCOUNT_FUNCTION: &str = r#"

def apply_{noun}_discount(amount: Decimal, percent: int) -> Decimal:
    """`amount` less `percent` per cent, never below zero."""
    if not 0 <= percent <= 100:
        raise ValueError(f"discount {percent} is not a percentage")
    discounted = amount * (100 - percent) / 100
    return max(discounted.quantize(CENT, rounding=ROUND_HALF_UP), Decimal("0"))
"#;

const SUMMARY_FUNCTION: &str = r#"

def {verb}_{noun}_summary(records: Iterable[dict]) -> dict:
    """Counts, amount and tax over `records`, for the monthly {noun} report."""
    summary = {"count": 0, "amount": Decimal("0"), "tax": Decimal("0")}
    for record in records:
        summary["count"] += 1
        summary["amount"] += Decimal(str(record.get("amount", "0")))
        summary["tax"] += Decimal(str(record.get("tax", "0")))
    summary["total"] = summary["amount"] + summary["tax"]
    if summary["count"] > MAX_ITEMS:
        log.warning("{noun} summary over %d records", MAX_ITEMS)
    return summary
"#;

/// The pieces a module body is drawn from (the two classes count double: modules are mostly classes).
const PIECES: [&str; 9] = [
    RECORD_CLASS,
    SERVICE_CLASS,
    RECORD_CLASS,
    SUM_FUNCTION,
    GROUP_FUNCTION,
    VALIDATE_FUNCTION,
    FORMAT_FUNCTION,
    DISCOUNT_FUNCTION,
    SUMMARY_FUNCTION,
];

/// Replaces each `{key}` of `template` with its value.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    values
        .iter()
        .fold(template.to_string(), |text, (key, value)| {
            text.replace(&format!("{{{key}}}"), value)
        })
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The CamelCase form of a snake_case name.
fn camel(word: &str) -> String {
    word.split('_').map(capitalized).collect()
}

/// A module of `package` named `{noun}_{suffix}` with at least `target_lines` lines.
pub fn module_text(
    package: &str,
    noun: &str,
    suffix: &str,
    target_lines: usize,
    rng: &mut Lcg,
) -> String {
    let rate = format!("{:02}", rng.pick(&[5usize, 12, 18, 28]));
    let max_items = (rng.between(10, 50) * 10).to_string();
    let noun_camel = camel(noun);
    let mut text = fill(
        HEADER,
        &[
            ("Noun", &noun_camel),
            ("noun", noun),
            ("suffix", suffix),
            ("package", package),
            ("rate", &rate),
            ("max_items", &max_items),
        ],
    );
    while text.lines().count() < target_lines {
        let piece_noun = if rng.below(2) == 0 {
            noun
        } else {
            rng.pick(&NOUNS)
        };
        let verb = rng.pick(&VERBS);
        let mut other = rng.pick(&NOUNS);
        if other == piece_noun {
            other = "owner";
        }
        let piece = rng.pick(&PIECES);
        text.push_str(&fill(
            piece,
            &[
                ("Noun", &camel(piece_noun)),
                ("noun", piece_noun),
                ("Verb", &capitalized(verb)),
                ("verb", verb),
                ("key", rng.pick(&KEYS)),
                ("adj", rng.pick(&ADJECTIVES)),
                ("other", other),
                ("package", package),
            ],
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn fill_replaces_keys_only() {
        let actual = fill("def {verb}_x(): return f\"{name}\"", &[("verb", "load")]);
        assert_eq!(actual, "def load_x(): return f\"{name}\"");
    }

    #[test]
    fn modules_reach_their_length_and_repeat_exactly() {
        let make = || module_text("billing_core", "invoice", "totals", 120, &mut Lcg::new(7));
        let (first, second) = (make(), make());
        let actual = (
            first.lines().count() >= 120,
            first == second,
            first.contains("def total("),
        );
        assert_eq!(actual, (true, true, true));
    }
}
