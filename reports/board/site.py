"""The board's pages: one self-contained HTML file per ISO week, index.html = the latest week.

Each page is templates/page.html.j2 (jinja2, autoescaped) filled with reports.board.sections'
values for the week."""

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
from reports.board.sections import page_context, when
from reports.market.scenarios import Scenario

__all__ = ["BoardBuild", "build_board", "render_week", "week_pages"]

WEEK_FILE = re.compile(r"^(\d{4}-W\d{2})\.html$")


# ---- pages -------------------------------------------------------------------------------

def _nav(week: str, weeks: Sequence[str]) -> list[dict[str, str | None]]:
    ordered = sorted(set(weeks) | {week})
    i = ordered.index(week)
    links: list[dict[str, str | None]] = [{"href": "index.html", "rel": None, "text": "latest"}]
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
    title = f"GPU price board · week {data.week}"
    # The title's last word is kept whole ('2026-W47' must not break at its hyphen).
    head, _, last = title.rpartition(" ")
    return render("page.html.j2", title=title, title_head=head, title_last=last,
                  as_of_text=when(data.as_of), nav=_nav(data.week, weeks),
                  **page_context(con, data, weeks=weeks, scenarios=scenarios))


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
                scenarios: list[Scenario] | None = None) -> BoardBuild:
    """Write `<week>.html` into out_dir, and index.html when this is the newest week there.

    Pages of other weeks already in out_dir are kept (the archive grows week by week) and
    linked from this one.
    """
    ensure_folder(out_dir)
    existing = week_pages(out_dir)
    html = render_week(con, load_week(con, week=week, as_of=as_of), weeks=existing,
                       scenarios=scenarios)
    path = out_dir / f"{week}.html"
    write_text_atomic(path, html)  # a full disk leaves the previous page whole
    index = None
    if not existing or week >= existing[-1]:
        index = out_dir / "index.html"
        write_text_atomic(index, html)
    return BoardBuild(week=week, page=path, index=index,
                      bytes_written=len(html.encode()) * (2 if index else 1))
