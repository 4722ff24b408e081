from decimal import Decimal

import pytest

from billing.tax import (
    UnknownCategory,
    compute_gst,
    price_excluding_tax,
    rate_for_category,
    round_money,
    round_to_rupee,
    split_tax,
)


def test_round_money_rounds_half_up():
    assert round_money(Decimal("0.125")) == Decimal("0.13")
    assert round_money(Decimal("0.124")) == Decimal("0.12")
    assert round_money(Decimal("-0.125")) == Decimal("-0.13")


def test_round_to_rupee():
    assert round_to_rupee(Decimal("117.50")) == Decimal("118")
    assert round_to_rupee(Decimal("117.49")) == Decimal("117")


def test_rate_for_known_categories():
    assert rate_for_category("exempt") == Decimal("0.00")
    assert rate_for_category("essential") == Decimal("0.05")
    assert rate_for_category("standard") == Decimal("0.18")
    assert rate_for_category("luxury") == Decimal("0.28")


def test_unknown_category_is_an_error():
    with pytest.raises(UnknownCategory):
        rate_for_category("spaceships")


def test_compute_gst_rounds_to_paise():
    assert compute_gst(Decimal("1000.00"), Decimal("0.18")) == Decimal("180.00")
    assert compute_gst(Decimal("99.99"), Decimal("0.18")) == Decimal("18.00")
    assert compute_gst(Decimal("10.25"), Decimal("0.05")) == Decimal("0.51")


def test_compute_gst_refuses_negative_value():
    with pytest.raises(ValueError):
        compute_gst(Decimal("-1.00"), Decimal("0.18"))


def test_split_tax():
    # within a state the odd paisa goes to the central part
    assert split_tax(Decimal("18.01"), intra_state=True) == (
        Decimal("9.01"),
        Decimal("9.00"),
        Decimal("0.00"),
    )
    assert split_tax(Decimal("180.00"), intra_state=False) == (
        Decimal("0.00"),
        Decimal("0.00"),
        Decimal("180.00"),
    )


def test_price_excluding_tax():
    assert price_excluding_tax(Decimal("1180.00"), Decimal("0.18")) == Decimal("1000.00")
