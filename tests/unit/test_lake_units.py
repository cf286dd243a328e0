"""The lake's pieces that need no server: URLs, redaction, DDL for a lake, extensions from wheels,
a local DuckLake (DuckDB-file catalog) written and kept up like a warehouse."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest

from flows.fanout import batches
from flows.refresh_work import refresh_now
from warehouse.connection import connect, connect_read_only
from warehouse.dialect import for_lake
from warehouse.errors import WarehouseError
from warehouse.extensions import extension_path, load_extension, s3_secret
from warehouse.lake import lake_target, redact, upkeep_lake
from warehouse.schema import MIGRATIONS_DIR, migrations


def test_passwords_never_survive_redaction() -> None:
    text = redact("host=x password=hunter2-x dbname=y; postgresql://me:hunter2-y@h/db "
                  "password='two words' PASSWORD = hunter2-z\"tail")
    assert "hunter2" not in text and "two words" not in text
    assert "host=x" in text and "dbname=y" in text


@pytest.mark.parametrize(("url", "words"), [
    ("md:prices", "MotherDuck is not supported"),
    ("ducklake:mysql:host=x", "unknown DuckLake catalog 'mysql'"),
    ("iceberg:/x", "is not a DuckLake URL"),
    ("ducklake:postgres:postgresql://u@h/db", "libpq settings"),
])
def test_a_lake_url_we_cannot_open_is_one_line(url: str, words: str) -> None:
    with pytest.raises(WarehouseError, match=words) as caught:
        lake_target(url, env={})
    assert "\n" not in str(caught.value)


def test_data_paths() -> None:
    assert lake_target("ducklake:/srv/c.ducklake", env={}).data_path == "/srv/c.ducklake.files/"
    assert lake_target("ducklake:postgres:dbname=x", env={}).data_path is None
    with pytest.raises(WarehouseError, match="AWS_ACCESS_KEY_ID"):
        lake_target("ducklake:postgres:dbname=x", "s3://b/p/", env={})
    with pytest.raises(WarehouseError, match="only a folder or s3://"):
        lake_target("ducklake:postgres:dbname=x", "gs://b/p/", env={})


def test_the_migrations_lose_only_keys_checks_and_indexes_for_a_lake() -> None:
    for _, path in migrations():
        sql = for_lake(path.read_text(encoding="utf-8"))
        # a word boundary: a table may be named index_check
        assert "PRIMARY KEY" not in sql.upper() and not re.search(r"\bCHECK\s*\(", sql, re.I)
        assert "ON CONFLICT" not in sql.upper()
    text = for_lake((MIGRATIONS_DIR / "009_fx_rates.sql").read_text(encoding="utf-8"))
    assert "per_eur    DOUBLE NOT NULL," in text and "capture_id VARCHAR NOT NULL\n)" in text


def test_every_extension_loads_from_its_wheel_and_the_secret_is_redacted() -> None:
    con = duckdb.connect(config={"autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False})
    try:
        for name in ("ducklake", "postgres_scanner", "sqlite_scanner", "httpfs"):
            assert extension_path(name).is_file()
            load_extension(con, name)
        assert s3_secret(con, {"AWS_ACCESS_KEY_ID": "AKIAEXAMPLEKEY",
                               "AWS_SECRET_ACCESS_KEY": "very-secret-value-123",
                               "AWS_ENDPOINT_URL": "http://127.0.0.1:9"})
        shown = str(con.execute("SELECT * FROM duckdb_secrets()").fetchall())
        assert "very-secret-value-123" not in shown and "127.0.0.1:9" in shown
        assert not s3_secret(con, {})
    finally:
        con.close()


def test_batches() -> None:
    assert batches(list("abcdefg"), 3) == [["a", "b", "c"], ["d", "e", "f"], ["g"]]
    with pytest.raises(ValueError, match="out of range"):
        batches(["a"], 0)


def test_a_file_catalog_lake_is_a_warehouse_that_upkeep_keeps_small(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPRICES_ARCHIVE", str(tmp_path / "raw"))
    url = f"ducklake:{tmp_path / 'catalog.ducklake'}"
    names = ["lambda", "vastai"]
    assert all(o.ok for o in refresh_now(names, True, url).outcomes)
    assert all(o.ok for o in refresh_now(names, True, str(tmp_path / "w.duckdb")).outcomes)
    sql = "SELECT source, offering, region, pricing, price_usd_per_hour FROM latest_price " \
          "ORDER BY ALL"
    lake, file = connect_read_only(url), connect_read_only(tmp_path / "w.duckdb")
    try:
        assert lake.execute(sql).fetchall() == file.execute(sql).fetchall()
        snapshots = lake.execute("SELECT count(*) FROM lake.snapshots()").fetchone()
    finally:
        lake.close()
        file.close()
    connect(url).close()  # opening an up-to-date lake writes nothing
    after = connect_read_only(url)
    try:
        assert after.execute("SELECT count(*) FROM lake.snapshots()").fetchone() == snapshots
    finally:
        after.close()
    kept = upkeep_lake(url, keep=timedelta(0))
    assert kept.snapshots_after == 1 < kept.snapshots_before
    # Inlined rows become files; every file left on disk is one a snapshot needs.
    on_disk = list((tmp_path / "catalog.ducklake.files").rglob("*.parquet"))
    assert kept.files_deleted > 0 and len(on_disk) == kept.files_after
    again = connect_read_only(url)
    try:
        assert again.execute(sql).fetchall() and again.execute(
            "SELECT count(*) FROM observation").fetchone()[0] > 0
    finally:
        again.close()


def test_no_connection_prints_a_progress_bar(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """DuckDB draws its bar on stdout after 2 s, into `-f csv` output and workers' pipes."""
    monkeypatch.setenv("GPUPRICES_ARCHIVE", str(tmp_path / "raw"))
    file, lake = tmp_path / "w.duckdb", f"ducklake:{tmp_path / 'c.ducklake'}"
    connect(file).close()
    openers = [lambda: connect(":memory:"), lambda: connect_read_only(file),
               lambda: connect_read_only(file, sandboxed=True), lambda: connect(lake),
               lambda: connect_read_only(lake, sandboxed=True)]
    for opener in openers:  # one at a time: a DuckDB-file catalog opens once per process
        con = opener()
        try:
            assert con.execute("SELECT current_setting('enable_progress_bar')").fetchone() \
                == (False,)
        finally:
            con.close()
    sandbox = connect_read_only(file, sandboxed=True)
    try:  # the sandbox's settings are still locked after the bar is turned off
        with pytest.raises(duckdb.Error, match="locked"):
            sandbox.execute("SET enable_progress_bar = true")
    finally:
        sandbox.close()


