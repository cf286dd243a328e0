"""Comparison matrix: GPU model x provider, the cheapest $/GPU-hour in each cell."""

from __future__ import annotations

import polars as pl

from reports.markdown import money, table
from reports.offers import INTERRUPTIBLE_PRICING, comparable_offers
from schemas.gpus import catalog_frame


def cheapest_cells(prices: pl.DataFrame, pricing: tuple[str, ...]) -> pl.DataFrame:
    """(gpu_model, provider, usd_per_gpu_hour, pricing, stale) for the cheapest offer per cell.

    GPU-only SKUs (price without the host VM) and unknown GPUs are left out: they are not
    comparable with whole-offering prices; so are offers marked unavailable.
    """
    usable = comparable_offers(prices, pricing, available_only=True)
    return (
        usable.sort("price_usd_per_gpu_hour", "stale", "pricing", "offering")
        .group_by("gpu_model", "provider", maintain_order=True)
        .first()
        .select("gpu_model", "provider", pl.col("price_usd_per_gpu_hour").alias(
            "usd_per_gpu_hour"), "pricing", "stale")
        .sort("gpu_model", "provider")
    )


def catalog_order(models: list[str]) -> list[str]:
    """Models in catalog order (newest datacenter parts first, as the catalog file lists them)."""
    order = {m: i for i, m in enumerate(catalog_frame()["gpu_model"].to_list())}
    return sorted(models, key=lambda m: (order.get(m, len(order)), m))


def matrix_markdown(cells: pl.DataFrame, *, show_pricing: bool = False) -> str:
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
            text = money(cell["usd_per_gpu_hour"], cell["stale"])
            row.append(f"{text} {cell['pricing']}" if show_pricing else text)
        rows.append(row)
    return table(["GPU", *providers], rows, [False] + [True] * len(providers))


def comparison_section(prices: pl.DataFrame) -> str:
    parts = ["## 2. Comparison matrix (cheapest $/GPU-hour)", ""]
    on_demand = cheapest_cells(prices, ("on_demand",))
    if on_demand.height:
        parts += ["On-demand, per GPU, whole offering (host included):", "",
                  matrix_markdown(on_demand), ""]
    else:
        parts += ["No on-demand prices in the warehouse.", ""]
    cheap = cheapest_cells(prices, (*INTERRUPTIBLE_PRICING, "community"))
    if cheap.height:
        parts += ["Spot, interruptible and community capacity (pricing named in each cell):", "",
                  matrix_markdown(cheap, show_pricing=True), ""]
    else:
        parts += ["No spot, interruptible or community prices in the warehouse.", ""]
    return "\n".join(parts)
