"""warehouse.frames: query rows as polars frames without pyarrow, the same frames `.pl()` gives."""

from __future__ import annotations

import subprocess
import sys
from datetime import date

import duckdb
import pytest

from warehouse.frames import sql_frame

# Every column type the warehouse's tables and views hold, and a few more.
_TYPED = """
SELECT 1 AS i, 2::BIGINT AS b, 1.5::DOUBLE AS d, 12.34::DECIMAL(10, 2) AS dec, 'x' AS s,
       true AS flag, DATE '2026-11-20' AS day, TIMESTAMPTZ '2026-11-20 06:00:00+00' AS at,
       TIMESTAMP '2026-11-20 06:00:00' AS naive, ['a', 'b'] AS names, [1.5, NULL] AS prices,
       {'provider': 'aws', 'rows': 3} AS part, NULL::VARCHAR AS missing, 'x'::BLOB AS raw,
       MAP {'a': 1} AS counts, 255::UTINYINT AS small, 10::HUGEINT AS huge
"""


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    return con


@pytest.mark.parametrize("sql", [_TYPED, f"{_TYPED} WHERE false",
                                 "SELECT range AS n FROM range(3000)"])
def test_same_frame_as_pl(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    ours, theirs = sql_frame(con, sql), con.sql(sql).pl()
    assert ours.schema == theirs.schema
    assert ours.equals(theirs)


def test_parameters_by_name_and_by_position(con: duckdb.DuckDBPyConnection) -> None:
    named = sql_frame(con, "SELECT $day AS day, list_contains($m, 'H100') AS has",
                      {"day": date(2026, 1, 2), "m": ["H100"]})
    assert named.rows() == [(date(2026, 1, 2), True)]
    assert sql_frame(con, "SELECT ? + 1 AS n", [41]).rows() == [(42,)]


def test_a_small_answer_imports_neither_pyarrow_nor_numpy() -> None:
    code = ("import sys, duckdb; from warehouse.frames import sql_frame; "
            "f = sql_frame(duckdb.connect(), 'SELECT 42 AS n, now() AS t'); "
            "assert f.item(0, 'n') == 42; "
            "print(sorted(m for m in ('pyarrow', 'numpy', 'pandas') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
