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

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.util import find_spec
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb
    import polars as pl

__all__ = ["Rows", "held_query", "held_table", "relation_frame", "relation_rows",
           "relation_table", "rounded_sql", "scanned_once", "sql_dicts", "sql_frame", "sql_table",
           "temp_table"]

# DuckDB column types whose Python values (fetchall) print as the values polars gives for
# them (iter_rows): a small answer of only these prints without polars. A HUGEINT is an int
# here and a Decimal of scale 0 there, a TIMESTAMPTZ is in the session's zone both ways
# (pytz here, zoneinfo there), an ENUM a str both ways (tests/unit/test_output.py).
_NUMERIC_KINDS = frozenset({"tinyint", "smallint", "integer", "bigint", "hugeint", "utinyint",
                            "usmallint", "uinteger", "ubigint", "float", "double", "decimal"})
# A list of text is a Python list of str both ways (e.g. market_price.carried_providers).
_TEXT_LIST = "varchar[]"
_PLAIN_KINDS = frozenset({"boolean", "varchar", "date", "time", "timestamp", "timestamp_s",
                          "timestamp_ms", "timestamp with time zone", "enum", "uuid",
                          _TEXT_LIST})
# The temporary view through which sql_frame reads a parameterised query's rows.
_ROWS_VIEW = "_sql_frame_rows"


@dataclass(frozen=True)
class Rows:
    """A small answer as DuckDB's own rows (no polars): column names, which columns are
    numeric (polars' `is_numeric`), the rows."""

    columns: list[str]
    numeric: list[bool]
    rows: list[tuple[object, ...]]

    @property
    def height(self) -> int:
        return len(self.rows)

    def head(self, n: int) -> Rows:
        return Rows(self.columns, self.numeric, self.rows[:n])


def rounded_sql(expression: str, decimals: int) -> str:
    """SQL rounding a DOUBLE `expression` to `decimals` places as polars' `round` does (half
    to even, of the value times 10^decimals), so a table printed from DuckDB's rows shows the
    value a polars frame showed. DuckDB's round (half away from zero) and round_even(x, d)
    differ from it on some ties (81.01685 to 4 places; tests/reports/test_history_query.py)."""
    scale = f"{10 ** decimals}::DOUBLE"
    return f"(round_even(({expression}) * {scale}, 0) / {scale})"


def relation_frame(relation: duckdb.DuckDBPyRelation) -> pl.DataFrame:
    """The rows of `relation` as a polars frame (runs it once)."""
    import polars as pl

    return pl.DataFrame(relation)


def held_query(relation: duckdb.DuckDBPyRelation, sql: str) -> duckdb.DuckDBPyRelation:
    """`sql` run over the rows of a parameterised query's relation, named `{rows}` in it.

    With parameters DuckDB runs the query at once and holds its rows as a materialised
    relation, which its Arrow stream and the relational API (`aggregate`, `project`) read
    slowly (85k index votes: 0.8 s against 0.05 s; 53k moves counted: 0.31 s against 1 ms;
    duckdb/duckdb#22599 names the slow path, a MaterializedRelation scanned again): SQL on
    those rows reads them at the speed of a table. The rows stay held by a temporary view
    (_ROWS_VIEW) until it is dropped or the connection closes."""
    return relation.query(_ROWS_VIEW, sql.format(rows=_ROWS_VIEW))


def sql_frame(con: duckdb.DuckDBPyConnection, sql: str,
              params: Mapping[str, object] | Sequence[object] | None = None) -> pl.DataFrame:
    """The rows of one SELECT (`$name` or `?` parameters) as a polars frame."""
    with _rows_of(con, sql, params, held=bool(params)) as rows:
        return relation_frame(rows)


