"""Printing rows: a table that fits the terminal, or csv / json for scripts.

Scripts can trust stdout: `--format json` prints exactly one JSON document (a command with
several tables prints one object, a key per table), `--format csv` one CSV per table; progress,
notes and logs go to stderr.

A table fits the terminal's width ($COLUMNS, else the terminal's; 200 when stdout is no
terminal): columns are chosen by priority (the first column, then the money columns, then the
rest in order), long text is cut with an ellipsis, never broken mid-word; the columns left out
are named under the table. `--wide` (every command with --format) shows every column whole.

Names come from provider pages: a control character (ESC starts a terminal escape sequence,
CR overwrites a line), a bidi override or rich markup (`[link=...]`) in one must show as text,
never act on the terminal. `terminal_safe` is the one neutraliser every format goes through.
Importing this module is cheap (no polars, no rich): every command imports it. A table of
printable ASCII going to a pipe is written as rich would draw it, without loading rich (rich
draws the rest: a terminal's styles, wide characters); `query` hands it DuckDB's rows
(warehouse.frames.Rows) rather than a polars frame.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from warehouse.frames import Rows

if TYPE_CHECKING:
    import polars as pl

__all__ = ["Format", "Section", "fit_widths", "print_frame", "print_frames", "set_wide",
           "table_width", "terminal_safe"]

# C0 controls, DEL, C1 controls (U+009B is CSI on some terminals) and the bidi controls that
# reorder what is shown (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069).
_UNSAFE = "\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
UNSAFE = re.compile(f"[{_UNSAFE}]")
# Piped output (logs, CI) has no terminal width: a wide one rather than cut every cell.
PIPED_WIDTH = 200
# A text column is cut to this many characters before any column is left out.
TEXT_CAP = 28
_ELLIPSIS = "…"
_TEXT_MIN = 10  # a text column narrower than this says too little to keep
_state = {"wide": False}


class Format(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


Section = tuple[str, str, "pl.DataFrame"]  # (json key, table title, rows)


def set_wide(wide: bool) -> None:
    """`--wide`: tables show every column whole (set once per command by the CLI)."""
    _state["wide"] = bool(wide)


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """`text` with every control and bidi character written out as an escape (ESC -> \\x1b)."""
    return UNSAFE.sub(_visible, text)


def _safe_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """The frame with terminal_safe applied to every string cell that needs it."""
    import polars as pl

    columns = [name for name, dtype in frame.schema.items() if dtype == pl.String
               and frame[name].str.contains(f"[{_UNSAFE}]").any()]
    if not columns:
        return frame
    return frame.with_columns(
        pl.col(name).map_elements(terminal_safe, return_dtype=pl.String) for name in columns)


def _json_text(frame: pl.DataFrame) -> str:
    # JSON escapes C0 itself; the rest become \uXXXX escapes: the same string, decoded.
    return UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", frame.write_json())


def _csv_text(frame: pl.DataFrame) -> str:
    import polars as pl

    # CSV has no nested values: a list (e.g. unknown GPU names) becomes "a, b".
    flat = frame.with_columns(
        pl.col(name).cast(pl.List(pl.String)).list.join(", ")
        for name, dtype in frame.schema.items() if isinstance(dtype, pl.List))
    return _safe_frame(flat).write_csv()


def print_frame(frame: pl.DataFrame | Rows, fmt: Format = Format.table, *, title: str | None = None,
                max_rows: int | None = None, priority: Sequence[str] | None = None) -> None:
    """Print one table: the command's only output (json: one array). Rows (no polars) print
    as a table only."""
    if isinstance(frame, Rows) and fmt is not Format.table:
        raise TypeError("Rows print as a table; csv and json print a polars frame")
    if fmt is Format.csv:
        sys.stdout.write(_csv_text(frame))
    elif fmt is Format.json:
        sys.stdout.write(_json_text(frame) + "\n")
    else:
        _print_table(frame, title, max_rows, priority)


def print_frames(sections: Sequence[Section], fmt: Format = Format.table, *,
                 max_rows: int | None = None) -> None:
    """Print a command's tables: json ONE object {key: rows, ...}; csv one CSV per table, a
    blank line between; a titled table each on a terminal."""
    if fmt is Format.json:
        parts = [f"{json.dumps(key)}: {_json_text(frame)}" for key, _, frame in sections]
        sys.stdout.write("{" + ", ".join(parts) + "}\n")
        return
    for index, (_, title, frame) in enumerate(sections):
        if fmt is Format.csv:
            sys.stdout.write(("\n" if index else "") + _csv_text(frame))
        else:
            _print_table(frame, title, max_rows, None)


def table_width() -> int:
    """Columns a table may use: $COLUMNS, else the terminal's, else PIPED_WIDTH."""
    text = os.environ.get("COLUMNS", "").strip()
    if text.isdigit() and int(text) > 0:
        return int(text)
    if sys.stdout.isatty():
        import shutil

        return shutil.get_terminal_size().columns
    return PIPED_WIDTH


