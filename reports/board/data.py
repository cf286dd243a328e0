"""What the price board shows, read from the semantic layer as polars frames (no HTML here).

Every number is one the weekly report and the CLI show too: the market price and its move are
the stored market values and matched moves (`market`, `market-moves`), the cheapest is
warehouse.semantic's (`cheapest`), the history lines are daily_cheapest's, freshness is
freshness_at the page's as-of time.

In another currency (`currency`, e.g. EUR) the frames keep their USD columns; the page prints
them in `WeekData.unit` (the page's day's ECB rate), except the history lines, which are
converted here, each point at the rate of its own day (warehouse.fx.in_currency): points of a
day without a rate are left out and counted (`held_days`), and the step line is drawn over
the daily points in that currency, so a move of the rate moves the line.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

import duckdb
import polars as pl

from reports.market.comparison import catalog_order
from reports.market.moves import Moves, week_moves
from reports.market.values import market_of
from reports.weekly.report import unit_of_report
from warehouse.frames import sql_frame
from warehouse.fx import USD, Unit, in_currency
from warehouse.semantic import ALL, Prices, at_moment

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
    "price_history_in",
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
               .sort("providers", "gpu_model", descending=[True, False], nulls_last=True)
               .head(count))
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

# The board's history lines in one statement over daily_cheapest_segment: each series' day
# (the last year) or ISO week's last observed day (before), then only the points a step line
# needs (compress_steps' rule). A few thousand rows leave DuckDB whatever the history's length.
_SERIES = """
    SELECT gpu_model, segment, day, price_usd_per_gpu_hour AS usd_per_gpu_hour, provider,
           offering, source
    FROM daily_cheapest_segment
    WHERE day <= $until AND list_contains($models, gpu_model)
    QUALIFY day = max(day) OVER (PARTITION BY gpu_model, segment, CASE
        WHEN day > $daily_from THEN day ELSE CAST(date_trunc('week', day) AS DATE) END)
"""
_STEPS = f"""
WITH series AS ({_SERIES}), around AS (
    SELECT *, lag(day) OVER w AS prev_day, lead(day) OVER w AS next_day,
           lag(usd_per_gpu_hour) OVER w AS prev_usd
    FROM series
    WINDOW w AS (PARTITION BY gpu_model, segment ORDER BY day)
)
SELECT gpu_model, segment, day, usd_per_gpu_hour, provider, offering, source,
       coalesce(day - prev_day > $gap, false) AS gap_before
FROM around
WHERE prev_day IS NULL OR next_day IS NULL OR day - prev_day > $gap OR next_day - day > $gap
   OR usd_per_gpu_hour IS DISTINCT FROM prev_usd
ORDER BY gpu_model, segment, day
"""


def price_history(con: duckdb.DuckDBPyConnection, gpu_models: list[str], *,
                  until: date) -> pl.DataFrame:
    """(gpu_model, segment, day, usd_per_gpu_hour, provider, offering, source, gap_before)
    over the whole stored history up to `until`: the cheapest comparable offer per segment and
    observed day (daily_cheapest), as the change points of a step line (see compress_steps).

    Daily for the last DAILY_POINTS_DAYS, then one point per ISO week (its last observed day).
    """
    return sql_frame(con, _STEPS, {"until": until, "models": gpu_models, "gap": GAP_DAYS,
                                   "daily_from": until - timedelta(days=DAILY_POINTS_DAYS)})


def price_history_in(con: duckdb.DuckDBPyConnection, gpu_models: list[str], *, until: date,
                     unit: Unit) -> tuple[pl.DataFrame, list[date]]:
    """price_history with `usd_per_gpu_hour` in `unit`'s currency, each point at the ECB
    rate of its own day, and the days left out for want of a rate (sorted).

    The points are taken daily (weekly before the last year) and converted before the step
    line is compressed: a price that stood still in USD moves in euros with the rate."""
    if not unit.converting:
        return price_history(con, gpu_models, until=until), []
    series = sql_frame(con, f"{_SERIES} ORDER BY gpu_model, segment, day",
                       {"until": until, "models": gpu_models,
                        "daily_from": until - timedelta(days=DAILY_POINTS_DAYS)})
    converted = in_currency(con, series, unit.currency, day_column="day",
                            columns=["usd_per_gpu_hour"])
    held = converted.filter(pl.col("fx_rate").is_null())["day"].unique().sort().to_list()
    kept = converted.filter(pl.col("fx_rate").is_not_null()).select(series.columns)
    return compress_steps(kept).select(*series.columns, "gap_before"), held


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

def dot_points(prices: Prices, gpu_models: list[str]) -> dict[str, pl.DataFrame]:
    """Per GPU model asked: (provider, segment, group, usd_per_gpu_hour, offers, example), one
    dot per provider x pricing group x price (cent), `offers` counting the comparable offers
    behind it, `example` the first of them by offering and region; by provider, group and
    price. Every model in one pass (a model without offers: no rows)."""
    frame = prices.comparable(tuple(DOT_PRICING)).filter(pl.col("gpu_model").is_in(gpu_models))
    points = (
        frame.with_columns(pl.col("pricing").replace_strict(DOT_PRICING).alias("group"),
                           pl.col("price_usd_per_gpu_hour").round(2).alias("usd_per_gpu_hour"),
                           pl.format("{} ({})", "offering", "region").alias("example"))
        .sort("offering", "region")  # tied rows have the same example
        .group_by("gpu_model", "provider", "segment", "group", "usd_per_gpu_hour")
        .agg(pl.len().alias("offers"), pl.col("example").first())
        # a provider has one segment: each model's dots in a total order
        .sort("gpu_model", "provider", "group", "usd_per_gpu_hour")
    )
    by_model = points.partition_by("gpu_model", as_dict=True, include_key=False)
    empty = points.clear().drop("gpu_model")
    return {model: by_model.get((model,), empty) for model in gpu_models}


# ---- one week's board ----------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class WeekData:
    week: str
    as_of: datetime
    prices: Prices
    freshness: pl.DataFrame
    tiles: pl.DataFrame      # tile_rows
    history: pl.DataFrame    # price_history rows for the tile GPUs (in `unit`'s currency)
    gpus: list[str]
    unit: Unit = USD         # the money the page prints in (the rate of the page's day)
    held_days: tuple[date, ...] = ()  # history days left out: no rate within 7 days


def load_week(con: duckdb.DuckDBPyConnection, *, week: str, as_of: datetime,
              history_until: date | None = None, currency: str | None = None,
              prices: Prices | None = None) -> WeekData:
    """Everything one week's page shows, as of `as_of`; in `currency` (None: USD) at the ECB
    rate of each amount's day (NoRateError when the page's own day has none). `prices`: the
    prices at `as_of` when the caller has them."""
    prices = at_moment(prices, con, as_of)
    unit = unit_of_report(con, currency, prices.day, what="board")
    market, _ = market_of(con, prices.day, now=as_of)
    gpus = board_gpus(market)
    tiles = tile_rows(prices, market, week_moves(con, prices.day, gpu_models=gpus), gpus)
    history, held = price_history_in(con, gpus, until=history_until or prices.day, unit=unit)
    return WeekData(week=week, as_of=as_of, prices=prices, freshness=prices.freshness(),
                    tiles=tiles, history=history, gpus=gpus, unit=unit, held_days=tuple(held))
