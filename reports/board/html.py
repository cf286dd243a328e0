"""The board's HTML: jinja2 templates (templates/*.html.j2) rendered with autoescaping on, and
the sortable-table model they draw.

Every value reaches the page through a template, so every value is escaped there, but a
sortable table's cells, which Table.body writes and escapes itself (one template loop per cell
was the board's slowest part); the only markup passed in whole is our own: the CSS and JS
files (inlined, so a page is one file that needs no network and works from file://), the SVG
charts of reports.board.svg (which escape every text they hold) and those table bodies.
Numbers carry their raw value in `data-v` so the page's few lines of JavaScript sort them as
numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemBytecodeCache, FileSystemLoader, StrictUndefined
from jinja2.bccache import Bucket
from markupsafe import Markup, escape

from reports.board.svg import slug

__all__ = ["Cell", "Col", "CompiledTemplates", "Table", "compiled_templates", "render",
           "sortable_table", "template_environment"]

HERE = Path(__file__).parent


@dataclass(frozen=True, slots=True)
class Col:
    """A table column: header, how to show a row's cell, and its sort value (None = text)."""
    header: str
    show: Callable[[dict[str, Any]], object]
    sort: Callable[[dict[str, Any]], float | None] | None = None
    numeric: bool = False


@dataclass(frozen=True, slots=True)
class Cell:
    text: str
    sort: str | None  # data-v: the raw number ("" for none); None: the column sorts as text
    numeric: bool


@dataclass(frozen=True, slots=True)
class Table:
    columns: tuple[tuple[str, bool], ...]  # (header, numeric)
    rows: tuple[tuple[Cell, ...], ...]
    caption: str | None = None
    table_id: str | None = None

    def body(self) -> Markup:
        """The rows as the table's <tbody> holds them, each text and sort value escaped:
        written here, not by a template loop over every cell (a board's ~30,000 cells took
        ~0.12 s through the macro at 50 M observations)."""
        return Markup("".join(f"<tr>{''.join(map(_td, row))}</tr>" for row in self.rows))


def _td(cell: Cell) -> str:
    numeric = ' class="n"' if cell.numeric else ""
    sort = "" if cell.sort is None else f' data-v="{escape(cell.sort)}"'
    return f"<td{numeric}{sort}>{escape(cell.text)}</td>"


def _cell(col: Col, row: dict[str, Any]) -> Cell:
    shown = col.show(row)
    text = "–" if shown is None else str(shown)
    if col.sort is None:
        return Cell(text, None, col.numeric)
    value = col.sort(row)
    return Cell(text, "" if value is None else repr(float(value)), col.numeric)


def sortable_table(columns: Sequence[Col], rows: Sequence[dict[str, Any]], *,
                   caption: str | None = None, table_id: str | None = None) -> Table:
    return Table(tuple((c.header, c.numeric) for c in columns),
                 tuple(tuple(_cell(c, r) for c in columns) for r in rows), caption, table_id)


class CompiledTemplates(FileSystemBytecodeCache):
    """The templates as compiled by an earlier run, so a report does not compile them again
    (~28 ms a run). Default folder: jinja2's private one in the temporary directory (made
    0700, refused unless owned by the user). An entry is used only while its template's
    checksum and the Python that compiled it match; one that cannot be written is skipped."""

    def dump_bytecode(self, bucket: Bucket) -> None:
        with suppress(OSError):  # a full or vanished folder costs a compile, not the report
            super().dump_bytecode(bucket)


def compiled_templates(directory: str | None = None) -> CompiledTemplates | None:
    """CompiledTemplates in `directory` (default: jinja2's), or None (compile every run) when
    no safe folder can be had."""
    try:
        return CompiledTemplates(directory)
    except (OSError, RuntimeError):  # jinja2: RuntimeError for a folder another user owns
        return None


@cache
def _environment() -> Environment:
    return template_environment(compiled_templates())


def template_environment(compiled: CompiledTemplates | None) -> Environment:
    """The board's templates (autoescaped), compiled once into `compiled` when given."""
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      keep_trailing_newline=True, bytecode_cache=compiled)
    env.globals["asset"] = _asset
    env.filters["slug"] = slug
    return env


@cache
def _asset(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def render(template: str, **context: Any) -> str:
    """Render templates/<template> (autoescaped) with `context`."""
    return _environment().get_template(template).render(**context)
