"""GST rates and money helpers.

India's goods and services tax is charged at a slab rate chosen by the
product category. Within one state it is split into equal central and state
halves; between states it is charged whole as integrated tax.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

PAISE = Decimal("0.01")
RUPEE = Decimal("1")

# gst slab by product category (as a fraction, not a percentage).
GST_RATES: dict[str, Decimal] = {
    "exempt": Decimal("0.00"),
    "essential": Decimal("0.05"),
    "reduced": Decimal("0.12"),
    "standard": Decimal("0.18"),
    "luxury": Decimal("0.28"),
}


class UnknownCategory(KeyError):
    """Raised for a product category with no tax slab."""


def round_money(amount: Decimal | int | str) -> Decimal:
    """Round a rupee amount to paise, halves away from zero."""
    return Decimal(amount).quantize(PAISE, rounding=ROUND_HALF_UP)


def round_to_rupee(amount: Decimal) -> Decimal:
    """Round a rupee amount to a whole rupee, halves away from zero."""
    return Decimal(amount).quantize(RUPEE, rounding=ROUND_HALF_UP)


def rate_for_category(category: str) -> Decimal:
    """Return the tax rate for a product category."""
    try:
        return GST_RATES[category]
    except KeyError:
        raise UnknownCategory(category) from None


def compute_gst(taxable_value: Decimal, rate: Decimal) -> Decimal:
    """GST due on ``taxable_value`` at ``rate``, rounded to paise.

    The taxable value is the price the customer actually pays for the goods,
    i.e. after any discount shown on the invoice.
    """
    if taxable_value < 0:
        raise ValueError("taxable value cannot be negative")
    return round_money(taxable_value * rate)


def split_tax(tax: Decimal, intra_state: bool) -> tuple[Decimal, Decimal, Decimal]:
    """Split a tax amount into (central, state, integrated) parts.

    Within a state the two halves must add back up to the exact tax, so any
    odd paisa goes to the central part.
    """
    tax = round_money(tax)
    if not intra_state:
        return Decimal("0.00"), Decimal("0.00"), tax
    central = round_money(tax / 2)
    return central, tax - central, Decimal("0.00")


def price_excluding_tax(inclusive_price: Decimal, rate: Decimal) -> Decimal:
    """Back out the pre-tax price from a tax-inclusive price."""
    return round_money(Decimal(inclusive_price) / (1 + rate))