def sql_table(con: duckdb.DuckDBPyConnection, sql: str,
              params: Mapping[str, object] | Sequence[object] | None = None, *,
              columns: str = "*") -> Rows | pl.DataFrame:
    """The rows of one SELECT to print (relation_table: DuckDB's own, or a frame), of its
    `columns` (SQL, e.g. "* EXCLUDE (rank)", taken in the rows' order): sql_frame's twin for
    a terminal table."""
    with _rows_of(con, sql, params, columns=columns) as rows:
        return relation_table(rows)


@contextmanager
def _rows_of(con: duckdb.DuckDBPyConnection, sql: str,
             params: Mapping[str, object] | Sequence[object] | None, *, columns: str = "*",
             held: bool = True) -> Iterator[duckdb.DuckDBPyRelation]:
    """The relation of one SELECT (its `columns`) for the block; `held`: read through
    held_query, and the view that holds its rows dropped after the block."""
    relation = con.sql(sql, params=params)
    if not held:
        yield relation
        return
    try:
        yield held_query(relation, f"SELECT {columns} FROM {{rows}}")
    finally:
        con.execute(f"DROP VIEW IF EXISTS temp.main.{_ROWS_VIEW}")  # it holds the rows


def sql_dicts(con: duckdb.DuckDBPyConnection, sql: str,
              params: Mapping[str, object] | Sequence[object] | None = None
              ) -> list[dict[str, object]]:
    """The rows of one SELECT as dicts (what a frame's to_dicts gives, without polars: text
    that reads a few rows one by one, e.g. `explain`)."""
    cursor = con.execute(sql, params)
    names = [column[0] for column in cursor.description or ()]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


@contextmanager
def scanned_once(con: duckdb.DuckDBPyConnection, name: str,
                 frame: pl.DataFrame) -> Iterator[None]:
    """`frame` visible to SQL on `con` as `name` inside the block, for ONE statement that
    scans it once; unregistered however the block ends."""
    con.register(name, frame.__arrow_c_stream__())
    try:
        yield
    finally:
        con.unregister(name)


def temp_table(con: duckdb.DuckDBPyConnection, name: str, frame: pl.DataFrame) -> None:
    """`frame`'s rows as the temporary table `name` (replaced if it exists), for SQL that
    reads them more than once; works on read-only connections too."""
    with scanned_once(con, f"{name}_stream", frame):
        con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM {name}_stream")


@contextmanager
def held_table(con: duckdb.DuckDBPyConnection, name: str, rows: pl.DataFrame | str,
               params: Mapping[str, object] | None = None) -> Iterator[str]:
    """Inside the block, the temporary table `name` holds `rows` (a frame, or a SELECT and
    its parameters) for SQL that reads them more than once; dropped however the block ends.
    Yields a SELECT of them."""
    if isinstance(rows, str):
        con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {rows}", params)
    else:
        temp_table(con, name, rows)
    try:
        yield f"SELECT * FROM {name}"
    finally:
        con.execute(f"DROP TABLE IF EXISTS temp.main.{name}")


def relation_rows(relation: duckdb.DuckDBPyRelation) -> Rows | None:
    """The rows of `relation` without polars (runs it once), or None without running it when
    a column has a type whose Python value could differ from polars' (or names repeat)."""
    columns = relation.columns
    kinds = [_TEXT_LIST if str(dtype) == "VARCHAR[]" else str(dtype.id).lower()
             for dtype in relation.types]
    if len(set(columns)) != len(columns) or not all(
            kind in _NUMERIC_KINDS or kind in _PLAIN_KINDS for kind in kinds):
        return None
    if "timestamp with time zone" in kinds and find_spec("pytz") is None:
        return None  # DuckDB's client needs pytz for an aware datetime
    return Rows(list(columns), [kind in _NUMERIC_KINDS for kind in kinds], relation.fetchall())


def relation_table(relation: duckdb.DuckDBPyRelation) -> Rows | pl.DataFrame:
    """The rows of `relation` to print (runs it once): DuckDB's own when relation_rows can
    carry every column (no polars), else a polars frame."""
    rows = relation_rows(relation)
    return relation_frame(relation) if rows is None else rows
