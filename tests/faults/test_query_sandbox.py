"""`gpuprices query` under attack (issue 22.2, 22.3): limits, crashes, refused statements.

Each attack of the issue is a test input: a cross join past any time, a string aggregate
past any memory, `call enable_logging(storage='file', ...)` (aborted the process), pragmas
that used to succeed, BLOB/MAP columns in CSV (a polars traceback), read_blob in a table
(minutes of printing).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuprices.cli import app
from gpuprices.commands_data import TABLE_ROWS
from tests.conftest import REPO

runner = CliRunner()
CROSS_JOIN = "select count(*) from range(1000000) a, range(1000000) b"
HUGE_STRING = "select length(string_agg(repeat('x', 1000), '')) from range(10000000)"


@pytest.fixture
def warehouse(night_copy: Path) -> str:
    return str(night_copy)


def one_error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    assert lines[0].startswith("error: "), output
    return lines[0]


def query(warehouse: str, sql: str, *options: str,
          env: dict[str, str] | None = None) -> tuple[int, str, float]:
    started = time.monotonic()
    result = runner.invoke(app, ["query", sql, "-w", warehouse, *options], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output, time.monotonic() - started


@pytest.mark.timeout(120)
def test_a_query_past_its_time_limit_is_stopped_with_one_line(warehouse: str) -> None:
    code, output, took = query(warehouse, CROSS_JOIN, "--timeout", "1")
    assert code == 1
    assert "ran past its time limit of 1 s" in one_error_line(output)
    assert took < 30
    code, output, _ = query(warehouse, CROSS_JOIN, env={"GPUPRICES_QUERY_TIMEOUT_S": "0.5"})
    assert "time limit of 0.5 s" in one_error_line(output)


@pytest.mark.timeout(120)
def test_a_query_past_its_memory_limit_is_stopped_with_one_line(warehouse: str) -> None:
    code, output, _ = query(warehouse, HUGE_STRING, "--memory-limit", "128MB")
    assert code == 1
    assert "needs more memory than its limit" in one_error_line(output)
    code, output, _ = query(warehouse, HUGE_STRING, env={"GPUPRICES_QUERY_MEMORY": "100MiB"})
    assert "needs more memory than its limit" in one_error_line(output)


def test_the_limits_are_the_connection_s_settings(warehouse: str) -> None:
    code, output, _ = query(
        warehouse, "select current_setting('threads') as t, current_setting('memory_limit') "
        "as m, current_setting('temp_directory') as d", "--threads", "1", "--memory-limit",
        "200MB", "-f", "csv")
    assert code == 0, output
    threads, memory, spill = output.splitlines()[1].split(",")
    assert (threads, memory, spill) == ("1", "200.0 MiB", '""')  # no spilling to disk


@pytest.mark.parametrize(("options", "allowed"), [
    (["--threads", "0"], "allowed 1 to 256"),
    (["--threads", "100000"], "allowed 1 to 256"),
    (["--timeout", "0"], "allowed 0.1 to 86,400"),
    (["--timeout", "nan"], "allowed 0.1 to 86,400"),
    (["--memory-limit", "1MB"], "allowed 64MB to"),
    (["--memory-limit", "100TB"], "allowed 64MB to"),
    (["--memory-limit", "lots"], "not a size"),
])
def test_limits_out_of_range_exit_2_with_one_line(warehouse: str, options: list[str],
                                                  allowed: str) -> None:
    code, output, _ = query(warehouse, "select 1", *options)
    assert code == 2
    assert allowed in one_error_line(output)


def test_limits_from_the_environment_are_checked_too(warehouse: str) -> None:
    code, output, _ = query(warehouse, "select 1", env={"GPUPRICES_QUERY_THREADS": "0"})
    assert code == 2 and "allowed 1 to 256" in one_error_line(output)
    code, output, _ = query(warehouse, "select 1", env={"GPUPRICES_QUERY_MEMORY": "x"})
    assert code == 2 and "not a size" in one_error_line(output)


REFUSED = [
    "pragma enable_profiling",
    "pragma disable_optimizer",
    "PRAGMA table_info('observation')",
    "/* a comment */ pragma version",
    "call enable_logging()",
    "call enable_logging(storage='file', storage_config={'path': '/tmp/gpuprices-x'})",
    "select * from enable_logging(storage='file', storage_config={'path': '/tmp/gpuprices-x'})",
    "select * from query('pragma enable_profiling')",
    "select * from query_table('observation')",
    "explain analyze select * from enable_logging()",
    "select * from read_blob('{warehouse}')",
    "select * from read_text('{warehouse}')",
    "checkpoint",
    "use memory",
    "detach memory",
    "begin transaction",
    "select 1; select 2",
    "set threads = 64",
]


@pytest.mark.parametrize("sql", REFUSED)
def test_statements_that_are_not_one_select_are_refused_before_running(warehouse: str,
                                                                       sql: str) -> None:
    code, output, took = query(warehouse, sql.replace("{warehouse}", warehouse))
    assert code == 1
    assert one_error_line(output).startswith("error: refused: "), output
    assert took < 30
    assert not Path("/tmp/gpuprices-x").exists()


def test_enable_logging_to_a_file_no_longer_aborts_the_process(warehouse: str,
                                                               tmp_path: Path) -> None:
    """It printed the refusal, then SIGABRT (exit 134). A real process: an abort would take
    pytest down with it."""
    target = tmp_path / "log"
    done = subprocess.run(
        [sys.executable, "-m", "gpuprices.cli", "query", "-w", warehouse,
         f"call enable_logging(storage='file', storage_config={{'path': '{target}'}})"],
        capture_output=True, text=True, cwd=REPO, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("error: refused: ") and len(done.stderr.splitlines()) == 1
    assert not target.exists()


@pytest.mark.parametrize("sql", [
    "describe observation",
    "show tables",
    "summarize select 1 as a",
    "explain select count(*) from observation",
    "from observation select count(*)",
    "with x as (select 1 as a) select * from x",
    "select * from current_price_at(now()) limit 3",
    "select * from duckdb_tables() limit 3",
])
def test_reading_statements_still_run(warehouse: str, sql: str) -> None:
    code, output, _ = query(warehouse, sql, "-f", "csv")
    assert code == 0, output
    assert output.strip()


ODD_TYPES = ("select 'ab\\x00'::blob as b, map([1], [2]) as m, "
             "union_value(k := 1)::union(k int, s varchar) as u, interval 3 day as i, "
             "'101'::bit as bits, {'a': 1} as s, [1, 2] as l, 12345678901234567890::hugeint "
             "as h, [{'x': 'ab'::blob}] as nested")


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_every_column_type_prints_in_every_format(warehouse: str, fmt: str) -> None:
    code, output, _ = query(warehouse, ODD_TYPES, "-f", fmt)
    assert code == 0, output
    if fmt == "csv":
        header, row = output.splitlines()
        assert header == "b,m,u,i,bits,s,l,h,nested"
        assert "{1=2}" in row and "3 days" in row and "101" in row
    elif fmt == "table":
        assert "<3 bytes>" in output
    else:
        assert '"m":"{1=2}"' in output and '"l":[1,2]' in output


@pytest.mark.timeout(120)
def test_a_huge_text_cell_prints_at_once_in_a_table(warehouse: str) -> None:
    code, output, took = query(warehouse, "select repeat('x', 20000000) as big")
    assert code == 0, output
    assert "…" in output and len(output) < 20_000
    assert took < 30


def test_a_table_shows_the_first_rows_csv_all_of_them(warehouse: str) -> None:
    many = TABLE_ROWS + 500
    result = runner.invoke(app, ["query", f"select * from range({many})", "-w", warehouse])
    assert result.exit_code == 0
    assert f"the first {TABLE_ROWS} rows" in result.output
    code, output, _ = query(warehouse, f"select * from range({many})", "-f", "csv")
    assert code == 0 and len(output.splitlines()) == many + 1
