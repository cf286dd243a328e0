"""The market price as every view shows it: the stored values of a day (the market_price table
that warehouse.semantic_daily keeps in each append's transaction; warehouse.semantic_market
says how each value is made), and the weekly report's market table."""

from __future__ import annotations

from datetime import date, datetime

import duckdb
import polars as pl

from reports.markdown import money, table
from schemas.regions import GEOGRAPHIES
from warehouse.place import EVERYWHERE, Place
from warehouse.semantic import ALL, UNCLASSIFIED, load_segments
from warehouse.semantic_market import stored_market

__all__ = ["MARKET", "market_by_geo", "market_of", "market_section", "segments"]

MARKET = "market_usd_per_gpu_hour"  # THE market price column (market_price)


def segments() -> list[str]:
    """Every segment name a market value can have ('all' first)."""
    return [ALL, *sorted({UNCLASSIFIED, *load_segments().values()})]


def market_of(con: duckdb.DuckDBPyConnection, day: date, *, gpu_models: list[str] | None = None,
              segment: str | None = ALL, now: datetime | None = None,
              place: Place = EVERYWHERE) -> tuple[pl.DataFrame, bool]:
    """(market values of `day`, stored?): what `market`, the board and the report show; for
    a place, the market of the offers placed there (computed, never stored)."""
    return stored_market(con, day, gpu_models=gpu_models, segment=segment, now=now,
                         place=place)


def market_by_geo(con: duckdb.DuckDBPyConnection, day: date, *,
                  gpu_models: list[str] | None = None, segment: str | None = ALL,
                  now: datetime | None = None, place: Place = EVERYWHERE) -> pl.DataFrame:
    """The market values of `day` per geography (a `geo` column first): for each geography
    (those `place` names, else every one), the market of the offers placed there and in
    `place`'s regions. A geography with no comparable offer has no rows."""
    frames = []
    for geo in place.geos or GEOGRAPHIES:
        values, _ = market_of(con, day, gpu_models=gpu_models, segment=segment, now=now,
                              place=Place(place.regions, (geo,)))
        if values.height:
            frames.append(values.select(pl.lit(geo).alias("geo"), pl.all()))
    return pl.concat(frames, how="vertical_relaxed") if frames else pl.DataFrame()


def market_section(market: pl.DataFrame) -> str:
    """The report's market price table: one row per GPU model quoted by any provider
    (`market`: the day's rows of every segment)."""
    overall = market.filter(pl.col("segment") == ALL)
    by_segment = (market.filter((pl.col("segment") != ALL)
                                & pl.col(MARKET).is_not_null())
                  .sort("segment")
                  .group_by("gpu_model", maintain_order=True)
                  .agg(pl.format("{} {}", pl.col("segment"),
                                 pl.col(MARKET).round(2)).str.join(", ")
                       .alias("segments")))
    rows = overall.join(by_segment, on="gpu_model", how="left").sort(
        pl.col(MARKET).is_null(), pl.col("providers"), "gpu_model",
        descending=[False, True, False])
    parts = ["## 9. Market price per GPU", "",
             "Median over providers of each provider's median $/GPU-hour over its comparable "
             "offers (available, whole GPUs, pay-as-you-go, seen within 48 h, outliers left "
             "out; warehouse/market.toml); min and max are the lowest and highest counted "
             "offer. Withheld values say why. `gpuprices explain market GPU` shows how any of "
             "them was made.", ""]
    if rows.height == 0:
        return "\n".join([*parts, "No comparable offers.", ""])
    parts.append(table(
        ["GPU", "market", "min", "p25-p75", "providers", "offers", "segment medians",
         "withheld because"],
        [[r["gpu_model"], money(r[MARKET]), money(r["min_usd_per_gpu_hour"]),
          f"{money(r['p25_usd_per_gpu_hour'])}-{money(r['p75_usd_per_gpu_hour'])}",
          r["providers"], r["offers"],
          r["segments"] or "–", r["withheld_reason"] or ""] for r in rows.to_dicts()],
        [False, True, True, True, True, True, False, False]))
    parts.append("")
    return "\n".join(parts)
