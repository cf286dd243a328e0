"""Issue 22.6: names from provider pages are data, never markup or terminal commands.

Offerings, regions and providers holding raw HTML, table breakers, links or escape sequences
go into the markdown report escaped (reports.markdown.md_text), so a CommonMark renderer
with raw HTML on shows them as text and every table keeps its columns; the HTML board
escapes them; the terminal output (table, CSV, JSON) shows control characters as escapes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token
from typer.testing import CliRunner

from gpuprices.cli import app
from reports.board import build_board
from reports.markdown import md_text, table
from reports.weekly.report import build_report
from tests.reports.conftest import NOW, Builder, build_market, offer
from warehouse.connection import connect

HOSTILE = {
    "script": "<script>alert(1)</script>",
    "img": '"><img src=x onerror=alert(1)>',
    "table": "</td></tr></table>",
    "pipes": "a|b\\|c",
    "backticks": "x`y``z",
    "link": "[click](javascript:alert(1))",
    "newlines": "line1\nline2\r\n| --- |",
    "entity": "&lt;b&gt;",
    "escape": "\x1b[31mred\x1b]8;;http://evil\x07link\x1b[0m",
    "markup": "[link=http://evil]rich[/link]",
}
RAW_TAGS = ("<script", "<img", "</td></tr></table>")


@pytest.fixture(scope="module")
def hostile_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The report fixture's market plus one provider whose every name is an attack."""
    path = tmp_path_factory.mktemp("names") / "w.duckdb"
    con = connect(path)
    try:
        build = Builder(con)
        build_market(build)
        names = list(HOSTILE.values())
        for i, provider in enumerate(names):
            source = f"evil{i}"
            build.source(source, provider)
            build.capture(source, NOW - timedelta(hours=9), [
                offer(provider, names[(i + 1) % len(names)], "H100 SXM", 9.0 + i,
                      region=names[(i + 2) % len(names)])], run_id="run-week-ago-evil")
            latest = [
                offer(provider, names[(i + 1) % len(names)], "H100 SXM", 1.0 + i / 10,
                      region=names[(i + 2) % len(names)]),
                offer(provider, names[(i + 3) % len(names)], "RTX 4090", 0.1 + i / 100)]
            build.capture(source, NOW - timedelta(hours=1), latest, run_id=f"run-evil-{i}")
            # seen again just now, so the commands that answer for today (only prices seen in
            # the last 48 h count) show the names too; the report, as of NOW, does not see it
            build.capture(source, datetime.now(UTC) - timedelta(minutes=5), latest,
                          run_id=f"run-evil-now-{i}")
    finally:
        con.close()
    yield path


def rendered(markdown: str) -> tuple[str, list[Token]]:
    md = MarkdownIt("commonmark", {"html": True}).enable("table")  # raw HTML on: worst case
    return md.render(markdown), md.parse(markdown)


def column_counts(tokens: list[Token]) -> list[tuple[int, set[int]]]:
    """(header cells, set of body row cell counts) for every table."""
    tables: list[tuple[int, set[int]]] = []
    header, rows, cells, in_head = 0, set(), 0, False
    for token in tokens:
        if token.type == "thead_open":
            in_head = True
        elif token.type == "thead_close":
            in_head = False
        elif token.type == "tr_open":
            cells = 0
        elif token.type in ("th_open", "td_open"):
            cells += 1
        elif token.type == "tr_close":
            if in_head:
                header = cells
            else:
                rows.add(cells)
        elif token.type == "table_close":
            tables.append((header, rows))
            header, rows = 0, set()
    return tables


@pytest.mark.parametrize("name", list(HOSTILE))
def test_md_text_shows_each_attack_as_text(name: str) -> None:
    cell = HOSTILE[name]
    html, tokens = rendered(table(["provider", "price"], [[cell, "$1.00"]]))
    assert not any(tag in html for tag in RAW_TAGS), html
    assert "<a " not in html and "<code>" not in html, html
    assert column_counts(tokens) == [(2, {2})], html
    assert "\n" not in md_text(cell) and "\x1b" not in md_text(cell)


def test_the_weekly_report_shows_hostile_names_as_text(hostile_warehouse: Path) -> None:
    con = duckdb.connect(str(hostile_warehouse), read_only=True)
    try:
        report = build_report(con, as_of=NOW)
    finally:
        con.close()
    html, tokens = rendered(report.markdown)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html, "the control: the name is shown"
    for tag in RAW_TAGS:
        assert tag not in html, f"raw {tag!r} reached the rendered report"
    assert "href=\"javascript" not in html and "\x1b" not in report.markdown
    tables = column_counts(tokens)
    assert len(tables) >= 5
    for header, rows in tables:
        assert rows <= {header}, f"a table row lost or gained cells: {header} vs {rows}"


def test_the_board_escapes_hostile_names(hostile_warehouse: Path, tmp_path: Path) -> None:
    con = duckdb.connect(str(hostile_warehouse), read_only=True)
    try:
        built = build_board(con, tmp_path / "board", week="2026-W47", as_of=NOW)
    finally:
        con.close()
    page = built.page.read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert(1)" not in page and "<img src=x" not in page
    assert "</td></tr></table>" not in page


def invoke(args: list[str]) -> str:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_terminal_output_neutralises_escapes(hostile_warehouse: Path, fmt: str) -> None:
    out = invoke(["cheapest", "--gpu", "H100", "--limit", "50", "-w", str(hostile_warehouse),
                  "-f", fmt])
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out
    assert "\\x1b[31mred" in out or "\\u001b[31mred" in out, "the control: it is shown"
    if fmt == "json":
        rows = json.loads(out)
        assert HOSTILE["escape"] in {r["provider"] for r in rows}, "JSON keeps the value"
    if fmt == "table":
        assert "[link=http://evil]rich" in out, "rich markup shown (folded), not applied"


def test_query_output_neutralises_escapes(hostile_warehouse: Path) -> None:
    out = invoke(["query", "SELECT DISTINCT provider FROM observation ORDER BY 1",
                  "-w", str(hostile_warehouse), "-f", "csv"])
    assert "\x1b" not in out and "\\x1b[31mred" in out
