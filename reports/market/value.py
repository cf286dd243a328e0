"""Price-performance per offering: what a unit of compute, memory or bandwidth costs an hour.

$/PFLOP-hour   = $/GPU-hour / (dense BF16 TFLOPS / 1000)   (schemas/gpu_catalog.csv)
$/GB-VRAM-hour = $/GPU-hour / GB of GPU memory
$/(TB/s)-hour  = $/GPU-hour / (memory bandwidth GB/s / 1000)
Only comparable offers (warehouse.semantic: the offers the market price counts) are ranked.
"""

from __future__ import annotations

import polars as pl

from reports.markdown import money, table
from schemas.gpus import load_catalog
from warehouse.fx import USD, Unit
from warehouse.semantic import Prices

__all__ = ["METRICS", "price_performance", "value_section"]

# metric name -> (column, header)
METRICS = {"pflop": ("usd_per_pflop_hour", "$/PFLOP-h"),
           "vram": ("usd_per_gb_vram_hour", "$/GB-VRAM-h"),
           "bandwidth": ("usd_per_tbps_hour", "$/(TB/s)-h")}


def _bandwidth() -> pl.DataFrame:
    return pl.DataFrame(
        [{"gpu_model": s.gpu_model, "memory_bandwidth_gbps": s.memory_bandwidth_gbps}
         for s in load_catalog()],
        schema={"gpu_model": pl.String, "memory_bandwidth_gbps": pl.Float64})


def price_performance(prices: Prices, metric: str = "pflop",
                      gpu_models: list[str] | None = None) -> pl.DataFrame:
    """Comparable offers with the three ratios, best (lowest) `metric` first; models without
    the catalog figure for `metric` are left out of that ranking."""
    column = METRICS[metric][0]
    price = pl.col("usd_per_gpu_hour")
    offers = prices.comparable().rename({"price_usd_per_gpu_hour": "usd_per_gpu_hour"})
    if gpu_models:
        offers = offers.filter(pl.col("gpu_model").is_in(gpu_models))
    return (
        offers.join(_bandwidth(), on="gpu_model", how="left")
        .with_columns((price / (pl.col("bf16_tflops") / 1000)).alias("usd_per_pflop_hour"),
                      (price / pl.col("gpu_memory_gb")).alias("usd_per_gb_vram_hour"),
                      (price / (pl.col("memory_bandwidth_gbps") / 1000))
                      .alias("usd_per_tbps_hour"))
        .filter(pl.col(column).is_not_null() & (pl.col(column) > 0))
        .sort(column, "provider", "offering", "region")
        .select("gpu_model", "provider", "offering", "region", "pricing", "gpu_count",
                "usd_per_gpu_hour", "usd_per_pflop_hour", "usd_per_gb_vram_hour",
                "usd_per_tbps_hour", "carried_days", "source")
    )


def value_section(prices: Prices, limit: int = 10, unit: Unit = USD) -> str:
    parts = ["## 10. Price-performance", "",
             unit.label("The best offers per unit: $/PFLOP-hour of dense BF16 (catalog), "
                        "$/GB-VRAM-hour and $/(TB/s)-hour of memory bandwidth")
             + ", over the comparable offers (the offers the "
             "market price counts). One row per GPU model "
             "(its best offer).", ""]
    for metric, (column, header) in METRICS.items():
        ranked = price_performance(prices, metric).group_by("gpu_model", maintain_order=True
                                                            ).first().head(limit)
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
