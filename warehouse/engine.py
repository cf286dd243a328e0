"""Every DuckDB connection the warehouse opens: its settings, and no progress bar.

DuckDB prints a progress bar to stdout (piped too) once a query runs past 2 s, into a command's
CSV or JSON and into a worker's line protocol. It is a per-connection setting (not allowed in
the connect config), so it is turned off right after connecting, before a sandbox locks the
configuration. Opening one also makes DuckDB's look-ups of an absent pandas cheap
(warehouse.pandas_absent: ~60 µs per bound parameter otherwise).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from warehouse.pandas_absent import answer_pandas_lookups

__all__ = ["NO_FILES", "on_threads", "open_duckdb"]

# Every connection to a warehouse file: the file only (no other file, no network, no
# extension installed or loaded), whatever its views and macros say.
NO_FILES: dict[str, object] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
}


def open_duckdb(database: str, *, read_only: bool = False,
                config: dict[str, object] | None = None) -> duckdb.DuckDBPyConnection:
    """duckdb.connect with `config`; `lock_configuration` is applied last."""
    answer_pandas_lookups()
    settings = dict(config or {})
    lock = bool(settings.pop("lock_configuration", False))
    con = duckdb.connect(database, read_only=read_only, config=settings)
    try:
        con.execute("SET enable_progress_bar = false")
        if lock:
            con.execute("SET lock_configuration = true")
    except BaseException:
        con.close()
        raise
    return con


@contextmanager
def on_threads(con: duckdb.DuckDBPyConnection, threads: int | None) -> Iterator[None]:
    """`con` on `threads` threads (None: DuckDB's default, one per core) for the duration,
    then on its own again."""
    row = con.execute("SELECT current_setting('threads')").fetchone()
    con.execute("RESET threads" if threads is None else f"SET threads = {int(threads)}")
    try:
        yield
    finally:
        con.execute(f"SET threads = {int(row[0]) if row else 1}")
