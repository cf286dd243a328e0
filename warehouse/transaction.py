"""The one transaction helper: `with transaction(con): ...` commits when the block ends, rolls
back (and re-raises) when it raises, so a write lands whole or not at all; on a DuckLake shared
by several writers it is also serial, and `retrying` runs a unit of work again on conflict.

A DuckDB file has one writing process (warehouse.lock). A DuckLake in PostgreSQL or SQLite
takes commits from any number of processes and settles them optimistically: a commit that
lost the race is re-applied when its changes do not touch the winner's, so two appends to one
table both land. That is not enough here: an append first checks what is stored (is this
capture already in? which prices were current?) and two appends checking at once would both
insert. So every write transaction on a lake starts by updating the one row of `write_token`:
two transactions that both did conflict in DuckLake's own check ("another transaction has
deleted inlined data from it"), the later commit fails and nothing of it is visible, and
`retrying` runs the whole unit of work again, checks included, on the new snapshot. Writes are
thereby serial (one commit at a time, in the order they commit); the fetching and parsing
before them run in parallel.

A process killed mid-commit leaves nothing: DuckLake writes the data files first and the
catalog rows last, in one catalog transaction, so the snapshot is there whole or not at all
(files written for it and never committed are removed by `ducklake_delete_orphaned_files`).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TypeVar

import duckdb

from warehouse.dialect import on_lake
from warehouse.errors import WarehouseError

__all__ = [
    "CONFLICT_PATIENCE_S",
    "TOKEN_TABLE",
    "LakeConflict",
    "conflicts_seen",
    "ensure_token",
    "one_transaction",
    "retrying",
    "transaction",
]

log = logging.getLogger("gpuprices.warehouse")
T = TypeVar("T")

TOKEN_TABLE = "write_token"
CONFLICT_PATIENCE_S = 900.0  # a writer gives up after losing for this long
_CONFLICT_WORDS = ("transaction conflict", "conflict on tuple", "failed to commit ducklake")
_seen = [0]
_seen_guard = threading.Lock()
_joined: set[int] = set()  # id() of connections inside `one_transaction`


class LakeConflict(WarehouseError):
    """Another writer committed to the lake first; the unit of work must run again."""


def conflicts_seen() -> int:
    """Conflicts this process met (and retried) so far: the scale benchmark reports them."""
    with _seen_guard:
        return _seen[0]


def _is_conflict(exc: BaseException) -> bool:
    text = str(exc).lower()
    return any(word in text for word in _CONFLICT_WORDS)


def ensure_token(con: duckdb.DuckDBPyConnection) -> None:
    """The one-row token table every lake write updates (created once per lake)."""
    con.execute(f"CREATE TABLE IF NOT EXISTS {TOKEN_TABLE} (writes BIGINT NOT NULL)")
    row = con.execute(f"SELECT count(*) FROM {TOKEN_TABLE}").fetchone()
    if not row or not row[0]:
        con.execute(f"INSERT INTO {TOKEN_TABLE} VALUES (0)")


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    with suppress(duckdb.Error):  # a failed COMMIT has already ended the transaction
        con.execute("ROLLBACK")


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN; the block; COMMIT. Any exception (a failed COMMIT too) rolls back and is raised.
    On a lake the transaction first takes the write token, and a commit that lost to another
    writer raises LakeConflict. Inside `one_transaction(con)` the block joins that transaction."""
    if id(con) in _joined:
        yield con
        return
    con.execute("BEGIN TRANSACTION")
    try:
        if on_lake(con):
            con.execute(f"UPDATE {TOKEN_TABLE} SET writes = writes + 1")
        yield con
    except BaseException as exc:
        _rollback(con)
        if isinstance(exc, duckdb.Error) and _is_conflict(exc):
            raise LakeConflict(str(exc).splitlines()[0]) from None
        raise
    try:
        con.execute("COMMIT")
    except duckdb.Error as exc:
        _rollback(con)
        if _is_conflict(exc):
            raise LakeConflict(str(exc).splitlines()[-1]) from None
        raise


@contextmanager
def one_transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """A `transaction` that every `transaction(con)` inside the block joins: several units of
    work (e.g. a group of landings) commit together or not at all, one commit instead of one
    each (on a lake a commit is the expensive part, and writers take turns at it)."""
    with transaction(con):
        _joined.add(id(con))
        try:
            yield con
        finally:
            _joined.discard(id(con))


def retrying(work: Callable[[], T], *, what: str = "write",
             patience_s: float = CONFLICT_PATIENCE_S) -> T:
    """Run `work` (a whole unit: its reads and its write transaction) until it commits without
    a conflict; LakeConflict when other writers kept committing first for `patience_s`.
    Backoff with jitter from 50 ms up to 3 s: a writer that keeps losing waits longer, so
    the others finish and it gets its turn."""
    deadline = time.monotonic() + patience_s
    attempt = 0
    while True:
        attempt += 1
        try:
            return work()
        except (LakeConflict, duckdb.Error) as exc:
            if not isinstance(exc, LakeConflict) and not _is_conflict(exc):
                raise
            with _seen_guard:
                _seen[0] += 1
            if time.monotonic() >= deadline:
                raise LakeConflict(f"{what}: other writers kept committing first "
                                   f"({attempt} attempts in {patience_s:g} s): {exc}") from None
            wait = min(3.0, 0.05 * 1.5 ** attempt) * (0.5 + random.random())
            log.info("%s: another writer committed first; running it again in %.2f s "
                     "(attempt %d)", what, wait, attempt + 1)
            time.sleep(wait)
