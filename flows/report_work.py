"""The weekly report's work as plain functions (no Prefect import, so the CLI starts fast)."""

from __future__ import annotations

import base64
from datetime import datetime
from pathlib import Path

from contract.settings import load_settings
from reports.board import build_board
from reports.weekly.report import WeeklyReport, build_report, report_as_of, write_report
from warehouse.connection import open_warehouse
from warehouse.index.read import one_indicative_day
from warehouse.semantic import Prices

__all__ = ["artifact_markdown", "write_weekly_report"]


def write_weekly_report(week: str | None, out_dir: str | None, warehouse: str | None, *,
                        now: datetime, with_board: bool = False, currency: str | None = None,
                        ) -> tuple[Path, WeeklyReport, Path | None]:
    """Build the report for `week` (default: the week of `now`, so far) and write it, and
    with `with_board` the HTML price board in board/ beside it; returns (report file, report,
    board page or None). `currency`: amounts in it at each day's ECB rate, written beside
    the USD files (`<week>.EUR.md`, board/EUR/), never over them."""
    settings = load_settings(warehouse=warehouse)
    label, as_of = report_as_of(week, now)
    target = Path(out_dir) if out_dir else settings.reports_root
    with open_warehouse(settings.warehouse, read_only=True) as con, one_indicative_day():
        prices = Prices(con, as_of, hold_current=True)  # read once for the report and its
        # board (and a day not fixed yet, before the nightly fixing, computed once for both)
        # the board first: the memory its index files take for a while (~100 MiB at 50 M
        # observations) is then reused by the report, not added on top of it
        board = (build_board(con, target / "board", week=label, as_of=as_of,
                             currency=currency, prices=prices).page if with_board else None)
        report = build_report(con, as_of=as_of, week=label, chart_dir=target,
                              currency=currency, prices=prices)
    return write_report(report, target), report, board


def artifact_markdown(report: WeeklyReport, board: Path | None, board_url: str | None) -> str:
    """The report as a Prefect UI artifact: self-contained, since the UI may run elsewhere.

    Charts are embedded as data: URIs (the file beside the .md is not reachable from a
    browser). The board is linked only through `board_url` (GPUPRICES_BOARD_URL, where the
    board/ folder is served); otherwise its path is named as text, never as a file:// link.
    """
    markdown = report.markdown
    for chart in report.charts:
        data = base64.b64encode(chart.read_bytes()).decode("ascii")
        markdown = markdown.replace(f"]({chart.name})", f"](data:image/png;base64,{data})")
    if board is None:
        return markdown
    if board_url:
        # the board in another currency is served from its folder: board/EUR/<week>.html
        page = board.name if report.currency == "USD" else f"{report.currency}/{board.name}"
        return (f"{markdown}\n[Price board for {report.week}]"
                f"({board_url.rstrip('/')}/{page})\n")
    return (f"{markdown}\nPrice board for {report.week}: `{board.resolve()}` on the machine "
            "that ran this flow (set GPUPRICES_BOARD_URL to where board/ is served to link it "
            "here).\n")
