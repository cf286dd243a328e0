"""Printing rows: a rich table on a terminal, or csv / json for scripts.

Names come from provider pages: a control character (ESC starts a terminal escape sequence,
CR overwrites a line), a bidi override or rich markup (`[link=...]`) in one must show as text,
never act on the terminal. `terminal_safe` is the one neutraliser every format goes through.
"""

from __future__ import annotations

import re
import sys
from enum import StrEnum

import polars as pl

__all__ = ["Format", "print_frame", "terminal_safe"]

# C0 controls, DEL, C1 controls (U+009B is CSI on some terminals) and the bidi controls that
# reorder what is shown (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069).
_UNSAFE = "\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
UNSAFE = re.compile(f"[{_UNSAFE}]")


class Format(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """`text` with every control and bidi character written out as an escape (ESC -> \\x1b)."""
    return UNSAFE.sub(_visible, text)


def _safe_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame with terminal_safe applied to every string cell that needs it."""
    columns = [name for name, dtype in frame.schema.items() if dtype == pl.String
               and frame[name].str.contains(f"[{_UNSAFE}]").any()]
    if not columns:
        return frame
    return frame.with_columns(
        pl.col(name).map_elements(terminal_safe, return_dtype=pl.String) for name in columns)


def print_frame(frame: pl.DataFrame, fmt: Format = Format.table, *, title: str | None = None,
                max_rows: int | None = None) -> None:
    if fmt is Format.csv:
        # CSV has no nested values: a list (e.g. unknown GPU names) becomes "a, b".
        flat = frame.with_columns(
            pl.col(name).cast(pl.List(pl.String)).list.join(", ")
            for name, dtype in frame.schema.items() if isinstance(dtype, pl.List)
        )
        sys.stdout.write(_safe_frame(flat).write_csv())
        return
    if fmt is Format.json:
        # JSON escapes C0 itself; the rest become \uXXXX escapes: the same string, decoded.
        text = UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", frame.write_json())
        sys.stdout.write(text + "\n")
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(terminal_safe(title)) if title else None, show_lines=False)
    for column in frame.columns:
        numeric = frame.schema[column].is_numeric()
        table.add_column(Text(terminal_safe(column)), justify="right" if numeric else "left",
                         overflow="fold")
    shown = frame if max_rows is None else frame.head(max_rows)
    for row in shown.iter_rows():
        # Text, not str: rich would read "[link=...]" in a provider's name as markup.
        table.add_row(*(Text(terminal_safe(_cell(v))) for v in row))
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