def test_upkeep_rewrites_files_whose_rows_were_mostly_replaced(tmp_path: Path) -> None:
    """A derived table rewritten per landing (DELETE then INSERT) keeps every replaced row in
    its files until upkeep rewrites them; afterwards reads scan only live rows."""
    from warehouse.lake import LAKE_ALIAS, lake_connection, upkeep

    url = f"ducklake:{tmp_path / 'catalog.ducklake'}"
    con = lake_connection(url, str(tmp_path / "data"), read_only=False)
    meta = f"__ducklake_metadata_{LAKE_ALIAS}"
    live = (f"SELECT (SELECT count(*) FROM {meta}.ducklake_delete_file WHERE end_snapshot IS "
            f"NULL), (SELECT sum(record_count) FROM {meta}.ducklake_data_file WHERE "
            f"end_snapshot IS NULL)")
    try:
        con.execute("CREATE TABLE state (source VARCHAR, price DOUBLE)")
        con.execute("SET ducklake_default_data_inlining_row_limit = 0")  # files, not inlined
        con.execute("INSERT INTO state SELECT 's' || range, 0 FROM range(600)")
        for night in range(1, 6):  # each night replaces a sixth of the rows (other sources)
            con.execute("BEGIN")
            con.execute("DELETE FROM state WHERE CAST(source[2:] AS INT) % 6 = ?", [night])
            con.execute("INSERT INTO state SELECT 's' || range, ? FROM range(600) "
                        "WHERE range % 6 = ?", [night, night])
            con.execute("COMMIT")
        deletes, rows_in_files = con.execute(live).fetchone()
        assert deletes == 1 and rows_in_files == 1100  # the first file: 500 of 600 rows dead
        upkeep(con, keep=timedelta(0))
        assert con.execute(live).fetchone() == (0, 600)
        assert con.execute("SELECT count(*), count(DISTINCT source), sum(price) FROM state"
                           ).fetchone() == (600, 600, 100 * (1 + 2 + 3 + 4 + 5))
    finally:
        con.close()
