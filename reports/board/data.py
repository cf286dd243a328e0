"""What the price board shows, read from the warehouse as polars frames (no HTML here).

Current prices, freshness and every table come from the weekly report's own functions
(reports.queries.current_prices_at, source_freshness; the report section helpers), so the board
the markdown report cannot disagree. The only SQL of this module is the per-segment price
history, a question the report does not ask.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cache

import duckdb
import polars as pl

from reports.changes import cheapest_per_model
from reports.comparison import catalog_order
from reports.queries import STEADY_PRICING, current_prices_at, source_freshness, table_exists
from schemas.gpus import CATALOG_PATH, UNKNOWN_GPU

__all__ = [
    "DAILY_POINTS_DAYS",
    "DOT_PRICING",
    "TILE_COUNT",
    "WeekData",
    "board_gpus",
    "compress_steps",
    "dot_points",
    "load_week",
    "market_prices",
    "price_history",
    "segment_of",
]

SEGMENTS_PATH = CATALOG_PATH.with_name("provider_segments.csv")
TILE_COUNT = 12
# Daily points for the last year; older history is one point per ISO week (its last day).
DAILY_POINTS_DAYS = 365
# A segment with no offer for longer than this is drawn with a gap, not a bridged line.
GAP_DAYS = 15
# The dot plot's pricing groups (reserved commitments are not comparable, so left out).
DOT_PRICING: dict[str, str] = {
    "on_demand": "on-demand", "spot": "spot / interruptible",
    "interruptible": "spot / interruptible", "community_spot": "spot / interruptible",
    "community": "community", "serverless": "serverless",
}


@cache
def _segments() -> dict[str, str]:
    with SEGMENTS_PATH.open(encoding="utf-8") as handle:
        return {row["provider"]: row["segment"] for row in csv.DictReader(handle)}


def segment_of(provider: str) -> str:
    """hyperscaler, neocloud, marketplace, serverless (schemas/provider_segments.csv) or other."""
    return _segments().get(provider, "other")


# ---- market price per GPU: the one place to switch when the market table lands -------------

def market_prices(con: duckdb.DuckDBPyConnection, prices: pl.DataFrame,
                  as_of: datetime) -> pl.DataFrame:
    """(gpu_model, usd_per_gpu_hour, provider, stale, basis) per GPU model at `as_of`.

    The published market price (table `market_price`, segment 'all', the newest day up to
    `as_of`) where there is one; otherwise the cheapest current on-demand whole-offering price
    (reports.changes), with the reason the market price was withheld in `basis`.
    """
    cheapest = cheapest_per_model(prices).with_columns(
        pl.lit("cheapest on-demand offer").alias("basis"))
    if not table_exists(con, "market_price"):
        return cheapest
    market = con.execute(
        """
        SELECT gpu_model, arg_max(usd_per_gpu_hour, day) AS market_usd,
               arg_max(withheld_reason, day) AS withheld_reason,
               arg_max(providers, day) AS providers
        FROM market_price WHERE segment = 'all' AND day <= $day GROUP BY gpu_model
        """, {"day": as_of.date()}).pl()
    joined = cheapest.join(market, on="gpu_model", how="full", coalesce=True)
    published = pl.col("market_usd").is_not_null()
    return joined.select(
        "gpu_model",
        pl.when(published).then(pl.col("market_usd")).otherwise(pl.col("usd_per_gpu_hour"))
        .alias("usd_per_gpu_hour"),
        pl.when(published).then(None).otherwise(pl.col("provider")).alias("provider"),
        pl.when(published).then(False).otherwise(pl.col("stale")).alias("stale"),
        pl.when(published)
        .then(pl.format("market price ({} providers)", pl.col("providers")))
        .when(pl.col("withheld_reason").is_not_null())
        .then(pl.format("cheapest on-demand offer (market price withheld: {})",
                        pl.col("withheld_reason")))
        .otherwise(pl.col("basis")).alias("basis"),
    ).filter(pl.col("usd_per_gpu_hour").is_not_null())


# ---- which GPUs get a tile and a history chart ---------------------------------------------

def board_gpus(prices: pl.DataFrame, count: int = TILE_COUNT) -> list[str]:
    """The `count` GPU models offered by the most providers now (steady pricing), catalog order."""
    offered = (
        prices.filter(pl.col("pricing").is_in(list(STEADY_PRICING)) & ~pl.col("gpu_only")
                      & (pl.col("gpu_model") != UNKNOWN_GPU))
        .group_by("gpu_model").agg(pl.col("provider").n_unique().alias("providers"))
        .sort("providers", "gpu_model", descending=[True, False]).head(count)
    )
    return catalog_order(offered["gpu_model"].to_list())


# ---- price history per GPU and segment -------------------------------------------------------

def price_history(con: duckdb.DuckDBPyConnection, gpu_models: list[str], *, until: date,
                  pricing: tuple[str, ...] = STEADY_PRICING) -> pl.DataFrame:
    """(gpu_model, segment, day, usd_per_gpu_hour, provider, offering, source) over the whole
    stored history up to `until`: the cheapest whole-offering price per segment and day, as
    the change points of a step line (see compress_steps).

    Daily for the last DAILY_POINTS_DAYS, then one point per ISO week (the week's last
    observed day). As in the report, aggregator rows count only for providers without a
    direct source that day.
    """
    providers = sorted(_segments())
    frame = con.execute(
        """
        WITH days AS (
            SELECT dp.day, dp.provider, dp.offering, dp.gpu_model, dp.source,
                   dp.price_usd_per_gpu_hour AS usd, src.aggregator
            FROM daily_price dp JOIN source src USING (source)
            WHERE dp.day <= $until AND NOT dp.gpu_only
              AND list_contains($models, dp.gpu_model) AND list_contains($pricing, dp.pricing)
        ), direct AS (SELECT DISTINCT day, provider FROM days WHERE NOT aggregator
        ), per_day AS (
            SELECT gpu_model,
                   coalesce($segments[list_position($providers, provider)], 'other') AS segment,
                   day, min(usd) AS usd, arg_min(provider, usd) AS provider,
                   arg_min(offering, usd) AS offering, arg_min(source, usd) AS source
            FROM days d
            WHERE NOT aggregator OR NOT EXISTS (
                SELECT 1 FROM direct x WHERE x.day = d.day AND x.provider = d.provider)
            GROUP BY ALL
        )
        SELECT gpu_model, segment, day, usd AS usd_per_gpu_hour, provider, offering, source
        FROM per_day
        QUALIFY row_number() OVER (
            PARTITION BY gpu_model, segment,
                CASE WHEN day > $until - $daily THEN day ELSE date_trunc('week', day) END
            ORDER BY day DESC) = 1
        ORDER BY gpu_model, segment, day
        """,
        {"until": until, "models": gpu_models, "pricing": list(pricing),
         "providers": providers, "segments": [_segments()[p] for p in providers],
         "daily": DAILY_POINTS_DAYS},
    ).pl()
    return compress_steps(frame)


def compress_steps(history: pl.DataFrame, gap_days: int = GAP_DAYS) -> pl.DataFrame:
    """Keep only the points a step line needs: where the price changes, around gaps longer than
    `gap_days`, and each series' first and last point. Adds `gap_before` (bool)."""
    keep: list[bool] = []
    gap_before: list[bool] = []
    rows = history.select("gpu_model", "segment", "day", "usd_per_gpu_hour").rows()
    for i, (model, segment, day, usd) in enumerate(rows):
        prev = rows[i - 1] if i else None
        nxt = rows[i + 1] if i + 1 < len(rows) else None
        first = prev is None or prev[:2] != (model, segment)
        last = nxt is None or nxt[:2] != (model, segment)
        gap = not first and (day - prev[2]).days > gap_days  # type: ignore[index]
        gap_after = not last and (nxt[2] - day).days > gap_days  # type: ignore[index]
        keep.append(first or last or gap or gap_after or usd != prev[3])  # type: ignore[index]
        gap_before.append(gap)
    return history.with_columns(pl.Series("gap_before", gap_before, pl.Boolean)).filter(
        pl.Series(keep, dtype=pl.Boolean))


