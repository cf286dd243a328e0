"""The index as every view reads it: a day's published fixings, or (a day not fixed yet) the
same fixings computed from the published record and labelled indicative; the market table as
a view of the index (`market_view`: the index's value and reason per GPU and segment, beside
the day's offer statistics of warehouse.semantic_market)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from warehouse.frames import scanned_once, sql_frame
from warehouse.index.params import IndexParams, default_params
from warehouse.index.prints import SeriesScope
from warehouse.index.store import day_record, read_fixings, read_votes
from warehouse.index.view import MARKET_VIEW, NO_VOTE, stored_view_query
from warehouse.semantic import ALL
from warehouse.semantic_market import stored_market

if TYPE_CHECKING:
    from warehouse.index.publish import Computed

__all__ = ["ON_DEMAND", "fixings_of", "market_view", "one_indicative_day", "votes_of"]

ON_DEMAND = "on_demand"
MARKET = "market_usd_per_gpu_hour"  # the market price column (migration 010's naming rule)


def fixings_of(con: duckdb.DuckDBPyConnection, day: date, *, now: datetime | None = None,
               gpu_models: list[str] | None = None, kind: str | None = None,
               segment: str | None = None, geo: str | None = None
               ) -> tuple[pl.DataFrame, pl.DataFrame, bool]:
    """(fixings, their votes, published?) of `day`: the records when the day is fixed, else
    computed now from the published record (indicative)."""
    fixings, votes, published = _day_fixings(con, day, now=now, gpu_models=gpu_models,
                                             kind=kind, segment=segment, geo=geo)
    if votes is None:
        votes = read_votes(con, fixings["fixing_id"].to_list())
    return fixings, votes, published


# (connection, day, moment, params, models, series) -> the day computed (one_indicative_day)
_COMPUTED: ContextVar[dict[tuple[object, ...], Computed] | None] = ContextVar(
    "indicative_days", default=None)


@contextmanager
def one_indicative_day() -> Iterator[None]:
    """Within it, views built together on one read-only connection (the nightly report and
    its board) compute a day not fixed yet once per (connection, day, moment, models,
    series), not once each (every series of a day: 1.5 s at 50 M observations; BENCHMARKS
    §18). Only for a connection nothing writes through while it lasts."""
    token = _COMPUTED.set({})
    try:
        yield
    finally:
        _COMPUTED.reset(token)


def _indicative(con: duckdb.DuckDBPyConnection, day: date, now: datetime,
                params: IndexParams, gpu_models: list[str] | None,
                scope: SeriesScope) -> Computed:
    """The day's fixings of those models (every one for none) in `scope`, and their votes."""
    # computing a day needs the engine (and numpy): loaded only for a day not yet fixed
    from warehouse.index.publish import indicative

    shared = _COMPUTED.get()
    # the connection itself in the key (hashed by identity): kept alive, never mistaken
    key = (con, day, now, params.digest, tuple(gpu_models) if gpu_models else None, scope)
    if shared is not None and key in shared:
        return shared[key]
    computed = indicative(con, day, now, params, gpu_models=gpu_models or None, scope=scope)
    if shared is not None:
        shared[key] = computed
    return computed


def _day_fixings(con: duckdb.DuckDBPyConnection, day: date, *, now: datetime | None,
                 gpu_models: list[str] | None, kind: str | None, segment: str | None,
                 geo: str | None) -> tuple[pl.DataFrame, pl.DataFrame | None, bool]:
    """fixings_of, the votes of a published day left unread (None): the market table does
    not show them."""
    if day_record(con, day) is not None:
        return read_fixings(con, days=[day], gpu_models=gpu_models, kind=kind,
                            segment=segment, geo=geo), None, True
    params = default_params()
    # computed for those models and that scope alone: the fixings and votes asked for
    computed = _indicative(con, day, now or datetime.now(UTC), params, gpu_models,
                           SeriesScope(kind, segment, geo))
    fixings = computed.fixings.with_columns(
        pl.lit(params.version).alias("method_version"),
        pl.lit(params.digest).alias("params_digest"),
        pl.lit(computed.as_of).cast(pl.Datetime("us", "UTC")).alias("as_of"),
        pl.lit(None, pl.Datetime("us", "UTC")).alias("published_at"))
    return fixings, computed.votes, False


def votes_of(con: duckdb.DuckDBPyConnection, day: date, gpu_models: list[str], *,
             now: datetime | None = None, kind: str = ON_DEMAND, segment: str = ALL,
             geo: str = ALL) -> tuple[pl.DataFrame, pl.DataFrame, bool]:
    """The fixings of `gpu_models` in one scope and their votes (explain)."""
    return fixings_of(con, day, now=now, gpu_models=gpu_models, kind=kind, segment=segment,
                      geo=geo)


def market_view(con: duckdb.DuckDBPyConnection, day: date, *,
                gpu_models: list[str] | None = None, segment: str | None = ALL,
                now: datetime | None = None) -> tuple[pl.DataFrame, bool]:
    """The market table of `day`: per GPU model and segment, `market_usd_per_gpu_hour` = the
    on-demand index (NULL = no index, `withheld_reason` its reason), its band
    (`band_low/high_usd_per_gpu_hour`), panel and method, and the day's offer statistics
    (the two-stage median `median_usd_per_gpu_hour`, min, p25, p75, max, providers, offers,
    dispersion). Second: is the index value published (else indicative)?"""
    stored = (stored_view_query(con, day, gpu_models, segment)
              if day_record(con, day) is not None else None)
    if stored is not None:  # the common case: a fixed day's stored rows, read by SQL alone
        return sql_frame(con, *stored), True
    stats, _ = stored_market(con, day, gpu_models=gpu_models, segment=segment, now=now)
    fixings, _, published = _day_fixings(con, day, now=now, gpu_models=gpu_models,
                                         kind=ON_DEMAND, segment=segment, geo=ALL)
    params = {"day": day, "no_vote": NO_VOTE,
              "index_status": "published" if published else "indicative"}
    with scanned_once(con, "_view_stats", stats), scanned_once(con, "_view_fixings", fixings):
        view = sql_frame(con, MARKET_VIEW.format(stats="SELECT * FROM _view_stats",
                                                 fixings="SELECT * FROM _view_fixings"),
                         params)
    return view, published
