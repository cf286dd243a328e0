"""The query sandbox: SQL a user typed (`gpuprices query`) reads the warehouse and nothing else.

Three layers, each enough on its own for what it covers:
- the connection (warehouse.connection, `sandboxed=True`): read-only, DuckDB's external access
  off (no other file, no network), no extension installs or loads, the configuration locked,
  a memory limit, a thread limit and no spilling to disk;
- `check_statement`, before anything runs: the text is parsed, never executed, and must be
  one SELECT (or EXPLAIN of one) whose table functions are on ALLOWED_TABLE_FUNCTIONS or are
  table macros of the warehouse. PRAGMA, CALL, SET, ATTACH, COPY, `query('...')`,
  `enable_logging()` ... are refused with one line;
- `run`: a wall-clock timeout (a timer interrupts the connection), and results made printable
  in DuckDB (BLOB, MAP, UNION ... as text; long text cut for a table), so the printing cannot
  fail or run for minutes.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from warehouse.errors import WarehouseError, WarehouseRefused
from warehouse.schema import renamed_hint

if TYPE_CHECKING:  # duckdb is imported on use: the CLI reads the ranges here at start-up
    import duckdb
    import polars as pl

    from warehouse.frames import Rows

__all__ = [
    "ALLOWED_TABLE_FUNCTIONS", "MEMORY_MIB", "THREADS", "TIMEOUT_S", "QueryLimits",
    "QueryTimeout", "check_statement", "default_limits", "run",
]

# Ranges of the query limits (the CLI options and their environment variables use them).
MEMORY_MIB = (64, 1024 * 1024)  # 64 MiB .. 1 TiB, and at most the machine's memory
THREADS = (1, 256)
TIMEOUT_S = (0.1, 86_400.0)
PREVIEW_CHARS = 1_000  # a table cell shows at most this much of a long text

# Table functions that read nothing but the warehouse, the catalog or their arguments.
ALLOWED_TABLE_FUNCTIONS = frozenset({
    "range", "generate_series", "unnest", "repeat", "repeat_row", "summary", "histogram",
    "histogram_values", "json_each", "json_tree", "icu_calendar_names", "pg_timezone_names",
    "duckdb_columns", "duckdb_constraints", "duckdb_databases", "duckdb_dependencies",
    "duckdb_functions", "duckdb_indexes", "duckdb_keywords", "duckdb_schemas",
    "duckdb_sequences", "duckdb_tables", "duckdb_types", "duckdb_views",
    "pragma_table_info", "pragma_show", "pragma_version", "pragma_database_size",
    "pragma_storage_info", "pragma_metadata_info", "pragma_collations",
})
_PLAIN_TYPES = frozenset({
    "boolean", "tinyint", "smallint", "integer", "bigint", "hugeint", "utinyint", "usmallint",
    "uinteger", "ubigint", "uhugeint", "float", "double", "decimal", "varchar", "date", "time",
    "time with time zone", "timestamp", "timestamp with time zone", "timestamp_s",
    "timestamp_ms", "timestamp_ns", "uuid", "enum",
})
_NESTED = frozenset({"list", "struct", "array"})
_LEADING_COMMENTS = re.compile(r"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*", re.S)
_EXPLAIN = re.compile(r"explain\s+(?:analy[sz]e\s+)?(.*)\Z", re.I | re.S)


class QueryTimeout(WarehouseError):
    """The query ran past its wall-clock limit and was interrupted."""


@dataclass(frozen=True, slots=True)
class QueryLimits:
    memory_mib: int
    threads: int
    timeout_s: float

    def config(self) -> dict[str, object]:
        """DuckDB settings for the sandboxed connection (set before it is locked)."""
        return {"memory_limit": f"{self.memory_mib}MiB", "threads": self.threads,
                "temp_directory": ""}  # no spilling: the memory limit is a limit


def machine_memory_mib() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (ValueError, OSError, AttributeError):
        return MEMORY_MIB[1]


def default_limits() -> QueryLimits:
    """A quarter of the machine's memory up to 4 GiB, up to 4 threads, 60 s."""
    return QueryLimits(memory_mib=max(MEMORY_MIB[0], min(4096, machine_memory_mib() // 4)),
                       threads=max(1, min(4, os.cpu_count() or 1)), timeout_s=60.0)


def _table_functions(tree: Any) -> Iterator[str]:
    if isinstance(tree, dict):
        if tree.get("type") == "TABLE_FUNCTION" and isinstance(tree.get("function"), dict):
            yield str(tree["function"].get("function_name", "")).lower()
        for value in tree.values():
            yield from _table_functions(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _table_functions(value)


def _refuse(why: str) -> WarehouseRefused:
    return WarehouseRefused(f"refused: `gpuprices query` is read-only and runs one SELECT on "
                            f"the warehouse (no files, extensions, settings or pragmas): {why}")


def check_statement(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    """The one statement of `sql` to run, checked without running anything; else
    WarehouseRefused (or WarehouseError for SQL that does not parse), one line."""
    import json

    import duckdb

    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise WarehouseError(str(exc).splitlines()[0]) from None
    if not statements:
        raise WarehouseError("no SQL statement given")
    if len(statements) > 1:
        raise _refuse(f"{len(statements)} statements given; one at a time")
    statement = statements[0]
    # DuckDB hands a PRAGMA back rewritten as a SELECT: the first word typed tells.
    typed = _LEADING_COMMENTS.sub("", sql).split(None, 1)
    first = typed[0].upper().rstrip(";") if typed else ""
    text = _LEADING_COMMENTS.sub("", statement.query)
    kind = statement.type.name
    inner = text
    if first in ("PRAGMA", "CALL") or kind not in ("SELECT", "EXPLAIN"):
        raise _refuse(f"{first if first in ('PRAGMA', 'CALL') else kind} statements are "
                      "not run")
    if kind == "EXPLAIN":
        match = _EXPLAIN.match(text)
        if not match:
            raise _refuse("an EXPLAIN of something other than a query")
        inner = match.group(1)
    row = con.execute("SELECT json_serialize_sql(?)", [inner]).fetchone()
    tree = json.loads(row[0]) if row else {"error": True}
    if tree.get("error") or len(tree.get("statements", [])) != 1:
        raise _refuse(tree.get("error_message") or "not a single SELECT")
    unknown = {f for f in _table_functions(tree) if f not in ALLOWED_TABLE_FUNCTIONS}
    if unknown:  # the warehouse's own table macros (current_price_at ...) are allowed
        unknown -= {str(r[0]).lower() for r in con.execute(
            "SELECT function_name FROM system.main.duckdb_functions() WHERE function_type = "
            "'table_macro' AND database_name NOT IN ('system', 'temp')").fetchall()}
    denied = sorted(unknown)
    if denied:
        raise _refuse(f"table function {', '.join(denied)}() is not run")
    return text


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _printable(relation: duckdb.DuckDBPyRelation, *, nested: bool,
               preview: bool) -> duckdb.DuckDBPyRelation:
    """The relation with every column in a type the output can print: BLOB, MAP, UNION, BIT,
    INTERVAL ... as text (`nested`: lists and structs kept for JSON); `preview`: a BLOB shown
    as its size and long text cut to PREVIEW_CHARS (a table on a terminal)."""
    names = relation.columns
    if len(set(names)) != len(names):
        return relation  # duplicate names cannot be projected by name; printed as they come
    expressions, changed = [], False
    for name, dtype in zip(names, relation.types, strict=True):
        column = _ident(name)
        kind = str(dtype.id).lower()
        text = str(dtype).upper()
        if kind == "blob" and preview:
            expression = f"'<' || octet_length({column}) || ' bytes>'"
        elif kind in _PLAIN_TYPES or (nested and kind in _NESTED and not any(
                word in text for word in ("BLOB", "MAP(", "UNION(", "INTERVAL", "BIT",
                                          "BIGNUM", "VARINT"))):
            expression = column
        else:
            expression = f"CAST({column} AS VARCHAR)"
        if preview and (kind == "varchar" or expression.startswith("CAST(")):
            expression = (f"CASE WHEN length({expression}) > {PREVIEW_CHARS} THEN "
                          f"left({expression}, {PREVIEW_CHARS}) || ' …' ELSE {expression} END")
        changed = changed or expression != column
        expressions.append(f"{expression} AS {column}")
    return relation.project(", ".join(expressions)) if changed else relation


def run(con: duckdb.DuckDBPyConnection, statement: str, *, timeout_s: float,
        nested: bool = True, preview: bool = False, max_rows: int | None = None,
        plain: bool = False) -> pl.DataFrame | Rows:
    """Run a checked statement under the wall-clock limit; the rows as a polars frame (`plain`:
    as DuckDB's rows when every column's type allows, warehouse.frames.relation_rows).

    QueryTimeout past `timeout_s`; WarehouseError (one line) for any DuckDB error, e.g. the
    memory limit."""
    import duckdb

    from warehouse.frames import relation_frame, relation_table

    timer = threading.Timer(timeout_s, con.interrupt)
    timer.daemon = True
    timer.start()
    try:
        relation = con.sql(statement)
        if relation is None:
            raise WarehouseError("the statement returned no rows")
        relation = _printable(relation, nested=nested, preview=preview)
        if max_rows is not None:
            relation = relation.limit(max_rows)
        return relation_table(relation) if plain else relation_frame(relation)
    except duckdb.InterruptException:
        raise QueryTimeout(f"the query ran past its time limit of {timeout_s:g} s and was "
                           "stopped (--timeout / GPUPRICES_QUERY_TIMEOUT_S)") from None
    except duckdb.OutOfMemoryException:
        raise WarehouseError(
            "the query needs more memory than its limit (--memory-limit / "
            "GPUPRICES_QUERY_MEMORY); narrow it (WHERE, LIMIT, fewer columns)") from None
    except duckdb.Error as exc:  # a column renamed by a migration: the error says its new name
        raise WarehouseError(renamed_hint(str(exc).splitlines()[0])) from None
    finally:
        timer.cancel()
