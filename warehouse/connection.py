"""Open the warehouse: writers migrate it and publish read snapshots; readers never block them.

Writers (`connect`, `open_warehouse`) open the DuckDB file itself: they check that the objects
the code reads are tables of this schema (warehouse.schema.check_objects), migrate, refresh the
views, and close by publishing a read snapshot (warehouse.snapshot). Readers
(`connect_read_only`) open the newest snapshot, so a refresh and any number of readers run at
once; they never migrate or write, and refuse an older schema with one line.

No connection to a warehouse file can read another file: DuckDB's external access is off
(no read_csv/read_text/COPY/ATTACH, no extensions), so nothing a file defines (a view, a
macro) can read outside it. SQL a user typed gets SANDBOX (the configuration locked too) and
the query limits (warehouse.sandbox).
"""

from __future__ import annotations

import logging
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from contract.files import link_target
from warehouse import snapshot
from warehouse.engine import NO_FILES, on_threads, open_duckdb
from warehouse.errors import WarehouseBusy, WarehouseError, WarehouseOutdated, WarehouseRefused
from warehouse.frames import scanned_once
from warehouse.held_prices import trust as trust_held_prices
from warehouse.lake import (
    LAKE_ALIAS,
    close_lake,
    ensure_token_table,
    is_lake_url,
    lake_connection,
    lake_target,
    open_lake,
    redact,
    views_fingerprint,
)
from warehouse.lock import busy_message, writer_lock
from warehouse.sandbox import QueryLimits
from warehouse.schema import (
    LATEST_SCHEMA_VERSION,
    MIGRATIONS_DIR,
    VIEWS_SQL,
    check_objects,
    migrate,
    migrations,
    needs_rebuild,
    refresh_views,
    require_latest,
    schema_version,
)
from warehouse.transaction import TOKEN_TABLE, retrying, transaction

__all__ = [
    "LATEST_SCHEMA_VERSION", "MIGRATIONS_DIR", "NO_FILES", "READER_WAIT_S", "REFRESH_THREADS",
    "SANDBOX",
    "VIEWS_SQL", "WarehouseBusy", "WarehouseError", "WarehouseOutdated", "WarehouseRefused",
    "check_warehouse_file", "close_warehouse", "connect", "connect_read_only", "cursor",
    "migrate", "migrations", "open_warehouse", "read_source", "reading", "refresh_views",
    "schema_version", "sync_reference",
]

log = logging.getLogger("gpuprices.warehouse")

_LOCK_WORDS = ("could not set lock", "conflicting lock", "lock on file")
# For SQL a user typed (`gpuprices query`): also no setting can be changed afterwards.
SANDBOX: dict[str, object] = {**NO_FILES, "lock_configuration": True}
# A refresh's writer runs DuckDB on one thread: a night's landings are many small statements
# (a batch is smaller than a row group, so its insert is not parallel anyway), and a second
# thread only adds the cost of handing work over: 0.85x the CPU of a quiet 32-source night on
# 2 cores, and no slower (BENCHMARKS.md section 17).
REFRESH_THREADS = 1
# A writer waits this long for readers that opened the warehouse file itself to close it.
READER_WAIT_S = 30.0
# A holder DuckDB named but no lock table shows any more has just closed: look again briefly.
GONE_HOLDER_WAIT_S = 2.0
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"))
_DUCKDB_MAGIC = b"DUCK"  # bytes 8..12 of every DuckDB database file


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return any(word in text for word in _LOCK_WORDS)


def _is_memory(path: str | Path) -> bool:
    return str(path) == ":memory:"


def _file(path: str | Path) -> Path:
    """The real file behind `path` (a symlink followed); WarehouseError, one line, when it
    exists but is no regular file (a directory, a FIFO, a device: opening one would hang or
    fail deep inside DuckDB) or cannot be looked at."""
    target = link_target(path)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return target
    except OSError as exc:
        raise WarehouseError(f"cannot use the warehouse {path}: {exc.strerror or exc}") from None
    for check, kind in _KINDS:
        if check(mode):
            raise WarehouseError(f"the warehouse {path} is {kind}, not a DuckDB file")
    return target



