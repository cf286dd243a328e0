"""`--currency` on the report, `explain` and `index`, and the MCP tools' place and currency
(issue 26): a hand-made warehouse with a EUR rate on two days, every amount worked by hand.

Rates (USD per euro, as the ECB quotes them): 1.10 on 2026-11-12, 1.25 on 2026-11-20.

    captured 2026-11-12 12:00 (week ago)      captured 2026-11-20 11:00 (now)
    vastai 4090-a  RTX 4090   0.50            vastai 4090-a  RTX 4090   0.50
    vastai gone    RTX 3090   0.33            lambda h100    H100 PCIe  2.50
    lambda h100    H100 PCIe  2.50            runpod 4090    RTX 4090   0.75
    runpod 4090    RTX 4090   0.70

The report of 2026-11-20 (week 2026-W47): the cheapest RTX 4090 is vastai's 0.50 USD =
0.50 / 1.25 = EUR 0.40 at the rate of the 20th; the offering that vanished (vastai's RTX 3090 at
0.33) was last quoted on the 13th (the week-ago day), whose rate is the 12th's: 0.33 / 1.10 =
EUR 0.30. A capture on 2026-10-20 gives the chart a day with no rate within 7 days: held out.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from gpuprices.cli import app
from reports.market.explain import explain_cheapest
from reports.weekly.report import NoRateError, build_report, write_report
from schemas.fx import no_rate_reason
from tests.reports.conftest import NOW, Builder, cli_csv, offer, same_day
from tests.reports.test_place_currency import add_rate
from warehouse.connection import connect
from warehouse.fx import unit_of
from warehouse.semantic import Prices

runner = CliRunner()
WEEK_AGO_RATE, NOW_RATE = 1.10, 1.25


def build_two_weeks(build: Builder, now: datetime) -> None:
    for name in ("vastai", "lambda", "runpod"):
        build.source(name, name)
    week_ago = now - timedelta(days=8)
    build.capture("runpod", now - timedelta(days=31), [
        offer("runpod", "4090", "RTX 4090", 0.80)])
    build.capture("vastai", week_ago, [offer("vastai", "4090-a", "RTX 4090", 0.50),
                                       offer("vastai", "gone", "RTX 3090", 0.33)])
    build.capture("lambda", week_ago, [offer("lambda", "h100", "H100 PCIe", 2.50)])
    build.capture("runpod", week_ago, [offer("runpod", "4090", "RTX 4090", 0.70)])
    at = same_day(now - timedelta(hours=1), now)
    build.capture("vastai", at, [offer("vastai", "4090-a", "RTX 4090", 0.50)])
    build.capture("lambda", at, [offer("lambda", "h100", "H100 PCIe", 2.50)])
    build.capture("runpod", at, [offer("runpod", "4090", "RTX 4090", 0.75)])
    add_rate(build.con, (now - timedelta(days=8)).date(), "USD", WEEK_AGO_RATE)
    add_rate(build.con, now.date(), "USD", NOW_RATE)


@pytest.fixture
def two_weeks(build: Builder) -> duckdb.DuckDBPyConnection:
    build_two_weeks(build, NOW)
    return build.con


# The report's first row of the 24 GB tier ranking, up to its price cell.
RANKED_4090 = "| 1 | RTX 4090 | vastai | 4090-a | us | on_demand |"


def test_the_report_in_euros_converts_each_amount_at_its_own_days_rate(
        two_weeks: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    report = build_report(two_weeks, as_of=NOW, chart_dir=tmp_path, currency="EUR")
    text = report.markdown
    assert text.startswith("# GPU prices: week 2026-W47 (in EUR)")
    assert "EUR at the ECB rate of each day" in text
    assert "1 EUR = 1.25 USD (the rate of 2026-11-20)" in text
    # what stands now: the 20th's rate; the vanished offering: the week-ago day's
    assert f"{RANKED_4090} EUR 0.40 |" in text  # the cheapest of its tier
    assert "| vastai | gone | us | on_demand | RTX 3090 | EUR 0.30 |" in text  # vanished
    assert "Vanished offerings at the rate of 2026-11-13: 1 EUR = 1.1 USD (of 2026-11-12)" \
        in text
    assert "EUR/GPU-h" in text and "$/GPU-h" not in text
    assert not re.search(r"\$\s?\d", text)  # no amount left in dollars
    # the chart's days without a rate within 7 days are held out, and said
    assert "Held out of the chart:" in text
    assert no_rate_reason("EUR", date(2026, 10, 20)) in text
    assert [p.name for p in report.charts] == ["2026-W47.EUR-cheapest.png"]
    # the EUR report is written beside the USD one, never over it
    usd = build_report(two_weeks, as_of=NOW, chart_dir=tmp_path)
    assert f"{RANKED_4090} $0.50 |" in usd.markdown
    paths = {write_report(usd, tmp_path).name, write_report(report, tmp_path).name}
    assert paths == {"2026-W47.md", "2026-W47.EUR.md"}
    assert (tmp_path / "2026-W47-cheapest.png").exists()


def test_a_report_whose_day_has_no_rate_is_not_written(
        two_weeks: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    charts = tmp_path / "charts"
    with pytest.raises(NoRateError, match=no_rate_reason("GBP", NOW.date())):
        build_report(two_weeks, as_of=NOW, chart_dir=charts, currency="GBP")
    assert not charts.exists()  # nothing half-written


def test_explain_in_euros_keeps_the_arithmetic_at_one_days_rate(
        two_weeks: duckdb.DuckDBPyConnection) -> None:
    unit = unit_of(two_weeks, "EUR", NOW.date())
    lines = explain_cheapest(Prices(two_weeks, NOW), ["RTX 4090"], unit=unit)
    # vastai 0.50 USD/h for one GPU at 1.25 USD per euro
    assert "answer: vastai 4090-a (us, on_demand) [RTX 4090]: EUR 0.4000/h / 1 GPU = " \
        "EUR 0.4000/GPU-h" in lines
    week_ago = unit_of(two_weeks, "EUR", date(2026, 11, 13))
    assert (week_ago.usd_per_unit, week_ago.rate_date) == (WEEK_AGO_RATE, date(2026, 11, 12))
    then = explain_cheapest(Prices(two_weeks, NOW - timedelta(days=7)), ["RTX 3090"],
                            unit=week_ago)
    assert any("EUR 0.3000/GPU-h" in line for line in then)
    none = unit_of(two_weeks, "EUR", date(2026, 10, 20))
    assert none.usd_per_unit is None and none.note == no_rate_reason("EUR", date(2026, 10, 20))
    assert none.amount(0.5) is None


# ---- the command line, on the same layout relative to the real clock --------------------------

@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("two_weeks") / "w.duckdb"
    con = connect(path)
    try:
        build_two_weeks(Builder(con), datetime.now(UTC))
    finally:
        con.close()
    return path


def test_the_report_and_board_in_euros_match_cheapest_in_euros(warehouse: Path,
                                                               tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", "--currency", "EUR", "--out", str(tmp_path),
                                 "-w", str(warehouse)])
    assert result.exit_code == 0, result.output
    [written] = list(tmp_path.glob("*.EUR.md"))
    assert not list(tmp_path.glob("20??-W??.md"))  # the USD report is not written over
    board = tmp_path / "board" / "EUR" / "index.html"
    assert f"board: {board.parent / written.name.replace('.EUR.md', '.html')}" in result.stdout
    assert not (tmp_path / "board" / "index.html").exists()  # nor the USD board
    cheapest = cli_csv("cheapest", "--gpu", "RTX 4090", "--currency", "EUR", "-w", str(warehouse))
    first = cheapest[0]
    assert first["provider"] == "vastai"
    euros = float(first["price_eur_per_gpu_hour"])
    assert euros == pytest.approx(0.50 / NOW_RATE)
    shown = f"EUR {euros:.2f}"
    assert f"{RANKED_4090} {shown} |" in written.read_text()
    # the board's RTX 4090 tile: two providers, no market price: the cheapest offer, the
    # same number
    tile = re.search(r'<article class="tile" data-gpu="RTX 4090" data-usd="([^"]+)" '
                     r'data-eur="([^"]+)">(.*?)</article>', board.read_text(encoding="utf-8"),
                     re.S)
    assert tile and float(tile.group(2)) == pytest.approx(euros)
    assert f"{shown}<small>" in tile.group(3) and "cheapest at vastai" in tile.group(3)


def test_the_report_command_holds_out_a_day_without_a_rate(warehouse: Path,
                                                           tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", "--currency", "GBP", "--no-board", "--out",
                                 str(tmp_path), "-w", str(warehouse)])
    assert result.exit_code == 1
    assert no_rate_reason("GBP", datetime.now(UTC).date()) in result.output


def test_explain_command_in_euros(warehouse: Path) -> None:
    result = runner.invoke(app, ["explain", "cheapest", "RTX 4090", "--currency", "EUR",
                                 "-w", str(warehouse)])
    assert result.exit_code == 0, result.output
    assert f"1 EUR = {NOW_RATE:g} USD" in result.stdout
    assert "EUR 0.4000/GPU-h" in result.stdout and "$0.5" not in result.stdout
    week_ago = (datetime.now(UTC) - timedelta(days=7)).date()
    then = runner.invoke(app, ["explain", "cheapest", "RTX 3090", "--currency", "EUR",
                               "--date", week_ago.isoformat(), "-w", str(warehouse)])
    assert then.exit_code == 0, then.output
    assert "EUR 0.3000/GPU-h" in then.stdout  # the week-ago day's own rate
    old = (datetime.now(UTC) - timedelta(days=31)).date()
    held = runner.invoke(app, ["explain", "cheapest", "RTX 4090", "--currency", "EUR",
                               "--date", old.isoformat(), "-w", str(warehouse)])
    assert held.exit_code == 1 and no_rate_reason("EUR", old) in held.output


def test_index_in_euros_at_the_rate_of_its_day(warehouse: Path) -> None:
    today = datetime.now(UTC).date()
    usd = {r["gpu_model"]: r for r in cli_csv("index", "--gpu", "RTX 4090", "-w", str(warehouse))}
    eur = {r["gpu_model"]: r for r in cli_csv("index", "--gpu", "RTX 4090", "--currency", "EUR",
                                           "-w", str(warehouse))}
    assert usd.keys() == eur.keys() == {"RTX 4090"}
    value = usd["RTX 4090"]["value"]
    if value:  # two providers may be too few for an index: then both are withheld alike
        assert float(eur["RTX 4090"]["value"]) == pytest.approx(float(value) / NOW_RATE)
    else:
        assert eur["RTX 4090"]["value"] == ""
    assert float(eur["RTX 4090"]["fx_rate"]) == pytest.approx(NOW_RATE)
    assert eur["RTX 4090"]["fx_date"] == today.isoformat()
    old = today - timedelta(days=31)
    held = runner.invoke(app, ["index", "--currency", "EUR", "--date", old.isoformat(),
                               "-w", str(warehouse)])
    assert held.exit_code == 1 and no_rate_reason("EUR", old) in held.output


def test_mcp_tools_take_place_and_currency(warehouse: Path) -> None:
    import anyio
    from mcp import Client

    from gpuprices.mcp_server import build_server

    today, week_ago = datetime.now(UTC).date(), (datetime.now(UTC) - timedelta(days=8)).date()

    async def steps() -> tuple[Any, Any, Any]:
        async with Client(build_server(warehouse)) as client:
            tools = (await client.list_tools()).tools
            history = await client.call_tool("history", {"gpu": "RTX 4090", "days": 10,
                                                         "currency": "EUR"})
            changes = await client.call_tool("changes", {
                "since": week_ago.isoformat(), "gpu": "RTX 4090", "currency": "EUR",
                "region": ["us"]})
            return tools, history, changes

    tools, history, changes = anyio.run(steps)
    by_name = {t.name: t for t in tools}
    for name in ("history", "changes", "explain", "cluster_quote", "rent_vs_buy", "vram_fit",
                 "cheapest", "market_price"):
        assert {"region", "geo", "currency"} <= by_name[name].input_schema["properties"].keys()
    assert "pricing" in by_name["availability"].input_schema["properties"]
    assert not history.is_error and not changes.is_error
    by_day = {r["day"]: r for r in history.structured_content["rows"]}
    # each day at its own rate: the week-ago day's 0.50 at 1.10, today's 0.50 at 1.25
    assert by_day[week_ago.isoformat()]["price_eur_per_gpu_hour"] == pytest.approx(
        0.50 / WEEK_AGO_RATE)
    assert by_day[today.isoformat()]["price_eur_per_gpu_hour"] == pytest.approx(
        0.50 / NOW_RATE)
    # runpod's move of today (0.70 -> 0.75), both at today's rate
    moved = [r for r in changes.structured_content["rows"] if r["provider"] == "runpod"]
    assert moved and moved[0]["new_eur_per_gpu_hour"] == pytest.approx(0.75 / NOW_RATE)
    assert moved[0]["old_eur_per_gpu_hour"] == pytest.approx(0.70 / NOW_RATE)
