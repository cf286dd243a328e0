"""The warehouse schema: numbered migrations, the views, and checks that a file is ours.

A migration runs only on a writable connection (warehouse.connection.connect), after
`check_objects` has found that every object the migrations and the code read is a table of
this schema, not a view, and that no macro of the file replaces a DuckDB function: a crafted
file cannot steer what a migration or a rebuild reads. Reads never migrate: `require_latest`
refuses an older file, after the same checks.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

import duckdb

from contract import LOW_STOCK_GPUS, STALE_AFTER_H
from warehouse.dialect import for_lake
from warehouse.errors import WarehouseOutdated, WarehouseRefused
from warehouse.transaction import transaction

__all__ = [
    "DENIED_CALLS", "LATEST_SCHEMA_VERSION", "MIGRATIONS_DIR", "RENAMED_COLUMNS", "VIEWS_SQL",
    "check_functions", "check_objects", "check_tables", "migrate", "migrations",
    "needs_rebuild", "refresh_views", "renamed_hint", "require_latest", "schema_version",
    "tables_at",
]

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
VIEWS_SQL = Path(__file__).with_name("views.sql")
_NAME = r'"?(\w+)"?'
_CREATE = re.compile(rf"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?{_NAME}", re.I)
_RENAME = re.compile(rf"ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?{_NAME}\s+RENAME\s+TO\s+{_NAME}",
                     re.I)
_DROP = re.compile(rf"DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?{_NAME}", re.I)
_COMMENT = re.compile(r"--[^\n]*")


# Columns renamed by a migration (the naming rule of 010: <what>_usd_per_gpu_hour): old name ->
# (version, [(table or view, new name)]). A query that still names an old column is told the
# new one (renamed_hint), so a query copied from an older README fails with the fix in hand.
RENAMED_COLUMNS: dict[str, tuple[int, list[tuple[str, str]]]] = {
    "usd_per_gpu_hour": (10, [("market_price", "market_usd_per_gpu_hour"),
                              ("market_provider_price", "median_usd_per_gpu_hour"),
                              ("daily_cheapest, daily_cheapest_segment",
                               "price_usd_per_gpu_hour")]),
    "usd_per_hour": (10, [("daily_cheapest, daily_cheapest_segment", "price_usd_per_hour")]),
    "median_usd": (10, [("market_price", "median_usd_per_gpu_hour")]),
    "min_usd": (10, [("market_price, market_provider_price", "min_usd_per_gpu_hour")]),
    "p25_usd": (10, [("market_price", "p25_usd_per_gpu_hour")]),
    "p75_usd": (10, [("market_price", "p75_usd_per_gpu_hour")]),
    "max_usd": (10, [("market_price, market_provider_price", "max_usd_per_gpu_hour")]),
    "direct_price": (10, [("source_disagreement", "direct_usd_per_gpu_hour")]),
    "aggregator_price": (10, [("source_disagreement", "aggregator_usd_per_gpu_hour")]),
}
_MISSING_COLUMN = re.compile(r'Referenced column "?(\w+)"? not found', re.I)


def renamed_hint(message: str) -> str:
    """`message` (a DuckDB error), with the new name when it names a renamed column."""
    match = _MISSING_COLUMN.search(message)
    if not match or match.group(1).lower() not in RENAMED_COLUMNS:
        return message
    old = match.group(1).lower()
    version, news = RENAMED_COLUMNS[old]
    where = "; ".join(f"{new} in {tables}" for tables, new in news)
    return f"{message} (renamed in schema version {version}: {old} is now {where})"


def migrations() -> list[tuple[int, Path]]:
    found = []
    for path in sorted(MIGRATIONS_DIR.glob("*.sql")):
        match = re.match(r"(\d+)_", path.name)
        if match:
            found.append((int(match.group(1)), path))
    return found


LATEST_SCHEMA_VERSION = max(v for v, _ in migrations())
# A migration that changes no derived table's content says so on a line of its own; an
# existing warehouse upgraded only by such migrations is not rebuilt (a rebuild of years of
# history recomputes every day's tables, one day at a time).
_KEEPS_DERIVED = "-- derived tables: unchanged"


def needs_rebuild(applied: list[int]) -> bool:
    """Do the migrations just applied to an existing warehouse change derived tables?"""
    paths = dict(migrations())
    return any(_KEEPS_DERIVED not in paths[v].read_text(encoding="utf-8").splitlines()
               for v in applied)


@cache
def tables_at(version: int) -> frozenset[str]:
    """The tables migrations 1..`version` leave (read from their SQL: create, rename, drop)."""
    tables: set[str] = {"schema_version"}
    for number, path in migrations():
        if number > version:
            break
        sql = _COMMENT.sub("", path.read_text(encoding="utf-8"))
        events = [(m.start(), "create", m.group(1), "") for m in _CREATE.finditer(sql)]
        events += [(m.start(), "rename", m.group(1), m.group(2)) for m in _RENAME.finditer(sql)]
        events += [(m.start(), "drop", m.group(1), "") for m in _DROP.finditer(sql)]
        for _, kind, name, new in sorted(events):
            if kind == "create":
                tables.add(name.lower())
            elif kind == "drop":
                tables.discard(name.lower())
            elif name.lower() in tables:
                tables.discard(name.lower())
                tables.add(new.lower())
    return frozenset(tables)


# Catalog functions called by their full name: a file's macros shadow DuckDB's own
# functions, unqualified table functions included, and even those inside
# information_schema's views. The checks below call no function a file could replace.
_FILE_DATABASES = "database_name NOT IN ('system', 'temp')"


def _objects(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """name (lower case) -> BASE TABLE | VIEW, for the main schema of the file."""
    found: dict[str, str] = {}
    for sql, kind in (("SELECT table_name FROM system.main.duckdb_tables() WHERE "
                       f"{_FILE_DATABASES} AND schema_name = 'main'", "BASE TABLE"),
                      ("SELECT view_name FROM system.main.duckdb_views() WHERE "
                       f"{_FILE_DATABASES} AND schema_name = 'main'", "VIEW")):
        for (name,) in con.execute(sql).fetchall():
            found.setdefault(str(name).lower(), kind)
    return found


# Table functions that change the database's state, run SQL given as text, or take memory
# addresses. A view or macro of the file that calls one is refused: `enable_logging` to a file,
# say, aborts the process once external access is off.
DENIED_CALLS = frozenset({
    "enable_logging", "disable_logging", "truncate_duckdb_logs", "enable_profiling",
    "disable_profiling", "checkpoint", "force_checkpoint", "query", "query_table",
    "json_execute_serialized_sql", "python_map_function", "arrow_scan", "arrow_scan_dumb",
    "pandas_scan",
})
_CALL = re.compile(r"\b([a-z_][a-z0-9_]*)\s*\(", re.I)


def check_functions(con: duckdb.DuckDBPyConnection) -> None:
    """WarehouseRefused when a macro of the file takes the name of a DuckDB function (file
    macros shadow built-ins: `hash`, `round`, `max`, `duckdb_tables` ...), or a view or macro
    of the file calls one of DENIED_CALLS. Run first; one scan of the function catalog."""
    rows = con.execute("SELECT database_name, function_name, macro_definition "
                       "FROM system.main.duckdb_functions()").fetchall()
    builtins = {str(name) for database, name, _ in rows if database == "system"}
    defined = [(str(name), str(text or "")) for database, name, text in rows
               if database not in ("system", "temp")]
    shadowing = sorted({name for name, _ in defined if name in builtins})
    if shadowing:
        raise WarehouseRefused(
            "not a gpuprices warehouse: it defines macros named like DuckDB's own functions ("
            + ", ".join(shadowing[:5]) + "); refused (nothing was read or changed)")
    views = con.execute("SELECT view_name, sql FROM system.main.duckdb_views() "
                        f"WHERE {_FILE_DATABASES}").fetchall()
    for name, text in [*defined, *((str(n), str(t or "")) for n, t in views)]:
        calls = {call.lower() for call in _CALL.findall(text)} & DENIED_CALLS
        if calls:
            raise WarehouseRefused(
                f"not a gpuprices warehouse: `{name}` calls {', '.join(sorted(calls))}(); "
                "refused (nothing was read or changed)")


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """The highest migration recorded; 0 for a file without the table. Read from the table
    only (a file whose `schema_version` is a view is refused), after `check_functions`."""
    kind = _objects(con).get("schema_version")
    if kind is None:
        return 0
    if kind != "BASE TABLE":
        raise WarehouseRefused("not a gpuprices warehouse: `schema_version` is a "
                               f"{kind.lower()}, not a table")
    return _recorded_version(con)


def _recorded_version(con: duckdb.DuckDBPyConnection) -> int:
    versions = [row[0] for row in con.execute("SELECT version FROM schema_version").fetchall()]
    return max((int(v) for v in versions if v is not None), default=0)


def check_tables(con: duckdb.DuckDBPyConnection, version: int) -> None:
    """WarehouseRefused unless every table the schema at `version` has is a BASE TABLE, not a
    view that reads something else (migrations and rebuilds read them)."""
    objects = _objects(con)
    posing = sorted(name for name in tables_at(version)
                    if objects.get(name, "BASE TABLE") != "BASE TABLE")
    if posing:
        raise WarehouseRefused(
            "not a gpuprices warehouse: " + ", ".join(f"`{n}`" for n in posing)
            + f" {'is a view' if len(posing) == 1 else 'are views'} where the schema has "
            "a table; refused (nothing was read or changed)")


def check_objects(con: duckdb.DuckDBPyConnection) -> int:
    """Everything a writer checks before the first read of the file's objects; the schema
    version found (see check_functions, schema_version, check_tables)."""
    check_functions(con)
    version = schema_version(con)
    check_tables(con, version)
    return version


def require_latest(con: duckdb.DuckDBPyConnection, where: str, *,
                   catalog_checked: bool = False) -> int:
    """Check a file opened for reading: no shadowing macro, the latest schema (reads never
    migrate: WarehouseOutdated when older; WarehouseRefused when a newer gpuprices wrote it),
    its tables tables. `catalog_checked`: a read snapshot whose seal holds (its publisher
    checked the catalog: warehouse.snapshot), so neither its functions nor its tables are
    checked again, and the version is read from its table at once."""
    if catalog_checked:
        version = _recorded_version(con)
    else:
        check_functions(con)
        version = schema_version(con)
    if version < LATEST_SCHEMA_VERSION:
        found = f"schema version {version}" if version else "no gpuprices schema"
        raise WarehouseOutdated(
            f"the warehouse {where} has {found}, this gpuprices reads version "
            f"{LATEST_SCHEMA_VERSION}: run `gpuprices migrate` (or any write command, e.g. "
            "`gpuprices refresh`) first; reads never change the file")
    if version > LATEST_SCHEMA_VERSION:
        raise WarehouseRefused(
            f"the warehouse {where} has schema version {version}, newer than this gpuprices "
            f"({LATEST_SCHEMA_VERSION}): upgrade gpuprices to read it")
    if not catalog_checked:
        check_tables(con, version)
    return version


def migrate(con: duckdb.DuckDBPyConnection, *, lake: bool = False) -> list[int]:
    """Apply every migration not yet recorded, each in its own transaction; returns them.

    The caller has run `check_objects` on the file (connection.connect does). `lake`: the
    database is a DuckLake, which takes the same DDL without keys and checks (dialect)."""
    ddl = for_lake if lake else str
    con.execute(ddl(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
        "applied_at TIMESTAMPTZ NOT NULL, description VARCHAR)"
    ))
    recorded = {row[0] for row in con.execute("SELECT version FROM schema_version").fetchall()}
    applied = []
    for version, path in migrations():
        if version in recorded:
            continue
        with transaction(con):
            # Another writer of a lake may have applied it since: check in the transaction.
            if lake and con.execute("SELECT count(*) FROM schema_version WHERE version = ?",
                                    [version]).fetchone() != (0,):
                continue
            con.execute(ddl(path.read_text(encoding="utf-8")))
            con.execute(
                "INSERT INTO schema_version VALUES (?, ?, ?)",
                [version, datetime.now(UTC), path.stem],
            )
        applied.append(version)
    return applied


def refresh_views(con: duckdb.DuckDBPyConnection) -> None:
    """Recreate the views and macros; stale_after() carries contract.STALE_AFTER_H to SQL,
    low_stock_gpus() contract.LOW_STOCK_GPUS."""
    con.execute(f"CREATE OR REPLACE MACRO stale_after() AS INTERVAL ({int(STALE_AFTER_H)}) HOUR")
    con.execute(f"CREATE OR REPLACE MACRO low_stock_gpus() AS {float(LOW_STOCK_GPUS)}")
    con.execute(VIEWS_SQL.read_text(encoding="utf-8"))
