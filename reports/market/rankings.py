"""The cheapest offers: the `cheapest` list (its one SQL question is reports.market.cheapest,
re-exported here), and the cheapest per VRAM tier (schemas/tiers.toml; its one SQL question
is reports.market.tiers, re-exported here).

Both rank the comparable offers of warehouse.semantic (available, fresh, whole GPUs, the
pricing set, no outliers) cheapest first, ties in OFFER_ORDER: the first offer of a GPU model
here is the cheapest that every other view (board, alerts, history) names. Each offer shows its
stock state (`stock`: contract.STOCK_STATES); `in_stock` keeps the offers a source says can be
rented now (contract.IN_STOCK).
"""

from __future__ import annotations

import polars as pl

from reports.markdown import money, table
from reports.market.cheapest import cheapest_offers
from reports.market.tiers import top_per_tier
from schemas.tiers import Tier, load_tiers, tiers_by_name
from warehouse.fx import USD, Unit
from warehouse.semantic import Prices

__all__ = ["cheapest_offers", "rankings_section", "stock_word", "tiers_by_name", "top_per_tier"]


def stock_word(state: str | None) -> str:
    """A stock state as a table shows it ("?" where no source says)."""
    return {"out_of_stock": "out of stock", "unknown": "?", None: "?"}.get(state, str(state))


def rankings_section(prices: Prices, tiers: list[Tier] | None = None, unit: Unit = USD) -> str:
    tiers = tiers or load_tiers()
    ranked = top_per_tier(prices, tiers=tiers)
    parts = ["## 3. Cheapest GPU per tier", "",
             "Top 5 comparable offers per VRAM tier (schemas/tiers.toml), pricing "
             f"{', '.join(prices.pricing)}; equal prices share a rank.", ""]
    for tier in tiers:
        rows = ranked.filter(pl.col("tier") == tier.name)
        parts.append(f"### {tier.name}")
        parts.append("")
        if rows.height == 0:
            parts += ["No offers in this tier.", ""]
            continue
        parts.append(table(
            ["#", "GPU", "provider", "offering", "region", "pricing", unit.label("$/GPU-h"),
             unit.label("$/GB-VRAM-h"), "stock"],
            [[r["rank"], r["gpu_model"], r["provider"], r["offering"], r["region"], r["pricing"],
              money(r["usd_per_gpu_hour"], unit=unit),
              money(r["usd_per_gb_vram_hour"], digits=4, unit=unit),
              stock_word(r["stock"])]
             for r in rows.to_dicts()],
            [True, False, False, False, False, False, True, True, False],
        ))
        parts.append("")
    return "\n".join(parts)


