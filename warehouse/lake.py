"""Publish the warehouse to a DuckLake catalog, for readers past one machine.

The DuckDB file stays the single writer (refresh, backfill, reparse): its idempotent appends
rely on PRIMARY KEY / ON CONFLICT, which DuckLake does not support. `publish` then copies every
table into a DuckLake catalog (metadata in a DuckDB, SQLite or Postgres catalog; data as
Parquet files under DATA_PATH, a local folder or object storage) in one DuckLake transaction,
and recreates the views there, so other machines query `latest_price` & co. from the lake
without touching the DuckDB file or its lock.

Lake URL: $GPUPRICES_LAKE, e.g. `ducklake:/srv/gpu/catalog.ducklake` (a DuckDB catalog file),
`ducklake:sqlite:/srv/gpu/catalog.sqlite` or `ducklake:postgres:dbname=gpu host=...`; data
folder: $GPUPRICES_LAKE_DATA_PATH (default: `<catalog>.files/` beside a catalog file).
MotherDuck works the same way with an `md:` database instead of a lake (not tested here).

Copying is incremental where it matters: observation and quarantine rows are rewritten only for
captures whose rows changed (new captures, re-parses); the other tables are small or derived
and are replaced whole. A table whose columns changed (a new migration) is recreated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import duckdb

from warehouse.schema import refresh_views

LAKE_ALIAS = "lake"
BY_CAPTURE = ("observation", "quarantine")  # large: copied per changed capture


@dataclass(frozen=True, slots=True)
class PublishResult:
    tables: dict[str, int]  # table -> rows in the lake after publishing
    captures_copied: int
    recreated: tuple[str, ...]


def lake_settings(env: Mapping[str, str]) -> tuple[str, str | None] | None:
    url = env.get("GPUPRICES_LAKE")
    return (url, env.get("GPUPRICES_LAKE_DATA_PATH") or None) if url else None


def default_data_path(url: str) -> str | None:
    """`<catalog file>.files/` for a file catalog; None (DuckLake's default) otherwise."""
    match = re.fullmatch(r"ducklake:(?:duckdb:|sqlite:)?([^:]+)", url)
    return f"{match.group(1)}.files/" if match else None


def load_ducklake(con: duckdb.DuckDBPyConnection) -> None:
    """LOAD ducklake, from the `duckdb-extension-ducklake` wheel when it is not installed.

    The wheel ships the extension binary, so this works offline (no extension download).
    """
    try:
        con.execute("LOAD ducklake")
        return
    except duckdb.Error:
        pass
    import duckdb_extension_ducklake

    root = Path(duckdb_extension_ducklake.__file__).parent / "extensions"
    found = sorted(root.glob(f"v{duckdb.__version__}/*/ducklake.duckdb_extension")) + \
        sorted(root.glob(f"v{duckdb.__version__}/ducklake.duckdb_extension"))
    if not found:
        raise RuntimeError(f"no ducklake extension for DuckDB {duckdb.__version__} under {root}")
    con.execute(f"LOAD '{found[0]}'")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _ident(name: str) -> str:
    """A table name as a quoted identifier: names come from the file being published."""
    return '"' + name.replace('"', '""') + '"'


def attach_lake(con: duckdb.DuckDBPyConnection, url: str, data_path: str | None = None, *,
                read_only: bool = False) -> None:
    if not url.startswith("ducklake:"):
        raise ValueError(f"not a DuckLake URL: {url!r} (expected ducklake:<catalog>)")
    load_ducklake(con)
    options = []
    data_path = data_path or default_data_path(url)
    if data_path and not read_only:
        options.append(f"DATA_PATH {_quote(data_path)}")
    if read_only:
        options.append("READ_ONLY")
    suffix = f" ({', '.join(options)})" if options else ""
    con.execute(f"ATTACH {_quote(url)} AS {LAKE_ALIAS}{suffix}")


def _columns(con: duckdb.DuckDBPyConnection, database: str, table: str) -> list[tuple[str, str]]:
    return [(str(r[0]), str(r[1])) for r in con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = ? "
        "AND schema_name = 'main' AND table_name = ? ORDER BY column_index",
        [database, table]).fetchall()]


