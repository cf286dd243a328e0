"""Tools for the hostile-warehouse tests: a canary file that tells when anything opens it,
file fingerprints, and the crafted warehouse of issue 22.1."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

SECRET = "TOP-SECRET-CANARY-7f3a"
# The summary tables' names before migration 005 renamed them.
# Since migration 8, daily_cheapest is a view over daily_cheapest_segment (the table that
# holds its rows): the crafted file drops the view and gives the table the old name.
OLD_SUMMARY_NAMES = {"daily_price": "daily_price_summary", "price_change": "price_change_event",
                     "daily_cheapest_segment": "daily_cheapest_summary"}


@dataclass
class Canary:
    """A FIFO holding SECRET: a thread waits to write it, so any open of the FIFO for reading
    (by DuckDB or anything else) is seen, even one that reads nothing."""

    path: Path
    opened: threading.Event
    closing: threading.Event


@contextmanager
def canary(folder: Path) -> Iterator[Canary]:
    path = folder / "secret.txt"
    os.mkfifo(path)
    found = Canary(path, threading.Event(), threading.Event())

    def guard() -> None:
        while not found.closing.is_set():  # serves every reader, so none of them hangs
            try:
                with path.open("w") as handle:  # blocks until a reader opens the FIFO
                    if found.closing.is_set():
                        return
                    found.opened.set()
                    handle.write(SECRET + "\n")
            except BrokenPipeError:  # that reader closed before the write reached it: it
                continue  # did open the FIFO (seen above); serve the next one

    thread = threading.Thread(target=guard, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        found.closing.set()
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # lets the guard return
        thread.join(timeout=10)
        os.close(fd)
        path.unlink()


def fingerprint(path: Path) -> tuple[str, list[str]]:
    """The file's sha256 and the names in its folder (a write would show in one of them)."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return digest, sorted(p.name for p in path.parent.iterdir())


def craft_issue_22_1(path: Path, secret_file: Path) -> None:
    """The crafted warehouse of issue 22.1: schema versions from 5 on deleted, the summary
    tables renamed back to their old names, and `observation` replaced by a view that reads
    `secret_file` (the rows are kept under another name so the view looks real)."""
    con = duckdb.connect(str(path))
    try:
        con.execute("DELETE FROM schema_version WHERE version >= 5")
        con.execute("DROP VIEW IF EXISTS daily_cheapest")
        for new, old in OLD_SUMMARY_NAMES.items():
            con.execute(f"ALTER TABLE {new} RENAME TO {old}")
        con.execute("ALTER TABLE observation RENAME TO observation_rows")
        quoted = str(secret_file).replace("'", "''")
        con.execute("CREATE VIEW observation AS SELECT o.* REPLACE (s.content AS offering) "
                    f"FROM observation_rows o, read_text('{quoted}') s")
        con.execute("CHECKPOINT")
    finally:
        con.close()
