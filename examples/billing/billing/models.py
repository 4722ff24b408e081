"""Plain data types shared by the billing modules.

These are deliberately dumb containers: the arithmetic lives in
``invoice_totals``, ``tax``, ``discounts`` and ``refunds``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

ZERO = Decimal("0.00")


@dataclass(frozen=True)
class LineItem:
    """One line on an invoice.

    ``discount`` is the rupee amount taken off this whole line. It is filled in
    from the customer's discount code by :func:`billing.discounts.apply_code`.
    """

    sku: str
    description: str
    unit_price: Decimal
    quantity: int = 1
    category: str = "standard"
    discount: Decimal = ZERO

    def gross(self) -> Decimal:
        """Price of the line before any discount or tax."""
        return self.unit_price * self.quantity


@dataclass
class Invoice:
    """An invoice as entered at checkout, before totals are worked out."""

    number: str
    customer_id: str
    items: list[LineItem] = field(default_factory=list)
    issued_on: date | None = None
    seller_state: str = "KA"
    place_of_supply: str = "KA"
    discount_code: str | None = None

    @property
    def intra_state(self) -> bool:
        """True when central + state tax apply; False when integrated tax applies."""
        return self.seller_state == self.place_of_supply


@dataclass(frozen=True)
class LineTotals:
    """The worked-out figures for one line (what the invoice PDF prints)."""

    sku: str
    gross: Decimal
    discount: Decimal
    taxable_value: Decimal
    tax_rate: Decimal
    tax: Decimal
    total: Decimal


@dataclass(frozen=True)
class InvoiceTotals:
    """The worked-out figures for a whole invoice."""

    lines: tuple[LineTotals, ...]
    subtotal: Decimal
    discount: Decimal
    taxable_value: Decimal
    tax: Decimal
    central_tax: Decimal
    state_tax: Decimal
    integrated_tax: Decimal
    round_off: Decimal
    total: Decimal


@dataclass(frozen=True)
class Refund:
    """Money going back to a customer against an issued invoice."""

    invoice_number: str
    amount: Decimal
    tax: Decimal
    reason: str = ""

    @property
    def value(self) -> Decimal:
        """The part of the refund that is not tax."""
        return self.amount - self.tax
