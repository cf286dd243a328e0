"""Comparison matrix: GPU model x provider, the cheapest comparable offer in each cell."""

from __future__ import annotations

import polars as pl

from reports.markdown import money, table
from schemas.gpus import catalog_frame
from warehouse.fx import USD, Unit
from warehouse.semantic import Prices

__all__ = ["INTERRUPTIBLE_PRICING", "catalog_order", "cheapest_cells", "comparison_section",
           "matrix_markdown"]

# Capacity that can be taken back: the second matrix.
INTERRUPTIBLE_PRICING: tuple[str, ...] = ("spot", "interruptible", "community_spot")


def cheapest_cells(prices: Prices, pricing: tuple[str, ...] | None = None) -> pl.DataFrame:
    """(gpu_model, provider, usd_per_gpu_hour, pricing) of the cheapest comparable offer per
    cell (warehouse.semantic: GPU-only SKUs, unknown GPUs, slices, unavailable and stale
    offers and outliers are not comparable)."""
    return (
        prices.comparable(pricing)
        .group_by("gpu_model", "provider", maintain_order=True).first()
        .select("gpu_model", "provider", pl.col("price_usd_per_gpu_hour").alias(
            "usd_per_gpu_hour"), "pricing")
        .sort("gpu_model", "provider")
    )


def catalog_order(models: list[str]) -> list[str]:
    """Models in catalog order (newest datacenter parts first, as the catalog file lists them)."""
    order = {m: i for i, m in enumerate(catalog_frame()["gpu_model"].to_list())}
    return sorted(models, key=lambda m: (order.get(m, len(order)), m))


def matrix_markdown(cells: pl.DataFrame, *, show_pricing: bool = False,
                    unit: Unit = USD) -> str:
    if cells.height == 0:
        return ""
    providers = sorted(cells["provider"].unique().to_list())
    by_cell = {(r["gpu_model"], r["provider"]): r for r in cells.to_dicts()}
    rows = []
    for model in catalog_order(cells["gpu_model"].unique().to_list()):
        row: list[object] = [f"**{model}**"]
        for provider in providers:
            cell = by_cell.get((model, provider))
            if cell is None:
                row.append("–")
                continue
            text = money(cell["usd_per_gpu_hour"], unit=unit)
            row.append(f"{text} {cell['pricing']}" if show_pricing else text)
        rows.append(row)
    return table(["GPU", *providers], rows, [False] + [True] * len(providers))


def comparison_section(prices: Prices, unit: Unit = USD) -> str:
    parts = [unit.label("## 2. Comparison matrix (cheapest $/GPU-hour)"), ""]
    steady = cheapest_cells(prices)
    if steady.height:
        parts += [f"Pricing {', '.join(prices.pricing)} (named in each cell), per GPU, whole "
                  "offering (host included), comparable offers:", "",
                  matrix_markdown(steady, show_pricing=True, unit=unit), ""]
    else:
        parts += ["No comparable offers in the warehouse.", ""]
    cheap = cheapest_cells(prices, INTERRUPTIBLE_PRICING)
    if cheap.height:
        parts += ["Spot and interruptible capacity (pricing named in each cell):", "",
                  matrix_markdown(cheap, show_pricing=True, unit=unit), ""]
    else:
        parts += ["No spot or interruptible prices in the warehouse.", ""]
    return "\n".join(parts)
