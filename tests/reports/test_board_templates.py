"""The board's templates are compiled once and kept (reports.board.html.CompiledTemplates):
a later run loads them instead of compiling, renders the same page, and a folder that cannot
be used costs a compile, never the report. A sortable table's body is written by Table.body,
each cell escaped."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from jinja2 import Environment

from reports.board.html import (
    HERE,
    Col,
    compiled_templates,
    sortable_table,
    template_environment,
)

TEMPLATES = sorted(p.name for p in (HERE / "templates").glob("*.j2"))
PAGE = {"title": "GPU prices", "title_head": "GPU", "title_last": "prices",
        "as_of_text": "2026-11-28 00:00 UTC", "money_line": "USD per GPU-hour", "nav": [],
        "body": "plain.html.j2", "line": "a <b>"}


def _private(folder: Path) -> str:
    folder.mkdir(mode=0o700)
    return str(folder)


def _environment(tmp_path: Path, compiled: str | None) -> Environment:
    """The board's templates, from a copy with a small body of our own (plain.html.j2)."""
    copy = tmp_path / "templates"
    if not copy.exists():
        shutil.copytree(HERE / "templates", copy)
        (copy / "plain.html.j2").write_text("<p>{{ line }}</p>\n", encoding="utf-8")
    env = template_environment(None if compiled is None else compiled_templates(compiled))
    env.loader.searchpath = [str(copy)]  # type: ignore[union-attr]
    return env


def test_a_later_run_loads_the_compiled_templates(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _private(tmp_path / "compiled")
    first = template_environment(compiled_templates(folder))
    for name in TEMPLATES:
        first.get_template(name)
    assert len(os.listdir(folder)) == len(TEMPLATES) >= 4  # one entry per template

    def no_compile(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled again")

    later = template_environment(compiled_templates(folder))
    monkeypatch.setattr(Environment, "compile", no_compile)
    for name in TEMPLATES:
        later.get_template(name)  # from the folder


def test_an_edited_template_is_compiled_afresh(tmp_path: Path) -> None:
    folder = _private(tmp_path / "compiled")
    before = _environment(tmp_path, folder).get_template("page.html.j2").render(**PAGE)
    page = tmp_path / "templates" / "page.html.j2"
    page.write_text(page.read_text(encoding="utf-8").replace("<title>", "<title>edited "),
                    encoding="utf-8")
    after = _environment(tmp_path, folder).get_template("page.html.j2").render(**PAGE)
    assert "<p>a &lt;b&gt;</p>" in before  # the page, autoescaped
    assert after == before.replace("<title>", "<title>edited ")


def test_a_folder_that_cannot_be_used_costs_a_compile_not_the_page(tmp_path: Path) -> None:
    folder = tmp_path / "compiled"
    fresh = _environment(tmp_path, None).get_template("page.html.j2").render(**PAGE)
    env = _environment(tmp_path, _private(folder))
    shutil.rmtree(folder)  # gone before the first entry is written
    assert env.get_template("page.html.j2").render(**PAGE) == fresh
    assert not folder.exists()


def test_a_table_body_escapes_each_cell_and_marks_its_numbers(tmp_path: Path) -> None:
    table = sortable_table(
        [Col("name", lambda r: r["name"]),
         Col("$", lambda r: r["usd"], lambda r: r["usd"], numeric=True)],
        [{"name": "<b>&\"", "usd": 1.5}, {"name": "x", "usd": None}])
    assert table.body() == (
        '<tr><td>&lt;b&gt;&amp;&#34;</td><td class="n" data-v="1.5">1.5</td></tr>'
        '<tr><td>x</td><td class="n" data-v="">–</td></tr>')
    html = _environment(tmp_path, None).from_string(
        '{% from "macros.html.j2" import sortable_table %}{{ sortable_table(t) }}').render(t=table)
    assert f"<tbody>{table.body()}</tbody>" in html and html.count("<tr>") == 3
