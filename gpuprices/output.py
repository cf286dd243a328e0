"""Printing rows: a rich table on a terminal, or csv / json for scripts."""

from __future__ import annotations

import sys
from enum import StrEnum

import polars as pl


class Format(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


def print_frame(frame: pl.DataFrame, fmt: Format = Format.table, *, title: str | None = None,
                max_rows: int | None = None) -> None:
    if fmt is Format.csv:
        # CSV has no nested values: a list (e.g. unknown GPU names) becomes "a, b".
        flat = frame.with_columns(
            pl.col(name).cast(pl.List(pl.String)).list.join(", ")
            for name, dtype in frame.schema.items() if isinstance(dtype, pl.List)
        )
        sys.stdout.write(flat.write_csv())
        return
    if fmt is Format.json:
        sys.stdout.write(frame.write_json() + "\n")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for column in frame.columns:
        numeric = frame.schema[column].is_numeric()
        table.add_column(column, justify="right" if numeric else "left", overflow="fold")
    shown = frame if max_rows is None else frame.head(max_rows)
    for row in shown.iter_rows():
        table.add_row(*(_cell(v) for v in row))
    # Piped output (logs, CI) has no terminal width: use a wide one rather than fold every cell.
    console = Console() if sys.stdout.isatty() else Console(width=200)
    console.print(table)
    if max_rows is not None and frame.height > max_rows:
        console.print(f"... {frame.height - max_rows} more rows (use --format csv for all)")


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
