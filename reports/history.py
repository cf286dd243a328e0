"""Price history you can ask about: a GPU's daily series with each point's provenance, and
the list of price moves. Read-only SQL; every user value is a bound parameter."""

from __future__ import annotations

from datetime import date

import duckdb
import polars as pl

__all__ = ["price_moves", "series_points"]


def series_points(con: duckdb.DuckDBPyConnection, gpu_models: list[str], *, since: date,
                  until: date, pricing: tuple[str, ...] = ("on_demand",),
                  providers: list[str] | None = None) -> pl.DataFrame:
    """The cheapest whole-offering $/GPU-hour per day, with where that point came from.

    One row per day: the offer, its provider and source, the capture it was read from (the
    archived payload, `raw_capture.capture_id`) and the moment it describes. As in the
    latest_price view, an aggregator's rows count only for providers that had no direct
    source that day.
    """
    return con.execute(
        """
        WITH obs AS (
            SELECT o.*, DATE '1970-01-01'
                       + CAST(floor(epoch_us(o.observed_at) / 86400000000) AS INTEGER) AS day,
                   src.aggregator
            FROM observation o JOIN source src USING (source)
            WHERE o.observed_at >= CAST($since AS TIMESTAMPTZ)
              AND o.observed_at < CAST($until AS TIMESTAMPTZ) + INTERVAL 1 DAY
              AND NOT o.gpu_only AND list_contains($models, o.gpu_model)
              AND list_contains($pricing, o.pricing)
              AND ($providers IS NULL OR list_contains($providers, o.provider))
        ), direct AS (SELECT DISTINCT day, provider FROM obs WHERE NOT aggregator)
        SELECT day, round(price_usd_per_gpu_hour, 4) AS usd_per_gpu_hour, gpu_model, provider,
               offering, region, pricing, source, left(capture_id, 12) AS capture,
               observed_at
        FROM obs o
        WHERE NOT aggregator
           OR NOT EXISTS (SELECT 1 FROM direct d WHERE d.day = o.day AND d.provider = o.provider)
        QUALIFY row_number() OVER (PARTITION BY day ORDER BY price_usd_per_gpu_hour, provider,
                                   offering, region, observed_at DESC) = 1
        ORDER BY day
        """,
        {"models": gpu_models, "pricing": list(pricing), "since": since, "until": until,
         "providers": providers},
    ).pl()


def price_moves(con: duckdb.DuckDBPyConnection, *, since: date,
                gpu_models: list[str] | None = None, providers: list[str] | None = None,
                pricing: tuple[str, ...] | None = None) -> pl.DataFrame:
    """Every price move on or after `since`: old -> new per hour and per GPU-hour, %."""
    return con.execute(
        """
        SELECT changed_on, previous_day, provider, offering, region, pricing, gpu_model,
               round(old_price_usd_per_hour / gpu_count, 4) AS old_usd_per_gpu_hour,
               round(new_price_usd_per_hour / gpu_count, 4) AS new_usd_per_gpu_hour,
               pct_change, old_price_usd_per_hour, new_price_usd_per_hour, source
        FROM price_change
        WHERE changed_on >= $since
          AND ($models IS NULL OR list_contains($models, gpu_model))
          AND ($providers IS NULL OR list_contains($providers, provider))
          AND ($pricing IS NULL OR list_contains($pricing, pricing))
        ORDER BY changed_on DESC, abs(pct_change) DESC, provider, offering, region, pricing
        """,
        {"since": since, "models": gpu_models, "providers": providers,
         "pricing": list(pricing) if pricing else None},
    ).pl()
