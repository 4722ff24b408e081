"""Discount codes: percentage and flat, with validation and expiry.

A code is checked against the whole order, and the resulting rupee discount
is then spread over the invoice lines in proportion to their value, so that
every line carries its own ``discount``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from decimal import ROUND_DOWN, Decimal

from billing.models import ZERO, LineItem
from billing.tax import PAISE, round_money

PERCENT = "percent"
FLAT = "flat"


class DiscountError(ValueError):
    """The code cannot be used on this order."""


@dataclass(frozen=True)
class DiscountCode:
    """A discount code as stored in the promotions table."""

    code: str
    kind: str
    value: Decimal
    expires_on: date | None = None
    min_order: Decimal = ZERO
    max_discount: Decimal | None = None


def validate_code(code: DiscountCode, order_value: Decimal, today: date) -> None:
    """Raise :class:`DiscountError` if ``code`` cannot be used today."""
    if code.kind not in (PERCENT, FLAT):
        raise DiscountError(f"{code.code}: unknown kind {code.kind!r}")
    if code.value <= 0:
        raise DiscountError(f"{code.code}: value must be positive")
    if code.kind == PERCENT and code.value > 100:
        raise DiscountError(f"{code.code}: more than 100 percent off")
    if code.expires_on is not None and today > code.expires_on:
        raise DiscountError(f"{code.code}: expired on {code.expires_on.isoformat()}")
    if order_value < code.min_order:
        raise DiscountError(f"{code.code}: needs an order of at least Rs {code.min_order}")


def discount_amount(code: DiscountCode, order_value: Decimal) -> Decimal:
    """Rupees taken off an order of ``order_value`` by ``code``."""
    if code.kind == PERCENT:
        amount = round_money(order_value * code.value / 100)
        if code.max_discount is not None:
            amount = min(amount, code.max_discount)
    else:
        amount = code.value
    return round_money(min(amount, order_value))


def apply_discount(amount: Decimal, discount: Decimal) -> Decimal:
    """Price after taking ``discount`` off ``amount``; never below zero."""
    return max(amount - discount, ZERO)


def allocate(total: Decimal, weights: list[Decimal]) -> list[Decimal]:
    """Split ``total`` over ``weights`` proportionally, to the paisa.

    Shares are rounded down and the leftover paise go to the largest
    remainders, so the shares always add up to ``total`` exactly.
    """
    weight_sum = sum(weights, ZERO)
    if weight_sum == 0:
        return [ZERO for _ in weights]
    exact = [total * w / weight_sum for w in weights]
    shares = [e.quantize(PAISE, rounding=ROUND_DOWN) for e in exact]
    leftover = int((total - sum(shares, ZERO)) / PAISE)
    by_remainder = sorted(range(len(weights)), key=lambda i: exact[i] - shares[i], reverse=True)
    for i in by_remainder[:leftover]:
        shares[i] += PAISE
    return shares


def apply_code(items: list[LineItem], code: DiscountCode, today: date) -> list[LineItem]:
    """Validate ``code`` for the order and return the items with discounts set."""
    order_value = sum((item.gross() for item in items), ZERO)
    validate_code(code, order_value, today)
    shares = allocate(discount_amount(code, order_value), [item.gross() for item in items])
    return [replace(item, discount=share) for item, share in zip(items, shares, strict=True)]
