"""Availability as a series (issue 26): a warehouse where offers go out of stock for three days,
and every answer worked out by hand.

Daily runs at `now - k days` for k = 9 .. 0 (ten runs of each source):
- lambda H100 SXM us-east-1 $2.99: in stock for k >= 3; for k = 2, 1, 0 the region is no longer
  listed (Lambda's API lists the regions with capacity only). us-west-1 $3.29: always in stock.
- lambda A100 80GB us-east-1: in stock for k >= 1; at k = 0 sold out everywhere: one `global`
  row, available = false (what Lambda's parser writes when no region has capacity).
- runpod H100 SXM global $2.49: in stock every run, RunPod's level `high`, `low` at k = 0.
- vastai H100 SXM "Texas, US" $1.80: available for k >= 3, rented (available = false) after.
- voltagepark H100 SXM global, a node of 8 at $2.20/GPU: 24 GPUs free, 8 at k = 0 (low).
- coreweave H100 SXM global $2.20: no availability given (a price page).

The 7-day window holds the runs k = 6 .. 0 (seven runs; k = 7 is exactly 7 days old, outside).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from gpuprices.cli import app
from tests.reports.conftest import NOW, Builder, cli_csv, offer
from warehouse.connection import connect, connect_read_only
from warehouse.place import Place
from warehouse.semantic import Prices
from warehouse.semantic_stock import availability, hard_to_get

runner = CliRunner()
DAYS = range(9, -1, -1)  # k: runs from 9 days ago to now


def _offers(k: int) -> dict[str, list[dict[str, object]]]:
    lambda_rows = [offer("lambda", "gpu_1x_h100_west", "H100 SXM", 3.29, region="us-west-1")]
    if k >= 3:
        lambda_rows.append(offer("lambda", "gpu_1x_h100_sxm5", "H100 SXM", 2.99,
                                 region="us-east-1"))
    if k >= 1:
        lambda_rows.append(offer("lambda", "gpu_1x_a100_sxm4", "A100 80GB", 1.29,
                                 region="us-east-1"))
    else:
        lambda_rows.append(offer("lambda", "gpu_1x_a100_sxm4", "A100 80GB", 1.29,
                                 region="global", available=False))
    return {
        "lambda": lambda_rows,
        "runpod": [{**offer("runpod", "NVIDIA H100 80GB HBM3", "H100 SXM", 2.49,
                            region="global"), "stock_level": "low" if k == 0 else "high"}],
        "vastai": [offer("vastai", "31337", "H100 SXM", 1.80, region="Texas, US",
                         available=k >= 3)],
        "voltagepark": [{**offer("voltagepark", "h100 x8 @ a1", "H100 SXM", 17.60, count=8,
                                 region="global"), "gpus_available": 8.0 if k == 0 else 24.0}],
        "coreweave": [offer("coreweave", "HGX H100", "H100 SXM", 2.20, region="global",
                            available=None)],
    }


def build_stock(build: Builder, now: datetime) -> None:
    for name in ("lambda", "runpod", "vastai", "voltagepark", "coreweave"):
        build.source(name, name)
    for k in DAYS:
        for source, rows in _offers(k).items():
            build.capture(source, now - timedelta(days=k), rows, run_id=f"night-{k}")


@pytest.fixture
def stock(build: Builder) -> duckdb.DuckDBPyConnection:
    build_stock(build, NOW)
    return build.con


def _series(con: duckdb.DuckDBPyConnection, days: int = 7, **kwargs: object) -> dict:
    frame = availability(con, as_of=NOW, since=NOW - timedelta(days=days), **kwargs)
    return {(r["gpu_model"], r["provider"], r["region"]): r for r in frame.to_dicts()}


def test_share_in_stock_last_seen_and_state_now(stock: duckdb.DuckDBPyConnection) -> None:
    rows = _series(stock, gpu_models=["H100 SXM"])
    east = rows[("H100 SXM", "lambda", "us-east-1")]
    # k = 6, 5, 4, 3 in stock; 2, 1, 0 not listed: 4 of 7, last in stock 3 days ago
    assert (east["observations"], east["in_stock_observations"]) == (7, 4)
    assert east["share_in_stock"] == pytest.approx(4 / 7, abs=1e-4)
    assert east["last_in_stock"] == NOW - timedelta(days=3)
    assert east["state"] == "out_of_stock"
    west = rows[("H100 SXM", "lambda", "us-west-1")]
    assert (west["in_stock_observations"], west["share_in_stock"]) == (7, 1.0)
    assert (west["last_in_stock"], west["state"]) == (NOW, "available")
    vast = rows[("H100 SXM", "vastai", "Texas, US")]  # listed but rented for three runs
    assert (vast["in_stock_observations"], vast["observations"]) == (4, 7)
    assert (vast["last_in_stock"], vast["state"]) == (NOW - timedelta(days=3), "out_of_stock")
    runpod = rows[("H100 SXM", "runpod", "global")]
    assert (runpod["share_in_stock"], runpod["state"]) == (1.0, "low")  # RunPod says Low
    volt = rows[("H100 SXM", "voltagepark", "global")]
    assert (volt["state"], volt["gpus_free"]) == ("low", 8.0)  # 8 GPUs free: one node
    assert ("H100 SXM", "coreweave", "global") not in rows  # says nothing of its stock


def test_a_shorter_window_counts_fewer_runs_and_last_seen_stays(
        stock: duckdb.DuckDBPyConnection) -> None:
    east = _series(stock, days=3, gpu_models=["H100 SXM"])[("H100 SXM", "lambda", "us-east-1")]
    # runs k = 2, 1, 0, all without the region; the last time in stock is older than that
    assert (east["observations"], east["in_stock_observations"], east["share_in_stock"]) == \
        (3, 0, 0.0)
    assert east["last_in_stock"] == NOW - timedelta(days=3)


def test_a_global_row_sold_out_is_no_region_of_its_own(stock: duckdb.DuckDBPyConnection
                                                       ) -> None:
    rows = _series(stock, gpu_models=["A100 80GB"])
    assert list(rows) == [("A100 80GB", "lambda", "us-east-1")]
    a100 = rows[("A100 80GB", "lambda", "us-east-1")]
    assert (a100["in_stock_observations"], a100["observations"], a100["state"]) == \
        (6, 7, "out_of_stock")


def test_a_global_row_is_a_key_where_the_source_names_no_region(build: Builder) -> None:
    """Only a source that names regions for a GPU says "no region has it" with a sold-out
    `global` row; where `global` is the only row it ever lists, it is the key, at 0 %."""
    build_stock(build, NOW)
    for k in DAYS:
        build.capture("runpod", NOW - timedelta(days=k),
                      [offer("runpod", "NVIDIA A40", "A40", 0.44, region="global",
                             available=False)], run_id=f"a40-{k}")
    a40 = _series(build.con, gpu_models=["A40"])
    assert list(a40) == [("A40", "runpod", "global")]
    row = a40[("A40", "runpod", "global")]
    assert (row["observations"], row["in_stock_observations"], row["share_in_stock"]) == \
        (7, 0, 0.0)
    assert (row["last_in_stock"], row["state"]) == (None, "out_of_stock")


def test_a_stale_source_has_no_state_now(stock: duckdb.DuckDBPyConnection) -> None:
    later = NOW + timedelta(days=3)  # no run since NOW: 72 h > the 48 h freshness limit
    frame = availability(stock, as_of=later, since=later - timedelta(days=7),
                         gpu_models=["H100 SXM"])
    assert set(frame["state"]) == {"unknown"}


def test_region_and_geography_filters(stock: duckdb.DuckDBPyConnection) -> None:
    us = _series(stock, gpu_models=["H100 SXM"], place=Place.of(geos=["US"]))
    assert sorted(key[1:] for key in us) == [("lambda", "us-east-1"), ("lambda", "us-west-1"),
                                             ("vastai", "Texas, US")]
    west = _series(stock, gpu_models=["H100 SXM"], place=Place.of(regions=["US-WEST-1"]))
    assert list(west) == [("H100 SXM", "lambda", "us-west-1")]


def test_hard_to_get(stock: duckdb.DuckDBPyConnection) -> None:
    hard = hard_to_get(availability(stock, as_of=NOW, since=NOW - timedelta(days=7)))
    assert [(r["provider"], r["region"], r["state"]) for r in hard.to_dicts()] == [
        ("lambda", "us-east-1", "out_of_stock"), ("vastai", "Texas, US", "out_of_stock"),
        ("lambda", "us-east-1", "out_of_stock"), ("runpod", "global", "low"),
        ("voltagepark", "global", "low")]


def test_offers_carry_their_stock_state(stock: duckdb.DuckDBPyConnection) -> None:
    offers = Prices(stock, NOW).offers().filter(pl.col("excluded").is_null())
    states = dict(zip(offers["provider"], offers["stock"], strict=False))
    assert states["runpod"] == "low" and states["voltagepark"] == "low"
    assert states["coreweave"] == "unknown"


@pytest.mark.parametrize(("available", "level", "free", "state"), [
    (None, None, None, "unknown"), (None, "low", 2.0, "unknown"),
    (False, None, None, "out_of_stock"), (False, "high", 100.0, "out_of_stock"),
    (True, None, None, "available"), (True, "high", None, "available"),
    (True, "low", None, "low"), (True, None, 8.0, "low"), (True, None, 9.0, "available"),
    (True, "medium", 0.0, "low"),
])
def test_the_stock_state_rule(con: duckdb.DuckDBPyConnection, available: bool | None,
                              level: str | None, free: float | None, state: str) -> None:
    row = con.execute("SELECT stock_state(?::BOOLEAN, ?::VARCHAR, ?::DOUBLE)",
                      [available, level, free]).fetchone()
    assert row == (state,)


# ---- the command line, on the same layout relative to the real clock --------------------------

def _land(path: Path) -> None:
    con = connect(path)
    try:
        build_stock(Builder(con), datetime.now(UTC) - timedelta(hours=3))
    finally:
        con.close()


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stock") / "w.duckdb"
    _land(path)
    return path


def test_availability_command(warehouse: Path) -> None:
    rows = cli_csv("availability", "H100", "-w", str(warehouse))
    east = next(r for r in rows if r["provider"] == "lambda" and r["region"] == "us-east-1")
    assert (east["gpu_model"], east["observations"], east["in_stock_observations"],
            east["state"], east["geo"]) == ("H100 SXM", "7", "4", "out_of_stock", "US")
    assert float(east["share_in_stock"]) == pytest.approx(0.5714)
    result = runner.invoke(app, ["availability", "H100", "-w", str(warehouse)])
    assert result.exit_code == 0 and "4/7" in result.stdout
    assert "quoted now without stock information: coreweave" in result.output
    eu = runner.invoke(app, ["availability", "H100", "--geo", "EU", "-w", str(warehouse)])
    assert eu.exit_code == 1 and "no source reported H100 stock" in eu.output
    bad = runner.invoke(app, ["availability", "H100", "--geo", "Mars", "-w", str(warehouse)])
    assert bad.exit_code == 2 and "unknown geography Mars" in bad.output


def test_cheapest_in_stock(warehouse: Path) -> None:
    every = cli_csv("cheapest", "--gpu", "H100", "-w", str(warehouse))
    # coreweave's $2.20 says nothing of its stock: the cheapest, but not in stock for sure
    assert [(r["provider"], r["stock"]) for r in every[:3]] == [
        ("coreweave", "unknown"), ("voltagepark", "low"), ("runpod", "low")]
    in_stock = cli_csv("cheapest", "--gpu", "H100", "--in-stock", "-w", str(warehouse))
    assert [(r["provider"], r["price_usd_per_gpu_hour"], r["stock"]) for r in in_stock] == [
        ("voltagepark", "2.2", "low"), ("runpod", "2.49", "low"),
        ("lambda", "3.29", "available")]


def test_the_report_lists_what_is_hard_to_get(warehouse: Path) -> None:
    con = connect_read_only(warehouse)
    try:
        from reports.market.stock import hard_to_get_section

        text = hard_to_get_section(con, datetime.now(UTC))
    finally:
        con.close()
    assert "| H100 SXM | lambda | us-east-1 | 57% of 7 |" in text
    assert "| H100 SXM | runpod | global | 100% of 7 |" in text and "| low |" in text


def test_the_board_shows_the_stock_state_beside_prices(stock: duckdb.DuckDBPyConnection,
                                                       tmp_path: Path) -> None:
    from reports.board import build_board

    html = build_board(stock, tmp_path, week="2026-W47", as_of=NOW).page.read_text(
        encoding="utf-8")
    tiers = re.search(r'<table[^>]*id="tiers-table".*?</table>', html, re.S)
    assert tiers is not None
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row)
            for row in re.findall(r"<tr><td>.*?</tr>", tiers.group(0), re.S)]
    # provider, $/GPU-h, stock: the state the offers carry (Prices.offers' `stock`)
    assert [(r[3], r[7], r[9]) for r in rows] == [
        ("coreweave", "$2.20", "?"), ("voltagepark", "$2.20", "low"),
        ("runpod", "$2.49", "low"), ("lambda", "$3.29", "available")]


def test_last_in_stock_long_before_the_runs_read_is_still_found(build: Builder) -> None:
    """Only the window's runs and the KEY_LOOKBACK_DAYS before it are read; a key rented out
    since then still shows when it was last in stock, and one never in stock shows none."""
    build.source("vastai", "vastai")
    for k in (75, 60, 45, 20, 3, 2, 1, 0):
        build.capture("vastai", NOW - timedelta(days=k), [
            offer("vastai", "31337", "H100 SXM", 1.80, region="Texas, US", available=k >= 60),
            offer("vastai", "4242", "H100 SXM", 1.95, region="Quebec, CA", available=False),
            # another pricing kind of the same key, in stock later: it does not count
            {**offer("vastai", "31337-r", "H100 SXM", 1.20, region="Texas, US",
                     available=k >= 45), "pricing": "reserved"},
        ], run_id=f"night-{k}")
    rows = _series(build.con, gpu_models=["H100 SXM"])
    texas = rows[("H100 SXM", "vastai", "Texas, US")]
    assert (texas["observations"], texas["in_stock_observations"]) == (4, 0)
    assert (texas["last_in_stock"], texas["state"]) == (NOW - timedelta(days=60),
                                                        "out_of_stock")
    quebec = rows[("H100 SXM", "vastai", "Quebec, CA")]
    assert (quebec["last_in_stock"], quebec["state"]) == (None, "out_of_stock")


def test_a_capture_seen_again_counts_at_each_run_that_saw_it(build: Builder) -> None:
    """A run that fetched a stored capture again (unchanged) is a run of that capture: before
    the window it can be the last time in stock, inside it each such run is counted."""
    build.source("vastai", "vastai")

    def night(k: int, available: bool) -> None:
        build.capture("vastai", NOW - timedelta(days=k), [
            offer("vastai", "31337", "H100 SXM", 1.80, region="Texas, US",
                  available=available)], run_id=f"night-{k}")

    night(20, True)
    build.confirm("vastai", NOW - timedelta(days=12), build.last_capture_id)  # still in stock
    night(9, False)
    night(4, True)
    build.confirm("vastai", NOW - timedelta(days=2), build.last_capture_id)
    night(1, False)
    texas = _series(build.con, gpu_models=["H100 SXM"])[("H100 SXM", "vastai", "Texas, US")]
    # window runs: k = 4 (in stock), 2 (the same capture again: in stock), 1 (rented out)
    assert (texas["observations"], texas["in_stock_observations"]) == (3, 2)
    assert texas["last_in_stock"] == NOW - timedelta(days=2)
    longer = _series(build.con, days=10, gpu_models=["H100 SXM"])  # k = 9, 4, 2, 1
    texas = longer[("H100 SXM", "vastai", "Texas, US")]
    assert (texas["observations"], texas["in_stock_observations"]) == (4, 2)
    early = availability(build.con, as_of=NOW - timedelta(days=5),
                         since=NOW - timedelta(days=7))  # window: k = 6 .. 5: no run
    assert early.height == 0
    rented = availability(build.con, as_of=NOW - timedelta(days=8),
                          since=NOW - timedelta(days=10)).to_dicts()  # window: k = 9 only
    assert [(r["observations"], r["in_stock_observations"], r["last_in_stock"])
            for r in rented] == [(1, 0, NOW - timedelta(days=12))]  # the run seen again
