from decimal import Decimal

import pytest

from billing.invoice_totals import compute_invoice_totals
from billing.models import Invoice, LineItem, Refund
from billing.refunds import (
    RefundError,
    check_refund,
    partial_refund,
    refund_line,
    refundable_balance,
    tax_reversed,
)

NUMBER = "INV-2024-0002"


@pytest.fixture
def totals():
    items = [
        LineItem(sku="MUG", description="Mug", unit_price=Decimal("250.00"), quantity=4),
        LineItem(sku="TEA", description="Tea", unit_price=Decimal("200.00"), category="essential"),
    ]
    # MUG: 1000 + 180 tax; TEA: 200 + 10 tax; total 1390.
    return compute_invoice_totals(Invoice(number=NUMBER, customer_id="CUST-7", items=items))


def test_full_line_refund_includes_tax(totals):
    refund = refund_line(NUMBER, totals, "MUG", quantity=4, sold_quantity=4)
    assert refund.amount == Decimal("1180.00")
    assert refund.tax == Decimal("180.00")
    assert refund.value == Decimal("1000.00")


def test_partial_quantity_refund_is_prorated(totals):
    refund = refund_line(NUMBER, totals, "MUG", quantity=1, sold_quantity=4)
    assert refund.amount == Decimal("295.00")
    assert refund.tax == Decimal("45.00")


def test_cannot_refund_more_units_than_sold(totals):
    with pytest.raises(RefundError):
        refund_line(NUMBER, totals, "MUG", quantity=5, sold_quantity=4)


def test_unknown_sku_cannot_be_refunded(totals):
    with pytest.raises(RefundError, match="no line"):
        refund_line(NUMBER, totals, "SPOON", quantity=1, sold_quantity=1)


def test_goodwill_refund_carries_tax_share(totals):
    refund = partial_refund(NUMBER, totals, Decimal("139.00"))
    assert refund.tax == Decimal("19.00")


def test_goodwill_refund_cannot_exceed_invoice(totals):
    with pytest.raises(RefundError):
        partial_refund(NUMBER, totals, Decimal("1390.01"))


def test_refundable_balance_and_check(totals):
    earlier = [Refund(NUMBER, Decimal("1000.00"), Decimal("152.52"))]
    assert refundable_balance(totals, earlier) == Decimal("390.00")
    with pytest.raises(RefundError, match="only"):
        check_refund(totals, earlier, Refund(NUMBER, Decimal("390.01"), Decimal("0")))


def test_tax_reversed_sums_refunds():
    refunds = [
        Refund(NUMBER, Decimal("118.00"), Decimal("18.00")),
        Refund(NUMBER, Decimal("59.00"), Decimal("9.00")),
    ]
    assert tax_reversed(refunds) == Decimal("27.00")
