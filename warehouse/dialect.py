"""One schema, two engines: what a DuckLake warehouse cannot take, and writes that hold on both.

The migrations, views and market tables are written once, for DuckDB. A DuckLake catalog has
no PRIMARY KEY, UNIQUE, CHECK or index (DuckLake: "constraints are not supported"), so on a
lake `for_lake` drops them from the DDL; the write path never relies on them: every insert
that a key used to guard is an explicit check (NOT EXISTS, or DELETE then INSERT) inside a
transaction that DuckLake's conflict check makes serial (warehouse.transaction).
"""

from __future__ import annotations

import re

import duckdb

__all__ = ["for_lake", "is_lake_url", "on_lake"]

_INLINE_KEY = re.compile(r"\s+(?:PRIMARY\s+KEY|UNIQUE)\b(?!\s*\()", re.I)
_TABLE_KEY = re.compile(r",\s*(?:PRIMARY\s+KEY|UNIQUE)\s*\([^()]*\)", re.I)
_CHECK = re.compile(r"\s+CHECK\s*\((?:[^()]|\([^()]*\))*\)", re.I)
_INDEX = re.compile(r"CREATE\s+(?:UNIQUE\s+)?INDEX\b[^;]*;", re.I)
_DO_NOTHING = re.compile(r"\s+ON\s+CONFLICT\s+DO\s+NOTHING", re.I)
_COMMENT = re.compile(r"--[^\n]*")


def for_lake(sql: str) -> str:
    """`sql` (DDL of this project) without the constraints and indexes DuckLake refuses.

    A migration's `INSERT ... ON CONFLICT DO NOTHING` fills a table it has just created from
    grouped rows, so without the key it inserts the same rows."""
    sql = _COMMENT.sub("", sql)
    for pattern in (_TABLE_KEY, _INLINE_KEY, _CHECK, _INDEX, _DO_NOTHING):
        sql = pattern.sub("", sql)
    return sql


def is_lake_url(value: object) -> bool:
    """Does a --warehouse value name a lake (or MotherDuck) rather than a DuckDB file?"""
    return str(value).startswith(("ducklake:", "md:"))


def on_lake(con: duckdb.DuckDBPyConnection) -> bool:
    """Is the connection's default database a DuckLake (not a DuckDB file)?"""
    row = con.execute("SELECT type FROM system.main.duckdb_databases() "
                      "WHERE database_name = current_database()").fetchone()
    return bool(row) and str(row[0]) == "ducklake"
