"""The HTML board in another currency (issue 26): `board --currency EUR` and the EUR board the
report writes, on the hand-made warehouse of test_currency_views (EUR rates 1.10 on
2026-11-12 and 1.25 on 2026-11-20, none near 2026-10-20), with a third RTX 4090 provider so
the index publishes:

    captured      2026-10-20   2026-11-12   2026-11-20 11:00
    vastai 4090   0.50         0.50         0.50
    runpod 4090   0.80         0.70         0.75
    c 4090        0.90         0.90         0.90
    lambda h100                2.50         2.50
    vastai 3090                0.33

Worked by hand: on the page's day (1.25) lambda's H100 PCIe tile is 2.50 / 1.25 = EUR 2.00 and
the cheapest RTX 4090 is vastai's 0.50 / 1.25 = EUR 0.40; the history points of 2026-11-12 are
at that day's 1.10: vastai 0.50 -> EUR 0.45 (0.4545), the RTX 3090 0.33 -> EUR 0.30; the
points of 2026-10-20 have no rate within 7 days: left out and counted.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from gpuprices.cli import app
from reports.board import build_board
from reports.board.svg import spread_ticks
from reports.weekly.report import NoRateError
from schemas.fx import no_rate_reason
from tests.reports.conftest import NOW, Builder, offer
from tests.reports.test_currency_views import NOW_RATE, WEEK_AGO_RATE, build_two_weeks
from warehouse.connection import connect
from warehouse.index.publish import fix_index
from warehouse.index.store import read_fixings

runner = CliRunner()
OLD = (NOW - timedelta(days=31)).date()  # 2026-10-20: no rate within 7 days
RATE_DAY = (NOW - timedelta(days=8)).date()  # 2026-11-12

TILE = re.compile(r'<article class="tile" data-gpu="([^"]+)" data-usd="([^"]+)"'
                  r'(?: data-eur="([^"]+)")?>(.*?)</article>', re.S)


def build_three_providers(build: Builder) -> None:
    build_two_weeks(build, NOW)
    build.source("c", "c")
    for at in (NOW - timedelta(days=31), NOW - timedelta(days=8), NOW - timedelta(hours=1)):
        build.capture("c", at, [offer("c", "4090", "RTX 4090", 0.90)])
    build.capture("vastai", NOW - timedelta(days=31), [offer("vastai", "4090-a", "RTX 4090",
                                                             0.50)])
    fix_index(build.con, now=NOW)


@pytest.fixture
def three(build: Builder) -> duckdb.DuckDBPyConnection:
    build_three_providers(build)
    return build.con


def _tiles(html: str) -> dict[str, tuple[float, float | None, str]]:
    return {m.group(1): (float(m.group(2)), float(m.group(3)) if m.group(3) else None,
                         m.group(4)) for m in TILE.finditer(html)}


def _body(html: str) -> str:
    """The page without its inline CSS and JS."""
    return re.sub(r"<style>.*?</style>|<script>.*?</script>", "", html, flags=re.S)


def test_the_board_in_euros_converts_each_amount_at_its_own_days_rate(
        three: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    usd = build_board(three, tmp_path, week="2026-W47", as_of=NOW)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    eur = build_board(three, tmp_path, week="2026-W47", as_of=NOW, currency="EUR")
    # its own folder: the USD board and the index files are not touched
    assert eur.page == tmp_path / "EUR" / "2026-W47.html"
    assert eur.index == tmp_path / "EUR" / "index.html"
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before
    assert sorted(p.name for p in (tmp_path / "EUR").iterdir()) == [
        "2026-W47.html", "gpu-index.html", "index.html"]
    html = eur.page.read_text(encoding="utf-8")
    body = _body(html)
    assert "<title>GPU price board in EUR · week 2026-W47</title>" in html
    assert "EUR at the ECB rate of each day" in body
    assert "1 EUR = 1.25 USD (the rate of 2026-11-20)" in body
    assert not re.search(r"\$\s?\d", body)  # no amount left in dollars
    assert "$/GPU" not in body and "EUR/GPU-h" in body
    assert "EUR per GPU-hour" in body and "$ per GPU-hour" not in body  # chart axes
    # tiles at the page's rate: the same tile, its USD amount kept beside
    shown, usd_tiles = _tiles(html), _tiles(usd.page.read_text(encoding="utf-8"))
    assert set(shown) == set(usd_tiles) == {"H100 PCIe", "RTX 4090"}
    for gpu, (dollars, euros, text) in shown.items():
        assert dollars == usd_tiles[gpu][0] and usd_tiles[gpu][1] is None
        assert euros == pytest.approx(dollars / NOW_RATE)
        assert f"EUR {euros:,.2f}<small>" in text
    assert shown["H100 PCIe"][1] == pytest.approx(2.00)
    # the cheapest RTX 4090 everywhere on the page: vastai's EUR 0.40 (matrix, spread, tiers)
    assert "vastai · on-demand · EUR 0.40/GPU-h" in body  # the spread's hover text
    assert re.search(r'data-v="0\.4">EUR 0\.40 on_demand</td>', body)  # the matrix
    # history: each point at its own day's rate; the day with none left out and counted
    assert re.search(r"<td>2026-11-12</td><td>marketplace</td><td class=\"n\" "
                     r"data-v=\"([\d.]+)\">EUR 0\.45</td><td>vastai</td>", body)
    point = re.search(r"<td>2026-11-12</td><td>marketplace</td><td class=\"n\" "
                      r"data-v=\"([\d.]+)\">", body)
    assert point and float(point.group(1)) == pytest.approx(0.50 / WEEK_AGO_RATE)
    assert re.search(r"<td>2026-11-12</td><td>marketplace</td><td class=\"n\" "
                     r"data-v=\"0\.(?:3|29{5,}\d*|30{5,}\d*)\">EUR 0\.30</td><td>vastai</td>"
                     r"<td>gone</td>", body)  # 0.33 / 1.10
    assert "<td>2026-10-20</td>" not in body
    held = re.search(r'id="held-days">(.*?)</p>', body)
    assert held and "1 day (2026-10-20)" in held.group(1)
    assert no_rate_reason("EUR", OLD) in held.group(1)
    assert "marketplace: EUR 0.40/GPU-h on 2026-11-20" in body  # the line end's hover


def test_the_index_page_in_euros_at_each_days_rate(three: duckdb.DuckDBPyConnection,
                                                   tmp_path: Path) -> None:
    build_board(three, tmp_path, week="2026-W47", as_of=NOW, currency="EUR")
    page = _body((tmp_path / "EUR" / "gpu-index.html").read_text(encoding="utf-8"))
    fixings = read_fixings(three, until=NOW.date())
    main = fixings.filter((pl.col("gpu_model") == "RTX 4090") & (pl.col("kind") == "on_demand")
                          & (pl.col("segment") == "all") & (pl.col("geo") == "all")
                          & pl.col("value").is_not_null())
    values = dict(zip(main["day"], main["value"], strict=True))
    # the middle of the three providers' prices: 0.80 (runpod) on the 20th of October (no
    # rate), 0.70 on 2026-11-12 (rate 1.10), 0.75 on 2026-11-20 (rate 1.25)
    assert values == pytest.approx({OLD: 0.80, RATE_DAY: 0.70, NOW.date(): 0.75})
    # the last day at its rate, in the heading; the week-ago day at its own, in the table
    assert "RTX 4090: EUR 0.6000 /GPU-h" in page
    cell = re.search(rf"<td>{RATE_DAY}</td><td class=\"n\" data-v=\"([\d.e-]+)\">EUR 0.6364<",
                     page)
    assert cell and float(cell.group(1)) == pytest.approx(0.70 / WEEK_AGO_RATE)
    # published days with no rate within 7 days: left out, counted
    held = sorted({d for d in fixings.filter(pl.col("value").is_not_null())["day"]
                   if d < RATE_DAY})
    assert held, "the layout publishes days before the first rate"
    for d in held:
        assert f"<td>{d}</td><td class=\"n\"" not in page
    assert f"Left out of the charts: {len(held)} day" in page
    assert "The index is fixed and published in USD" in page
    assert not re.search(r"\$\s?\d", page)
    assert "gpu-index.json" not in page  # the files are the USD board's


def test_a_board_whose_day_has_no_rate_is_not_written(three: duckdb.DuckDBPyConnection,
                                                      tmp_path: Path) -> None:
    with pytest.raises(NoRateError, match=no_rate_reason("GBP", NOW.date())):
        build_board(three, tmp_path, week="2026-W47", as_of=NOW, currency="GBP")
    assert not tmp_path.joinpath("GBP").exists()


def test_a_lone_price_on_a_tick_still_gets_a_scale() -> None:
    # EUR 2.00 alone (USD 2.50 at 1.25) once gave one tick and a division by zero
    assert spread_ticks(2.0, 2.0) == [2.0, 3.0]


def test_the_board_command_in_euros(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    con = connect(path)
    try:
        build_three_providers(Builder(con))
    finally:
        con.close()
    # the real clock: NOW's week is in the past, so ask for it
    result = runner.invoke(app, ["board", str(tmp_path / "site"), "--week", "2026-W47",
                                 "--currency", "EUR", "-w", str(path)])
    assert result.exit_code == 0, result.output
    assert f"board: {tmp_path / 'site' / 'EUR' / 'index.html'}" in result.stdout
    assert not (tmp_path / "site" / "index.html").exists()
    bad = runner.invoke(app, ["board", str(tmp_path / "site"), "--week", "2026-W47",
                              "--currency", "GBP", "-w", str(path)])
    assert bad.exit_code == 1
    assert "no board in GBP: no GBP rate within 7 days of 2026-11-" in bad.output
