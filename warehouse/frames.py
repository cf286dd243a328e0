"""DuckDB rows as polars frames and back, without pyarrow: THE way the project moves rows
between a query and a frame.

`relation.pl()` goes through a pyarrow table: importing pyarrow (and numpy) costs more than
a small answer's query and its printing together (~80 ms of a read command's start-up).
polars reads DuckDB's Arrow C stream directly (the PyCapsule interface), with the same column
types and values as `.pl()` (tests/unit/test_frames.py). The other way, `frame.to_arrow()`
imported pyarrow for every insert of a refresh: DuckDB scans the frame's Arrow C stream
instead, which can be read once (a second scan fails loudly, "already been consumed").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb
    import polars as pl

__all__ = ["register_once", "relation_frame", "sql_frame", "temp_table"]


def relation_frame(relation: duckdb.DuckDBPyRelation) -> pl.DataFrame:
    """The rows of `relation` as a polars frame (runs it once)."""
    import polars as pl

    return pl.DataFrame(relation)


def sql_frame(con: duckdb.DuckDBPyConnection, sql: str,
              params: Mapping[str, object] | Sequence[object] | None = None) -> pl.DataFrame:
    """The rows of one SELECT (`$name` or `?` parameters) as a polars frame."""
    return relation_frame(con.sql(sql, params=params))


def register_once(con: duckdb.DuckDBPyConnection, name: str, frame: pl.DataFrame) -> None:
    """`frame` visible to SQL on `con` as `name`, for ONE statement that scans it once; the
    caller unregisters it."""
    con.register(name, frame.__arrow_c_stream__())


def temp_table(con: duckdb.DuckDBPyConnection, name: str, frame: pl.DataFrame) -> None:
    """`frame`'s rows as the temporary table `name` (replaced if it exists), for SQL that
    reads them more than once; works on read-only connections too."""
    stream = f"{name}_stream"
    register_once(con, stream, frame)
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM {stream}")
    finally:
        con.unregister(stream)