# ---- the dot plot: every provider's current prices for one GPU ------------------------------

def dot_points(prices: pl.DataFrame, gpu_model: str) -> pl.DataFrame:
    """(provider, segment, group, usd_per_gpu_hour, offers, example) for one GPU: one dot per
    provider x pricing group x price (cent), `offers` counting the offers behind it."""
    frame = prices.filter((pl.col("gpu_model") == gpu_model) & ~pl.col("gpu_only")
                          & pl.col("pricing").is_in(list(DOT_PRICING)))
    if frame.height == 0:
        return pl.DataFrame(schema={"provider": pl.String, "segment": pl.String,
                                    "group": pl.String, "usd_per_gpu_hour": pl.Float64,
                                    "offers": pl.UInt32, "example": pl.String,
                                    "stale": pl.Boolean})
    return (
        frame.with_columns(pl.col("pricing").replace_strict(DOT_PRICING).alias("group"),
                           pl.col("price_usd_per_gpu_hour").round(2).alias("usd_per_gpu_hour"),
                           pl.format("{} ({})", "offering", "region").alias("example"))
        .sort("offering", "region")
        .group_by("provider", "group", "usd_per_gpu_hour")
        .agg(pl.len().alias("offers"), pl.col("example").first(), pl.col("stale").any())
        .with_columns(pl.col("provider").map_elements(segment_of, pl.String).alias("segment"))
        .select("provider", "segment", "group", "usd_per_gpu_hour", "offers", "example", "stale")
        .sort("provider", "group", "usd_per_gpu_hour")
    )


