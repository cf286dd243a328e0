"""The market price as every view shows it: a view of the GPU price index (issue 24). Per GPU
and segment, the value is the on-demand index fixing of the day (warehouse/index: published,
or indicative for a day not fixed yet), beside the day's offer statistics (market_price, kept
by warehouse.semantic_daily in each append's transaction); and the weekly report's table."""

from __future__ import annotations

from datetime import date, datetime

import duckdb
import polars as pl

from reports.markdown import money, table
from schemas.regions import GEOGRAPHIES
from warehouse.fx import USD, Unit
from warehouse.index.read import market_view
from warehouse.place import EVERYWHERE, Place
from warehouse.semantic import ALL
from warehouse.semantic_market import stored_market

__all__ = ["MARKET", "market_by_geo", "market_of", "market_section"]

MARKET = "market_usd_per_gpu_hour"  # THE market price column (market_price)


def market_of(con: duckdb.DuckDBPyConnection, day: date, *, gpu_models: list[str] | None = None,
              segment: str | None = ALL, now: datetime | None = None,
              place: Place = EVERYWHERE) -> tuple[pl.DataFrame, bool]:
    """(market values of `day`, index published?): what `market`, the board and the report
    show. Everywhere: the GPU price index with its offer statistics
    (warehouse.index.read.market_view); in a place (--region/--geo): the market rule over the
    offers placed there (computed, never stored, never published as the index)."""
    if place.everywhere:
        return market_view(con, day, gpu_models=gpu_models, segment=segment, now=now)
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


def market_section(market: pl.DataFrame, unit: Unit = USD) -> str:
    """The report's market price table: one row per GPU model quoted by any provider
    (`market`: the day's rows of every segment)."""
    overall = market.filter(pl.col("segment") == ALL)
    rate = unit.usd_per_unit or float("nan")  # no rate: no amount (every money cell is –)
    by_segment = (market.filter((pl.col("segment") != ALL)
                                & pl.col(MARKET).is_not_null())
                  .sort("segment")
                  .group_by("gpu_model", maintain_order=True)
                  .agg(pl.format("{} {}", pl.col("segment"),
                                 (pl.col(MARKET) / rate).round(2)).str.join(", ")
                       .alias("segments")))
    rows = overall.join(by_segment, on="gpu_model", how="left").sort(
        pl.col(MARKET).is_null(), pl.col("providers"), "gpu_model",
        descending=[False, True, False])
    parts = ["## 9. Market price per GPU", "",
             "The on-demand GPU price index of the day (docs/index-methodology.md): one vote "
             "per provider (its median " + unit.label("$/GPU-hour") + " over its fresh "
             "comparable offers), screened "
             "(plausibility band, uncorroborated jumps, the provider's own outliers), weighted "
             "by attendance, the weighted mean of the central third of the votes; band = the "
             "5-95 % bootstrap band over providers. min and max are the lowest and highest "
             "counted offer, p25-p75 over the providers' medians. Withheld values say why. "
             "`gpuprices index` lists every fixing; `gpuprices explain market GPU` shows the "
             "votes.", ""]
    if rows.height == 0:
        return "\n".join([*parts, "No comparable offers.", ""])
    parts.append(table(
        ["GPU", "market", "min", "band", "p25-p75", "providers", "offers", "segments",
         "withheld because"],
        [[r["gpu_model"], money(r[MARKET], unit=unit), money(r["min_usd_per_gpu_hour"], unit=unit),
          f"{money(r['band_low_usd_per_gpu_hour'], unit=unit)}-"
          f"{money(r['band_high_usd_per_gpu_hour'], unit=unit)}"
          if r[MARKET] is not None else "–",
          f"{money(r['p25_usd_per_gpu_hour'], unit=unit)}-"
          f"{money(r['p75_usd_per_gpu_hour'], unit=unit)}",
          r["providers"], r["offers"],
          r["segments"] or "–", r["withheld_reason"] or ""] for r in rows.to_dicts()],
        [False, True, True, True, True, True, True, False, False]))
    parts.append("")
    return "\n".join(parts)
