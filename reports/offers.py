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

__all__ = ["INTERRUPTIBLE_PRICING", "STEADY_PRICING", "available_live_first", "comparable_offers",
           "exclusion_rules", "live_first_rank_key"]

# Pay-as-you-go prices that are not interruptible: what rankings, scenarios and fit compare.
STEADY_PRICING: tuple[str, ...] = ("on_demand", "community", "serverless")
INTERRUPTIBLE_PRICING: tuple[str, ...] = ("spot", "interruptible", "community_spot")


def exclusion_rules(pricing: tuple[str, ...] = STEADY_PRICING, *, available_only: bool = False
                    ) -> list[tuple[str, pl.Expr]]:
    """(reason, test) pairs in the order they apply: a row matching a test is not comparable.

    The comparable-offer rule, once: `comparable_offers` keeps the rows no test matches, and
    the market price (reports.market) names the first reason that excludes each offer.
    """
    rules = [
        ("unknown_gpu", pl.col("gpu_model") == UNKNOWN_GPU),
        ("gpu_only", pl.col("gpu_only").fill_null(False)),
        ("other_pricing", ~pl.col("pricing").is_in(list(pricing))),
    ]
    if available_only:  # null: the source does not say, so the offer counts
        rules.append(("unavailable", ~pl.col("available").fill_null(True)))
    return rules


def comparable_offers(prices: pl.DataFrame, pricing: tuple[str, ...] = STEADY_PRICING, *,
                      available_only: bool = False, live_only: bool = False) -> pl.DataFrame:
    """The offers of `prices` that can be compared like for like (see the module docstring)."""
    keep = pl.lit(True)
    for _, excluded in exclusion_rules(pricing, available_only=available_only):
        keep &= ~excluded
    if live_only:
        keep &= ~pl.col("stale").fill_null(True)
    return prices.filter(keep)


def available_live_first(offers: pl.DataFrame, *, include_unavailable: bool = False
                         ) -> pl.DataFrame:
    """Offers one can rent now first, cheapest first within each group.

    Unavailable offers are dropped (or, with `include_unavailable`, listed after every
    available one), and a stale price never ranks above a live one: stale prices follow the
    live ones, with `stale` true to say so. Unknown availability counts as available.
    """
    available = pl.col("available").fill_null(True)
    if not include_unavailable:
        offers = offers.filter(available)
    return offers.sort(available.not_(), pl.col("stale").fill_null(False),
                       "price_usd_per_gpu_hour", "provider", "offering", "region",
                       maintain_order=True)


def live_first_rank_key() -> pl.Expr:
    """A rank key that puts every live price before every stale one, by price within each."""
    return (pl.col("stale").fill_null(False).cast(pl.Float64) * 1e9
            + pl.col("price_usd_per_gpu_hour"))
