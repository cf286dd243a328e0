"""The weekly `weekly_report` flow: build the markdown report, write it, publish it.

Wiring only: the report is reports.weekly's. The clock is read here, once, and passed in.
`write_weekly_report` is the work as a plain function (the CLI calls it directly when no
Prefect API is configured); the flow runs it and publishes the report as an artifact.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from prefect import flow
from prefect.artifacts import create_markdown_artifact

from contract.settings import load_settings
from flows.report_work import artifact_markdown, write_weekly_report
from flows.run_logs import project_logs_to_prefect
from reports.weekly.report import artifact_key, file_stem

__all__ = ["weekly_report", "write_weekly_report"]


@flow(name="weekly-report", log_prints=True)
def weekly_report(week: str | None = None, out_dir: str | None = None,
                  warehouse: str | None = None, currency: str | None = None) -> str:
    """Write data/reports/YYYY-Www.md (+ chart PNGs) and the HTML board in board/ beside it for
    `week` (default: this week so far); `currency`: in that currency, beside the USD files
    (YYYY-Www.EUR.md)."""
    with project_logs_to_prefect():
        path, report, board = write_weekly_report(week, out_dir, warehouse,
                                                  now=datetime.now(UTC), with_board=True,
                                                  currency=currency)
        board_url = load_settings(warehouse=warehouse).board_url
        create_markdown_artifact(key=artifact_key(file_stem(report.week, report.currency)),
                                 markdown=artifact_markdown(report, board, board_url),
                                 description=f"GPU price report {report.week} ({path})")
        print(f"weekly report written to {path}")
    return str(Path(path))
