from decimal import Decimal

from billing.models import Invoice, LineItem


def test_line_gross_is_price_times_quantity():
    assert LineItem("A", "a", Decimal("12.50"), quantity=3).gross() == Decimal("37.50")


def test_invoice_is_intra_state_when_states_match():
    assert Invoice("INV-1", "C", seller_state="KA", place_of_supply="KA").intra_state
    assert not Invoice("INV-2", "C", seller_state="KA", place_of_supply="TN").intra_state
