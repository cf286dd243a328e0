"""The ONE step that keeps every derived table equal to the data (DDL: migrations 004, 008).

Each derived table is a function of observation + scrape_run, kept equal to it here:
- latest_observation: the rows of each source's current capture (what latest_capture names);
- daily_price: last price of each offering per (UTC) day it was observed, every source (an
  offering: source, provider, offering, region, pricing and reserved term);
- price_change: each move of an offering's daily price; price_state: its last daily price;
- daily_source, daily_cheapest, market_price, market_provider_price: the semantic layer's
  day-by-day tables (warehouse/semantic_daily.py), from the first changed day on.

Each append calls `after_append` inside its own transaction, so the derived tables and the
rows they summarise commit together (no flow keeps anything up afterwards). The common case,
a new night newer than anything stored for the source, touches only that night's rows; a
capture that lands out of order (a backfill behind newer data, a re-parse) recomputes that
source's price changes and every later day. `rebuild` recomputes everything from scratch
(after a migration or a bulk load, or to check the incremental path).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, time, timedelta

import duckdb
import polars as pl

from warehouse.engine import on_threads
from warehouse.frames import scanned_once
from warehouse.semantic_daily import DERIVED_TABLES, refresh_days
from warehouse.transaction import transaction

__all__ = ["SUMMARY_TABLES", "UTC_DAY", "after_append", "days_refreshed_once", "rebuild",
           "rebuild_committed", "refresh_latest"]

SUMMARY_TABLES = ("latest_observation", "daily_price", "price_change", "price_state",
                  *DERIVED_TABLES)
# The UTC calendar day of a TIMESTAMPTZ, whatever the session's TimeZone: the SQL macro
# utc_day (views.sql), formatted around a column.
UTC_DAY = "utc_day({})"
_KEY = "source, provider, offering, region, pricing, term_months"

# One day's last price per offering, from observation (`{where}` narrows it). An announced
# price counts from its effective day; on that day it replaces the price it was announced for.
_DAILY_PRICE = f"""
    INSERT INTO daily_price
    SELECT day, source, provider, offering, region, pricing, term_months, gpu_model, gpu_count,
           arg_max(price_usd_per_hour, seen), arg_max(price_usd_per_gpu_hour, seen),
           bool_or(gpu_only)
    FROM (SELECT * REPLACE (coalesce(term_months, 0) AS term_months),
                 {UTC_DAY.format("observed_at")} AS day,
                 (observed_at, coalesce(effective_from, DATE '0001-01-01')) AS seen
          FROM observation {{where}})
    WHERE effective_from IS NULL OR effective_from <= day
    GROUP BY ALL
    ORDER BY day, source
"""
# Moves of each offering's daily price (`{where}` narrows daily_price, e.g. to one source)
# into `{into}` (price_change, or a rebuild's staging table).
_PRICE_CHANGES = f"""
    INSERT INTO {{into}}
    WITH ordered AS (
        SELECT *, lag(price_usd_per_hour) OVER w AS old_price, lag(day) OVER w AS old_day
        FROM daily_price {{where}}
        WINDOW w AS (PARTITION BY {_KEY} ORDER BY day)
    )
    SELECT day, old_day, {_KEY}, gpu_model, gpu_count, gpu_only, old_price, price_usd_per_hour,
           round(100 * (price_usd_per_hour - old_price) / old_price, 2)
    FROM ordered
    WHERE old_price IS NOT NULL AND price_usd_per_hour <> old_price
    ORDER BY day
"""
_PRICE_STATE = f"""
    INSERT INTO price_state
    SELECT {_KEY}, day, gpu_model, gpu_count, gpu_only, price_usd_per_hour
    FROM daily_price {{where}}
    QUALIFY row_number() OVER (PARTITION BY {_KEY} ORDER BY day DESC, gpu_model, gpu_count) = 1
