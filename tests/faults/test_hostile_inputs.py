"""Inputs checked at the door (issue 11): each hostile input is refused with one line.

`gpuprices query` reads the warehouse and nothing else; numeric options have ranges; a file
that is not a warehouse gives one clean error before any work.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuprices.cli import app
from tests.reports.conftest import Builder, build_market
from warehouse.connection import connect

runner = CliRunner()


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("hostile") / "w.duckdb"
    con = connect(path)
    try:
        build_market(Builder(con), at=datetime.now(UTC))
    finally:
        con.close()
    return str(path)


def one_error_line(result: object) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]  # type: ignore[attr-defined]
    assert len(lines) == 1, result.output  # type: ignore[attr-defined]
    assert lines[0].startswith("error: ")
    return lines[0]


def test_query_writes_no_file(warehouse: str, tmp_path: Path) -> None:
    target = tmp_path / "x.csv"
    result = runner.invoke(app, ["query", f"copy (select 1) to '{target}'", "-w", warehouse])
    assert result.exit_code == 1
    assert "refused" in one_error_line(result)
    assert not target.exists()


@pytest.mark.parametrize("sql", [
    "select * from read_csv('/etc/passwd')",
    "select * from read_text('/etc/hostname')",
    "select * from glob('/etc/*')",
    "attach '/tmp/gpuprices-hostile-other.duckdb' as other",
    "install httpfs",
    "load httpfs",
    "set threads = 1",
    "pragma threads = 1",
    "set enable_external_access = true",
    "reset lock_configuration",
])
def test_query_reads_no_other_file_and_changes_nothing(warehouse: str, sql: str) -> None:
    result = runner.invoke(app, ["query", sql, "-w", warehouse])
    assert result.exit_code == 1
    assert "refused" in one_error_line(result)
    assert not Path("/tmp/gpuprices-hostile-other.duckdb").exists()


def test_query_still_reads_the_warehouse(warehouse: str) -> None:
    result = runner.invoke(app, ["query", "select count(*) AS n from latest_price", "-w",
                                 warehouse, "-f", "csv"])
    assert result.exit_code == 0, result.output
    assert int(result.stdout.splitlines()[1]) > 0


@pytest.mark.parametrize(("args", "allowed"), [
    (["scenario", "--gpu-hours", "-5", "--gpu", "H100"], "allowed 0.01 to 10,000,000"),
    (["scenario", "--gpu-hours", "1e12", "--gpu", "H100"], "allowed 0.01 to 10,000,000"),
    (["scenario", "--gpu-hours", "nan", "--gpu", "H100"], "allowed 0.01 to 10,000,000"),
    (["fit", "--params", "0B"], "allowed 1M to 100000B"),
    (["fit", "--params", "0B", "--method", "qlora"], "allowed 1M to 100000B"),
    (["fit", "--limit", "0"], "allowed 1 to 10,000"),
    (["cheapest", "--limit", "-1"], "allowed 1 to 10,000"),
    (["cheapest", "--min-vram", "0"], "allowed 1 to 2,048"),
    (["history", "H100", "--days", "0"], "allowed 1 to 3,660"),
    (["history", "H100", "--days", "100000"], "allowed 1 to 3,660"),
    (["changes", "--since", "2026-01-01", "--limit", "0"], "allowed 1 to 10,000"),
    (["cluster", "--gpu", "H100", "--gpus", "0"], "allowed 1 to 1,000,000"),
    (["cluster", "--gpu", "H100", "--days", "-1"], "allowed 1 to 3,660"),
    (["rent-vs-buy", "--pue", "9"], "allowed 1 to 3"),
    (["rent-vs-buy", "--utilization", "0"], "allowed 0.01 to 1"),
])
def test_numeric_options_have_ranges(warehouse: str, args: list[str], allowed: str) -> None:
    result = runner.invoke(app, [*args, "-w", warehouse])
    assert result.exit_code == 2
    line = one_error_line(result)
    assert "out of range" in line and allowed in line


def test_refresh_of_a_file_that_is_not_a_warehouse(tmp_path: Path) -> None:
    fake = tmp_path / "notes.duckdb"
    fake.write_text("not a database\n")
    result = runner.invoke(app, ["refresh", "--offline", "-s", "vastai", "-w", str(fake)])
    assert result.exit_code == 1
    assert "not a valid DuckDB database file" in one_error_line(result)
    assert not (tmp_path / "raw").exists()  # refused before any work
