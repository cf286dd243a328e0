"""Price history you can ask about: a GPU's cheapest price per day with each point's
provenance, and the list of price moves. Both read the semantic layer: the cheapest per day
(warehouse.semantic_history, today's point = the live cheapest) and the price_move view (moves
of the source that speaks for each offering)."""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING

from contract import DEFAULT_PRICING, pricing_set
from warehouse.frames import sql_frame

if TYPE_CHECKING:  # polars where a frame is made: `changes` prints its table without it
    import duckdb
    import polars as pl

    from warehouse.place import Place

__all__ = ["moves_query", "price_moves", "series_points"]


def series_points(con: duckdb.DuckDBPyConnection, gpu_models: list[str], *, since: date,
                  until: date, pricing: tuple[str, ...] | None = None,
                  providers: list[str] | None = None,
                  now: datetime | None = None, place: Place | None = None) -> pl.DataFrame:
    """The cheapest comparable offer of `gpu_models` (in `place`, default everywhere) per
    day, with where that point came from: the offer, its provider and source, the capture it
    was read from (the archived payload, `raw_capture.capture_id`) and the moment it
    describes."""
    import polars as pl

    from warehouse.place import EVERYWHERE
    from warehouse.semantic_history import drop_computed, points_query

    sql, params = points_query(con, gpu_models, since=since, until=until, pricing=pricing,
                               providers=providers, now=now, place=place or EVERYWHERE)
    try:
        return sql_frame(con, sql, params).cast({"observed_at": pl.Datetime("us", "UTC")})
    finally:
        drop_computed(con)


def moves_query(*, since: date, gpu_models: list[str] | None = None,
                providers: list[str] | None = None,
                pricing: tuple[str, ...] | None = DEFAULT_PRICING
                ) -> tuple[str, dict[str, object]]:
    """THE price-moves question, as SQL and its parameters: every move of a current price on
    or after `since` (price_moves_since: the price_move view's rows from that day), newest
    first, the biggest first within a day. `pricing` None: every pricing kind."""
    return ("""
        SELECT * FROM price_moves_since($since)
        WHERE ($models IS NULL OR list_contains($models, gpu_model))
          AND ($providers IS NULL OR list_contains($providers, provider))
          AND ($pricing IS NULL OR list_contains($pricing, pricing))
        ORDER BY changed_on DESC, abs(pct_change) DESC, provider, offering, region, pricing
        """, {"since": since, "models": gpu_models, "providers": providers,
              "pricing": list(pricing_set(pricing)) if pricing else None})


def price_moves(con: duckdb.DuckDBPyConnection, *, since: date,
                gpu_models: list[str] | None = None, providers: list[str] | None = None,
                pricing: tuple[str, ...] | None = DEFAULT_PRICING,
                place: Place | None = None) -> pl.DataFrame:
    """moves_query's rows in `place` (default everywhere), as a frame."""
    from warehouse.place import EVERYWHERE

    sql, params = moves_query(since=since, gpu_models=gpu_models, providers=providers,
                              pricing=pricing)
    return (place or EVERYWHERE).keep(sql_frame(con, sql, params))
