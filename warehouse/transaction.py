"""One transaction helper: `with transaction(con): ...` commits when the block ends, rolls
back (and re-raises) when it raises, so a write lands whole or not at all."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress

import duckdb

__all__ = ["transaction"]


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN; the block; COMMIT. Any exception (a failed COMMIT too) rolls back and is raised."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
        con.execute("COMMIT")
    except BaseException:
        with suppress(duckdb.Error):  # a failed COMMIT may have ended the transaction itself
            con.execute("ROLLBACK")
        raise
