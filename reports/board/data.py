"""What the price board shows, read from the semantic layer as polars frames (no HTML here).

Every number is one the weekly report and the CLI show too: the market price and its move are
the stored market values and matched moves (`market`, `market-moves`), the cheapest is
warehouse.semantic's (`cheapest`), the history lines are daily_cheapest's, freshness is
freshness_at the page's as-of time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

import duckdb
import polars as pl

from reports.market.comparison import catalog_order
from reports.market.moves import Moves, week_moves
from reports.market.values import market_of
from warehouse.semantic import ALL, Prices
from warehouse.semantic_daily import segment_history

__all__ = [
    "DAILY_POINTS_DAYS",
    "DOT_PRICING",
    "TILE_COUNT",
    "WeekData",
    "board_gpus",
    "compress_steps",
    "dot_points",
    "load_week",
    "price_history",
    "tile_rows",
]

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


# ---- the tiles: market price (or the cheapest offer where it is withheld) and the move ------

def board_gpus(market: pl.DataFrame, count: int = TILE_COUNT) -> list[str]:
    """The `count` GPU models quoted by the most providers (the market's counted providers,
    the same count `market` prints), in catalog order."""
    offered = (market.filter(pl.col("segment") == ALL)
               .sort("providers", "gpu_model", descending=[True, False]).head(count))
    return catalog_order(offered["gpu_model"].to_list())


def tile_rows(prices: Prices, market: pl.DataFrame, moves: Moves,
              gpus: list[str]) -> pl.DataFrame:
    """One row per tile GPU: the published market price, else the cheapest comparable offer
    (its provider named, `basis` saying why); the counted providers; the week's matched move."""
    cheapest = prices.cheapest(gpu_models=gpus).select(
        "gpu_model", pl.col("price_usd_per_gpu_hour").alias("cheapest_usd"),
        pl.col("provider").alias("cheapest_provider"))
    move = moves.moves.select("gpu_model", pl.col("old_usd_per_gpu_hour").alias("old_usd"),
                              "pct_change", "matched",
                              pl.col("withheld_reason").alias("move_withheld"))
    published = pl.col("market_usd_per_gpu_hour").is_not_null()
    order = {m: i for i, m in enumerate(gpus)}
    return (
        market.filter((pl.col("segment") == ALL) & pl.col("gpu_model").is_in(gpus))
        .select("gpu_model", "market_usd_per_gpu_hour", "providers", "withheld_reason")
        .join(cheapest, on="gpu_model", how="left")
        .join(move, on="gpu_model", how="left")
        .select(
            "gpu_model",
            pl.when(published).then(pl.col("market_usd_per_gpu_hour"))
            .otherwise(pl.col("cheapest_usd")).alias("usd_per_gpu_hour"),
            pl.when(published).then(None).otherwise(pl.col("cheapest_provider"))
            .alias("provider"),
            "providers", "old_usd", "pct_change", "matched", "move_withheld",
            pl.when(published).then(pl.format("market price ({} providers)", "providers"))
            .otherwise(pl.format("cheapest offer (market price withheld: {})",
                                 "withheld_reason")).alias("basis"))
        .filter(pl.col("usd_per_gpu_hour").is_not_null())
        .sort(pl.col("gpu_model").replace_strict(order, default=len(order)))
    )


# ---- price history per GPU and segment -------------------------------------------------------

def price_history(con: duckdb.DuckDBPyConnection, gpu_models: list[str], *,
                  until: date) -> pl.DataFrame:
    """(gpu_model, segment, day, usd_per_gpu_hour, provider, offering, source, gap_before)
    over the whole stored history up to `until`: the cheapest comparable offer per segment and
    observed day (daily_cheapest), as the change points of a step line (see compress_steps).

    Daily for the last DAILY_POINTS_DAYS, then one point per ISO week (its last observed day).
    """
    frame = segment_history(con, gpu_models, until=until).rename(
        {"price_usd_per_gpu_hour": "usd_per_gpu_hour"})
    recent = pl.col("day") > pl.lit(until - timedelta(days=DAILY_POINTS_DAYS))
    frame = (frame.with_columns(pl.when(recent).then(pl.col("day"))
                                .otherwise(pl.col("day").dt.truncate("1w")).alias("bucket"))
             .sort("gpu_model", "segment", "day")
             .group_by("gpu_model", "segment", "bucket", maintain_order=True).last()
             .drop("bucket"))
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


# ---- the dot plot: every provider's comparable prices for one GPU ---------------------------

def dot_points(prices: Prices, gpu_model: str) -> pl.DataFrame:
    """(provider, segment, group, usd_per_gpu_hour, offers, example) for one GPU: one dot per
    provider x pricing group x price (cent), `offers` counting the comparable offers behind it."""
    frame = prices.comparable(tuple(DOT_PRICING)).filter(pl.col("gpu_model") == gpu_model)
    if frame.height == 0:
        return pl.DataFrame(schema={"provider": pl.String, "segment": pl.String,
                                    "group": pl.String, "usd_per_gpu_hour": pl.Float64,
                                    "offers": pl.UInt32, "example": pl.String})
    return (
        frame.with_columns(pl.col("pricing").replace_strict(DOT_PRICING).alias("group"),
                           pl.col("price_usd_per_gpu_hour").round(2).alias("usd_per_gpu_hour"),
                           pl.format("{} ({})", "offering", "region").alias("example"))
        .sort("offering", "region")
        .group_by("provider", "segment", "group", "usd_per_gpu_hour")
        .agg(pl.len().alias("offers"), pl.col("example").first())
        .select("provider", "segment", "group", "usd_per_gpu_hour", "offers", "example")
        .sort("provider", "group", "usd_per_gpu_hour")
    )


# ---- one week's board ----------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class WeekData:
    week: str
    as_of: datetime
    prices: Prices
    freshness: pl.DataFrame
    tiles: pl.DataFrame      # tile_rows
    history: pl.DataFrame    # price_history rows for the tile GPUs
    gpus: list[str]


def load_week(con: duckdb.DuckDBPyConnection, *, week: str, as_of: datetime,
              history_until: date | None = None) -> WeekData:
    """Everything one week's page shows, as of `as_of`."""
    prices = Prices(con, as_of)
    market, _ = market_of(con, prices.day, now=as_of)
    gpus = board_gpus(market)
    tiles = tile_rows(prices, market, week_moves(con, prices.day, gpu_models=gpus), gpus)
    history = price_history(con, gpus, until=history_until or prices.day)
    return WeekData(week=week, as_of=as_of, prices=prices, freshness=prices.freshness(),
                    tiles=tiles, history=history, gpus=gpus)
