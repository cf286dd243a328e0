"""Every view agrees (issue 21), on generated warehouses: offers that are unavailable or a slice
of a GPU, providers joining and leaving, sources missing days, two sources of one provider.

For every GPU: the cheapest is the same in `cheapest`, the report's tier table, the board,
alerts and the last point of `history`; the market price is the same in `market`, the board
and the report; the week's move is the same on the board, in `market-moves` and the report.
"""

from __future__ import annotations

import csv
import io
import re
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gpuprices.cli import app
from reports.alerts.config import Rule
from reports.alerts.rules import evaluate
from reports.board import build_board
from reports.markdown import money
from reports.weekly.report import build_report, report_as_of
from tests.reports.conftest import Builder, offer
from warehouse.connection import connect, connect_read_only

GPUS = ("H100 SXM", "A100 80GB", "L4")
BASE = {"H100 SXM": 2.5, "A100 80GB": 1.5, "L4": 0.6}
PROVIDERS = ("lambda", "runpod", "vastai", "coreweave", "aws", "nebius")
runner = CliRunner()


@dataclass(frozen=True)
class Capture:
    source: str
    provider: str
    days_ago: int
    offers: tuple[dict[str, object], ...]


@dataclass(frozen=True)
class Offering:
    name: str
    gpu: str
    count: float  # 0.5: a slice of a GPU
    pricing: str


def _offerings(draw: st.DrawFn, tag: str) -> list[Offering]:
    """What a source lists (the same every night; its prices and availability change)."""
    offerings = []
    for gpu in draw(st.lists(st.sampled_from(GPUS), min_size=1, max_size=3, unique=True)):
        for i in range(draw(st.integers(1, 2))):
            offerings.append(Offering(
                f"{tag}-{gpu}-{i}".replace(" ", "_"), gpu,
                draw(st.sampled_from((1.0, 1.0, 2.0, 8.0, 0.5))),
                draw(st.sampled_from(("on_demand", "on_demand", "community", "spot")))))
    return offerings


def _night(draw: st.DrawFn, provider: str, offerings: list[Offering]
           ) -> tuple[dict[str, object], ...]:
    return tuple(offer(provider, o.name, o.gpu,
                       round(BASE[o.gpu] * draw(st.floats(0.6, 1.6)) * o.count, 4),
                       count=o.count, pricing=o.pricing,
                       available=draw(st.sampled_from((True, True, None, False))))
                 for o in offerings)


@st.composite
def warehouses(draw: st.DrawFn) -> tuple[int, list[tuple[str, str, str]], list[Capture]]:
    days = draw(st.integers(8, 10))
    providers = draw(st.lists(st.sampled_from(PROVIDERS), min_size=3, max_size=6, unique=True))
    sources: list[tuple[str, str, str]] = []
    captures: list[Capture] = []
    for provider in providers:
        kinds = ["api", "page"] if draw(st.booleans()) else ["api"]  # two sources of one
        # most providers quote all along; some join late or leave early
        joined = draw(st.sampled_from((days, days, days, draw(st.integers(0, days)))))
        left = draw(st.sampled_from((0, 0, 0, draw(st.integers(0, joined)))))
        for kind in kinds:
            name = f"{provider}-{kind}"
            sources.append((name, provider, kind))
            offerings = _offerings(draw, kind)
            missing = draw(st.sets(st.integers(left, joined), max_size=2))  # nights it fails
            for ago in range(joined, left - 1, -1):
                if ago not in missing:
                    captures.append(Capture(name, provider, ago,
                                            _night(draw, provider, offerings)))
    return days, sources, captures


def _land(path: Path, sources: list[tuple[str, str, str]], captures: list[Capture]) -> None:
    con = connect(path)
    build = Builder(con)
    now = datetime.now(UTC)
    try:
        for name, provider, kind in sources:
            build.source(name, provider, kind=kind)
        # whole days and 3 h before now: no capture sits near the 48 h freshness limit
        for c in sorted(captures, key=lambda c: (-c.days_ago, c.source)):
            at = now - timedelta(days=c.days_ago, hours=3)
            build.capture(c.source, at, list(c.offers), run_id=f"night-{c.days_ago}")
    finally:
        con.close()


def _cli(path: Path, *args: str) -> list[dict[str, str]]:
    result = runner.invoke(app, [*args, "-w", str(path), "--format", "csv"])
    assert result.exit_code in (0, 1), result.output
    if result.exit_code == 1:
        return []
    return list(csv.DictReader(io.StringIO(result.stdout.split("\ngpu_model,provider,")[0])))


