"""`gpuprices board OUT_DIR`: the static price board (reports.board), no Prefect needed."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from gpuprices.options import CurrencyOpt, WarehouseOpt, fail, read_warehouse

__all__ = ["board", "register"]


def board(
    out_dir: Annotated[Path, typer.Argument(help="folder for the HTML pages (created)")],
    week: Annotated[str | None, typer.Option(help="ISO week, e.g. 2026-W47 (default: this "
                                             "week so far)")] = None,
    currency: CurrencyOpt = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """Write the static price board: <week>.html, and index.html for the latest week.
    --currency EUR: the board in euros, every amount at the ECB rate of its own day, in
    OUT_DIR/EUR/ (never over the USD pages)."""
    from reports.board import build_board
    from reports.weekly.report import NoRateError, report_as_of

    try:
        label, as_of = report_as_of(week, datetime.now(UTC))
    except ValueError as exc:
        raise fail(str(exc), 2) from None
    started = time.perf_counter()
    with read_warehouse(warehouse) as con:
        try:
            built = build_board(con, out_dir, week=label, as_of=as_of, currency=currency)
        except NoRateError as exc:
            raise fail(str(exc)) from None
    shown = built.index or built.page
    typer.echo(f"board: {shown} ({built.bytes_written / 1024:.0f} KiB written, "
               f"{time.perf_counter() - started:.1f} s)")


def register(app: typer.Typer) -> None:
    app.command()(board)
