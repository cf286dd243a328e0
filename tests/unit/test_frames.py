"""warehouse.frames: query rows as polars frames without pyarrow (the same frames `.pl()` gives),
and frames back into DuckDB the same way (the rows `to_arrow()` gave)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import date

import duckdb
import pytest

from tests.conftest import REPO
from warehouse.frames import scanned_once, sql_frame, temp_table

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


@pytest.mark.parametrize("sql", [f"{_TYPED} WHERE $keep", f"{_TYPED} WHERE NOT $keep",
                                 "SELECT range AS n FROM range(5000) WHERE $keep "
                                 "ORDER BY n DESC"])
def test_a_parameterised_query_gives_the_same_frame(con: duckdb.DuckDBPyConnection,
                                                    sql: str) -> None:
    # read through a query on the materialised rows (sql_frame): same types, values, order
    ours, theirs = sql_frame(con, sql, {"keep": True}), con.execute(sql, {"keep": True}).pl()
    assert ours.schema == theirs.schema
    assert ours.equals(theirs)
    assert con.sql("SELECT count(*) FROM duckdb_views() WHERE view_name LIKE '_sql_frame%'"
                   ).fetchone() == (0,)  # the rows are not held after the read


def test_a_parameterised_read_works_read_only_and_inside_a_transaction(tmp_path) -> None:
    path = tmp_path / "w.duckdb"
    with duckdb.connect(str(path)) as writer:
        writer.execute("CREATE TABLE t AS SELECT range AS n FROM range(10)")
    with duckdb.connect(str(path), read_only=True) as reader:
        assert sql_frame(reader, "SELECT sum(n) AS s FROM t WHERE n < $k", {"k": 4}).rows() \
            == [(6,)]
    with duckdb.connect(str(path)) as writer:
        writer.execute("BEGIN TRANSACTION")
        writer.execute("INSERT INTO t VALUES (100)")
        assert sql_frame(writer, "SELECT max(n) AS m FROM t WHERE n > $k", {"k": 0}).rows() \
            == [(100,)]
        writer.execute("ROLLBACK")


def test_parameters_by_name_and_by_position(con: duckdb.DuckDBPyConnection) -> None:
    named = sql_frame(con, "SELECT $day AS day, list_contains($m, 'H100') AS has",
                      {"day": date(2026, 1, 2), "m": ["H100"]})
    assert named.rows() == [(date(2026, 1, 2), True)]
    assert sql_frame(con, "SELECT ? + 1 AS n", [41]).rows() == [(42,)]


def test_a_small_answer_imports_neither_pyarrow_nor_numpy() -> None:
    code = ("import sys, duckdb; from warehouse.frames import sql_frame; "
            "f = sql_frame(duckdb.connect(), 'SELECT 42 AS n, now() AS t'); "
            "assert f.item(0, 'n') == 42; "
            "assert sql_frame(duckdb.connect(), 'SELECT $n AS n', {'n': 7}).item() == 7; "
            "print(sorted(m for m in ('pyarrow', 'numpy', 'pandas') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_a_frame_goes_back_with_every_type_and_value(con: duckdb.DuckDBPyConnection) -> None:
    frame = sql_frame(con, _TYPED)
    con.execute(f"CREATE TABLE typed AS {_TYPED} WHERE false")
    with scanned_once(con, "_rows", frame):
        con.execute("INSERT INTO typed BY NAME SELECT * FROM _rows")
    assert sql_frame(con, "SELECT * FROM typed").equals(frame)
    # a stream is read once: a second scan fails loudly, never reads nothing
    with scanned_once(con, "_rows", frame):
        con.execute("SELECT count(*) FROM _rows").fetchall()
        with pytest.raises(duckdb.Error, match="consumed"):
            con.execute("SELECT count(*) FROM _rows").fetchall()


def test_a_temp_table_is_read_many_times_even_read_only(tmp_path: object) -> None:
    path = f"{tmp_path}/w.duckdb"
    duckdb.connect(path).close()
    con = duckdb.connect(path, read_only=True, config={"enable_external_access": False})
    frame = sql_frame(con, "SELECT range AS n FROM range(4)")
    temp_table(con, "_rows", frame)
    assert con.execute("SELECT count(*) FROM _rows a, _rows b").fetchone() == (16,)
    temp_table(con, "_rows", frame.head(2))  # replaced
    assert con.execute("SELECT sum(n) FROM _rows").fetchone() == (1,)


def test_a_refresh_imports_no_pyarrow(tmp_path: object) -> None:
    # Inserting a batch once imported pyarrow (and numpy) for `to_arrow()`: ~60 MiB and
    # ~0.3 s of every refresh.
    code = ("import sys\nfrom contract.settings import Settings\n"
            "from flows.refresh_work import run_refresh\n"
            f"out = run_refresh(Settings(warehouse='{tmp_path}/w.duckdb'), "
            "source_names=['lambda', 'scaleway'], offline=True)\n"
            "assert [o.ok for o in out] == [True, True], out\n"
            "print('pyarrow' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, cwd=REPO,
                          env={**os.environ, "GPUPRICES_ARCHIVE": f"{tmp_path}/raw"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "False"