def _open(path: Path, *, read_only: bool, config: dict[str, object], shown: str | Path,
          warehouse: Path) -> duckdb.DuckDBPyConnection:
    try:
        return open_duckdb(str(path), read_only=read_only, config=config)
    except duckdb.Error as exc:
        text = str(exc)
        if _is_lock_error(exc):
            message, role = busy_message(shown, text, writing=not read_only,
                                         read_path=snapshot.read_path(warehouse))
            raise WarehouseBusy(message, role) from None
        raise WarehouseError(f"cannot open the warehouse {shown}: "
                             f"{text.splitlines()[0]}") from None


def connect(path: str | Path, *, wait_s: float = 0.0,
            threads: int | None = None) -> duckdb.DuckDBPyConnection:
    """Open for writing: create the file if needed, check it, migrate, refresh views, and mark
    runs whose process is gone (a kill -9) as abandoned.

    `wait_s` > 0 waits that long for another writer to finish before giving up; readers that
    opened the file itself (not a snapshot) are waited for up to READER_WAIT_S.
    `threads`: DuckDB's worker threads for a file's connection (None: DuckDB's default, one
    per core). A refresh asks for one (REFRESH_THREADS); a lake keeps its default.
    Close a lake's connection with `close_warehouse` (warehouse.lake.close_lake says why).
    """
    if threads is not None and threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    if is_lake_url(path):  # many writers at once: warehouse.lake, warehouse.transaction
        return open_lake_writer(str(path))
    if _is_memory(path):
        con = open_duckdb(":memory:", config=_with_threads(NO_FILES, threads))
        migrate(con)
        refresh_views(con)
        sync_reference(con)
        return con
    target = _file(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WarehouseError(f"cannot create the warehouse {path}: "
                             f"{exc.strerror or exc}") from None
    started = time.monotonic()
    gone_at: float | None = None  # when a holder was first seen gone, in this run of them
    while True:
        try:
            con = _open(target, read_only=False, config=_with_threads(NO_FILES, threads),
                        shown=path, warehouse=target)
            break
        except WarehouseBusy as busy:
            now = time.monotonic()
            if busy.role is None:
                # The holder closed between DuckDB's look and ours (a reader we waited for,
                # say): its brief wait runs from when it was first seen gone, not from the
                # start of the whole wait.
                gone_at = gone_at if gone_at is not None else now
                give_up = max(started + wait_s, gone_at + GONE_HOLDER_WAIT_S)
            else:
                gone_at = None
                give_up = started + {"reader": max(wait_s, READER_WAIT_S),
                                     "writer": wait_s}[busy.role]
            if now >= give_up:
                raise
            time.sleep(0.2)
    try:
        _prepare(con, path)
    except BaseException:
        con.close()
        raise
    return con


def _with_threads(config: dict[str, object], threads: int | None) -> dict[str, object]:
    return {**config, "threads": threads} if threads is not None else dict(config)


def _prepare(con: duckdb.DuckDBPyConnection, path: str | Path) -> None:
    try:
        check_objects(con)  # before anything reads the file's objects
        applied = migrate(con)
        refresh_views(con)
        sync_reference(con)
        upgraded = applied and applied != [v for v, _ in migrations()]  # an existing file
        if upgraded and needs_rebuild(applied):
            from warehouse.summaries import rebuild_committed

            with on_threads(con, None):  # years of history: not a night's work
                rebuild_committed(con)
        _mark_abandoned_runs(con)
    except duckdb.Error as exc:
        raise WarehouseError(f"cannot prepare the warehouse {path}: "
                             f"{str(exc).splitlines()[0]}") from None


def _mark_abandoned_runs(con: duckdb.DuckDBPyConnection) -> None:
    """Runs still `running` belong to a process that is gone, when this connection is the only
    one to the file: DuckDB's write lock keeps other processes out, and no other connection of
    this process is in the middle of one. Mark them `abandoned` with a finish time."""
    row = con.execute("SELECT count FROM system.main.duckdb_connection_count()").fetchone()
    if not row or int(row[0]) != 1:
        return
    con.execute(
        "UPDATE refresh_run SET status = 'abandoned', finished_at = now(), "
        "note = coalesce(note || '; ', '') || 'abandoned: its process ended before it "
        "finished (killed?)' WHERE status = 'running'")


def check_warehouse_file(path: str | Path) -> None:
    """WarehouseError now, before any work, when `path` exists but is not a DuckDB file (a
    directory, a FIFO, another kind of file). A missing or empty file is fine: it will be
    created. Reads the first bytes only: never waits for, nor blocks, another process."""
    if is_lake_url(path):
        lake_target(str(path))  # MotherDuck, an unknown catalog, S3 without keys: one line
        return
    if _is_memory(path):
        return
    target = _file(path)
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise WarehouseError(f"cannot read the warehouse {path}: {exc.strerror or exc}") from None
    try:
        head = os.read(fd, 16)
    finally:
        os.close(fd)
    if head and head[8:12] != _DUCKDB_MAGIC:
        raise WarehouseError(f"the warehouse {path} is not a valid DuckDB database file")


def _open_read(path: str | Path, config: dict[str, object]
               ) -> tuple[duckdb.DuckDBPyConnection, Path, bool]:
    """The connection, the file it opened, and whether that file is a snapshot whose seal
    holds (warehouse.snapshot: its publisher checked the catalog; checked once after
    opening, so the file read is the file sealed)."""
    target = _file(path)
    if not target.exists():
        raise WarehouseError(
            f"no warehouse at {path}: run `gpuprices refresh` (or `make demo`) first, "
            "or point --warehouse / GPUPRICES_WAREHOUSE at one"
        )
    for _ in range(3):  # a snapshot may be pruned between finding and opening it: look again
        published = snapshot.current(target)
        try:
            if published is not None and published.matches(target):
                con = _open(published.path, read_only=True, config=config, shown=path,
                            warehouse=target)
                return con, published.path, published.sealed()
            try:
                return _open(target, read_only=True, config=config, shown=path,
                             warehouse=target), target, False
            except WarehouseError:
                if published is None:
                    raise
                # A writer has the file (another process, or this one: DuckDB refuses a
                # second configuration): read the last snapshot published.
                con = _open(published.path, read_only=True, config=config, shown=path,
                            warehouse=target)
                return con, published.path, published.sealed()
        except WarehouseBusy:
            raise
        except WarehouseError:
            if published is None or published.path.exists():
                raise
    raise WarehouseBusy(f"the read snapshots of {path} keep changing; try again")


def connect_read_only(path: str | Path, *, sandboxed: bool = False,
                      limits: QueryLimits | None = None) -> duckdb.DuckDBPyConnection:
    """Open the warehouse for reading (its newest read snapshot: see `read_source`); any
    statement that writes is refused by DuckDB, and no other file can be read.

    Never migrates or writes: an older schema is refused with one line (WarehouseOutdated),
    as is a file whose tables are views or whose macros shadow DuckDB's functions.
    `sandboxed` (SQL a user typed): the configuration locked too, and `limits` (memory,
    threads; the timeout is warehouse.sandbox.run's). A DuckLake reads its own data files, so
    there only extensions and settings are locked.
    """
    if is_lake_url(path):  # a lake warehouse, or one published by `gpuprices publish`
        con = open_lake(str(path))
        try:
            require_latest(con, redact(str(path)))
        except BaseException:
            close_lake(con)
            raise
        if sandboxed:
            for name in ("autoinstall_known_extensions", "autoload_known_extensions",
                         "lock_configuration"):
                con.execute(f"SET {name} = {str(SANDBOX[name]).lower()}")
        return con
    config = dict(SANDBOX if sandboxed else NO_FILES)
    if sandboxed and limits is not None:
        config.update(limits.config())
    if _is_memory(path):
        return open_duckdb(":memory:", config=config)
    return _open_checked(path, config)[0]


@contextmanager
def reading(path: str | Path, *, sandboxed: bool = False,
            limits: QueryLimits | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """`connect_read_only` for one question, closed after it; a query that fails on it (e.g.
    a view of the file that reads another file: refused) is a WarehouseError, one line. What
    the CLI, the Python API and the MCP server read through."""
    con = connect_read_only(path, sandboxed=sandboxed, limits=limits)
    try:
        yield con
    except duckdb.Error as exc:
        raise WarehouseError(f"cannot read the warehouse {path}: "
                             f"{str(exc).splitlines()[0]}") from None
    finally:
        close_warehouse(con, path)


def read_source(path: str | Path) -> Path:
    """The file a reader of the warehouse at `path` opens now (checked like
    `connect_read_only`): the newest read snapshot when it holds what the warehouse holds,
    or while a writer has the file; else the warehouse file itself."""
    if is_lake_url(path):
        raise WarehouseError(f"{redact(str(path))} is a lake already: readers open it directly "
                             "(-w), there is nothing to publish")
    con, source = _open_checked(path, dict(NO_FILES))
    con.close()
    return source


def _open_checked(path: str | Path, config: dict[str, object]
                  ) -> tuple[duckdb.DuckDBPyConnection, Path]:
    con, source, sealed = _open_read(path, config)
    try:
        require_latest(con, str(path), catalog_checked=sealed)
        if sealed:  # the file its publisher stored the current prices in, unchanged
            trust_held_prices(con)
    except duckdb.Error as exc:
        con.close()
        raise WarehouseRefused(f"cannot read the warehouse {path}: "
                               f"{str(exc).splitlines()[0]}") from None
    except BaseException:
        con.close()
        raise
    return con, source


@contextmanager
def open_warehouse(path: str | Path, *, read_only: bool = False, wait_s: float = 0.0,
                   command: str = "write", threads: int | None = None
                   ) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection for the duration. Writable: holds the writers' lock (warehouse.lock)
    and, on the way out, publishes the read snapshot readers open. `threads`: as `connect`'s
    (a writer's only)."""
    if read_only:
        con = connect_read_only(path)
        try:
            yield con
        finally:
            close_warehouse(con, path)
        return
    if _is_memory(path) or is_lake_url(path):  # a lake: no file lock, no read snapshot
        con = connect(path, threads=threads)
        try:
            yield con
        finally:
            close_warehouse(con, path)
        return
    target = _file(path)  # a FIFO or a folder is refused before anything is made beside it
    with writer_lock(path, command=command, wait_s=wait_s):
        published = snapshot.current(target)
        stale = target.exists() and (published is None or not published.matches(target))
        con = connect(path, wait_s=wait_s, threads=threads)
        try:
            if stale:  # no snapshot of the file as it stands (first write, after a crash ...):
                _publish(con, path)  # publish one now, so readers need not wait for this write
            yield con
        finally:
            try:
                _publish(con, path)
            finally:
                con.close()


def close_warehouse(con: duckdb.DuckDBPyConnection, path: str | Path) -> None:
    """Close a connection opened on the warehouse at `path`; a lake's is detached first
    (warehouse.lake.close_lake says why)."""
    if is_lake_url(path):
        close_lake(con)
    else:
        con.close()


def _publish(con: duckdb.DuckDBPyConnection, path: str | Path) -> None:
    try:
        snapshot.publish(con, path)
    except (WarehouseError, duckdb.Error) as exc:  # readers keep the previous one
        log.warning("no new read snapshot of %s: %s", path, str(exc).splitlines()[0])


def cursor(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A cursor of `con` (for another thread) that reads and writes the same warehouse: a new
    cursor starts in DuckDB's default database, so on a lake it is pointed at the lake."""
    new = con.cursor()
    found = new.execute("SELECT count(*) FROM system.main.duckdb_databases() "
                        "WHERE database_name = ? AND type = 'ducklake'", [LAKE_ALIAS]).fetchone()
    if found and found[0]:
        new.execute(f"USE {LAKE_ALIAS}")
    return new


def open_lake_writer(url: str) -> duckdb.DuckDBPyConnection:
    """A connection that writes the warehouse in the lake at `url` (created when new)."""
    con = lake_connection(url, None, read_only=False)
    try:
        _prepare_lake(con, redact(url))
    except duckdb.Error as exc:
        close_lake(con)
        raise WarehouseError(f"cannot write the lake {redact(url)}: "
                             f"{redact(str(exc).splitlines()[0])}") from None
    except BaseException:
        close_lake(con)
        raise
    return con


def _prepare_lake(con: duckdb.DuckDBPyConnection, shown: str) -> None:
    """Migrate (keys dropped: warehouse.dialect), write token, views and reference tables,
    each only when not done yet, so opening an up-to-date lake writes nothing (no snapshot,
    no file). Several workers may open a new lake at once: each step is retried on conflict."""
    def schema() -> None:
        ensure_token_table(con)  # first: every write transaction on a lake updates it
        check_objects(con)
        migrate(con, lake=True)

    tables = {str(r[0]) for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
    ).fetchall()}
    if "schema_version" in tables and TOKEN_TABLE not in tables:
        raise WarehouseError(f"{shown} is a copy published from a DuckDB warehouse (gpuprices "
                             "publish): write to that file, or make a lake warehouse in an "
                             "empty catalog")
    retrying(schema, what=f"migrating {shown}")
    fingerprint = views_fingerprint()
    stored = con.execute("SELECT comment FROM duckdb_tables() WHERE table_name = "
                         "'schema_version' AND database_name = current_database()").fetchone()
    if not stored or stored[0] != fingerprint:
        def views() -> None:
            with transaction(con):
                refresh_views(con)
                con.execute("COMMENT ON TABLE schema_version IS "
                            f"'{fingerprint.replace(chr(39), chr(39) * 2)}'")
        retrying(views, what=f"views of {shown}")
    retrying(lambda: sync_reference(con), what=f"reference tables of {shown}")


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


def _catalog_comment(fingerprint: str, rows_hash: str) -> str:
    """gpu_catalog's comment: what it holds, then what it was synced from (checked on open)."""
    return (f"The GPU catalog (schemas/gpu_catalog.csv), synced on every writable open "
            f"[{fingerprint} {rows_hash}]")


def sync_reference(con: duckdb.DuckDBPyConnection) -> None:
    """Keep gpu_catalog, plan and gpu_ownership equal to the files shipped with this code.

    gpu_catalog's table comment keeps the fingerprint of those files and a hash of the three
    tables' rows as written: when both still match, the tables are equal to the files and
    nothing is validated or written (~0.35 s per open); a row changed by anything else
    (an older version, a hand edit) changes the hash and the tables are written again.
    """
    fingerprint = _reference_fingerprint()
    stored = con.execute("SELECT comment FROM duckdb_tables() WHERE table_name = 'gpu_catalog' "
                         "AND schema_name = current_schema()").fetchone()
    if stored and stored[0] == _catalog_comment(fingerprint, _reference_rows_hash(con)):
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
    with transaction(con):
        for table, frame in tables.items():
            con.execute(f"DELETE FROM {table}")
            with scanned_once(con, "_reference", frame):
                con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _reference")
        con.execute(f"COMMENT ON TABLE gpu_catalog IS "
                    f"'{_catalog_comment(fingerprint, _reference_rows_hash(con))}'")
