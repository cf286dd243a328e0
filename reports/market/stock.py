"""Availability as every view shows it: the series of warehouse.semantic_stock as a table
(`gpuprices availability`), and the weekly report's short "hard to get" section.

Every figure is semantic_stock's: the share of runs that found a provider's GPU in stock in a
region, the last time one did, and the stock state now (the macro stock_state).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import duckdb
import polars as pl

from reports.markdown import table
from reports.market.rankings import stock_word
from schemas.regions import with_geo
from warehouse.semantic_stock import HARD_TO_GET_SHARE, availability, hard_to_get

__all__ = ["REPORT_DAYS", "REPORT_ROWS", "hard_to_get_section", "stock_table"]

REPORT_DAYS = 7  # the report's window: its week
REPORT_ROWS = 12  # rows the report lists (the rest are counted)


def _when(moment: datetime | None) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if moment else "never"


def stock_table(series: pl.DataFrame) -> pl.DataFrame:
    """An availability frame with each region's geography, for printing."""
    return with_geo(series).select(
        "gpu_model", "provider", "region", "geo", "observations", "in_stock_observations",
        "share_in_stock", "last_in_stock", "state", "gpus_free", "last_seen", "source")


def _share(r: dict[str, object]) -> str:
    return f"{r['share_in_stock']:.0%} of {r['observations']}"


def hard_to_get_section(con: duckdb.DuckDBPyConnection, as_of: datetime) -> str:
    series = availability(con, as_of=as_of, since=as_of - timedelta(days=REPORT_DAYS))
    hard = hard_to_get(series)
    parts = ["## 11. Hard to get", "",
             f"Where a source says whether a GPU can be rented (Vast.ai, RunPod, Lambda, "
             f"Voltage Park, Scaleway, ...): the provider regions in stock for less than "
             f"{HARD_TO_GET_SHARE:.0%} of the last {REPORT_DAYS} days' runs, or not in stock "
             "now (low: the source says low, or few GPUs are free). "
             "`gpuprices availability GPU` lists every region.", ""]
    if series.height == 0:
        return "\n".join([*parts, "No source reported stock in the last "
                          f"{REPORT_DAYS} days.", ""])
    if hard.height == 0:
        return "\n".join([*parts, f"None: the {series.height} provider regions with reported "
                          "stock were in stock most of the time and are now.", ""])
    parts.append(table(
        ["GPU", "provider", "region", "in stock (runs)", "last in stock", "now"],
        [[r["gpu_model"], r["provider"], r["region"], _share(r), _when(r["last_in_stock"]),
          stock_word(r["state"])] for r in hard.head(REPORT_ROWS).to_dicts()],
        [False, False, False, True, False, False]))
    if hard.height > REPORT_ROWS:
        parts.append(f"\n({hard.height - REPORT_ROWS} more.)")
    parts.append("")
    return "\n".join(parts)
