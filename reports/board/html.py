"""HTML building blocks of the board: sortable tables, table-view toggles, the page shell.

Everything is escaped here; numbers carry their raw value in `data-v` so the page's few lines
of JavaScript sort them as numbers. CSS and JS are inlined from board.css / board.js, so a page
is one file that needs no network (works from file://).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from html import escape
from pathlib import Path
from typing import Any

__all__ = ["Col", "details", "page", "sortable_table"]

HERE = Path(__file__).parent


@dataclass(frozen=True, slots=True)
class Col:
    """A table column: header, how to show a row's cell, and its sort value (None = text)."""
    header: str
    show: Callable[[dict[str, Any]], object]
    sort: Callable[[dict[str, Any]], float | None] | None = None
    numeric: bool = False


def _cell(col: Col, row: dict[str, Any]) -> str:
    shown = col.show(row)
    text = "–" if shown is None else escape(str(shown))
    css = ' class="n"' if col.numeric else ""
    if col.sort is None:
        return f"<td{css}>{text}</td>"
    value = col.sort(row)
    return f'<td{css} data-v="{"" if value is None else repr(float(value))}">{text}</td>'


def sortable_table(columns: Sequence[Col], rows: Sequence[dict[str, Any]], *,
                   caption: str | None = None, table_id: str | None = None) -> str:
    if not rows:
        return '<p class="empty">No rows.</p>'
    ident = f' id="{escape(table_id)}"' if table_id else ""
    head = "".join(f'<th scope="col"{" class=n" if c.numeric else ""}>{escape(c.header)}</th>'
                   for c in columns)
    body = "".join("<tr>" + "".join(_cell(c, r) for c in columns) + "</tr>" for r in rows)
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    return (f'<div class="scroll"><table class="sortable"{ident}>{cap}<thead><tr>{head}</tr>'
            f"</thead><tbody>{body}</tbody></table></div>")


def details(summary: str, body: str, *, open_: bool = False) -> str:
    return (f'<details class="tableview"{" open" if open_ else ""}><summary>'
            f"{escape(summary)}</summary>{body}</details>")


@cache
def _asset(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def _heading(title: str) -> str:
    """The title with its last word kept whole ('2026-W47' must not break at its hyphen)."""
    head, _, last = title.rpartition(" ")
    return f'{escape(head)} <span class="nw">{escape(last)}</span>'


def page(*, title: str, as_of_text: str, nav: str, body: str) -> str:
    """A whole HTML document: inline CSS and JS, no external request of any kind."""
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title>"
        # No favicon request: an empty data URI (a file:// page would otherwise ask for one).
        '<link rel="icon" href="data:,">'
        '<meta name="color-scheme" content="light dark">'
        f"<style>{_asset('board.css')}</style>"
        "<script>try{var t=localStorage.getItem('gpuprices-theme');"
        "if(t)document.documentElement.dataset.theme=t}catch(e){}"
        "document.documentElement.classList.add('js')</script>"
        "</head><body>"
        '<header class="top"><div class="wrap">'
        f'<div><h1>{_heading(title)}</h1><p class="asof">Prices as of <time>'
        f"{escape(as_of_text)}</time> · USD per GPU-hour unless stated</p></div>"
        f'<div class="tools">{nav}<button type="button" id="theme" '
        'aria-label="switch light/dark theme">◐ theme</button></div>'
        "</div></header>"
        f'<main class="wrap">{body}</main>'
        f'<footer class="wrap"><p>Prices as of {escape(as_of_text)}. Built by gpuprices from '
        "its DuckDB warehouse; every number on this page is in a table view next to its "
        "chart.</p></footer>"
        f"<script>{_asset('board.js')}</script>"
        "</body></html>\n"
    )
