"""Recompute the index over stored history without publishing anything.

`replay` runs the engine day by day under one or more parameter sets, each advancing from its
own record (its votes feed its next day, as a published series advances from its records),
reading each day's prints from the warehouse once for all of them. The impact report of a new
methodology version and the backtest of aggregates are made of it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import duckdb
import polars as pl

from warehouse.index.engine import History, fix_day, frames
from warehouse.index.params import IndexParams
from warehouse.index.prints import PRINT_SCHEMA, day_prints
from warehouse.index.store import history_before
from warehouse.semantic import day_end

__all__ = ["ReplayDay", "priced_days", "replay"]


@dataclass(frozen=True, slots=True)
class ReplayDay:
    day: date
    as_of: datetime
    prints: pl.DataFrame
    fixings: list[pl.DataFrame]  # one per parameter set, FIXING_SCHEMA
    votes: list[pl.DataFrame]


def priced_days(con: duckdb.DuckDBPyConnection, since: date | None,
                until: date | None) -> list[date]:
    """Every day from `since` (default: the first day with prices) to `until` (default today)."""
    row = con.execute("SELECT min(utc_day(observed_at)) FROM scrape_run "
                      "WHERE confirms(status) AND capture_id IS NOT NULL").fetchone()
    first = since or (row[0] if row else None)
    if first is None:
        return []
    last = until or datetime.now(UTC).date()
    return [first + timedelta(days=i) for i in range((last - first).days + 1)]


def replay(con: duckdb.DuckDBPyConnection, params: Sequence[IndexParams], days: list[date], *,
           moments: dict[date, datetime] | None = None, from_record: bool = True,
           now: datetime | None = None) -> Iterator[ReplayDay]:
    """Each day's fixings under each parameter set. `moments`: the fixing time of a day (the
    published one, so the replay reads the same prices), else its end. `from_record`: start
    from the published votes before the first day (else from nothing)."""
    if not days:
        return
    now = now or datetime.now(UTC)
    histories = [history_before(con, days[0], p) if from_record else History(genesis=days[0])
                 for p in params]
    for history in histories:
        if history.genesis is None:
            history.genesis = days[0]
    # a print needs a source seen that day: on other days the prints are empty (no query)
    seen = {row[0] for row in con.execute(
        "SELECT DISTINCT utc_day(observed_at) FROM scrape_run WHERE confirms(status) "
        "AND capture_id IS NOT NULL AND utc_day(observed_at) BETWEEN $a AND $b",
        {"a": days[0], "b": days[-1]}).fetchall()}
    for day in days:
        as_of = (moments or {}).get(day) or day_end(day, now)
        read: dict[tuple[object, ...], pl.DataFrame] = {}  # prints per basket definition
        fixings, votes = [], []
        for p, history in zip(params, histories, strict=True):
            basket = (p.on_demand, p.spot, p.reserved, p.terms_months, p.segments,
                      p.geographies)
            if basket not in read:
                read[basket] = day_prints(con, as_of, p) if day in seen \
                    else pl.DataFrame(schema=PRINT_SCHEMA)
            f, v = frames(fix_day(day, read[basket], history, p))
            history.add(v)
            fixings.append(f)
            votes.append(v)
        yield ReplayDay(day, as_of, next(iter(read.values())), fixings, votes)
