"""DuckDB rows as polars frames without pyarrow: THE way the project turns a query into a frame.

`relation.pl()` goes through a pyarrow table: importing pyarrow (and numpy) costs more than
a small answer's query and its printing together (~80 ms of a read command's start-up).
polars reads DuckDB's Arrow C stream directly (the PyCapsule interface), with the same column
types and values as `.pl()` (tests/unit/test_frames.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb
    import polars as pl

__all__ = ["relation_frame", "sql_frame"]


def relation_frame(relation: duckdb.DuckDBPyRelation) -> pl.DataFrame:
    """The rows of `relation` as a polars frame (runs it once)."""
    import polars as pl

    return pl.DataFrame(relation)


def sql_frame(con: duckdb.DuckDBPyConnection, sql: str,
              params: Mapping[str, object] | Sequence[object] | None = None) -> pl.DataFrame:
    """The rows of one SELECT (`$name` or `?` parameters) as a polars frame."""
    return relation_frame(con.sql(sql, params=params))