def _tier_minimum(markdown: str, gpu: str) -> str | None:
    tiers = markdown.split("## 3.")[1].split("## 4.")[0]
    prices = [float(m.group(1).replace(",", "")) for m in re.finditer(
        rf"^\| \d+ \| {re.escape(gpu)} \| .*? \| \$([\d.,]+) \| \$", tiers, re.M)]
    return money(min(prices)) if prices else None


def _board_tier_minimum(html: str, gpu: str) -> float | None:
    table = html.split('id="tiers-table"')[1].split("</table>")[0]
    prices = [float(v) for v in re.findall(
        rf'<td>{re.escape(gpu)}</td>(?:<td>[^<]*</td>)*?<td class="n" data-v="([^"]+)">',
        table)]
    return min(prices) if prices else None


def _tile(html: str, gpu: str) -> tuple[float, str] | None:
    match = re.search(rf'<article class="tile" data-gpu="{re.escape(gpu)}" data-usd="([^"]+)">'
                      r"(.*?)</article>", html, re.S)
    return (float(match.group(1)), match.group(2)) if match else None


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(warehouses())
def test_every_view_gives_the_same_answer(generated: tuple[int, list, list[Capture]]) -> None:
    _, sources, captures = generated
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "w.duckdb"
        _land(path, sources, captures)
        as_of = datetime.now(UTC)
        con = connect_read_only(path)
        try:
            week, _ = report_as_of(None, as_of)
            report = build_report(con, as_of=as_of, week=week).markdown
            board = build_board(con, Path(tmp) / "board", week=week, as_of=as_of).page \
                .read_text(encoding="utf-8")
            alerts = {gpu: evaluate(con, [Rule(gpu, "cheapest_below", gpu=gpu,
                                               below_usd_per_gpu_hour=1e6)], as_of)
                      for gpu in GPUS}
        finally:
            con.close()
        market = {r["gpu_model"]: r for r in _cli(path, "market", "--segment", "all")}
        moves = {r["gpu_model"]: r for r in _cli(path, "market-moves", "--period", "week")}
        for gpu in GPUS:
            rows = _cli(path, "cheapest", "--gpu", gpu)
            history = _cli(path, "history", gpu)
            if not rows:  # no comparable offer now: no view names one
                assert not alerts[gpu] and _tier_minimum(report, gpu) is None
                assert not history or history[-1]["day"] != as_of.date().isoformat()
                continue
            best = rows[0]
            usd = float(best["price_usd_per_gpu_hour"])
            # never an offer that cannot be rented now, nor a slice shown as a whole GPU
            assert best["available"] != "false" and float(best["gpu_count"]) >= 1
            assert float(history[-1]["price_usd_per_gpu_hour"]) == pytest.approx(usd, abs=1e-4)
            assert history[-1]["day"] == as_of.date().isoformat()
            [event] = alerts[gpu]
            assert f"is {money(usd)}/GPU-h at {best['provider']} {best['offering']}" \
                in event.message
            if (shown := _tier_minimum(report, gpu)) is not None:
                assert shown == money(usd)
            if (on_board := _board_tier_minimum(board, gpu)) is not None:
                assert on_board == usd
            tile = _tile(board, gpu)
            row = market.get(gpu)
            if row and row["market_usd_per_gpu_hour"]:  # published: the same in all 3 views
                value = float(row["market_usd_per_gpu_hour"])
                assert float(row["min_usd_per_gpu_hour"]) == usd  # the lowest counted offer
                section = report.split("## 9.")[1]
                assert f"| {gpu} | {money(value)} | {money(usd)} |" in section
                if tile:
                    assert tile[0] == value and "cheapest at" not in tile[1]
            elif tile:  # withheld: the board names the cheapest offer instead
                assert tile[0] == usd and f"cheapest at {best['provider']}" in tile[1]
            move = moves.get(gpu)
            if move and move["pct_change"]:  # published: one figure on the board and report
                pct = float(move["pct_change"])
                if pct:
                    arrow = "▼" if pct < 0 else "▲"
                    assert f"| {gpu} | {move['matched']} |" in report
                    assert f"| {pct:+.1f}% |" in report.split("(matched providers)")[1]
                    if tile:
                        assert f"{arrow} {abs(pct):.1f}% vs 7 days ago" in tile[1]
                elif tile:
                    assert "± 0% vs 7 days ago" in tile[1]
            elif move:  # withheld: no view prints a move for it
                assert f"| {gpu} | {move['matched']} |" not in report
                if tile:
                    assert f"move withheld: {move['matched']} matched provider" in tile[1]
