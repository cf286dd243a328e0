"""Comparable offers: the one filter every ranking, comparison and cost table applies.

`comparable_offers(prices, pricing)` takes a frame of current prices (reports.queries.
current_prices_at: one row per offering x region x pricing, with gpu_model, gpu_only,
available, stale ...) and keeps the offers whose prices can be compared with each other:

- whole offerings only: a GPU-only SKU (price without the host VM, `gpu_only`) is left out;
- a known GPU: rows the catalog could not place (`gpu_model = 'unknown'`) are left out;
- the pricing kinds asked for (default STEADY_PRICING: pay as you go, not interruptible);
- `available_only`: drop offers the provider says cannot be booked now (`available` false;
  unknown availability counts as available);
- `live_only`: drop offers from stale sources (no successful refresh in STALE_AFTER_H hours).

Rows keep every column of `prices`; nothing is ranked or renamed here.
"""

from __future__ import annotations

import polars as pl

from schemas.gpus import UNKNOWN_GPU

__all__ = ["INTERRUPTIBLE_PRICING", "STEADY_PRICING", "comparable_offers"]

# Pay-as-you-go prices that are not interruptible: what rankings, scenarios and fit compare.
STEADY_PRICING: tuple[str, ...] = ("on_demand", "community", "serverless")
INTERRUPTIBLE_PRICING: tuple[str, ...] = ("spot", "interruptible", "community_spot")


def comparable_offers(prices: pl.DataFrame, pricing: tuple[str, ...] = STEADY_PRICING, *,
                      available_only: bool = False, live_only: bool = False) -> pl.DataFrame:
    """The offers of `prices` that can be compared like for like (see the module docstring)."""
    keep = (pl.col("pricing").is_in(list(pricing)) & ~pl.col("gpu_only").fill_null(False)
            & (pl.col("gpu_model") != UNKNOWN_GPU))
    if available_only:
        keep &= pl.col("available").fill_null(True)
    if live_only:
        keep &= ~pl.col("stale").fill_null(True)
    return prices.filter(keep)
