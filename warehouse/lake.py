"""DuckLake: the warehouse on a shared catalog and object storage, written by many workers.

A lake URL names the catalog (the metadata), and a data path the Parquet files:
- `ducklake:postgres:host=db.internal dbname=gpu user=gpu` (libpq key=value; the password in
  PGPASSWORD or ~/.pgpass, never in the URL: URLs are shown in messages, passwords never);
- `ducklake:sqlite:/srv/gpu/catalog.sqlite`, or `ducklake:/srv/gpu/catalog.ducklake` (a
  DuckDB file: one process at a time may write it, and no reader may hold it meanwhile);
- data: $GPUPRICES_LAKE_DATA_PATH (or --data-path): a folder, or `s3://bucket/prefix/` with the
  AWS_* variables (warehouse.extensions). Needed when the lake is created; stored in the
  catalog after that. A file catalog defaults to `<catalog>.files/`.
MotherDuck (`md:`) is refused: it needs its network service and a token, and cannot be
tested here.

Used two ways. As the warehouse itself (`--warehouse ducklake:...`, connection.connect): the
same schema (warehouse.dialect drops the keys DuckLake lacks), every write serial through
warehouse.transaction, so several Prefect workers refresh sources into one lake. Or as a published
copy of a DuckDB file (`publish`), for readers past one machine. `upkeep` expires old
snapshots, merges small files and deletes the files no snapshot needs.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import duckdb

from warehouse.dialect import is_lake_url
from warehouse.engine import open_duckdb
from warehouse.errors import WarehouseBusy, WarehouseError
from warehouse.extensions import LAKE_CONFIG, load_extension, s3_secret
from warehouse.held_prices import TABLE as HELD_PRICES
from warehouse.schema import refresh_views
from warehouse.transaction import ensure_token, retrying

__all__ = [
    "LAKE_ALIAS",
    "LakeTarget",
    "PublishResult",
    "UpkeepResult",
    "attach_lake",
    "close_lake",
    "default_data_path",
    "ensure_token_table",
    "is_lake_url",
    "lake_connection",
    "lake_settings",
    "lake_target",
    "load_ducklake",
    "open_lake",
    "publish",
    "redact",
    "upkeep",
    "upkeep_lake",
    "views_fingerprint",
]

LAKE_ALIAS = "lake"
_ATTACH_TRIES = 6  # attaching a catalog another process is creating at this moment
BY_CAPTURE = ("observation", "quarantine")  # large: copied per changed capture
_SCHEMES = "ducklake:postgres:<libpq settings>, ducklake:sqlite:<file> or ducklake:<file>"
_PASSWORD = re.compile(r"""(password\s*=\s*)('[^']*'|[^\s"']+)""", re.I)
_URI_PASSWORD = re.compile(r"(://[^:/@\s]+:)[^@\s]+@")


def redact(text: str) -> str:
    """`text` with any libpq password (key=value or URI form) replaced by ***."""
    return _URI_PASSWORD.sub(r"\1***@", _PASSWORD.sub(r"\1***", text))


@dataclass(frozen=True, slots=True)
class LakeTarget:
    url: str  # ducklake:...
    catalog: str  # postgres | sqlite | duckdb
    data_path: str | None  # None: the lake's own (stored when it was created)

    @property
    def shown(self) -> str:
        return redact(self.url)


def lake_settings(env: Mapping[str, str]) -> tuple[str, str | None] | None:
    url = env.get("GPUPRICES_LAKE")
    return (url, env.get("GPUPRICES_LAKE_DATA_PATH") or None) if url else None


def default_data_path(url: str) -> str | None:
    """`<catalog file>.files/` for a file catalog; None (the lake's stored one) otherwise."""
    match = re.fullmatch(r"ducklake:(?:duckdb:|sqlite:)?([^:]+)", url)
    return f"{match.group(1)}.files/" if match else None


def lake_target(url: str, data_path: str | None = None,
                env: Mapping[str, str] | None = None) -> LakeTarget:
    """Check a lake URL and its data path; WarehouseError (one line) for anything we cannot
    open: MotherDuck, an unknown catalog, a data path on storage we have no driver for."""
    env = os.environ if env is None else env
    if url.startswith("md:"):
        raise WarehouseError(
            f"{url.split('?')[0]}: MotherDuck is not supported: it needs MotherDuck's service and "
            "a token (the motherduck extension downloads on use), and this build is tested "
            f"offline only; use a DuckLake instead ({_SCHEMES})")
    if not url.startswith("ducklake:"):
        raise WarehouseError(f"{redact(url)[:80]} is not a DuckLake URL: expected {_SCHEMES}")
    rest = url.removeprefix("ducklake:")
    match = re.match(r"([a-z]+):", rest)
    if match and match.group(1) in ("postgres", "postgresql"):
        catalog = "postgres"
        if "://" in rest or rest.endswith(":"):
            raise WarehouseError(f"{redact(url)}: give the PostgreSQL catalog as libpq settings "
                                 "(ducklake:postgres:host=... dbname=... user=...), not a URI")
    elif match and match.group(1) == "sqlite":
        catalog = "sqlite"
    elif match and match.group(1) == "duckdb":
        catalog = "duckdb"
    elif match and len(match.group(1)) > 1:
        raise WarehouseError(f"{redact(url)[:80]}: unknown DuckLake catalog "
                             f"{match.group(1)!r}: expected {_SCHEMES}")
    else:
        catalog = "duckdb"
    data = data_path or env.get("GPUPRICES_LAKE_DATA_PATH") or default_data_path(url)
    if data and "://" in data and not data.startswith(("s3://", "file://")):
        raise WarehouseError(f"data path {data[:80]}: only a folder or s3://bucket/prefix/ is "
                             "supported (the httpfs extension with the AWS_* variables)")
    if data and data.startswith("s3://") and not env.get("AWS_ACCESS_KEY_ID"):
        raise WarehouseError(f"data path {data[:80]} is on S3 but AWS_ACCESS_KEY_ID / "
                             "AWS_SECRET_ACCESS_KEY are not set (and AWS_ENDPOINT_URL for "
                             "storage other than AWS)")
    return LakeTarget(url, catalog, data)


def load_ducklake(con: duckdb.DuckDBPyConnection) -> None:
    """LOAD ducklake from its wheel (never downloaded)."""
    load_extension(con, "ducklake")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _ident(name: str) -> str:
    """A table name as a quoted identifier: names come from the file being published."""
    return '"' + name.replace('"', '""') + '"'


def _attach_error(target: LakeTarget, exc: duckdb.Error) -> WarehouseError:
    text = redact(" ".join(str(exc).split()))
    if "data_path is not set" in text:
        return WarehouseError(f"the lake {target.shown} does not exist yet and has no data "
                              "path: pass --data-path or set GPUPRICES_LAKE_DATA_PATH (a "
                              "folder, or s3://bucket/prefix/) to create it")
    lock = re.search(r"Conflicting lock is held in (\S+) \(PID (\d+)\)", text)
    if lock:
        return WarehouseBusy(f"the lake catalog {target.shown} is a DuckDB file held by "
                             f"process {lock.group(2)} ({lock.group(1)}); a DuckDB-file catalog "
                             "takes one process at a time: try again when it is closed, or "
                             "use a PostgreSQL or SQLite catalog for concurrent readers",
                             "reader")
    reason = re.search(r"(?:Unable to connect to Postgres at \"[^\"]*\": )(.*)", text)
    if reason:
        return WarehouseError(f"cannot reach the catalog of {target.shown}: "
                              f"{reason.group(1).split(' Is the server')[0].strip()}")
    return WarehouseError(f"cannot open the lake {target.shown}: {text[:300]}")


def attach_lake(con: duckdb.DuckDBPyConnection, url: str, data_path: str | None = None, *,
                read_only: bool = False, env: Mapping[str, str] | None = None) -> LakeTarget:
    """ATTACH the lake as LAKE_ALIAS, every extension from its wheel, S3 secret from env."""
    env = os.environ if env is None else env
    target = lake_target(url, data_path, env)
    load_extension(con, "ducklake")
    if target.catalog == "postgres":
        load_extension(con, "postgres_scanner")
    elif target.catalog == "sqlite":
        load_extension(con, "sqlite_scanner")
    s3_secret(con, env)  # the data may be on S3 even when no data path is given here
    options = []
    if target.data_path and not read_only:
        options.append(f"DATA_PATH {_quote(target.data_path)}")
    if read_only:
        options.append("READ_ONLY")
    suffix = f" ({', '.join(options)})" if options else ""
    attempt = 0
    while True:
        attempt += 1
        try:
            con.execute(f"ATTACH {_quote(url)} AS {LAKE_ALIAS}{suffix}")
            return target
        except duckdb.Error as exc:
            # Two processes creating the same new catalog at once: the loser's CREATE TABLE
            # fails in PostgreSQL ("already exists", or a unique-key error in its system
            # tables). The other process's catalog is whole once it commits: attach it.
            text = str(exc)
            racing = "Failed to initialize DuckLake" in text and (
                "duplicate key value" in text or "already exists" in text)
            if attempt == _ATTACH_TRIES or not racing:
                raise _attach_error(target, exc) from None
            time.sleep(0.2 * attempt * (0.5 + random.random()))


def lake_connection(url: str, data_path: str | None, *, read_only: bool,
                    env: Mapping[str, str] | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the lake attached as LAKE_ALIAS and used by default."""
    con = open_duckdb(":memory:", config=dict(LAKE_CONFIG))
    try:
        attach_lake(con, url, data_path, read_only=read_only, env=env)
        con.execute(f"USE {LAKE_ALIAS}")
    except BaseException:
        close_lake(con)
        raise
    return con


def close_lake(con: duckdb.DuckDBPyConnection) -> None:
    """Close a connection that has the lake attached, DETACHing the lake first.

    Why: with DuckDB 1.5.5's ducklake, a connection whose commit lost to another writer (a
    conflict, which `retrying` runs again) kept its whole DuckDB instance alive after
    `close()`: its scheduler thread, the PostgreSQL pool's reaper thread and ~13 MiB, one per
    batch run in a long-lived worker. DETACH releases it. Any transaction still open is
    rolled back first (closing would roll it back anyway)."""
    for statement in ("ROLLBACK", "USE memory", f"DETACH {LAKE_ALIAS}"):
        with contextlib.suppress(duckdb.Error):  # no transaction open; the lake not attached
            con.execute(statement)
    con.close()


def open_lake(url: str, data_path: str | None = None) -> duckdb.DuckDBPyConnection:
    """A read-only connection to a lake, with the lake as the default database."""
    return lake_connection(url, data_path, read_only=True)


def views_fingerprint() -> str:
    import hashlib

    from contract import STALE_AFTER_H
    from warehouse.schema import VIEWS_SQL

    digest = hashlib.sha256(VIEWS_SQL.read_bytes() + str(STALE_AFTER_H).encode())
    return f"views {digest.hexdigest()[:16]}"


def ensure_token_table(con: duckdb.DuckDBPyConnection) -> None:
    """Create the write token (warehouse.transaction) in its own transaction if missing."""
    from warehouse.transaction import TOKEN_TABLE

    found = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = "
                        "current_database() AND table_name = ?", [TOKEN_TABLE]).fetchone()
    if found and found[0]:
        return
    con.execute("BEGIN TRANSACTION")
    try:
        ensure_token(con)
        con.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise


@dataclass(frozen=True, slots=True)
class PublishResult:
    tables: dict[str, int]  # table -> rows in the lake after publishing
    captures_copied: int
    recreated: tuple[str, ...]
    replaced: tuple[str, ...] = ()  # small tables rewritten because their rows changed


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
    row = con.execute("SELECT count(*) FROM _changed").fetchone()
    changed = int(row[0]) if row else 0
    if changed:  # a DELETE or INSERT of nothing still makes a snapshot
        con.execute(f"DELETE FROM {LAKE_ALIAS}.main.{name} "
                    f"WHERE capture_id IN (SELECT capture_id FROM _changed)")
        con.execute(f"INSERT INTO {LAKE_ALIAS}.main.{name} SELECT * FROM wh.main.{name} "
                    f"WHERE capture_id IN (SELECT capture_id FROM _changed)")
    return changed


def _same_rows(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    """Do warehouse and lake hold the same rows (as a multiset) of `table`?"""
    name = _ident(table)
    row = con.execute(
        f"SELECT (SELECT count(*) FROM wh.main.{name}) = (SELECT count(*) FROM "
        f"{LAKE_ALIAS}.main.{name}) AND NOT EXISTS (SELECT * FROM wh.main.{name} EXCEPT ALL "
        f"SELECT * FROM {LAKE_ALIAS}.main.{name})").fetchone()
    return bool(row and row[0])


def publish(warehouse: str | Path, url: str, data_path: str | None = None) -> PublishResult:
    """Copy the warehouse's tables and views into the DuckLake at `url` (one transaction).

    `warehouse`: the file to copy from, normally its read snapshot
    (warehouse.connection.read_source), so publishing never holds up a refresh. Only what
    changed is written: a publish with nothing new commits no snapshot and writes no file."""
    target = lake_target(url, data_path)
    con = open_duckdb(":memory:", config=dict(LAKE_CONFIG))
    try:
        con.execute(f"ATTACH {_quote(str(warehouse))} AS wh (READ_ONLY)")
        attach_lake(con, url, data_path)
        lake_tables = set(_tables(con, LAKE_ALIAS))
        if "write_token" in lake_tables:
            raise WarehouseError(f"{target.shown} is a warehouse lake that workers write "
                                 "(--warehouse); publish copies a DuckDB file into a lake of "
                                 "its own")
        recreated: list[str] = []
        replaced: list[str] = []
        captures = 0
        con.execute("BEGIN TRANSACTION")
        for table in _tables(con, "wh"):
            if table == HELD_PRICES:  # a read snapshot's own, of that file alone
                continue
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
            elif not _same_rows(con, table):
                con.execute(f"DELETE FROM {LAKE_ALIAS}.main.{name}")
                con.execute(f"INSERT INTO {LAKE_ALIAS}.main.{name} "
                            f"SELECT * FROM wh.main.{name}")
                replaced.append(table)
        con.execute(f"USE {LAKE_ALIAS}")
        fingerprint = views_fingerprint()
        stored = con.execute("SELECT comment FROM duckdb_tables() WHERE table_name = "
                             "'schema_version' AND database_name = ?", [LAKE_ALIAS]).fetchone()
        if recreated or not stored or stored[0] != fingerprint:
            refresh_views(con)
            con.execute(f"COMMENT ON TABLE schema_version IS {_quote(fingerprint)}")
        con.execute("COMMIT")
        counts = {}
        for table in _tables(con, LAKE_ALIAS):
            row = con.execute(f"SELECT count(*) FROM {LAKE_ALIAS}.main.{_ident(table)}"
                              ).fetchone()
            counts[table] = int(row[0]) if row else 0
        return PublishResult(counts, captures, tuple(recreated), tuple(replaced))
    except duckdb.Error as exc:
        raise WarehouseError(f"cannot publish to {target.shown}: "
                             f"{redact(str(exc).splitlines()[0])}") from None
    finally:
        close_lake(con)


@dataclass(frozen=True, slots=True)
class UpkeepResult:
    snapshots_before: int
    snapshots_after: int
    files_before: int  # data and delete files the catalog lists
    files_after: int
    files_deleted: int


def _lake_counts(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    snapshots = con.execute(f"SELECT count(*) FROM {LAKE_ALIAS}.snapshots()").fetchone()
    meta = f"__ducklake_metadata_{LAKE_ALIAS}"
    files = con.execute(f"SELECT (SELECT count(*) FROM {meta}.ducklake_data_file) + "
                        f"(SELECT count(*) FROM {meta}.ducklake_delete_file)").fetchone()
    return (int(snapshots[0]) if snapshots else 0, int(files[0]) if files else 0)


# A data file with at least this share of its rows deleted is rewritten without them.
REWRITE_DELETED_SHARE = 0.2


def upkeep(con: duckdb.DuckDBPyConnection, *, keep: timedelta = timedelta(days=7)
           ) -> UpkeepResult:
    """Bound the lake's growth: rewrite files whose rows are mostly deleted, merge small
    adjacent files, expire snapshots older than `keep` (time travel reaches back that far),
    then delete the files no snapshot needs. `con` has the lake attached as LAKE_ALIAS
    (open_lake_writer, or publish's lake).

    Why the rewrite: the derived tables are rewritten per source at every landing (DELETE
    then INSERT), and a DuckLake delete only marks rows; unrewritten, every read goes on
    scanning and skipping all the rows ever replaced, so reads (and each landing) slow down
    as the lake ages. The scale benchmark's cycle grew ~1.5 s per cycle without it."""
    snapshots, files = _lake_counts(con)
    con.execute(f"CALL ducklake_flush_inlined_data('{LAKE_ALIAS}')")
    con.execute(f"CALL ducklake_rewrite_data_files('{LAKE_ALIAS}', "
                f"delete_threshold => {REWRITE_DELETED_SHARE})")
    con.execute(f"CALL ducklake_merge_adjacent_files('{LAKE_ALIAS}')")
    seconds = int(keep.total_seconds())
    con.execute(f"CALL ducklake_expire_snapshots('{LAKE_ALIAS}', "
                f"older_than => now() - INTERVAL ({seconds}) SECOND)")
    deleted = con.execute(f"SELECT count(*) FROM ducklake_cleanup_old_files('{LAKE_ALIAS}', "
                          "cleanup_all => true)").fetchone()
    after_snapshots, after_files = _lake_counts(con)
    return UpkeepResult(snapshots, after_snapshots, files, after_files,
                        int(deleted[0]) if deleted else 0)


def upkeep_lake(url: str, *, keep: timedelta = timedelta(days=7)) -> UpkeepResult:
    """`upkeep` on the lake at `url` (a lake warehouse or a published copy), retried when a
    writer's commit comes first."""
    con = lake_connection(url, None, read_only=False)
    try:
        return retrying(lambda: upkeep(con, keep=keep), what=f"upkeep of {redact(url)}")
    except duckdb.Error as exc:
        raise WarehouseError(f"cannot keep up the lake {redact(url)}: "
                             f"{redact(str(exc).splitlines()[0])}") from None
    finally:
        close_lake(con)