# ---- one week's board ----------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class WeekData:
    week: str
    as_of: datetime
    prices: pl.DataFrame
    freshness: pl.DataFrame
    tiles: pl.DataFrame      # gpu_model, usd_per_gpu_hour, provider, stale, basis, old_usd, ...
    history: pl.DataFrame    # price_history rows for the tile GPUs
    gpus: list[str]


def _tiles(con: duckdb.DuckDBPyConnection, prices: pl.DataFrame, old_prices: pl.DataFrame,
           as_of: datetime, gpus: list[str]) -> pl.DataFrame:
    now = market_prices(con, prices, as_of)
    before = market_prices(con, old_prices, as_of - timedelta(days=7)).select(
        "gpu_model", pl.col("usd_per_gpu_hour").alias("old_usd"))
    providers = (prices.filter(pl.col("pricing").is_in(list(STEADY_PRICING))
                               & ~pl.col("gpu_only"))
                 .group_by("gpu_model").agg(pl.col("provider").n_unique().alias("providers")))
    order = {m: i for i, m in enumerate(gpus)}
    return (
        now.filter(pl.col("gpu_model").is_in(gpus))
        .join(before, on="gpu_model", how="left")
        .join(providers, on="gpu_model", how="left")
        .with_columns(((pl.col("usd_per_gpu_hour") - pl.col("old_usd")) / pl.col("old_usd")
                       * 100).round(1).alias("pct_change"))
        .sort(pl.col("gpu_model").replace_strict(order, default=len(order)))
    )


def load_week(con: duckdb.DuckDBPyConnection, *, week: str, as_of: datetime,
              history_until: date | None = None) -> WeekData:
    """Everything one week's page shows, as of `as_of`."""
    prices = current_prices_at(con, as_of)
    old_prices = current_prices_at(con, as_of - timedelta(days=7))
    gpus = board_gpus(prices)
    history = price_history(con, gpus, until=history_until or as_of.date())
    return WeekData(week=week, as_of=as_of, prices=prices,
                    freshness=source_freshness(con, as_of),
                    tiles=_tiles(con, prices, old_prices, as_of, gpus), history=history,
                    gpus=gpus)
