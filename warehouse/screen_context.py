"""What the screens need from the warehouse (schemas.screens.ScreenContext), read in one place.

- the market: each GPU model's current prices across providers (other sources' current
  captures, flagged rows left out), for the price band;
- the source's previous prices and, where the previous one was flagged, its last confirmed
  price, for the jump flag; other providers' recent moves of the same GPU;
- each provider's rows in an aggregator's last stored part, for its volume gate.
Reads only; the caller holds the connection (and the write lock, when landing).
"""

from __future__ import annotations

from datetime import datetime, timedelta

import duckdb
import polars as pl

from schemas.screens import JUMP_KEY, ScreenContext, load_config
from warehouse.frames import sql_frame

__all__ = ["previous_parts", "recorded_market", "screen_context"]

_KEY = ", ".join(JUMP_KEY)


def _market(con: duckdb.DuckDBPyConnection, source: str) -> pl.DataFrame:
    return sql_frame(
        con, """
        WITH per_provider AS (
            SELECT gpu_model, provider, median(price_usd_per_gpu_hour) AS price
            FROM latest_observation
            WHERE source <> $s AND gpu_model <> 'unknown' AND screen_flag IS NULL
            GROUP BY gpu_model, provider
        )
        SELECT gpu_model, count(*) AS providers, median(price) AS median_usd_per_gpu_hour
        FROM per_provider GROUP BY gpu_model
        """, {"s": source})


def _previous(con: duckdb.DuckDBPyConnection, source: str,
              observed_at: datetime) -> pl.DataFrame | None:
    """The source's current prices, one per offering key, when `observed_at` is newer than
    them (a capture landing behind newer data, e.g. history, is not compared)."""
    params = {"s": source, "t": observed_at}
    frame = sql_frame(
        con, f"""
        SELECT {_KEY}, any_value(price_usd_per_hour) AS previous_price,
               any_value(screen_flag) AS previous_flag
        FROM latest_observation WHERE source = $s AND observed_at < $t
        GROUP BY ALL HAVING count(DISTINCT price_usd_per_hour) = 1
        """, params)
    if frame.height == 0:
        return None
    confirmed = pl.DataFrame(schema={**{c: frame.schema[c] for c in JUMP_KEY},
                                     "confirmed_price": pl.Float64()})
    if frame["previous_flag"].is_not_null().any():
        offerings = frame.filter(pl.col("previous_flag").is_not_null())["offering"].to_list()
        confirmed = sql_frame(
            con, f"""
            SELECT {_KEY}, arg_max(price_usd_per_hour, observed_at) AS confirmed_price
            FROM observation
            WHERE source = $s AND screen_flag IS NULL AND observed_at < $t
              AND list_contains($o, offering)
            GROUP BY ALL
            """, {**params, "o": offerings})
    return frame.join(confirmed, on=list(JUMP_KEY), how="left", nulls_equal=True)


def _others_moved(con: duckdb.DuckDBPyConnection, observed_at: datetime) -> pl.DataFrame:
    config = load_config()
    return sql_frame(
        con, """
        SELECT gpu_model, CAST(sign(pct_change) AS BIGINT) AS direction,
               list(DISTINCT provider) AS providers
        FROM price_change
        WHERE changed_on >= $since AND changed_on <= $until AND abs(pct_change) >= $move
        GROUP BY ALL
        """,
        {"since": (observed_at - timedelta(days=config.others_window_days)).date(),
         "until": observed_at.date(), "move": 100 * config.others_min_move})


def screen_context(con: duckdb.DuckDBPyConnection, source: str, observed_at: datetime, *,
                   aggregator: bool) -> ScreenContext:
    """The context to screen a capture of `source` observed at `observed_at` with."""
    return ScreenContext(market=_market(con, source),
                         previous=_previous(con, source, observed_at),
                         others_moved=_others_moved(con, observed_at), aggregator=aggregator)


def previous_parts(con: duckdb.DuckDBPyConnection, source: str,
                   observed_at: datetime) -> dict[str, int]:
    """Per provider, the rows of the aggregator's last stored part at or before `observed_at`
    (a backfill behind newer data compares with the history before it)."""
    rows = con.execute(
        "SELECT provider, arg_max(rows, observed_at) FROM provider_capture "
        "WHERE source = $s AND observed_at <= $t GROUP BY provider",
        {"s": source, "t": observed_at}).fetchall()
    return {str(provider): int(count) for provider, count in rows}


def recorded_market(con: duckdb.DuckDBPyConnection, source: str,
                    capture_id: str) -> pl.DataFrame:
    """The market the band was narrowed to when the capture landed (screen_market, written by
    the append that stored it). Empty when there was none, or for a capture stored before
    this was recorded: the band is then the catalog's alone."""
    return sql_frame(
        con, """
        SELECT gpu_model, providers, median_usd_per_gpu_hour FROM screen_market
        WHERE source = $s AND capture_id = $c AND run_id = (
            SELECT r.run_id FROM scrape_run r WHERE r.source = $s AND r.capture_id = $c
              AND r.status = 'success' ORDER BY r.finished_at LIMIT 1)
        ORDER BY gpu_model
        """, {"s": source, "c": capture_id})
