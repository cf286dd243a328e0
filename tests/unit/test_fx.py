"""Prices in euros (issue 26): stored in euros, converted at the ECB rate of their day, the rate
and its date kept; a day with no rate within 7 days holds the price out with its reason until
rates arrive and `reparse` lands it. On saved rate files in the ECB's formats (own fixtures)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest

from contract import RawCapture
from flows.fx_rates import backfill_rates, held_for_rates, land_rates, refresh_rates
from schemas.fx import NO_NATIVE_PRICE, Rate, convert, no_rate_reason
from scrapers import ecb, scaleway
from warehouse.connection import connect
from warehouse.fx import convert_batch, rates_for, store_rates
from warehouse.ingest import ingest
from warehouse.reparse import reparse_captures

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ecb"
HISTORY_CSV = FIXTURES / "eurofxref-hist_2026-11.csv"
# USD per euro in the fixture (eurofxref-hist_2026-11.csv)
USD_PER_EUR = {date(2026, 11, 18): 1.1664, date(2026, 11, 20): 1.1690}
GBP_PER_EUR_20 = 0.8935


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = connect(tmp_path / "wh.duckdb")
    yield connection
    connection.close()


def load_history(con: duckdb.DuckDBPyConnection, root: Path) -> None:
    raw = ecb.capture_from_file(HISTORY_CSV)
    store_rates(con, raw, ecb.parse_rates(raw), archive_root=root)


def daily_xml(day: date, usd: float) -> bytes:
    return ecb.EXAMPLE.read_bytes().replace(b"2026-11-20", day.isoformat().encode()).replace(
        b"currency='USD' rate='1.1532'", f"currency='USD' rate='{usd}'".encode())


def scaleway_capture(at: datetime) -> RawCapture:
    """A one-zone Scaleway answer: two GPU types priced in euros, one CPU type."""
    def entry(gpus: int, name: str, price: float) -> dict[str, object]:
        return {"ncpus": 8 * gpus, "ram": gpus * 48 * 1024 ** 3, "gpu": gpus,
                "gpu_info": {"gpu_manufacturer": "NVIDIA", "gpu_name": name,
                             "gpu_memory": 24 * 1024 ** 3},
                "mig_profile": None, "hourly_price": price, "end_of_service": False}
    servers = {"L4-1-24G": entry(1, "L4", 0.75), "L4-2-24G": entry(2, "L4", 1.5),
               "DEV1-S": {"ncpus": 2, "ram": 2 * 1024 ** 3, "gpu": 0, "hourly_price": 0.01}}
    body = {"zones": {"fr-par-2": {"products": [{"servers": servers}], "availability": []}}}
    return RawCapture("scaleway", "https://api.scaleway.com/instance/v1/zones/fr-par-2/"
                      "products/servers", at, json.dumps(body).encode(), "application/json")


# --- the rate of a day ---------------------------------------------------------------------

@pytest.mark.parametrize(("day", "published"), [
    (date(2026, 11, 18), date(2026, 11, 18)),  # a working day: its own rate
    (date(2026, 11, 21), date(2026, 11, 20)),  # Saturday: Friday's
    (date(2026, 11, 22), date(2026, 11, 20)),  # Sunday: Friday's
    (date(2026, 11, 27), date(2026, 11, 20)),  # 7 days on: still Friday's
    (date(2026, 11, 28), None),  # 8 days on: no rate
    (date(2026, 11, 1), None),  # before the first rate in the file
])
def test_the_rate_of_a_day(con: duckdb.DuckDBPyConnection, tmp_path: Path, day: date,
                           published: date | None) -> None:
    load_history(con, tmp_path / "raw")
    rates = rates_for(con, ["EUR", "GBP"], day)
    if published is None:
        assert rates == {}
        return
    assert rates["EUR"].rate_date == rates["GBP"].rate_date == published
    usd = con.execute("SELECT per_eur FROM fx_rate WHERE currency = 'USD' AND rate_date = ?",
                      [published]).fetchone()
    assert usd is not None and rates["EUR"].usd_per_unit == usd[0]


def test_other_currencies_cross_through_the_euro(con: duckdb.DuckDBPyConnection,
                                                 tmp_path: Path) -> None:
    load_history(con, tmp_path / "raw")
    gbp = rates_for(con, ["GBP", "XXX", "USD"], date(2026, 11, 20))
    assert set(gbp) == {"GBP"}  # no rate for an unquoted currency; USD needs none
    assert gbp["GBP"].usd_per_unit == pytest.approx(USD_PER_EUR[date(2026, 11, 20)]
                                                    / GBP_PER_EUR_20)


def test_rates_are_stored_once_with_their_capture(con: duckdb.DuckDBPyConnection,
                                                  tmp_path: Path) -> None:
    raw = ecb.capture_from_file(HISTORY_CSV)
    first = store_rates(con, raw, ecb.parse_rates(raw), archive_root=tmp_path / "raw")
    again = store_rates(con, raw, ecb.parse_rates(raw), archive_root=tmp_path / "raw")
    assert first.rates_added == first.rates_in_file > 0 and again.rates_added == 0
    # a later file quoting a stored day differently does not revise it
    other = RawCapture("ecb", ecb.DAILY_URL, datetime.now(UTC), daily_xml(date(2026, 11, 20),
                                                                          9.99))
    store_rates(con, other, ecb.parse_rates(other), archive_root=tmp_path / "raw")
    assert rates_for(con, ["EUR"], date(2026, 11, 20))["EUR"].usd_per_unit == 1.1690
    sources = con.execute("SELECT DISTINCT capture_id FROM fx_rate").fetchall()
    assert sources == [(raw.capture_id,)]
    stored = con.execute("SELECT source, archive_path FROM raw_capture WHERE capture_id = ?",
                         [raw.capture_id]).fetchone()
    assert stored is not None and stored[0] == "ecb" and (tmp_path / "raw" / stored[1]).exists()


# --- conversion at ingest --------------------------------------------------------------------

def observations(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    return con.execute(
        "SELECT offering, currency, price_native_per_hour, price_usd_per_hour, "
        "price_usd_per_gpu_hour, fx_rate, fx_date FROM observation ORDER BY offering").pl()


def test_a_euro_price_is_converted_at_its_days_rate(con: duckdb.DuckDBPyConnection,
                                                    tmp_path: Path) -> None:
    load_history(con, tmp_path / "raw")
    raw = scaleway_capture(datetime(2026, 11, 18, 23, 0, tzinfo=UTC))
    outcome = ingest(con, scaleway.SOURCE, raw, run_id="r1", archive_root=tmp_path / "raw")
    assert outcome.status == "success" and outcome.rows_stored == 2
    rate = USD_PER_EUR[date(2026, 11, 18)]
    assert observations(con).to_dicts() == [
        {"offering": "L4-1-24G", "currency": "EUR", "price_native_per_hour": 0.75,
         "price_usd_per_hour": round(0.75 * rate, 6),
         "price_usd_per_gpu_hour": round(0.75 * rate, 6), "fx_rate": rate,
         "fx_date": date(2026, 11, 18)},
        {"offering": "L4-2-24G", "currency": "EUR", "price_native_per_hour": 1.5,
         "price_usd_per_hour": round(1.5 * rate, 6),
         "price_usd_per_gpu_hour": round(1.5 * rate, 6) / 2, "fx_rate": rate,
         "fx_date": date(2026, 11, 18)}]
    # latest_observation carries the same columns in the same order
    latest = con.execute("SELECT fx_rate, fx_date FROM latest_observation").fetchall()
    assert set(latest) == {(rate, date(2026, 11, 18))}


def test_a_weekend_price_uses_fridays_rate(con: duckdb.DuckDBPyConnection,
                                           tmp_path: Path) -> None:
    load_history(con, tmp_path / "raw")
    raw = scaleway_capture(datetime(2026, 11, 22, 3, 0, tzinfo=UTC))  # a Sunday
    ingest(con, scaleway.SOURCE, raw, run_id="r1", archive_root=tmp_path / "raw")
    rows = observations(con)
    assert rows["fx_date"].unique().to_list() == [date(2026, 11, 20)]
    assert rows["fx_rate"].unique().to_list() == [USD_PER_EUR[date(2026, 11, 20)]]


def test_no_rate_within_7_days_holds_the_price_out_until_rates_arrive(
        con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    root = tmp_path / "raw"
    load_history(con, root)
    day = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)  # ten days after the last rate
    outcome = ingest(con, scaleway.SOURCE, scaleway_capture(day), run_id="r1",
                     archive_root=root)
    assert outcome.status == "rejected" and outcome.rows_stored == 0
    assert "no EUR rate within 7 days of 2026-11-30" in str(outcome.error)
    held = con.execute("SELECT offering, failed_check, currency, price_native_per_hour, "
                       "price_usd_per_hour FROM quarantine ORDER BY offering").fetchall()
    assert held == [("L4-1-24G", no_rate_reason("EUR", date(2026, 11, 30)), "EUR", 0.75, None),
                    ("L4-2-24G", no_rate_reason("EUR", date(2026, 11, 30)), "EUR", 1.5, None)]
    assert observations(con).height == 0 and held_for_rates(con) == 2

    # Monday's daily file arrives; the capture kept for reparse now lands at that rate.
    monday = RawCapture("ecb", ecb.DAILY_URL, day, daily_xml(date(2026, 11, 30), 1.1702))
    assert land_rates(con, monday, archive_root=root).stored is not None
    results = reparse_captures(con, {"scaleway": scaleway.SOURCE}, archive_root=root)
    assert [r.status for r in results] == ["landed"]
    rows = observations(con)
    assert rows["fx_date"].to_list() == [date(2026, 11, 30)] * 2
    assert rows["price_usd_per_hour"].to_list() == [round(0.75 * 1.1702, 6),
                                                    round(1.5 * 1.1702, 6)]
    assert held_for_rates(con) == 0


def test_usd_rows_pass_untouched_and_a_missing_native_price_is_held() -> None:
    frame = pl.DataFrame({
        "offering": ["usd", "eur", "eur-no-native", "eur-with-usd"],
        "gpu_count": [1.0, 2.0, 1.0, 1.0],
        "currency": [None, "EUR", "EUR", "EUR"],
        "price_native_per_hour": [None, 2.0, None, 1.0],
        "price_usd_per_hour": [3.0, None, None, 99.0],
        "price_usd_per_gpu_hour": [3.0, None, None, 99.0],
    })
    day = date(2026, 11, 20)
    converted = convert(frame, {"EUR": Rate(1.2, day)}, day)
    assert converted.rows.select("offering", "price_usd_per_hour", "price_usd_per_gpu_hour",
                                 "fx_rate", "fx_date").rows() == [
        ("usd", 3.0, 3.0, None, None),
        ("eur", 2.4, 1.2, 1.2, day),
        ("eur-with-usd", 1.2, 1.2, 1.2, day)]  # the native price is the truth
    assert converted.held.select("offering", "failed_check").rows() == [
        ("eur-no-native", NO_NATIVE_PRICE)]
    assert convert(frame, {}, day).held["failed_check"].to_list() == [
        no_rate_reason("EUR", day), NO_NATIVE_PRICE, no_rate_reason("EUR", day)]


def test_without_a_warehouse_nothing_is_converted(tmp_path: Path) -> None:
    frame = pl.DataFrame({"gpu_count": [1.0], "currency": ["EUR"],
                          "price_native_per_hour": [1.0], "price_usd_per_hour": [None]},
                         schema_overrides={"price_usd_per_hour": pl.Float64})
    assert convert_batch(None, frame, date(2026, 11, 20)).rows.height == 0


# --- the refresh's step and the backfill --------------------------------------------------------

def test_offline_the_bundled_daily_file_is_dated_as_of_the_replay(
        con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    from contract.settings import Settings

    settings = Settings(warehouse=tmp_path / "wh.duckdb", archive_dir=tmp_path / "raw")
    result = refresh_rates(con, None, settings, offline=True)  # type: ignore[arg-type]
    today = datetime.now(UTC).date()
    assert result.stored is not None and result.stored.rates_added == 29
    assert rates_for(con, ["EUR"], today)["EUR"] == Rate(1.1532, today)


def test_backfill_reads_a_file_and_says_what_it_added(con: duckdb.DuckDBPyConnection,
                                                      tmp_path: Path) -> None:
    from contract.settings import Settings

    settings = Settings(warehouse=tmp_path / "wh.duckdb", archive_dir=tmp_path / "raw")
    result = backfill_rates(con, None, settings, str(HISTORY_CSV))  # type: ignore[arg-type]
    assert result.stored is not None
    assert (result.stored.first_day, result.stored.last_day) == (date(2026, 11, 2),
                                                                date(2026, 11, 20))
    assert "new of" in result.message
    missing = backfill_rates(con, None, settings, str(tmp_path / "nope.zip"))  # type: ignore
    assert missing.stored is None and "no such file" in missing.message
