"""`sources` prints its terminal table from DuckDB's rows (no polars: issue 23's start-up);
the table is the one its frame gives, whatever the warehouse holds: runs, none, no file."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from gpuprices import api
from gpuprices.cli import app
from gpuprices.output import Format, print_frame
from warehouse.connection import open_warehouse

# The frame's columns as the table shows them (the former polars path of the command).
_SHOWN = {"source": "source", "last_status": "status", "stale": "stale",
          "latest_rows": "rows", "last_success_at": "last success",
          "quarantined_last_parse": "quarantined", "skipped_last_parse": "skipped",
          "last_error": "last_error", "kind": "kind", "url": "url"}
_PRIORITY = ("source", "status", "stale", "rows", "last success", "quarantined", "skipped",
             "last_error")


def _from_the_frame(warehouse: Path, capsys: pytest.CaptureFixture[str]) -> str:
    frame = api.sources(warehouse)
    frame = frame.select(pl.col(name).alias(label) for name, label in _SHOWN.items()
                         if name in frame.columns)
    capsys.readouterr()
    print_frame(frame, Format.table, title="sources", priority=_PRIORITY)
    return capsys.readouterr().out


@pytest.mark.parametrize("held", ["runs", "no run", "no file"])
def test_the_sources_table_is_its_frame(demo: Path, tmp_path: Path, held: str,
                                        monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    warehouse = {"runs": demo, "no run": tmp_path / "empty.duckdb",
                 "no file": tmp_path / "none.duckdb"}[held]
    if held == "no run":
        with open_warehouse(warehouse):
            pass
    monkeypatch.setenv("COLUMNS", "160")
    printed = CliRunner().invoke(app, ["sources", "-w", str(warehouse)])
    assert printed.exit_code == 0, printed.output
    expected = _from_the_frame(warehouse, capsys)
    assert printed.output == expected
    statuses = set(api.sources(warehouse)["last_status"])
    if held == "runs":
        assert "success" in statuses
    else:
        assert statuses == {"never run"}
