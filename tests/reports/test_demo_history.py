"""The demo has history: bundled dated snapshots replayed before the offline refresh fill every
report section (week over week, price_change, a chart with lines) whatever day it runs."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contract.settings import load_settings
from flows.backfill import replay_examples
from flows.refresh_work import run_refresh
from gpuprices.cli import app
from reports.charts import chart_series, series_models
from reports.weekly.report import build_report
from scrapers.demo_history import load_snapshots, replay_dates
from scrapers.registry import all_sources
from warehouse.connection import open_warehouse
from warehouse.semantic_history import cheapest_history

DOC = Path(__file__).resolve().parents[2] / "docs" / "history.md"


def demo_warehouse(path: Path, now: datetime) -> None:
    """`backfill examples` then `refresh --offline` (its work, without the alert check), as
    `make demo` runs them today."""
    sources = all_sources()
    settings = load_settings(warehouse=str(path))
    with open_warehouse(path) as con:
        replay_examples(con, sources, archive_root=settings.archive_root, today=now.date())
    run_refresh(settings, offline=True, run_id="offline-refresh")


def section(markdown: str, number: int) -> str:
    return markdown.split(f"## {number}.")[1].split(f"## {number + 1}.")[0]


# Runs are stamped with the wall clock, so the report is built as of today (any weekday: the
# replay dates themselves are checked for other days below).
@pytest.mark.parametrize("now", [datetime.now(UTC)])
def test_every_report_section_fills_whatever_the_day(now: datetime, warehouse_path: Path,
                                                     tmp_path: Path) -> None:
    demo_warehouse(warehouse_path, now)
    now = datetime.now(UTC)  # the offline refresh stamps its prices with the time it ran
    with open_warehouse(warehouse_path) as con:
        report = build_report(con, as_of=now, chart_dir=tmp_path)
        moves = con.execute("SELECT count(*) FROM price_change").fetchone()[0]
        history = cheapest_history(
            con, [m for ms in series_models().values() for m in ms],
            since=now.date() - timedelta(days=90), until=now.date(), per_model=True, now=now)
    assert "**Demo data:**" in report.markdown and "HISTORY.toml" in report.markdown
    week = section(report.markdown, 4)
    assert "need at least a week of history" not in week
    # a market move over enough matched providers, and coverage changes apart
    moved = week.split("(matched providers)")[1].split("###")[0]
    assert re.search(r"^\| A100 80GB \| 3 \| \$\d", moved, re.MULTILINE), moved
    assert "### Coverage changes (not price moves)" in week
    assert moves > 10
    assert report.charts and report.charts[0].stat().st_size > 0
    days_per_series = chart_series(history).group_by("series").len()
    assert days_per_series["len"].max() >= 3  # a line through three days, not a dot


def test_replay_dates_are_weekly_steps_before_today() -> None:
    snapshots = load_snapshots()
    for today in (date(2026, 11, 23), date(2029, 2, 28)):
        placed = replay_dates(snapshots, today)
        lam = sorted((s.as_of, at) for s, at in placed.items() if s.source == "lambda-page")
        start = datetime(today.year, today.month, today.day, tzinfo=UTC)
        assert [at for _, at in lam] == [start - timedelta(days=14), start - timedelta(days=7)]
    assert all(s.file.exists() and s.values_from for s in snapshots)


def test_replay_is_idempotent(warehouse_path: Path) -> None:
    sources = all_sources()
    with open_warehouse(warehouse_path) as con:
        first = replay_examples(con, sources, archive_root=warehouse_path.parent,
                                today=date(2026, 11, 23))
        again = replay_examples(con, sources, archive_root=warehouse_path.parent,
                                today=date(2026, 11, 30))
    assert {r.status for r in first} == {"success"}
    assert {r.status for r in again} == {"already stored"}


def test_history_changes_and_the_documented_queries(warehouse_path: Path) -> None:
    now = datetime.now(UTC)
    demo_warehouse(warehouse_path, now)
    runner = CliRunner()
    wh = str(warehouse_path)
    result = runner.invoke(app, ["history", "H100", "-w", wh, "--format", "csv"])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[0].startswith("day,price_usd_per_gpu_hour,gpu_model,provider,offering,region,"
                               "pricing,source,capture,observed_at")
    assert len(lines) >= 4 and all(re.search(r",[0-9a-f]{12},", ln) for ln in lines[1:])
    since = (now - timedelta(days=30)).date().isoformat()
    result = runner.invoke(app, ["changes", "--since", since, "--gpu", "H100", "-w", wh,
                                 "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert "gpu_8x_h100_sxm5" in result.output and "-14.33" in result.output  # 3.49 -> 2.99
    queries = re.findall(r"```sql\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert len(queries) == 3
    with open_warehouse(warehouse_path, read_only=True) as con:
        for query in queries:
            assert con.execute(query).fetchall(), query


def test_the_moves_since_a_day_are_the_price_move_views_from_that_day(warehouse_path: Path
                                                                      ) -> None:
    """price_moves_since(day) (what `changes` and the alerts read) reads the day on both sides
    of its join; the rows are the price_move view's on and after the day, whatever the day."""
    demo_warehouse(warehouse_path, datetime.now(UTC))
    with open_warehouse(warehouse_path, read_only=True) as con:
        days = [row[0] for row in con.execute(
            "SELECT DISTINCT changed_on FROM price_move ORDER BY 1").fetchall()]
        assert len(days) >= 2
        order = "ORDER BY ALL"
        every = con.execute(f"SELECT * FROM price_move {order}").fetchall()
        for day in [days[0] - timedelta(days=1), *days, days[-1] + timedelta(days=1)]:
            since = con.execute(f"SELECT * FROM price_moves_since($d) {order}",
                                {"d": day}).fetchall()
            assert since == con.execute(f"SELECT * FROM price_move WHERE changed_on >= $d "
                                        f"{order}", {"d": day}).fetchall(), day
            assert since == [r for r in every if r[0] >= day]
