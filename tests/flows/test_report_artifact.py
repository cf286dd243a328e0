"""The weekly report artifact renders in the Prefect UI wherever the UI runs: the chart is
embedded, the board is linked by URL or named as text, never as a file:// link."""

from __future__ import annotations

import base64
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from contract.settings import Settings
from flows.refresh_work import run_refresh
from flows.report_work import artifact_markdown, write_weekly_report

IMAGE = re.compile(r"!\[[^\]]*\]\(([^)]*)\)")


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object, Path | None]:
    warehouse = tmp_path_factory.mktemp("report") / "wh" / "gpu_prices.duckdb"
    run_refresh(Settings(warehouse=warehouse), offline=True)
    # The offline replay stores prices as observed now, so the report is this week's.
    return write_weekly_report(None, None, str(warehouse), now=datetime.now(UTC),
                               with_board=True)


def test_the_chart_is_embedded_and_no_link_points_at_a_local_file(
        written: tuple[Path, object, Path | None]) -> None:
    path, report, board = written
    assert report.charts, "the demo data draws the cheapest-per-day chart"  # type: ignore[attr-defined]
    chart = report.charts[0]  # type: ignore[attr-defined]
    on_disk = path.read_text(encoding="utf-8")
    assert f"]({chart.name})" in on_disk, "the .md file keeps its relative chart (it sits beside)"

    markdown = artifact_markdown(report, board, None)  # type: ignore[arg-type]
    images = IMAGE.findall(markdown)
    assert images == ["data:image/png;base64," + base64.b64encode(chart.read_bytes()).decode()]
    assert "file:" not in markdown
    assert board is not None
    week = report.week  # type: ignore[attr-defined]
    assert f"Price board for {week}: `{board}` on the machine that ran this flow" in markdown
    assert "](" not in markdown.split(f"Price board for {week}")[-1], "named, not linked"


def test_the_board_is_linked_through_its_published_url(
        written: tuple[Path, object, Path | None]) -> None:
    _, report, board = written
    markdown = artifact_markdown(report, board, "https://gpu.example/board/")  # type: ignore[arg-type]
    week = report.week  # type: ignore[attr-defined]
    assert markdown.endswith(f"[Price board for {week}](https://gpu.example/board/{week}.html)\n")
    without = artifact_markdown(report, None, "https://gpu.example/board")  # type: ignore[arg-type]
    assert "Price board" not in without and "data:image/png;base64," in without


def test_the_board_in_euros_is_linked_in_its_folder() -> None:
    from reports.weekly.report import WeeklyReport

    report = WeeklyReport(week="2026-W47", as_of=datetime(2026, 11, 20, tzinfo=UTC),
                          markdown="# GPU prices: week 2026-W47 (in EUR)\n", currency="EUR")
    page = Path("reports") / "board" / "EUR" / "2026-W47.html"
    markdown = artifact_markdown(report, page, "https://gpu.example/board/")
    assert markdown.endswith("[Price board for 2026-W47]"
                             "(https://gpu.example/board/EUR/2026-W47.html)\n")
