"""The board's pages: one self-contained HTML file per ISO week, index.html = the latest week.

Each page is templates/page.html.j2 (jinja2, autoescaped) filled with reports.board.sections'
values for the week.

In another currency (`currency`, e.g. EUR) the board is a site of its own in a folder named
for it beside the USD pages (`board/EUR/index.html`, `board/EUR/2026-W47.html`,
`board/EUR/gpu-index.html`; `board_folder`), so it never writes over the USD board and its
links work unchanged. Its amounts are at the ECB rate of each day (reports.board.data); the
index files (JSON, Parquet) are USD and written with the USD board only."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb

from contract.files import ensure_folder, write_text_atomic
from reports.board.data import WeekData, load_week
from reports.board.html import render
from reports.board.index_page import index_page_context
from reports.board.sections import page_context, when
from reports.index.files import write_index_files
from reports.market.scenarios import Scenario
from warehouse.semantic import Prices

__all__ = ["INDEX_PAGE", "BoardBuild", "board_folder", "build_board", "render_week",
           "week_pages"]

WEEK_FILE = re.compile(r"^(\d{4}-W\d{2})\.html$")
INDEX_PAGE = "gpu-index.html"


# ---- pages -------------------------------------------------------------------------------

def _nav(week: str, weeks: Sequence[str]) -> list[dict[str, str | None]]:
    ordered = sorted(set(weeks) | {week})
    i = ordered.index(week)
    links: list[dict[str, str | None]] = [{"href": "index.html", "rel": None, "text": "latest"},
                                          {"href": INDEX_PAGE, "rel": None, "text": "index"}]
    if i > 0:
        links.append({"href": f"{ordered[i - 1]}.html", "rel": "prev",
                      "text": f"← {ordered[i - 1]}"})
    if i + 1 < len(ordered):
        links.append({"href": f"{ordered[i + 1]}.html", "rel": "next",
                      "text": f"{ordered[i + 1]} →"})
    return links


def render_week(con: duckdb.DuckDBPyConnection, data: WeekData, *, weeks: Sequence[str] = (),
                scenarios: list[Scenario] | None = None) -> str:
    """One week's page (the index is the same page for the latest week)."""
    unit = data.unit
    title = (f"GPU price board in {unit.currency} · week {data.week}" if unit.converting
             else f"GPU price board · week {data.week}")
    # The title's last word is kept whole ('2026-W47' must not break at its hyphen).
    head, _, last = title.rpartition(" ")
    return render("page.html.j2", title=title, title_head=head, title_last=last,
                  as_of_text=when(data.as_of), nav=_nav(data.week, weeks),
                  money_line=_money_line(unit.currency),
                  **page_context(con, data, weeks=weeks, scenarios=scenarios))


def _money_line(currency: str) -> str:
    if currency == "USD":
        return "USD per GPU-hour unless stated"
    return f"{currency} per GPU-hour unless stated: {currency} at the ECB rate of each day"


def board_folder(out_dir: Path, currency: str | None = None) -> Path:
    """Where the board in `currency` goes: out_dir for USD, out_dir/EUR for euros."""
    return out_dir if currency in (None, "USD") else out_dir / currency


def week_pages(out_dir: Path) -> list[str]:
    """Weeks that already have a page in out_dir."""
    if not out_dir.is_dir():
        return []
    return sorted(m.group(1) for p in out_dir.iterdir() if (m := WEEK_FILE.match(p.name)))


@dataclass(frozen=True, slots=True)
class BoardBuild:
    week: str
    page: Path
    index: Path | None   # None when a newer week's page already is the index
    bytes_written: int


def build_board(con: duckdb.DuckDBPyConnection, out_dir: Path, *, week: str, as_of: datetime,
                scenarios: list[Scenario] | None = None,
                currency: str | None = None, prices: Prices | None = None) -> BoardBuild:
    """Write `<week>.html` into out_dir, and index.html when this is the newest week there.

    Pages of other weeks already in out_dir are kept (the archive grows week by week) and
    linked from this one. `currency` (e.g. EUR): the board in that currency, in
    board_folder(out_dir, currency); NoRateError (nothing written) when `as_of`'s day has no
    rate. `prices`: the prices at `as_of` when the caller has them (the report's).
    """
    data = load_week(con, week=week, as_of=as_of, currency=currency, prices=prices)
    out_dir = board_folder(out_dir, currency)
    ensure_folder(out_dir)
    existing = week_pages(out_dir)
    html = render_week(con, data, weeks=existing, scenarios=scenarios)
    path = out_dir / f"{week}.html"
    write_text_atomic(path, html)  # a full disk leaves the previous page whole
    index = None
    written = len(html.encode())
    if not existing or week >= existing[-1]:
        index = out_dir / "index.html"
        write_text_atomic(index, html)
        written += len(html.encode())
        # the newest week publishes it
        written += _index_page(con, out_dir, as_of=as_of, currency=currency)
    return BoardBuild(week=week, page=path, index=index, bytes_written=written)


def _index_page(con: duckdb.DuckDBPyConnection, out_dir: Path, *, as_of: datetime,
                currency: str | None = None) -> int:
    """gpu-index.html and, in USD, the index files beside it (JSON, Parquet, digests); bytes
    written."""
    converting = currency not in (None, "USD")
    files = None if converting else write_index_files(con, out_dir, until=as_of.date())
    title = f"GPU price index in {currency}" if converting else "GPU price index"
    html = render("page.html.j2", title=title, title_head=title.rpartition(" ")[0],
                  title_last=title.rpartition(" ")[2], as_of_text=when(as_of),
                  money_line=_money_line(currency or "USD"),
                  nav=[{"href": "index.html", "rel": None, "text": "board"}],
                  body="gpu_index.html.j2",
                  **index_page_context(con, as_of=as_of, files=files, currency=currency))
    write_text_atomic(out_dir / INDEX_PAGE, html)
    return len(html.encode()) + (sum(p.stat().st_size for p in files.paths) if files else 0)