def _tables(con: duckdb.DuckDBPyConnection, database: str) -> list[str]:
    return [str(r[0]) for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main' "
        "ORDER BY table_name", [database]).fetchall()]


def _copy_changed_captures(con: duckdb.DuckDBPyConnection, table: str) -> int:
    """Rewrite the rows of captures whose (count, run ids) differ between warehouse and lake."""
    name = _ident(table)
    signature = ("SELECT capture_id, count(*) AS n, min(run_id) AS r0, max(run_id) AS r1 "
                 "FROM {db}.main.{t} GROUP BY capture_id")
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE _changed AS "
        f"SELECT capture_id FROM (({signature.format(db='wh', t=name)}) EXCEPT "
        f"({signature.format(db=LAKE_ALIAS, t=name)})) "
        f"UNION SELECT capture_id FROM (({signature.format(db=LAKE_ALIAS, t=name)}) EXCEPT "
        f"({signature.format(db='wh', t=name)}))"
    )
    con.execute(f"DELETE FROM {LAKE_ALIAS}.main.{name} "
                f"WHERE capture_id IN (SELECT capture_id FROM _changed)")
    con.execute(f"INSERT INTO {LAKE_ALIAS}.main.{name} SELECT * FROM wh.main.{name} "
                f"WHERE capture_id IN (SELECT capture_id FROM _changed)")
    row = con.execute("SELECT count(*) FROM _changed").fetchone()
    return int(row[0]) if row else 0


def publish(warehouse: str | Path, url: str, data_path: str | None = None) -> PublishResult:
    """Copy the warehouse's tables and views into the DuckLake at `url` (one transaction).

    `warehouse`: the file to copy from, normally its read snapshot
    (warehouse.connection.read_source), so publishing never holds up a refresh."""
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH {_quote(str(warehouse))} AS wh (READ_ONLY)")
        attach_lake(con, url, data_path)
        lake_tables = set(_tables(con, LAKE_ALIAS))
        recreated: list[str] = []
        captures = 0
        con.execute("BEGIN TRANSACTION")
        for table in _tables(con, "wh"):
            name = _ident(table)
            same_shape = table in lake_tables and \
                _columns(con, "wh", table) == _columns(con, LAKE_ALIAS, table)
            if not same_shape:
                # CREATE ... AS keeps columns and types, not constraints (DuckLake has none).
                con.execute(f"DROP TABLE IF EXISTS {LAKE_ALIAS}.main.{name}")
                con.execute(f"CREATE TABLE {LAKE_ALIAS}.main.{name} AS "
                            f"SELECT * FROM wh.main.{name}")
                recreated.append(table)
            elif table in BY_CAPTURE:
                captures += _copy_changed_captures(con, table)
            else:
                con.execute(f"DELETE FROM {LAKE_ALIAS}.main.{name}")
                con.execute(f"INSERT INTO {LAKE_ALIAS}.main.{name} "
                            f"SELECT * FROM wh.main.{name}")
        con.execute(f"USE {LAKE_ALIAS}")
        refresh_views(con)
        con.execute("COMMIT")
        counts = {}
        for table in _tables(con, LAKE_ALIAS):
            row = con.execute(f"SELECT count(*) FROM {LAKE_ALIAS}.main.{_ident(table)}"
                              ).fetchone()
            counts[table] = int(row[0]) if row else 0
        return PublishResult(counts, captures, tuple(recreated))
    finally:
        con.close()


def open_lake(url: str, data_path: str | None = None) -> duckdb.DuckDBPyConnection:
    """A read-only connection to a published lake, with the lake as the default database."""
    con = duckdb.connect()
    attach_lake(con, url, data_path, read_only=True)
    con.execute(f"USE {LAKE_ALIAS}")
    return con