def _span(widths: Sequence[int]) -> int:
    """Columns a rich table with these column widths takes (borders and padding included)."""
    return sum(widths) + 3 * len(widths) + 1


def _ranked(columns: Sequence[str], priority: Sequence[str] | None) -> list[int]:
    """Column indexes, most important first: `priority`, else the first column, the money
    columns ($, usd, price, market), then the rest in order."""
    if priority:
        first = [columns.index(c) for c in priority if c in columns]
    else:
        money = re.compile(r"usd|(^|_)price(_|$)|market|\$", re.I)
        first = [0, *(i for i, c in enumerate(columns) if i and money.search(c))]
    return [*dict.fromkeys([*first, *range(len(columns))])]


def fit_widths(headers: Sequence[str], cells: Sequence[Sequence[str]], width: int, *,
               text: Sequence[bool], priority: Sequence[str] | None = None,
               wide: bool = False) -> list[int | None]:
    """Each column's width in a table `width` columns wide; None: the column is left out.

    Natural widths when they fit (or `wide`); else text columns are cut to TEXT_CAP, then the
    least important columns are left out until the rest fit, then the room left is given back
    to the cut columns (most important first). A column is never narrower than its header."""
    cell_len = _measure([*headers, *(c for row in cells for c in row)])

    natural = [max([cell_len(h), *(cell_len(row[i]) for row in cells)])
               for i, h in enumerate(headers)]
    if wide or _span(natural) <= width:
        return list(natural)
    capped = [min(n, max(TEXT_CAP, cell_len(h))) if is_text else n
              for n, h, is_text in zip(natural, headers, text, strict=True)]
    order = _ranked(headers, priority)
    kept: list[int] = []
    for index in order:
        if _span([capped[i] for i in [*kept, index]]) <= width:
            kept.append(index)
        elif text[index]:  # a text column cut further still beats leaving it out
            room = width - _span([capped[i] for i in [*kept, index]]) + capped[index]
            if room >= max(cell_len(headers[index]), _TEXT_MIN):
                capped[index] = room
                kept.append(index)
    if not kept:  # not even the first column fits: cut it to the width
        kept = [order[0]]
        capped[order[0]] = max(1, width - 4)
    room = width - _span([capped[i] for i in kept])
    for index in order:
        if index in kept and room > 0 and capped[index] < natural[index]:
            extra = min(room, natural[index] - capped[index])
            capped[index] += extra
            room -= extra
    return [capped[i] if i in kept else None for i in range(len(headers))]


def _one_column_each(text: str) -> bool:
    """Every character of `text` takes one terminal column: printable ASCII, or the ellipsis
    of a cut cell."""
    return text.isascii() or text.replace(_ELLIPSIS, "").isascii()


def _measure(texts: Iterable[str]) -> Callable[[str], int]:
    """How many terminal columns a text takes: its length when every text is printable ASCII
    (one column per character: no need for rich's width tables), else rich's cell_len."""
    if all(_one_column_each(text) for text in texts):
        return len
    from rich.cells import cell_len

    return cell_len


def _cut(text: str, width: int) -> str:
    """`text` in `width` columns: whole, or cut with an ellipsis (never wrapped)."""
    if _one_column_each(text):
        return text if len(text) <= width else text[:max(0, width - 1)] + _ELLIPSIS
    from rich.cells import cell_len, set_cell_size

    if cell_len(text) <= width:
        return text
    return set_cell_size(text, max(0, width - 1)) + _ELLIPSIS