"""


def rebuild(con: duckdb.DuckDBPyConnection, *, day_tables: bool = True) -> None:
    """Recompute every summary table from observation + scrape_run (the caller commits).

    `day_tables=False` leaves the day-by-day tables (DERIVED_TABLES) empty, for a bulk load
    that fills them with refresh_days a stretch of days per transaction."""
    for table in SUMMARY_TABLES:
        con.execute(f"DELETE FROM {table}")
    for start, end in _months(con):
        con.execute(_DAILY_PRICE.format(where="WHERE observed_at >= $start AND observed_at < $end"),
                    {"start": start, "end": end})
    # Each source's moves and last prices on their own (an offering is one source's): the
    # window over every daily price at once peaked at 11.5 GB for ten years (§20). The moves
    # are stored in day order, as one statement stored them (a week's moves read one part).
    sources = [s for (s,) in con.execute("SELECT DISTINCT source FROM daily_price "
                                         "ORDER BY source").fetchall()]
    con.execute("CREATE OR REPLACE TEMP TABLE _rebuilt_changes AS "
                "SELECT * FROM price_change LIMIT 0")
    for source in sources:
        con.execute(_PRICE_CHANGES.format(into="_rebuilt_changes", where="WHERE source = $s"),
                    {"s": source})
        con.execute(_PRICE_STATE.format(where="WHERE source = $s"), {"s": source})
    con.execute("INSERT INTO price_change SELECT * FROM _rebuilt_changes ORDER BY changed_on")
    con.execute("DROP TABLE _rebuilt_changes")
    con.execute("""
        INSERT INTO latest_observation
        SELECT o.* FROM observation o
        JOIN latest_capture c ON o.source = c.source AND o.capture_id = c.capture_id
                             AND o.observed_at = c.observed_at""")
    # after latest_observation: current_price_at reads the current captures from it
    if day_tables:
        # on one thread, as a night's landings: each of their small INSERTs, run on several
        # threads, left every thread's part of a row group in the transaction's memory until
        # it commits (~150 KB a statement; ten years did not fit in 4 GB, BENCHMARKS.md §20)
        with on_threads(con, 1):
            refresh_days(con, None)


def _months(con: duckdb.DuckDBPyConnection) -> Iterator[tuple[datetime, datetime]]:
    """The UTC calendar months that hold observations, oldest first: a rebuild recomputes
    daily_price a month at a time (a day never spans two), as one statement over ten years of
    observations needs more than 4 GB of memory (BENCHMARKS.md §20)."""
    row = con.execute("SELECT min(observed_at), max(observed_at) FROM observation").fetchone()
    if not row or row[0] is None:
        return
    first, last = (moment.astimezone(UTC) for moment in row)
    start = datetime(first.year, first.month, 1, tzinfo=UTC)
    while start <= last:
        end = datetime(start.year + start.month // 12, start.month % 12 + 1, 1, tzinfo=UTC)
        yield start, end
        start = end


def rebuild_committed(con: duckdb.DuckDBPyConnection) -> None:
    """`rebuild` in its own transaction (after a migration)."""
    with transaction(con):
        rebuild(con)


def _refresh_daily_price(con: duckdb.DuckDBPyConnection, source: str, day: date) -> None:
    start = datetime.combine(day, time(), UTC)
    con.execute("DELETE FROM daily_price WHERE source = $s AND day = $d", {"s": source, "d": day})
    # A range on observed_at (not a function of it) lets DuckDB skip all other row groups.
    con.execute(_DAILY_PRICE.format(
        where="WHERE source = $s AND observed_at >= $start AND observed_at < $end"),
        {"s": source, "start": start, "end": start + timedelta(days=1)})


def _changes_for_new_day(con: duckdb.DuckDBPyConnection, source: str, day: date, *,
                         first: bool = False) -> None:
    """A night newer than every stored one: compare its prices with each offering's last.

    `first`: the source has no price_state rows yet (no change to find, no row to update).
    """
    params = {"s": source, "d": day}
    if first:
        con.execute(_PRICE_STATE.format(where="WHERE source = $s AND day = $d"), params)
        return
    con.execute(
        f"""
        INSERT INTO price_change
        SELECT t.day, p.last_day, t.source, t.provider, t.offering, t.region, t.pricing,
               t.term_months, t.gpu_model, t.gpu_count, t.gpu_only, p.price_usd_per_hour,
               t.price_usd_per_hour,
               round(100 * (t.price_usd_per_hour - p.price_usd_per_hour)
                     / p.price_usd_per_hour, 2)
        FROM daily_price t JOIN price_state p USING ({_KEY})
        WHERE t.source = $s AND t.day = $d AND p.source = $s
          AND t.price_usd_per_hour <> p.price_usd_per_hour
        """,
        params,
    )
    # Each offering's last price replaced by the new night's (no key to upsert on: a DuckLake
    # has none; DELETE then INSERT in the append's transaction is the same on both).
    con.execute(
        f"""
        DELETE FROM price_state p WHERE p.source = $s AND EXISTS (
            SELECT 1 FROM daily_price t WHERE t.source = $s AND t.day = $d
            AND {" AND ".join(f"t.{k} = p.{k}" for k in _KEY.split(", "))})
        """,
        params,
    )
    con.execute(
        f"""
        INSERT INTO price_state
        SELECT {_KEY}, day, gpu_model, gpu_count, gpu_only, price_usd_per_hour
        FROM daily_price WHERE source = $s AND day = $d
        QUALIFY row_number() OVER (PARTITION BY {_KEY} ORDER BY gpu_model, gpu_count) = 1
        """,
        params,
    )


def _recompute_changes(con: duckdb.DuckDBPyConnection, source: str) -> None:
    """Out-of-order landing: recompute one source's price changes and last prices."""
    params = {"s": source}
    con.execute("DELETE FROM price_change WHERE source = $s", params)
    con.execute(_PRICE_CHANGES.format(into="price_change", where="WHERE source = $s"), params)
    con.execute("DELETE FROM price_state WHERE source = $s", params)
    con.execute(_PRICE_STATE.format(where="WHERE source = $s"), params)


