"""The weekly report's work as a plain function (no Prefect import, so the CLI starts fast)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from contract.settings import load_settings
from reports.board import build_board
from reports.weekly.report import WeeklyReport, build_report, report_as_of, write_report
from warehouse.connection import open_warehouse

__all__ = ["write_weekly_report"]


def write_weekly_report(week: str | None, out_dir: str | None, warehouse: str | None, *,
                        now: datetime, with_board: bool = False,
                        ) -> tuple[Path, WeeklyReport, Path | None]:
    """Build the report for `week` (default: the week of `now`, so far) and write it, and
    with `with_board` the HTML price board in board/ beside it; returns (report file, report,
    board page or None)."""
    settings = load_settings(warehouse=warehouse)
    label, as_of = report_as_of(week, now)
    target = Path(out_dir) if out_dir else settings.reports_root
    with open_warehouse(settings.warehouse, read_only=True) as con:
        report = build_report(con, as_of=as_of, week=label, chart_dir=target)
        board = (build_board(con, target / "board", week=label, as_of=as_of).page
                 if with_board else None)
    return write_report(report, target), report, board