def _print_table(frame: pl.DataFrame | Rows, title: str | None, max_rows: int | None,
                 priority: Sequence[str] | None) -> None:
    if isinstance(frame, Rows):
        rows, numeric = frame.rows[:max_rows], frame.numeric
    else:
        rows = (frame if max_rows is None else frame.head(max_rows)).iter_rows()
        numeric = [frame.schema[c].is_numeric() for c in frame.columns]
    headers = [terminal_safe(c) for c in frame.columns]
    cells = [[terminal_safe(_cell(v)) for v in row] for row in rows]
    widths = fit_widths(headers, cells, table_width(), text=[not n for n in numeric],
                        priority=priority, wide=_state["wide"])
    kept = [i for i, w in enumerate(widths) if w is not None]
    shown = [[_cut(row[i], widths[i] or 0) for i in kept] for row in cells]
    hidden = [headers[i] for i, w in enumerate(widths) if w is None]
    notes = []
    if hidden:
        notes.append(f"({len(hidden)} more column{'s' if len(hidden) > 1 else ''}: "
                     f"{', '.join(hidden)}; --wide shows every column, --format csv or json "
                     "every value)")
    if max_rows is not None and frame.height > max_rows:
        notes.append(f"... {frame.height - max_rows} more rows (use --format csv for all)")
    table = _Table(terminal_safe(title) if title else None, [headers[i] for i in kept],
                   [numeric[i] for i in kept], [widths[i] or 0 for i in kept], shown)
    console_width = max(_span(table.widths), 20) if _state["wide"] else table_width()
    if not _plain(table, notes, console_width):
        _draw_rich(table, notes, console_width)


@dataclass(frozen=True)
class _Table:
    title: str | None
    headers: list[str]
    numeric: list[bool]
    widths: list[int]
    cells: list[list[str]]


# Set, these make rich style its output even when stdout is no terminal.
_RICH_STYLING = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")


def _plain(table: _Table, notes: list[str], console_width: int) -> bool:
    """Write the table as rich draws it without styles (stdout no terminal, every text
    printable ASCII, every line within the console's width) and say so; False (nothing
    written) for anything else. Saves a read command rich's import (about a third of DuckDB's
    own start-up); tests/unit/test_output.py holds it to rich's output."""
    span = _span(table.widths)
    texts = [*table.headers, *(c for row in table.cells for c in row), *notes,
             *([table.title] if table.title else [])]
    if (sys.stdout.isatty() or any(os.environ.get(name) for name in _RICH_STYLING)
            or span > console_width
            or not all(_one_column_each(t) and t.isprintable() for t in texts)
            or (table.title and len(table.title) > span)
            or any(len(note) > console_width for note in notes)):
        return False

    def rule(left: str, fill: str, cross: str, right: str) -> str:
        return left + cross.join(fill * (w + 2) for w in table.widths) + right + "\n"

    def line(edge: str, values: list[str]) -> str:
        return edge + edge.join(
            f" {v.rjust(w) if right else v.ljust(w)} "
            for v, w, right in zip(values, table.widths, table.numeric, strict=True)) + edge + "\n"

    out = []
    if table.title:
        room = span - len(table.title)
        out.append(" " * (room // 2) + table.title + " " * (room - room // 2) + "\n")
    out += [rule("┏", "━", "┳", "┓"), line("┃", table.headers), rule("┡", "━", "╇", "┩")]
    out += [line("│", row) for row in table.cells]
    out += [rule("└", "─", "┴", "┘"), *(note + "\n" for note in notes)]
    sys.stdout.write("".join(out))
    return True


def _draw_rich(table: _Table, notes: list[str], console_width: int) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    drawn = Table(title=Text(table.title) if table.title else None, show_lines=False)
    for header, numeric, width in zip(table.headers, table.numeric, table.widths,
                                      strict=True):
        drawn.add_column(Text(header), justify="right" if numeric else "left", width=width,
                         no_wrap=True, overflow="ellipsis")
    for row in table.cells:
        # Text, not str: rich would read "[link=...]" in a provider's name as markup.
        drawn.add_row(*(Text(cell) for cell in row))
    console = Console(width=console_width, soft_wrap=False)
    console.print(drawn)
    for note in notes:  # the rows left out: a plain str, as it always was (rich highlights it)
        console.print(note if note.startswith("... ") else Text(note))


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, datetime):  # to the minute: a table is read, not parsed
        return value.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
