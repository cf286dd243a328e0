"""Regions, geographies and currencies (issue 26): a hand-made warehouse where one GPU is quoted in
four geographies, every market value worked out by hand, and amounts printed in euros at the
ECB rate of the day shown (a day without a rate held out with its reason).

H100 SXM, on demand, one GPU per offer, all seen 2 hours before NOW:

    provider  region              geography  $/GPU-hour
    aws       us-east-1           US         4.00
    aws       eu-west-1           EU         4.40
    aws       eu-west-2           UK         4.60
    lambda    us-east-1           US         2.99
    lambda    europe-central-1    EU         3.19
    vastai    Texas, US           US         1.80
    vastai    Bavaria, DE         EU         2.10
    scaleway  fr-par-2            EU         3.00
    runpod    global              global     2.49

Market = median over providers of each provider's median (three providers at least):
- everywhere: aws 4.40 (of 4.00, 4.40, 4.60), lambda 3.09, vastai 1.95, scaleway 3.00,
  runpod 2.49 -> 3.00;
- US: aws 4.00, lambda 2.99, vastai 1.80 -> 2.99;
- EU: aws 4.40, lambda 3.19, vastai 2.10, scaleway 3.00 -> (3.00 + 3.19) / 2 = 3.095;
- UK (aws only) and global (runpod only): one provider, withheld.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from gpuprices.cli import app
from schemas.fx import no_rate_reason
from tests.reports.conftest import NOW, Builder, cli_csv, offer
from warehouse.connection import connect, connect_read_only
from warehouse.fx import in_currency
from warehouse.place import Place
from warehouse.semantic import ALL, Prices
from warehouse.semantic_market import computed_market, stored_market

runner = CliRunner()
H100 = "H100 SXM"
QUOTES = {
    "aws": [("us-east-1", 4.00), ("eu-west-1", 4.40), ("eu-west-2", 4.60)],
    "lambda": [("us-east-1", 2.99), ("europe-central-1", 3.19)],
    "vastai": [("Texas, US", 1.80), ("Bavaria, DE", 2.10)],
    "scaleway": [("fr-par-2", 3.00)],
    "runpod": [("global", 2.49)],
}
# USD per euro, as the ECB quotes it (units of USD one euro buys); GBP per euro
USD_PER_EUR = 1.25
GBP_PER_EUR = 0.8


def build_places(build: Builder, now: datetime) -> None:
    for provider, quotes in QUOTES.items():
        build.source(provider, provider)
        build.capture(provider, now - timedelta(hours=2), [
            offer(provider, f"h100-{region}", H100, price, region=region)
            for region, price in quotes])


def add_rate(con: duckdb.DuckDBPyConnection, day: date, currency: str, per_eur: float) -> None:
    con.execute("INSERT INTO fx_rate VALUES (?, ?, ?, 'ecb', 'test-rates')",
                [day, currency, per_eur])


@pytest.fixture
def places(build: Builder) -> duckdb.DuckDBPyConnection:
    build_places(build, NOW)
    return build.con


def _market(con: duckdb.DuckDBPyConnection, place: Place) -> dict[str, object]:
    values, stored = stored_market(con, NOW.date(), gpu_models=[H100], segment=ALL, now=NOW,
                                   place=place)
    assert values.height == 1
    return {**values.row(0, named=True), "stored": stored}


# ---- the market of a place -------------------------------------------------------------------

def test_the_market_everywhere_and_per_geography(places: duckdb.DuckDBPyConnection) -> None:
    everywhere = _market(places, Place())
    assert (everywhere["market_usd_per_gpu_hour"], everywhere["providers"]) == (
        pytest.approx(3.00), 5)
    us = _market(places, Place.of(geos=["US"]))
    assert (us["market_usd_per_gpu_hour"], us["providers"], us["min_usd_per_gpu_hour"]) == (
        pytest.approx(2.99), 3, pytest.approx(1.80))
    assert not us["stored"]  # a place's market is computed, never stored
    eu = _market(places, Place.of(geos=["eu"]))  # geography names ignore case
    assert (eu["market_usd_per_gpu_hour"], eu["providers"], eu["offers"]) == (
        pytest.approx(3.095), 4, 4)
    uk = _market(places, Place.of(geos=["UK"]))
    assert uk["market_usd_per_gpu_hour"] is None and uk["providers"] == 1
    assert "provider" in str(uk["withheld_reason"])
    # US and EU together: every provider's median over its offers in either
    both = _market(places, Place.of(geos=["US", "EU"]))
    # aws 4.20 (4.00, 4.40), lambda 3.09, vastai 1.95, scaleway 3.00 -> (3.00 + 3.09) / 2
    assert both["market_usd_per_gpu_hour"] == pytest.approx(3.045)


def test_the_per_geography_table_has_one_market_per_geography(
        places: duckdb.DuckDBPyConnection) -> None:
    from reports.market.values import market_by_geo

    frame = market_by_geo(places, NOW.date(), gpu_models=[H100], segment=ALL, now=NOW)
    values = dict(zip(frame["geo"], frame["market_usd_per_gpu_hour"], strict=True))
    assert values == {"US": pytest.approx(2.99), "EU": pytest.approx(3.095), "UK": None,
                      "global": None}


def test_a_region_filter_keeps_only_that_region(places: duckdb.DuckDBPyConnection) -> None:
    offers = Prices(places, NOW, place=Place.of(regions=["US-EAST-1"])).comparable()
    assert sorted(zip(offers["provider"], offers["price_usd_per_gpu_hour"], strict=True)) == [
        ("aws", 4.00), ("lambda", 2.99)]
    # a region and a geography: both must hold
    none = Prices(places, NOW, place=Place.of(regions=["us-east-1"], geos=["EU"])).comparable()
    assert none.height == 0


def test_the_cheapest_of_a_geography_is_the_min_of_its_market(
        places: duckdb.DuckDBPyConnection) -> None:
    for geo in ("US", "EU", "UK", "global"):
        where = Place.of(geos=[geo])
        cheapest = Prices(places, NOW, place=where).cheapest(gpu_models=[H100])
        _, market = computed_market(places, NOW, place=where)
        row = market.filter((pl.col("gpu_model") == H100) & (pl.col("segment") == ALL))
        assert cheapest["price_usd_per_gpu_hour"].item() == pytest.approx(
            row["min_usd_per_gpu_hour"].item())


# ---- amounts in another currency ---------------------------------------------------------------

def test_amounts_are_converted_at_the_rate_of_each_rows_day(
        con: duckdb.DuckDBPyConnection) -> None:
    add_rate(con, date(2026, 11, 18), "USD", 1.1664)
    add_rate(con, date(2026, 11, 20), "USD", 1.1690)
    add_rate(con, date(2026, 11, 20), "GBP", 0.8935)
    frame = pl.DataFrame({
        "day": [date(2026, 11, 18), date(2026, 11, 21), date(2026, 11, 30)],
        "market_usd_per_gpu_hour": [2.3328, 2.338, 2.0], "providers": [3, 3, 3],
        "provider": ["a", "b", "c"]})
    eur = in_currency(con, frame, "EUR", day_column="day")
    # the 18th at its own rate; Saturday the 21st at Friday's; the 30th: the newest rate is
    # 10 days old (more than 7), so no amount, and the reason
    assert eur["market_usd_per_gpu_hour"].to_list()[:2] == [pytest.approx(2.0), pytest.approx(2.0)]
    assert eur["market_usd_per_gpu_hour"][2] is None
    assert eur["fx_date"].to_list() == [date(2026, 11, 18), date(2026, 11, 20), None]
    assert eur["fx_note"].to_list() == [None, None, no_rate_reason("EUR", date(2026, 11, 30))]
    assert eur["providers"].to_list() == [3, 3, 3]  # counts are not money
    gbp = in_currency(con, frame.head(2), "GBP", day=date(2026, 11, 20))
    # one pound = 1.1690 / 0.8935 USD; the 18th has no GBP rate, but `day` fixes the 20th
    assert gbp["market_usd_per_gpu_hour"][1] == pytest.approx(2.338 * 0.8935 / 1.1690)
    assert gbp["fx_rate"][0] == pytest.approx(1.1690 / 0.8935)
    assert in_currency(con, frame, "USD", day=date(2026, 11, 20)).equals(frame)


# ---- the command line, on the same layout relative to the real clock --------------------------

@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("places") / "w.duckdb"
    con = connect(path)
    try:
        now = datetime.now(UTC)
        build_places(Builder(con), now)
        today = now.date()
        for days_ago in (0, 1):  # a rate for today (the day `cheapest` shows) and yesterday
            add_rate(con, today - timedelta(days=days_ago), "USD", USD_PER_EUR)
            add_rate(con, today - timedelta(days=days_ago), "GBP", GBP_PER_EUR)
    finally:
        con.close()
    return path


def test_cheapest_of_a_geography_and_a_region(warehouse: Path) -> None:
    eu = cli_csv("cheapest", "--gpu", "H100", "--geo", "EU", "-w", str(warehouse))
    assert [(r["provider"], r["region"], float(r["price_usd_per_gpu_hour"])) for r in eu] == [
        ("vastai", "Bavaria, DE", 2.10), ("scaleway", "fr-par-2", 3.00),
        ("lambda", "europe-central-1", 3.19), ("aws", "eu-west-1", 4.40)]
    west = cli_csv("cheapest", "--gpu", "H100", "--region", "eu-west-2", "-w", str(warehouse))
    assert [(r["provider"], r["region"]) for r in west] == [("aws", "eu-west-2")]
    bad = runner.invoke(app, ["cheapest", "--geo", "Atlantis", "-w", str(warehouse)])
    assert bad.exit_code == 2 and "unknown geography Atlantis" in bad.output


def test_market_per_geography_command(warehouse: Path) -> None:
    rows = cli_csv("market", "--gpu", "H100", "--per-geo", "--segment", "all",
                "-w", str(warehouse))
    values = {r["geo"]: r["market_usd_per_gpu_hour"] for r in rows}
    assert float(values["US"]) == pytest.approx(2.99)
    assert float(values["EU"]) == pytest.approx(3.095)
    assert values["UK"] == "" and values["global"] == ""  # withheld: one provider


def test_cheapest_in_euros_at_todays_rate(warehouse: Path) -> None:
    rows = cli_csv("cheapest", "--gpu", "H100", "--geo", "US", "--currency", "eur",
                "-w", str(warehouse))
    first = rows[0]
    assert first["provider"] == "vastai"
    assert float(first["price_eur_per_gpu_hour"]) == pytest.approx(1.80 / USD_PER_EUR)
    assert float(first["fx_rate"]) == pytest.approx(USD_PER_EUR)
    assert first["fx_date"] == datetime.now(UTC).date().isoformat()
    assert "price_usd_per_gpu_hour" not in first
    pounds = cli_csv("cheapest", "--gpu", "H100", "--geo", "US", "--currency", "GBP",
                  "-w", str(warehouse))
    assert float(pounds[0]["price_gbp_per_gpu_hour"]) == pytest.approx(1.80 * GBP_PER_EUR
                                                                 / USD_PER_EUR)
    table = runner.invoke(app, ["cheapest", "--gpu", "H100", "--currency", "EUR",
                                "-w", str(warehouse)])
    assert table.exit_code == 0, table.output
    assert f"1 EUR = {USD_PER_EUR:g} USD, the ECB reference rate of " \
        f"{datetime.now(UTC).date()}" in table.stdout


def test_a_currency_without_rates_or_not_a_code_is_refused(warehouse: Path) -> None:
    jpy = runner.invoke(app, ["cheapest", "--currency", "JPY", "-w", str(warehouse)])
    assert jpy.exit_code == 2 and "no ECB rates for JPY" in jpy.output
    word = runner.invoke(app, ["cheapest", "--currency", "euro", "-w", str(warehouse)])
    assert word.exit_code == 2 and "not an ISO currency code" in word.output


def test_a_day_without_a_rate_is_held_out_with_its_reason(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    con = connect(path)
    try:
        now = datetime.now(UTC)
        build_places(Builder(con), now)
        add_rate(con, now.date() - timedelta(days=10), "USD", USD_PER_EUR)  # too old
    finally:
        con.close()
    result = runner.invoke(app, ["cheapest", "--currency", "EUR", "-w", str(path)])
    assert result.exit_code == 1
    assert no_rate_reason("EUR", now.date()) in result.output


def test_a_series_in_euros_names_each_days_rate_in_its_footnote(
        con: duckdb.DuckDBPyConnection) -> None:
    from gpuprices.money import Money

    add_rate(con, date(2026, 11, 18), "USD", 1.1664)
    add_rate(con, date(2026, 11, 20), "USD", 1.1690)
    money = Money.of("EUR")
    days = [date(2026, 11, 18), date(2026, 11, 21), date(2026, 11, 30)]
    points = money.seen(in_currency(con, pl.DataFrame({"day": days,
                                                       "price_usd_per_gpu_hour": [2.3328] * 3}),
                                    "EUR", day_column="day"), day_column="day")
    assert points["price_usd_per_gpu_hour"].to_list() == [
        pytest.approx(2.0), pytest.approx(2.3328 / 1.1690), None]
    assert money.footnote().splitlines() == [
        "amounts in EUR, each at the ECB rate of the day shown:",
        "  2026-11-18: 1 EUR = 1.1664 USD, the ECB reference rate of 2026-11-18",
        "  2026-11-21: 1 EUR = 1.169 USD, the ECB reference rate of 2026-11-20",
        f"  2026-11-30: {no_rate_reason('EUR', date(2026, 11, 30))} (held out: no amount)"]
    assert money.label("price_usd_per_gpu_hour") == "price_eur_per_gpu_hour"
    assert money.label("market $/GPU-hour") == "market EUR/GPU-hour"


def test_the_python_api_takes_the_same_place_and_currency(warehouse: Path) -> None:
    import gpuprices
    from gpuprices.errors import InputError

    eu = gpuprices.cheapest(gpu="H100", geo="EU", currency="EUR", warehouse=warehouse)
    assert eu["provider"].to_list() == ["vastai", "scaleway", "lambda", "aws"]
    assert eu["price_eur_per_gpu_hour"][0] == pytest.approx(2.10 / USD_PER_EUR)
    assert "price_usd_per_gpu_hour" not in eu.columns and eu["fx_rate"][0] == pytest.approx(
        USD_PER_EUR)
    market = gpuprices.market(gpu="H100", segment="all", per_geo=True, warehouse=warehouse)
    assert dict(zip(market["geo"], market["market_usd_per_gpu_hour"], strict=True))["US"] == \
        pytest.approx(2.99)
    with pytest.raises(InputError, match="unknown geography Atlantis"):
        gpuprices.cheapest(geo="Atlantis", warehouse=warehouse)
    with pytest.raises(InputError, match="no ECB rates for JPY"):
        gpuprices.cheapest(currency="JPY", warehouse=warehouse)


def test_refresh_prints_its_summary_in_euros(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # An offline refresh stores the replayed ECB file's rate for today: the summary's cheapest
    # offers are that rate's EUR, the same figures `summary --currency EUR` prints after it.
    monkeypatch.setenv("GPUPRICES_ARCHIVE", str(tmp_path / "raw"))
    path = str(tmp_path / "w.duckdb")
    result = runner.invoke(app, ["refresh", "--offline", "-s", "lambda", "-s", "scaleway",
                                 "-w", path, "-f", "json", "--currency", "EUR"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout[result.stdout.index("{"):])
    tiers = printed["cheapest_per_tier"]
    assert tiers and all("eur_per_gpu_hour" in row for row in tiers)
    con = connect_read_only(path)
    try:
        row = con.execute("SELECT per_eur FROM fx_rate WHERE currency = 'USD' "
                          "ORDER BY rate_date DESC LIMIT 1").fetchone()
    finally:
        con.close()
    assert row is not None
    again = runner.invoke(app, ["summary", "-w", path, "-f", "json", "--currency", "EUR"])
    assert json.loads(again.stdout)["cheapest_per_tier"] == tiers
    dollars = json.loads(runner.invoke(app, ["summary", "-w", path, "-f", "json"]).stdout)
    for tier, usd in zip(tiers, dollars["cheapest_per_tier"], strict=True):
        assert tier["fx_rate"] == pytest.approx(row[0])
        assert tier["eur_per_gpu_hour"] == pytest.approx(usd["usd_per_gpu_hour"] / row[0])
