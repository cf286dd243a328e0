"""The weekly `weekly_report` flow: build the markdown report, write it, publish it.

Wiring only: the report is reports.weekly's. The clock is read here, once, and passed in.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from prefect import flow
from prefect.artifacts import create_markdown_artifact

from gpuprices.settings import load_settings
from reports.board import build_board
from reports.weekly import artifact_key, build_report, report_as_of, write_report
from warehouse.connection import open_warehouse


@flow(name="weekly-report", log_prints=True)
def weekly_report(week: str | None = None, out_dir: str | None = None,
                  warehouse: str | None = None) -> str:
    """Write data/reports/YYYY-Www.md (+ chart PNGs) and the HTML board in board/ beside it for
    `week` (default: this week so far)."""
    settings = load_settings(warehouse=warehouse)
    label, as_of = report_as_of(week, datetime.now(UTC))
    target = Path(out_dir) if out_dir else settings.reports_root
    with open_warehouse(settings.warehouse, read_only=True) as con:
        report = build_report(con, as_of=as_of, week=label, chart_dir=target)
        board = build_board(con, target / "board", week=label, as_of=as_of).page
    path = write_report(report, target)
    create_markdown_artifact(key=artifact_key(label), markdown=report.markdown
                             + f"\n[Price board for {label}]({board.resolve().as_uri()})\n",
                             description=f"GPU price report {label} ({path})")
    print(f"weekly report written to {path}")
    return str(path)
