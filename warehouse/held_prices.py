"""The current prices a read snapshot holds: `current_price_at`'s rows, stored once by the
snapshot's publisher, so that the questions asked of the snapshot read a table instead.

Binding and planning `current_price_at` costs ~15 ms on every question, whatever the data
(~60 operators), and ~45 ms at 50 M observations (issue 23). A snapshot never changes, so the
macro's answer over it is the same for every moment `as_of` from the latest moment the
snapshot records (`taken_at`: no run and no provider part is stamped later) until the first
UTC day on which a price it holds as announced comes into force (`valid_until`; none: for
ever). Only the two columns computed from `as_of` itself differ, `carried_days` and `stale`;
they are computed again from `last_success_at`, as the macro computes them. Outside that span
the macro answers, as it always did.

The rows are read only from a snapshot whose seal holds (warehouse.snapshot): that file is
the file its publisher stored them in, unchanged. Any other file (the warehouse itself, a
snapshot copied elsewhere, an unsealed one, a lake) is asked the macro, so a table of this
name that no longer matches its file can never answer.
"""

from __future__ import annotations

import json
import logging
import weakref
from datetime import UTC, datetime, time

import duckdb

from warehouse.transaction import transaction

__all__ = ["TABLE", "held_current_prices", "store_current_prices", "trust"]

log = logging.getLogger("gpuprices.warehouse")

TABLE = "snapshot_current_price"
# The rows at `as_of` (a parameter): the macro's, with its two columns of the moment.
_ROWS_AT = ("(SELECT * REPLACE (utc_day($as_of) - utc_day(last_success_at) AS carried_days, "
            f"(last_success_at < $as_of - stale_after()) AS stale) FROM main.{TABLE})")
# The latest stamp of the file: every row current_price_at reads by time is at or before it.
_TAKEN_AT = """
SELECT greatest((SELECT max(observed_at) FROM scrape_run),
                (SELECT max(observed_at) FROM provider_capture))"""
# The first day after `taken_at`'s on which an announced price comes into force (in_force),
# of every stored row (latest_observation holds copies of some): a superset of the rows
# current_price_at picks from, so the span may end early (the macro answers sooner), never
# late.
_NEXT_IN_FORCE = "SELECT min(effective_from) FROM observation WHERE effective_from > $day"
_SPAN = (f"SELECT comment FROM system.main.duckdb_tables() WHERE database_name = "
         f"current_database() AND schema_name = 'main' AND table_name = '{TABLE}'")

Span = tuple[datetime, datetime | None]
# Connections to a sealed snapshot -> its span (None: it holds no rows), looked up once.
_TRUSTED: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, Span | None] = (
    weakref.WeakKeyDictionary())
_UNKNOWN = object()


def store_current_prices(con: duckdb.DuckDBPyConnection) -> None:
    """Store current_price_at's rows at the file's latest stamp in TABLE, with their span in
    the table's comment; on a writable connection to a snapshot being published, before it
    is sealed. A file with no run yet holds none."""
    taken_at = con.execute(_TAKEN_AT).fetchone()[0]  # type: ignore[index]
    if taken_at is None:
        return
    day = taken_at.astimezone(UTC).date()
    first = con.execute(_NEXT_IN_FORCE, {"day": day}).fetchone()[0]  # type: ignore[index]
    until = datetime.combine(first, time(), UTC) if first is not None else None
    span = {"taken_at": taken_at.isoformat(),
            "valid_until": until.isoformat() if until is not None else None}
    with transaction(con):
        con.execute(f"CREATE OR REPLACE TABLE main.{TABLE} AS "
                    "SELECT * FROM current_price_at($t)", {"t": taken_at})
        text = json.dumps(span).replace("'", "''")  # COMMENT takes a literal, no parameter
        con.execute(f"COMMENT ON TABLE main.{TABLE} IS '{text}'")


def trust(con: duckdb.DuckDBPyConnection) -> None:
    """`con` reads a snapshot whose seal holds: its held rows may answer (warehouse.connection
    calls this once the seal is checked)."""
    _TRUSTED[con] = _UNKNOWN  # type: ignore[assignment]


def held_current_prices(con: duckdb.DuckDBPyConnection, as_of: datetime) -> str | None:
    """The SQL of the current prices at `as_of` (a parameter) read from the snapshot's held
    rows, or None when the macro must answer: `con` is not to a sealed snapshot, the
    snapshot holds none, or `as_of` is outside their span."""
    span = _TRUSTED.get(con)
    if span is None:
        return None
    if span is _UNKNOWN:
        span = _TRUSTED[con] = _span_of(con)
        if span is None:
            return None
    taken_at, until = span
    if as_of.tzinfo is None or as_of < taken_at or (until is not None and as_of >= until):
        return None
    return _ROWS_AT


def _span_of(con: duckdb.DuckDBPyConnection) -> Span | None:
    row = con.execute(_SPAN).fetchone()
    if row is None or not row[0]:
        return None
    try:
        span = json.loads(row[0])
        taken_at = datetime.fromisoformat(span["taken_at"])
        until = span["valid_until"]
        until = datetime.fromisoformat(until) if until is not None else None
    except (ValueError, KeyError, TypeError) as exc:
        log.warning("the held current prices of this snapshot are not read: %s", exc)
        return None
    if taken_at.tzinfo is None or (until is not None and until.tzinfo is None):
        return None
    return taken_at, until
