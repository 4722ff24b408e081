"""Billing service: invoice totals, tax, discount codes and refunds.

All money is handled as :class:`decimal.Decimal` rupees and rounded to paise
(two decimal places) only where a figure is printed on an invoice.
"""

__version__ = "2.7.1"