def refresh_latest(con: duckdb.DuckDBPyConnection, source: str, *, force: bool = False,
                   written: pl.DataFrame | None = None,
                   current: tuple[object, object] | None = None) -> None:
    """Point latest_observation's rows for `source` at its current capture (latest_capture).

    `written`: the observations this append wrote; when they are the current capture's, they
    are copied from the batch itself instead of being read back from observation.
    `current`: latest_capture's (capture_id, observed_at) for the source, if already read.
    """
    params = {"s": source}
    if current is None:
        current = con.execute(
            "SELECT capture_id, observed_at FROM latest_capture WHERE source = $s", params
        ).fetchone()
    current_key = (current[0], current[1]) if current else (None, None)
    if not force:
        held = con.execute(
            "SELECT any_value(capture_id), any_value(observed_at), count(*) "
            "FROM latest_observation WHERE source = $s", params
        ).fetchone()
        if current_key == ((held[0], held[1]) if held and held[2] else (None, None)):
            return
    con.execute("DELETE FROM latest_observation WHERE source = $s", params)
    if current_key[0] is None:
        return
    params = {"s": source, "c": current_key[0], "t": current_key[1]}
    if force and written is not None:
        with scanned_once(con, "_latest_batch", written):
            con.execute("INSERT INTO latest_observation BY NAME SELECT * FROM _latest_batch "
                        "WHERE source = $s AND capture_id = $c AND observed_at = $t", params)
    else:
        con.execute("INSERT INTO latest_observation SELECT * FROM observation "
                    "WHERE source = $s AND capture_id = $c AND observed_at = $t", params)


def after_append(con: duckdb.DuckDBPyConnection, source: str, days: Iterable[date], *,
                 capture_id: str | None = None, written: pl.DataFrame | None = None,
                 run_day: date | None = None) -> None:
    """Bring the summaries up to date after `source` wrote (or removed) rows on `days`.

    Call inside the append's transaction, after its observation and scrape_run rows.
    `capture_id`: the capture whose observations were written (its latest rows are re-read
    even if it was already the current capture, e.g. after a re-parse); `written`: every
    observation of that capture, when the caller has them at hand; `run_day`: the day of the
    run's observation time (an 'unchanged' run changes which capture is current from then on).
    """
    days = sorted(set(days))
    if days:
        row = con.execute("SELECT max(last_day) FROM price_state WHERE source = $s",
                          {"s": source}).fetchone()
        last_day = row[0] if row else None
        in_order = len(days) == 1 and (last_day is None or days[0] > last_day)
        for day in days:
            _refresh_daily_price(con, source, day)
        if in_order:
            _changes_for_new_day(con, source, days[0], first=last_day is None)
        else:
            _recompute_changes(con, source)
    current = con.execute("SELECT capture_id, observed_at FROM latest_capture WHERE source = $s",
                          {"s": source}).fetchone()
    wrote_current = bool(days) and current is not None and current[0] == capture_id
    refresh_latest(con, source, force=wrote_current, written=written,
                   current=(current[0], current[1]) if current else (None, None))
    changed_from = min([*days, *([run_day] if run_day else [])], default=None)
    if changed_from is None:
        return
    if id(con) in _deferred:
        _deferred[id(con)].append(changed_from)
    else:
        refresh_days(con, changed_from)


_deferred: dict[int, list[date]] = {}  # id() of a connection in `days_refreshed_once`


@contextmanager
def days_refreshed_once(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Appends inside the block leave the day-by-day tables to its end, which recomputes them
    once from the earliest day any of them changed: the same tables as one recompute per
    append (a day's values depend only on the data at its end), for one recompute's cost.
    Use inside the appends' transaction; a block that raises recomputes nothing."""
    _deferred[id(con)] = []
    try:
        yield
    finally:
        changed = _deferred.pop(id(con))
    if changed:
        refresh_days(con, min(changed))
