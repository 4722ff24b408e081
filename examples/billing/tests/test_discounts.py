from datetime import date
from decimal import Decimal

import pytest

from billing.discounts import (
    FLAT,
    PERCENT,
    DiscountCode,
    DiscountError,
    allocate,
    apply_code,
    apply_discount,
    discount_amount,
    validate_code,
)
from billing.models import LineItem

TODAY = date(2024, 3, 15)
FLAT100 = DiscountCode("FLAT100", FLAT, Decimal("100"))
WELCOME10 = DiscountCode("WELCOME10", PERCENT, Decimal("10"), max_discount=Decimal("250"))


def line(sku, price):
    return LineItem(sku=sku, description=sku, unit_price=Decimal(price))


def test_percent_code_amount_is_capped():
    assert discount_amount(WELCOME10, Decimal("1000.00")) == Decimal("100.00")
    assert discount_amount(WELCOME10, Decimal("5000.00")) == Decimal("250.00")


def test_flat_code_amount_never_exceeds_order():
    assert discount_amount(FLAT100, Decimal("1000.00")) == Decimal("100.00")
    assert discount_amount(FLAT100, Decimal("60.00")) == Decimal("60.00")


def test_code_expires_after_its_last_day():
    code = DiscountCode("HOLI", PERCENT, Decimal("15"), expires_on=TODAY)
    validate_code(code, Decimal("1000.00"), TODAY)
    expired = DiscountCode("DIWALI", PERCENT, Decimal("15"), expires_on=date(2023, 11, 15))
    with pytest.raises(DiscountError, match="expired"):
        validate_code(expired, Decimal("1000.00"), TODAY)


def test_minimum_order_is_enforced():
    code = DiscountCode("BIG500", FLAT, Decimal("500"), min_order=Decimal("2500"))
    with pytest.raises(DiscountError, match="at least"):
        validate_code(code, Decimal("2499.99"), TODAY)


def test_malformed_codes_are_rejected():
    for code in (
        DiscountCode("BAD1", "bogo", Decimal("1")),
        DiscountCode("BAD2", PERCENT, Decimal("101")),
        DiscountCode("BAD3", FLAT, Decimal("0")),
    ):
        with pytest.raises(DiscountError):
            validate_code(code, Decimal("1000.00"), TODAY)


def test_apply_discount_never_goes_below_zero():
    assert apply_discount(Decimal("50.00"), Decimal("80.00")) == Decimal("0.00")


def test_allocate_adds_up_exactly():
    shares = allocate(Decimal("100.00"), [Decimal("1"), Decimal("1"), Decimal("1")])
    assert sum(shares) == Decimal("100.00")
    assert sorted(shares) == [Decimal("33.33"), Decimal("33.33"), Decimal("33.34")]


def test_apply_code_spreads_flat_discount_by_value():
    items = apply_code([line("A", "1000.00"), line("B", "500.00")], FLAT100, TODAY)
    assert [i.discount for i in items] == [Decimal("66.67"), Decimal("33.33")]


def test_apply_code_on_single_item():
    (only,) = apply_code([line("KB-100", "1000.00")], FLAT100, TODAY)
    assert only.discount == Decimal("100.00")
    assert only.unit_price == Decimal("1000.00")
