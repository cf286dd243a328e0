"""DuckDB rows as polars frames without pyarrow: THE way the project turns a query into a frame.

`relation.pl()` goes through a pyarrow table: importing pyarrow (and numpy) costs more than
a small answer's query and its printing together (~80 ms of a read command's start-up).
polars reads DuckDB's Arrow C stream directly (the PyCapsule interface), with the same
column types as `.pl()`. A column type polars cannot read from the stream (INTERVAL) goes
through `.pl()` as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb
    import polars as pl

__all__ = ["relation_frame", "sql_frame"]

# Column types whose Arrow form polars refuses from a C stream (it asks for an opt-in).
_VIA_PYARROW = ("INTERVAL",)


def relation_frame(relation: duckdb.DuckDBPyRelation) -> pl.DataFrame:
    """The rows of `relation` as a polars frame (runs it once)."""
    import polars as pl

    if any(word in str(dtype).upper() for dtype in relation.types for word in _VIA_PYARROW):
        return relation.pl()
    return pl.DataFrame(relation)


def sql_frame(con: duckdb.DuckDBPyConnection, sql: str,
          params: Mapping[str, object] | Sequence[object] | None = None) -> pl.DataFrame:
    """The rows of one SELECT (`$name` or `?` parameters) as a polars frame."""
    return relation_frame(con.sql(sql, params=params))
