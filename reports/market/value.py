"""Price-performance per offering: what a unit of compute, memory or bandwidth costs an hour.

$/PFLOP-hour   = $/GPU-hour / (dense BF16 TFLOPS / 1000)   (the warehouse's gpu_catalog)
$/GB-VRAM-hour = $/GPU-hour / GB of GPU memory
$/(TB/s)-hour  = $/GPU-hour / (memory bandwidth GB/s / 1000)
Only comparable offers (warehouse.semantic: the offers the market price counts) are ranked,
by one SQL statement (PRICE_PERFORMANCE) over the semantic layer's offers: the API reads it as
a frame, the CLI's table prints its rows without polars (start-up: issue 23), the report runs
it over the comparable offers it has already read.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from warehouse.frames import held_table, sql_frame
from warehouse.place import EVERYWHERE, Place
from warehouse.semantic import bind, offers_query

if TYPE_CHECKING:
    import duckdb
    import polars as pl

    from warehouse.fx import Unit
    from warehouse.semantic import MarketConfig, Prices

__all__ = ["METRICS", "PRICE_PERFORMANCE", "price_performance", "price_performance_query",
           "value_section"]

# metric name -> (column, header)
METRICS = {"pflop": ("usd_per_pflop_hour", "$/PFLOP-h"),
           "vram": ("usd_per_gb_vram_hour", "$/GB-VRAM-h"),
           "bandwidth": ("usd_per_tbps_hour", "$/(TB/s)-h")}
# `{offers}`: rows with OFFERS' columns (offers_sql(...), or a table of one moment's
# comparable offers); `{metric}`: a METRICS column. A model without the catalog figure (NULL)
# is left out of that ranking (a zero would rank last, at infinity, as in polars). Offers tying
# on the metric, provider, offering and region are listed by price, pricing, then model.
PRICE_PERFORMANCE = """
WITH rated AS (
    SELECT o.gpu_model, o.provider, o.offering, o.region, o.pricing, o.gpu_count,
           o.price_usd_per_gpu_hour AS usd_per_gpu_hour,
           o.price_usd_per_gpu_hour / (o.bf16_tflops / 1000) AS usd_per_pflop_hour,
           o.price_usd_per_gpu_hour / o.gpu_memory_gb AS usd_per_gb_vram_hour,
           o.price_usd_per_gpu_hour / (g.memory_bandwidth_gbps / 1000) AS usd_per_tbps_hour,
           o.carried_days, o.source
    FROM ({offers}) o LEFT JOIN gpu_catalog g USING (gpu_model)
    WHERE o.excluded IS NULL
      AND ($asked_models IS NULL OR list_contains($asked_models, o.gpu_model))
)
SELECT * FROM rated WHERE {metric} > 0
ORDER BY {metric}, provider, offering, region, usd_per_gpu_hour, pricing, gpu_model
"""
_COMPARABLE = "_value_offers"  # the report's comparable offers, as a temporary table


def _sql(offers: str, metric: str) -> str:
    return PRICE_PERFORMANCE.format(offers=offers, metric=METRICS[metric][0])


def price_performance_query(
    con: duckdb.DuckDBPyConnection, as_of: datetime, metric: str = "pflop", *,
    pricing: tuple[str, ...] | None = None, place: Place = EVERYWHERE,
    of_models: list[str] | None = None, config: MarketConfig | None = None,
    segments: dict[str, str] | None = None, gpu_models: list[str] | None = None,
) -> tuple[str, dict[str, object]]:
    """The SQL and parameters of the comparable offers standing at `as_of` (of `pricing`, in
    `place`; `of_models`: read those models' offers alone) ranked by `metric`, best
    (lowest) first, with the three ratios; `gpu_models`: only those (empty: every one)."""
    offers, params = offers_query(con, as_of, pricing, place=place, gpu_models=of_models,
                                  config=config, segments=segments)
    sql = _sql(offers, metric)
    return sql, bind(sql, params | {"asked_models": list(gpu_models) if gpu_models else None})


def price_performance(prices: Prices, metric: str = "pflop",
                      gpu_models: list[str] | None = None) -> pl.DataFrame:
    """Comparable offers of `prices` with the three ratios, best (lowest) `metric` first;
    models without the catalog figure for `metric` are left out of that ranking."""
    sql, params = price_performance_query(
        prices.con, prices.as_of, metric, pricing=prices.pricing, place=prices.place,
        of_models=list(prices.gpu_models) if prices.gpu_models else None,
        config=prices.config, segments=prices.segments, gpu_models=gpu_models)
    return sql_frame(prices.con, sql, params)


def value_section(prices: Prices, limit: int = 10, unit: Unit | None = None) -> str:
    """The report's price-performance tables (in `unit`, default USD)."""
    # the markdown helpers and units import polars: `value`'s table is printed without it
    from reports.markdown import money, table
    from warehouse.fx import USD

    unit = unit or USD
    parts = ["## 10. Price-performance", "",
             unit.label("The best offers per unit: $/PFLOP-hour of dense BF16 (catalog), "
                        "$/GB-VRAM-hour and $/(TB/s)-hour of memory bandwidth")
             + ", over the comparable offers (the offers the "
             "market price counts). One row per GPU model "
             "(its best offer).", ""]
    # the offers the report has read, ranked three times (not read again each time)
    with held_table(prices.con, _COMPARABLE, prices.comparable()) as offers:
        for metric, (column, header) in METRICS.items():
            sql = _sql(offers, metric)
            ranked = sql_frame(prices.con, sql, {"asked_models": None}).group_by(
                "gpu_model", maintain_order=True).first().head(limit)
            parts += [f"### Best {unit.label(header)}", ""]
            parts.append(table(
                ["GPU", "provider", "offering", unit.label("$/GPU-h"), unit.label(header)],
                [[r["gpu_model"], r["provider"], r["offering"],
                  money(r["usd_per_gpu_hour"], unit=unit),
                  money(r[column], digits=4 if metric == "vram" else 2, unit=unit)]
                 for r in ranked.to_dicts()], [False, False, False, True, True])
                if ranked.height else "No offers.")
            parts.append("")
    return "\n".join(parts)
