"""The assembled report: golden markdown for a fixed warehouse, and the degraded cases."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from reports.weekly.report import artifact_key, build_report, report_as_of, write_report
from tests.reports.conftest import NOW, Builder, offer

GOLDEN = Path(__file__).with_name("golden") / "2026-W47.md"


def test_golden_report_for_a_fixed_warehouse(market: duckdb.DuckDBPyConnection,
                                             tmp_path: Path) -> None:
    report = build_report(market, as_of=NOW, chart_dir=tmp_path)
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(report.markdown, encoding="utf-8")
    assert report.markdown == GOLDEN.read_text(encoding="utf-8")
    assert report.week == "2026-W47"
    [chart] = report.charts
    assert chart == tmp_path / "2026-W47-cheapest.png"
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    path = write_report(report, tmp_path / "out")
    assert path.name == "2026-W47.md"


def test_report_sections_and_stale_marks(market: duckdb.DuckDBPyConnection) -> None:
    text = build_report(market, as_of=NOW).markdown
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == [
        "## 1. Data freshness", "## 2. Comparison matrix (cheapest $/GPU-hour)",
        "## 3. Cheapest GPU per tier", "## 4. Week over week", "## 5. Cost scenarios",
        "## 6. Which GPU fits", "## 7. Rent vs buy", "## 8. Plans and free tiers",
        "## 9. Market price per GPU", "## 10. Price-performance", "## 11. Hard to get"]
    aws = "| aws | aws | api | 2026-11-17 12:00 UTC | 2026-11-17 12:00 UTC | 2 | success | yes † |"
    assert aws in text
    # aws was last seen 72 h before: stale, so none of its prices is compared anywhere
    tables = text.split("## 2.")[1]
    assert not any(line.startswith("| aws |") for line in tables.splitlines())
    assert "$4.10" not in tables and "$0.53" not in tables
    assert "`run-now` (refresh, 2026-11-20 10:00 UTC)" in text
    assert "`run-old`" in text


def test_empty_warehouse_says_what_is_missing(con: duckdb.DuckDBPyConnection,
                                              tmp_path: Path) -> None:
    report = build_report(con, as_of=NOW, chart_dir=tmp_path)
    assert report.charts == [] and not list(tmp_path.glob("*.png"))
    text = report.markdown
    assert "No sources are registered" in text
    assert "No comparable offers in the warehouse." in text
    assert "No offers in this tier." in text
    assert "week-over-week changes need at least a week of history" in text
    assert "No matching offers in the warehouse." in text
    assert "no offer fits" in text
    assert "No run has stored prices yet." in text


def test_failed_and_single_sources(build: Builder) -> None:
    build.source("vastai", "vastai")
    build.source("lambda", "lambda")
    build.capture("vastai", NOW - timedelta(hours=1), [offer("vastai", "a", "RTX 4090", 0.4)])
    build.failure("lambda", NOW - timedelta(hours=1), "run-1", "connect timeout")
    text = build_report(build.con, as_of=NOW).markdown
    assert "**Missing:** no successful refresh yet for lambda." in text
    assert "only one provider has prices (vastai)" in text
    assert "| lambda | lambda | api | never | never | 0 | failed | yes † |" in text
    assert "| **RTX 4090** | $0.40 on_demand |" in text


def test_no_reference_tables(market: duckdb.DuckDBPyConnection) -> None:
    market.execute("DROP TABLE plan")
    market.execute("DROP TABLE gpu_ownership")
    text = build_report(market, as_of=NOW).markdown
    assert "No plans data: this warehouse has no `plan` table yet." in text
    assert "No ownership data" in text
    assert "(No plans data: free tiers and plans are not included.)" in text


def test_report_as_of_a_past_week_uses_that_weeks_prices(
        market: duckdb.DuckDBPyConnection) -> None:
    label, as_of = report_as_of("2026-W46", NOW)
    assert (label, as_of) == ("2026-W46", datetime(2026, 11, 15, 23, 59, 59, 999999, UTC))
    text = build_report(market, as_of=as_of, week=label).markdown
    # Freshness as of that week's end: vastai and lambda were last seen 3.5 days before it
    # (not the later runs that stored this week's prices), so their prices were stale then
    assert "| vastai | vastai | api | 2026-11-12 12:00 UTC | 2026-11-12 12:00 UTC | 4 | " \
        "success | yes † |" in text
    assert "No comparable offers in the warehouse." in text
    assert "`run-now`" not in text
    # two days earlier, they were fresh: the report of that moment compares them
    earlier = build_report(market, as_of=as_of - timedelta(days=2), week=label).markdown
    assert "| **RTX 4090** | – | $0.50 on_demand |" in earlier
    assert report_as_of("2026-W47", NOW) == ("2026-W47", NOW)  # the week is not over yet
    assert report_as_of(None, NOW) == ("2026-W47", NOW)
    with pytest.raises(ValueError):
        report_as_of("last week", NOW)
    assert artifact_key("2026-W47") == "weekly-report-2026-w47"
