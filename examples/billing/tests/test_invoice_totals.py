from decimal import Decimal

import pytest

from billing.invoice_totals import (
    InvoiceError,
    compute_invoice_totals,
    format_rupees,
    gst_by_rate,
    line_totals,
    summary_lines,
)
from billing.models import Invoice, LineItem


def item(price, sku="KB-100", quantity=1, category="standard", discount="0.00"):
    return LineItem(
        sku=sku,
        description=f"item {sku}",
        unit_price=Decimal(price),
        quantity=quantity,
        category=category,
        discount=Decimal(discount),
    )


def invoice(*items, place_of_supply="KA"):
    return Invoice(
        number="INV-2024-0001",
        customer_id="CUST-42",
        items=list(items),
        place_of_supply=place_of_supply,
    )


def test_gst_on_full_price_without_discount():
    totals = compute_invoice_totals(invoice(item("1000.00")))
    assert totals.tax == Decimal("180.00")
    assert totals.total == Decimal("1180.00")


def test_quantity_multiplies_unit_price():
    line = line_totals(item("250.00", quantity=4))
    assert line.gross == Decimal("1000.00")
    assert line.tax == Decimal("180.00")


def test_category_rate_is_used():
    line = line_totals(item("200.00", category="essential"))
    assert line.tax_rate == Decimal("0.05")
    assert line.tax == Decimal("10.00")


def test_exempt_item_has_no_gst():
    totals = compute_invoice_totals(invoice(item("499.00", category="exempt")))
    assert totals.tax == Decimal("0.00")
    assert totals.total == Decimal("499.00")


def test_intra_state_splits_cgst_and_sgst():
    totals = compute_invoice_totals(invoice(item("1000.00")))
    assert (totals.central_tax, totals.state_tax, totals.integrated_tax) == (
        Decimal("90.00"),
        Decimal("90.00"),
        Decimal("0.00"),
    )


def test_inter_state_charges_igst():
    totals = compute_invoice_totals(invoice(item("1000.00"), place_of_supply="MH"))
    assert totals.integrated_tax == Decimal("180.00")
    assert totals.central_tax == totals.state_tax == Decimal("0.00")


def test_discount_reduces_taxable_value():
    totals = compute_invoice_totals(invoice(item("1000.00", discount="100.00")))
    assert totals.subtotal == Decimal("1000.00")
    assert totals.discount == Decimal("100.00")
    assert totals.taxable_value == Decimal("900.00")


def test_total_is_rounded_to_whole_rupee():
    totals = compute_invoice_totals(invoice(item("99.99")))
    assert totals.tax == Decimal("18.00")
    assert totals.total == Decimal("118.00")
    assert totals.round_off == Decimal("0.01")


def test_invoice_needs_at_least_one_line():
    with pytest.raises(InvoiceError):
        compute_invoice_totals(invoice())


def test_bad_lines_are_rejected():
    with pytest.raises(InvoiceError):
        line_totals(item("10.00", quantity=0))
    with pytest.raises(InvoiceError):
        line_totals(item("10.00", discount="10.01"))


def test_gst_by_rate_groups_slabs():
    totals = compute_invoice_totals(
        invoice(
            item("1000.00", sku="A"),
            item("200.00", sku="B", category="essential"),
            item("500.00", sku="C"),
        )
    )
    assert gst_by_rate(totals) == {
        Decimal("0.05"): Decimal("10.00"),
        Decimal("0.18"): Decimal("270.00"),
    }


def test_format_rupees_uses_indian_grouping():
    assert format_rupees(Decimal("1234567.5")) == "Rs 12,34,567.50"
    assert format_rupees(Decimal("999")) == "Rs 999.00"
    assert format_rupees(Decimal("-0.01")) == "-Rs 0.01"


def test_summary_lines_inter_state():
    inv = invoice(item("1000.00"), place_of_supply="MH")
    rows = summary_lines(inv, compute_invoice_totals(inv))
    assert [row.split()[0] for row in rows] == [
        "Subtotal",
        "Discount",
        "Taxable",
        "IGST",
        "Round",
        "Total",
    ]
    assert rows[-1].endswith("Rs 1,180.00")
