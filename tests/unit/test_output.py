"""gpuprices.output: every format prints every frame the commands produce, lists included."""

from __future__ import annotations

import json

import polars as pl
import pytest

from gpuprices.output import Format, print_frame

FRAME = pl.DataFrame({"source": ["a", "b"], "unknown_gpus": [["X1", "Y2"], []],
                      "price": [1.5, None]})


def test_csv_flattens_list_columns(capsys: pytest.CaptureFixture[str]) -> None:
    print_frame(FRAME, Format.csv)
    assert capsys.readouterr().out.splitlines() == [
        "source,unknown_gpus,price", 'a,"X1, Y2",1.5', 'b,"",']


def test_json_keeps_lists(capsys: pytest.CaptureFixture[str]) -> None:
    print_frame(FRAME, Format.json)
    assert json.loads(capsys.readouterr().out)[0]["unknown_gpus"] == ["X1", "Y2"]


def test_table_shows_every_value(capsys: pytest.CaptureFixture[str]) -> None:
    print_frame(FRAME, Format.table, title="t")
    out = capsys.readouterr().out
    assert "X1, Y2" in out and "1.5" in out
