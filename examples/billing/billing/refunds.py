"""Refunds against issued invoices.

A refund gives back part of what the customer paid, tax included. The tax
inside a refund is reversed with a credit note, so every refund records how
much of it is tax; that share follows the tax share of the original line.
"""

from __future__ import annotations

from decimal import Decimal

from billing.models import ZERO, InvoiceTotals, LineTotals, Refund
from billing.tax import round_money


class RefundError(ValueError):
    """The refund is not allowed."""


def _find_line(totals: InvoiceTotals, sku: str) -> LineTotals:
    for line in totals.lines:
        if line.sku == sku:
            return line
    raise RefundError(f"no line for {sku} on this invoice")


def refund_line(
    invoice_number: str,
    totals: InvoiceTotals,
    sku: str,
    quantity: int,
    sold_quantity: int,
    reason: str = "",
) -> Refund:
    """Refund ``quantity`` of the ``sold_quantity`` units on line ``sku``.

    The line's total and its tax are both prorated by quantity.
    """
    if not 0 < quantity <= sold_quantity:
        raise RefundError(f"cannot refund {quantity} of {sold_quantity} units")
    line = _find_line(totals, sku)
    share = Decimal(quantity) / Decimal(sold_quantity)
    amount = round_money(line.total * share)
    tax = round_money(line.tax * share)
    return Refund(invoice_number, amount, tax, reason)


def partial_refund(
    invoice_number: str, totals: InvoiceTotals, amount: Decimal, reason: str = ""
) -> Refund:
    """Refund a goodwill ``amount`` (tax included) against the whole invoice.

    The tax part of the refund is in the same proportion as on the invoice
    (gst reversed on a goodwill refund is prorated, not recomputed).
    """
    amount = round_money(amount)
    if amount <= 0:
        raise RefundError("refund amount must be positive")
    if amount > totals.total:
        raise RefundError("refund is larger than the invoice")
    tax = round_money(amount * totals.tax / totals.total) if totals.total else ZERO
    return Refund(invoice_number, amount, tax, reason)


def refundable_balance(totals: InvoiceTotals, previous: list[Refund]) -> Decimal:
    """What is still left to refund on an invoice."""
    return max(totals.total - sum((r.amount for r in previous), ZERO), ZERO)


def check_refund(totals: InvoiceTotals, previous: list[Refund], refund: Refund) -> None:
    """Refuse a refund that would take the invoice below zero."""
    if refund.amount > refundable_balance(totals, previous):
        raise RefundError(
            f"{refund.invoice_number}: only {refundable_balance(totals, previous)} left to refund"
        )


def tax_reversed(refunds: list[Refund]) -> Decimal:
    """Total tax to reverse on the credit notes for ``refunds``.

    The credit note must show the gst reversed per refund, not just the sum.
    """
    return sum((r.tax for r in refunds), ZERO)
