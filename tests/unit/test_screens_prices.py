"""Price text is read by one function (contract.prices.parse_price): it knows separators, signs,
exponents and currencies, and refuses what it cannot read for sure instead of guessing."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from contract import RawCapture, rows_frame
from contract.prices import PriceTextError, parse_price, price_reading, tag_foreign_prices
from scrapers.base import SourceDef


@pytest.mark.parametrize(("text", "amount", "currency"), [
    ("$2.99", 2.99, "USD"), ("$1,234.50", 1234.5, "USD"), ("US$ 1.20/hr", 1.2, "USD"),
    ("$.50 / hr", 0.5, "USD"), ("1.99 USD / GPU / hr", 1.99, "USD"),
    ("Starting at $2.99.", 2.99, "USD"), ("8x H100 - $20.72/hr", 20.72, "USD"),
    ("$2 .0000", 2.0, "USD"), ("€2.99", 2.99, "EUR"), ("£2.99", 2.99, "GBP"),
    ("C$2.99", 2.99, "CAD"), ("A$3", 3.0, "AUD"), ("CHF 2.99", 2.99, "CHF"),
    ("EUR 2.99", 2.99, "EUR"), ("2.99 EUR", 2.99, "EUR"), ("¥299", 299.0, "JPY"),
    ("₹120 / hr", 120.0, "INR"), ("$1.234,50", 1234.5, "USD"),
])
def test_amounts_and_currencies(text: str, amount: float, currency: str) -> None:
    price = parse_price(text)
    assert price is not None and (price.amount, price.currency) == (amount, currency)


@pytest.mark.parametrize(("text", "why"), [
    ("$2,99", "decimal comma"), ("€2,99 / hr", "decimal comma"), ("$12,5", "decimal comma"),
    ("-$50.44", "negative"), ("$-50.44", "negative"), ("−$3.00", "negative"),
    ("$1e9", "exponent"), ("$2.5E+3 / hr", "exponent"),
    ("X$5", "unknown dollar"), ("5 kr / h", "no one currency"), ("$1,23.45", "misplaced"),
])
def test_text_it_cannot_read_for_sure_is_refused(text: str, why: str) -> None:
    with pytest.raises(PriceTextError, match=why):
        parse_price(text, default_currency="USD")


def test_a_decimal_comma_is_read_only_when_the_caller_knows_the_locale() -> None:
    price = parse_price("2,99 € / Std.", decimal_comma=True)
    assert price is not None and (price.amount, price.currency) == (2.99, "EUR")
    assert parse_price("1.234,50 €", decimal_comma=True).amount == 1234.5  # type: ignore[union-attr]


def test_sizes_and_counts_are_never_money_even_when_dollars_are_assumed() -> None:
    # a lambda-page row with its STORAGE and PRICE cells swapped: "$22/GPU-h for an H100"
    for text in ("22 TiB SSD", "208 vCPUs", "80 GB", "8x", "1800 GiB"):
        assert parse_price(text, default_currency="USD") is None, text
    assert parse_price("2.24*", default_currency="USD").amount == 2.24  # type: ignore[union-attr]
    assert parse_price("$22") is not None


def test_a_range_is_read_at_its_first_amount_not_as_a_negative() -> None:
    assert parse_price("$2-$3 / hr").amount == 2.0  # type: ignore[union-attr]
    assert parse_price("$2.00 – $3.00").amount == 2.0  # type: ignore[union-attr]


def _rows(*prices: float) -> pl.DataFrame:
    return rows_frame([{"provider": "acme", "offering": f"o{i}", "gpu_name": "H100 SXM",
                        "gpu_count": 2.0, "region": "global", "pricing": "on_demand",
                        "price_usd_per_hour": p} for i, p in enumerate(prices)])


def test_rows_a_parser_left_in_usd_get_back_the_currency_of_their_text() -> None:
    with price_reading() as log:
        parse_price("€1.50 / GPU / hr")  # the parser reads it, then forgets the currency
        parse_price("$4.00 / hr")
    tagged = tag_foreign_prices(_rows(3.0, 4.0), log)  # 3.0 = 2 x 1.50 (whole), 4.0 in USD
    assert tagged["currency"].to_list() == ["EUR", None]
    assert tagged["price_usd_per_hour"].to_list() == [None, 4.0]
    assert tagged["price_native_per_hour"].to_list() == [3.0, None]


def test_when_no_usd_price_was_read_at_all_every_row_is_foreign() -> None:
    with price_reading() as log:
        parse_price("£0.10 / min")
    tagged = tag_foreign_prices(_rows(7.0), log)  # derived in a way that matches no amount
    assert tagged["currency"].to_list() == ["GBP"]
    assert tag_foreign_prices(_rows(7.0), price_reading().__enter__()).equals(_rows(7.0))


def test_every_parse_runs_with_the_log_so_a_forgetful_parser_cannot_store_euros_as_dollars(
) -> None:
    def forgetful(raw: RawCapture) -> pl.DataFrame:
        price = parse_price(raw.text())
        assert price is not None
        return _rows(price.amount * 2)  # never looks at price.currency

    source = SourceDef(name="acme", provider="acme", kind="page", url="https://acme.example",
                       example=None, example_as_of="2026-01-01",  # type: ignore[arg-type]
                       fetch_fn=None, parse_fn=forgetful)
    raw = RawCapture("acme", "https://acme.example", datetime(2026, 1, 1, tzinfo=UTC),
                     "€2.99 / GPU / hr".encode())
    frame = source.parse(raw)
    assert frame["currency"].to_list() == ["EUR"]
    assert frame["price_usd_per_hour"].to_list() == [None]
    usd = source.parse(RawCapture("acme", raw.url, raw.fetched_at, b"$2.99 / GPU / hr"))
    assert usd["currency"].to_list() == [None] and usd["price_usd_per_hour"].to_list() == [5.98]
