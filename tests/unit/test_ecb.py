"""ECB reference rates (scrapers/ecb.py): the daily XML, the history CSV and its ZIP, on own
fixtures written in the ECB's formats; what is not a rates file fails loudly."""

from __future__ import annotations

import io
import zipfile
from datetime import UTC, date, datetime
from pathlib import Path

import httpx
import pytest
import respx

from contract import HttpSettings, ParseError, RawCapture
from scrapers import ecb

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ecb"
HISTORY_CSV = FIXTURES / "eurofxref-hist_2026-11.csv"
FETCHED = datetime(2026, 11, 20, 16, 30, tzinfo=UTC)


def capture(body: bytes) -> RawCapture:
    return RawCapture(source="ecb", url=ecb.DAILY_URL, fetched_at=FETCHED, body=body)


def zipped(name: str, body: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, body)
    return buffer.getvalue()


def rate(frame: object, day: date, currency: str) -> float:
    import polars as pl

    assert isinstance(frame, pl.DataFrame)
    return float(frame.filter((pl.col("rate_date") == day) & (pl.col("currency") == currency))
                 ["per_eur"].item())


def test_daily_xml_gives_one_day_of_rates() -> None:
    frame = ecb.parse_rates(capture(ecb.EXAMPLE.read_bytes()))
    assert frame["rate_date"].unique().to_list() == [date(2026, 11, 20)]
    assert frame.height == 29
    assert rate(frame, date(2026, 11, 20), "USD") == 1.1532
    assert rate(frame, date(2026, 11, 20), "GBP") == 0.87915
    assert "EUR" not in frame["currency"].to_list()  # the base is never quoted


def test_history_csv_skips_na_and_the_trailing_empty_column() -> None:
    frame = ecb.parse_rates(capture(HISTORY_CSV.read_bytes()))
    days = frame["rate_date"].unique().sort().to_list()
    assert (days[0], days[-1], len(days)) == (date(2026, 11, 2), date(2026, 11, 20), 15)
    assert date(2026, 11, 14) not in days  # a Saturday: no rates published
    currencies = set(frame["currency"].to_list())
    assert {"USD", "GBP", "JPY", "ZAR"} <= currencies
    assert not currencies & {"CYP", "BGN", "HRK"}  # N/A on every day of the file
    assert frame.height == 15 * len(currencies)
    assert rate(frame, date(2026, 11, 20), "USD") == 1.1690
    assert rate(frame, date(2026, 11, 2), "USD") == 1.1513


def test_the_history_zip_reads_the_csv_inside() -> None:
    body = zipped("eurofxref-hist.csv", HISTORY_CSV.read_bytes())
    assert ecb.parse_rates(capture(body)).equals(ecb.parse_rates(capture(HISTORY_CSV.read_bytes())))


def test_the_one_day_csv_with_a_written_date() -> None:
    body = b"Date, USD, JPY, GBP, \n20 November 2026, 1.1532, 179.84, 0.87915, \n"
    frame = ecb.parse_rates(capture(body))
    assert frame.to_dicts() == [
        {"rate_date": date(2026, 11, 20), "currency": "GBP", "per_eur": 0.87915},
        {"rate_date": date(2026, 11, 20), "currency": "JPY", "per_eur": 179.84},
        {"rate_date": date(2026, 11, 20), "currency": "USD", "per_eur": 1.1532}]


@pytest.mark.parametrize(("body", "message"), [
    (b"", "empty"),
    (b"<html><body>Service unavailable</body></html>", "no <Cube time"),
    (b"<gesmes:Envelope", "not well-formed"),
    (b"Day,USD\n2026-11-20,1.15\n", "first column is 'Date'"),
    (b"Date,USD,Dollar\n2026-11-20,1.15,1\n", "not currency codes"),
    (b"Date,USD\n2026-11-20,1,15\n2026-11-19,abc\n", "not a number"),
    (b"Date,USD\n2026-11-20,-1.15\n", "positive"),
    (b"Date,USD\n20/11/2026,1.15\n", "not a date"),
    (b"Date,USD\n2026-11-20,N/A\n", "no rate"),
    (b"Date,USD\n2026-11-20,1.15\n2026-11-20,1.16\n", "two different USD rates"),
    (b"PK\x03\x04broken", "not a readable ZIP"),
])
def test_what_is_not_a_rates_file_is_a_parse_error(body: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        ecb.parse_rates(capture(body))


def test_a_zip_without_exactly_one_csv_is_refused() -> None:
    with pytest.raises(ParseError, match="one CSV"):
        ecb.parse_rates(capture(zipped("readme.txt", b"hello")))


@respx.mock
def test_fetch_daily_and_history_ask_the_ecb_addresses() -> None:
    daily = respx.get(ecb.DAILY_URL).mock(
        return_value=httpx.Response(200, content=ecb.EXAMPLE.read_bytes()))
    history = respx.get(ecb.HISTORY_URL).mock(
        return_value=httpx.Response(200, content=zipped("eurofxref-hist.csv",
                                                        HISTORY_CSV.read_bytes())))
    with httpx.Client() as client:
        raw = ecb.fetch_daily(client, HttpSettings())
        old = ecb.fetch_history(client, HttpSettings())
    assert daily.called and history.called
    assert raw.source == "ecb" and ecb.parse_rates(raw).height == 29
    assert ecb.parse_rates(old)["rate_date"].n_unique() == 15


def test_a_base_url_override_points_fetch_elsewhere() -> None:
    settings = HttpSettings(base_urls={"ecb": "http://127.0.0.1:9/mirror"})
    with respx.mock:
        route = respx.get("http://127.0.0.1:9/mirror/stats/eurofxref/eurofxref-daily.xml").mock(
            return_value=httpx.Response(200, content=ecb.EXAMPLE.read_bytes()))
        with httpx.Client() as client:
            ecb.fetch_daily(client, settings)
    assert route.called
