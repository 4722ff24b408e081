"""Invoice totals: the figures printed on every invoice.

For each line we work out the gross price, the discount, the taxable value,
the GST on it and the line total. The invoice then adds the lines up, splits
the tax into central + state parts (or one integrated part between states),
and rounds the grand total to a whole rupee (printed as "round off").

Used by the checkout API, the invoice PDF renderer and the nightly ledger
export, so the field names here are part of their contracts.
"""

from __future__ import annotations

from decimal import Decimal

from billing.discounts import apply_discount
from billing.models import ZERO, Invoice, InvoiceTotals, LineItem, LineTotals
from billing.tax import (
    compute_gst,
    rate_for_category,
    round_money,
    round_to_rupee,
    split_tax,
)


class InvoiceError(ValueError):
    """The invoice cannot be totalled as entered."""


def check_line(item: LineItem) -> None:
    """Reject lines that would produce nonsense totals."""
    if item.quantity <= 0:
        raise InvoiceError(f"{item.sku}: quantity must be positive")
    if item.unit_price < 0:
        raise InvoiceError(f"{item.sku}: unit price cannot be negative")
    if item.discount < 0:
        raise InvoiceError(f"{item.sku}: discount cannot be negative")
    if item.discount > item.gross():
        raise InvoiceError(f"{item.sku}: discount is larger than the line")


def line_totals(item: LineItem) -> LineTotals:
    """Work out the figures for one invoice line.

    ``item.discount`` is the rupee discount for the whole line, already
    resolved from the customer's discount code.
    """
    check_line(item)
    gross = item.gross()
    rate = rate_for_category(item.category)
    tax = compute_gst(gross, rate)
    net = apply_discount(gross, item.discount)
    return LineTotals(
        sku=item.sku,
        gross=round_money(gross),
        discount=round_money(gross - net),
        taxable_value=round_money(net),
        tax_rate=rate,
        tax=tax,
        total=round_money(net + tax),
    )


def compute_invoice_totals(invoice: Invoice) -> InvoiceTotals:
    """Work out every figure printed on ``invoice``."""
    if not invoice.items:
        raise InvoiceError(f"{invoice.number}: an invoice needs at least one line")
    lines = tuple(line_totals(item) for item in invoice.items)

    subtotal = sum((line.gross for line in lines), ZERO)
    discount = sum((line.discount for line in lines), ZERO)
    taxable_value = sum((line.taxable_value for line in lines), ZERO)
    tax = sum((line.tax for line in lines), ZERO)
    central, state, integrated = split_tax(tax, invoice.intra_state)

    exact_total = taxable_value + tax
    total = round_money(round_to_rupee(exact_total))
    return InvoiceTotals(
        lines=lines,
        subtotal=subtotal,
        discount=discount,
        taxable_value=taxable_value,
        tax=tax,
        central_tax=central,
        state_tax=state,
        integrated_tax=integrated,
        round_off=total - exact_total,
        total=total,
    )


def gst_by_rate(totals: InvoiceTotals) -> dict[Decimal, Decimal]:
    """Tax grouped by GST slab, for the tax summary table on the invoice."""
    summary: dict[Decimal, Decimal] = {}
    for line in totals.lines:
        summary[line.tax_rate] = summary.get(line.tax_rate, ZERO) + line.tax
    return dict(sorted(summary.items()))


def format_rupees(amount: Decimal) -> str:
    """Format an amount the way the invoice prints it, e.g. ``Rs 1,234.50``."""
    amount = round_money(amount)
    sign = "-" if amount < 0 else ""
    whole, _, paise = f"{abs(amount):.2f}".partition(".")
    # Indian grouping: last three digits, then groups of two (1,23,456.00).
    head, tail = whole[:-3], whole[-3:]
    groups = []
    while len(head) > 2:
        groups.insert(0, head[-2:])
        head = head[:-2]
    if head:
        groups.insert(0, head)
    grouped = ",".join(groups + [tail])
    return f"{sign}Rs {grouped}.{paise}"


def summary_lines(invoice: Invoice, totals: InvoiceTotals) -> list[str]:
    """The totals block at the foot of the invoice, one string per row."""
    rows = [
        ("Subtotal", totals.subtotal),
        ("Discount", -totals.discount),
        ("Taxable value", totals.taxable_value),
    ]
    if invoice.intra_state:
        rows += [("CGST", totals.central_tax), ("SGST", totals.state_tax)]
    else:
        rows += [("IGST", totals.integrated_tax)]
    rows += [("Round off", totals.round_off), ("Total", totals.total)]
    width = max(len(label) for label, _ in rows)
    return [f"{label:<{width}}  {format_rupees(value):>16}" for label, value in rows]
