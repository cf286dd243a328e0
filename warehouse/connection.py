"""Open the warehouse: migrations on open, views refreshed, clear errors when it is busy.

DuckDB allows one writing process per file. A reader that finds a refresh holding the file
gets `WarehouseBusy` with a message saying so, instead of a raw lock error or a hang.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from contract import STALE_AFTER_H

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
VIEWS_SQL = Path(__file__).with_name("views.sql")
_LOCK_WORDS = ("could not set lock", "conflicting lock", "lock on file")
# For SQL a user typed (`gpuprices query`): the warehouse file only. No other file is read or
# written (COPY, read_csv, ATTACH, EXPORT), no extension installed or loaded, and no setting
# can be changed afterwards (SET, PRAGMA, RESET).
SANDBOX: dict[str, object] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "lock_configuration": True,
}


class WarehouseError(RuntimeError):
    """The warehouse cannot be opened or used as asked."""


class WarehouseBusy(WarehouseError):
    """Another process (a refresh) holds the write lock on the warehouse file."""


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return any(word in text for word in _LOCK_WORDS)


def migrations() -> list[tuple[int, Path]]:
    found = []
    for path in sorted(MIGRATIONS_DIR.glob("*.sql")):
        match = re.match(r"(\d+)_", path.name)
        if match:
            found.append((int(match.group(1)), path))
    return found


LATEST_SCHEMA_VERSION = max(v for v, _ in migrations())


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_version'"
    ).fetchone()
    if not exists or not exists[0]:
        return 0
    row = con.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
    return int(row[0]) if row else 0


def migrate(con: duckdb.DuckDBPyConnection) -> list[int]:
    """Apply every migration not yet recorded, each in its own transaction; returns them."""
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
        "applied_at TIMESTAMPTZ NOT NULL, description VARCHAR)"
    )
    recorded = {row[0] for row in con.execute("SELECT version FROM schema_version").fetchall()}
    applied = []
    for version, path in migrations():
        if version in recorded:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(path.read_text(encoding="utf-8"))
            con.execute(
                "INSERT INTO schema_version VALUES (?, ?, ?)",
                [version, datetime.now(UTC), path.stem],
            )
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
        applied.append(version)
    return applied


def refresh_views(con: duckdb.DuckDBPyConnection) -> None:
    """Recreate the views and macros; stale_after() carries contract.STALE_AFTER_H to SQL."""
    con.execute(f"CREATE OR REPLACE MACRO stale_after() AS INTERVAL ({int(STALE_AFTER_H)}) HOUR")
    con.execute(VIEWS_SQL.read_text(encoding="utf-8"))


def _connect(path: str | Path, read_only: bool,
             config: dict[str, object] | None = None) -> duckdb.DuckDBPyConnection:
    target = str(path)
    try:
        return duckdb.connect(target, read_only=read_only, config=config or {})
    except duckdb.Error as exc:
        if _is_lock_error(exc):
            raise WarehouseBusy(
                f"the warehouse {target} is locked by another process (a refresh is writing "
                "to it); try again when it finishes"
            ) from None
        raise WarehouseError(f"cannot open the warehouse {target}: {exc}") from None


def connect(path: str | Path, *, wait_s: float = 0.0) -> duckdb.DuckDBPyConnection:
    """Open for writing: create the file if needed, migrate, refresh views.

    `wait_s` > 0 waits that long for another writer to finish before giving up.
    """
    if str(path).startswith("ducklake:"):
        raise WarehouseError(f"{path} is a DuckLake: it is read here, written by "
                             "`gpuprices publish` from a DuckDB warehouse file")
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            con = _connect(path, read_only=False)
            break
        except WarehouseBusy:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.2)
    applied = migrate(con)
    refresh_views(con)
    _sync_catalog(con)
    if applied and applied != [v for v, _ in migrations()]:  # an existing file was upgraded
        from warehouse.summaries import rebuild_committed

        rebuild_committed(con)
    return con


def check_warehouse_file(path: str | Path) -> None:
    """WarehouseError now, before any work, when `path` exists but is not a DuckDB warehouse
    (or another process holds it). A missing file is fine: it will be created."""
    if str(path) != ":memory:" and Path(path).exists():
        _connect(path, read_only=True).close()


def connect_read_only(path: str | Path, *, sandboxed: bool = False) -> duckdb.DuckDBPyConnection:
    """Open an existing warehouse read-only: any statement that writes is refused by DuckDB.

    `sandboxed` (SQL a user typed): nothing but the warehouse file, no extensions, locked
    settings. A DuckLake reads its own data files, so there only extensions and settings are
    locked.
    """
    if str(path).startswith("ducklake:"):  # a DuckLake published by `gpuprices publish`
        from warehouse.lake import open_lake

        con = open_lake(str(path))
        if sandboxed:
            for name in ("autoinstall_known_extensions", "autoload_known_extensions",
                         "lock_configuration"):
                con.execute(f"SET {name} = {str(SANDBOX[name]).lower()}")
        return con
    if str(path) != ":memory:" and not Path(path).exists():
        raise WarehouseError(
            f"no warehouse at {path}: run `gpuprices refresh` (or `make demo`) first, "
            "or point --warehouse / GPUPRICES_WAREHOUSE at one"
        )
    config = SANDBOX if sandboxed else None
    con = _connect(path, read_only=True, config=config)
    if schema_version(con) < LATEST_SCHEMA_VERSION:
        con.close()
        # Older file: migrate once with a writable connection, then reopen read-only.
        connect(path).close()
        con = _connect(path, read_only=True, config=config)
    return con


@contextmanager
def open_warehouse(path: str | Path, *, read_only: bool = False,
                   wait_s: float = 0.0) -> Iterator[duckdb.DuckDBPyConnection]:
    con = connect_read_only(path) if read_only else connect(path, wait_s=wait_s)
    try:
        yield con
    finally:
        con.close()


def _reference_fingerprint() -> str:
    """A hash of everything gpu_catalog, plan and gpu_ownership are made from: the shipped
    files and the code that reads them (a change to either means a new sync)."""
    import hashlib

    import schemas.gpus
    import schemas.reference

    digest = hashlib.sha256()
    for path in sorted({Path(schemas.gpus.__file__), Path(schemas.reference.__file__),
                        schemas.gpus.CATALOG_PATH, schemas.reference.PLANS_PATH,
                        schemas.reference.OWNERSHIP_PATH}):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return f"reference data {digest.hexdigest()}"


def _reference_rows_hash(con: duckdb.DuckDBPyConnection) -> str:
    """An order-free hash of every row of the three reference tables (a few ms)."""
    row = con.execute("SELECT " + " || '-' || ".join(
        f"coalesce((SELECT sum(hash(t)) FROM {table} t)::VARCHAR, '0')"
        for table in ("gpu_catalog", "plan", "gpu_ownership"))).fetchone()
    return str(row[0]) if row else ""


def _sync_catalog(con: duckdb.DuckDBPyConnection) -> None:
    """Keep gpu_catalog, plan and gpu_ownership equal to the files shipped with this code.

    gpu_catalog's table comment keeps the fingerprint of those files and a hash of the three
    tables' rows as written: when both still match, the tables are equal to the files and
    nothing is validated or written (~0.35 s per open); a row changed by anything else
    (an older version, a hand edit) changes the hash and the tables are written again.
    """
    fingerprint = _reference_fingerprint()
    stored = con.execute("SELECT comment FROM duckdb_tables() WHERE table_name = 'gpu_catalog' "
                         "AND schema_name = current_schema()").fetchone()
    if stored and stored[0] == f"{fingerprint} {_reference_rows_hash(con)}":
        return
    import polars as pl

    from schemas.gpus import catalog_frame
    from schemas.reference import STATIC_KIND, load_ownership, load_plans

    static = pl.lit(STATIC_KIND).alias("kind")
    tables = {
        "gpu_catalog": catalog_frame(),
        "plan": load_plans().with_columns(static),
        "gpu_ownership": load_ownership().with_columns(static),
    }
    con.execute("BEGIN TRANSACTION")
    try:
        for table, frame in tables.items():
            con.execute(f"DELETE FROM {table}")
            con.register("_reference", frame.to_arrow())
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _reference")
            con.unregister("_reference")
        con.execute(f"COMMENT ON TABLE gpu_catalog IS "
                    f"'{fingerprint} {_reference_rows_hash(con)}'")
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
