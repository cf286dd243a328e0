"""A title's count is every row that answers, not the rows one page can hold: `changes`,
`cheapest` and `value` asked the API for at most LIMIT.high rows (10,000) and printed that
frame's height, so at 50 M observations `changes --since 2024-01-01` said "10000 in all" of
53,388 moves. The cap is made small here so the demo warehouse has more rows than it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuprices import api, commands_history, commands_market, commands_reports, inputs
from gpuprices.cli import app

SMALL = inputs.Range(1, 2)


@pytest.mark.parametrize(("args", "title", "every"), [
    (["changes", "--since", "2020-01-01"], r"\((\d+) in all\)",
     lambda w: api.changes("2020-01-01", limit=None, warehouse=w)),
    (["cheapest"], r"\((\d+) match\)", lambda w: api.cheapest(limit=None, warehouse=w)),
    (["value"], r"\((\d+) offers\)", lambda w: api.value(limit=None, warehouse=w)),
], ids=["changes", "cheapest", "value"])
def test_a_title_counts_every_row_not_one_page(demo: Path, monkeypatch: pytest.MonkeyPatch,
                                               args: list[str], title: str, every) -> None:
    rows = every(demo).height
    assert rows > SMALL.high  # else the test could not tell a page from the whole
    for module in (inputs, commands_history, commands_market, commands_reports):
        monkeypatch.setattr(module, "LIMIT", SMALL, raising=False)
    result = CliRunner().invoke(app, [*args, "--limit", "1", "-w", str(demo)],
                                env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    found = re.search(title, result.output)
    assert found, result.output
    assert int(found.group(1)) == rows


def test_the_api_keeps_its_limit(demo: Path) -> None:
    assert api.cheapest(limit=2, warehouse=demo).height == 2
    with pytest.raises(ValueError, match="limit"):
        api.cheapest(limit=0, warehouse=demo)
