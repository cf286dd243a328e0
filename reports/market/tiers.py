"""THE cheapest per VRAM tier (schemas/tiers.toml) as one SQL statement over the comparable
offers: the cheapest `per_tier` offers of each tier, equal prices sharing a rank (1, 1, 3 ...)
and offers tied with the last place all kept, so a tier can show more than `per_tier` rows.
Ties are listed by provider, offering, region, then pricing and model.

`top_per_tier` reads it as a frame over the offers a report or board has read; `summary`
prints its rows without polars (start-up: issue 23) over the offers standing now
(per_tier_query).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from schemas.tiers import Tier, load_tiers, tier_sql
from warehouse.frames import held_table, sql_frame
from warehouse.place import EVERYWHERE, Place
from warehouse.semantic import bind, offers_query

if TYPE_CHECKING:
    import duckdb
    import polars as pl

    from warehouse.semantic import Prices

__all__ = ["PER_TIER", "per_tier_query", "top_per_tier"]

# `{offers}`: rows with OFFERS' columns; `{tier}`, `{order}`: each offer's tier and that
# tier's place in tiers.toml (schemas.tiers.tier_sql; a memory in no tier has none).
PER_TIER = """
WITH tiered AS (
    SELECT *, {tier} AS tier FROM ({offers})
    WHERE excluded IS NULL AND gpu_memory_gb IS NOT NULL
), ranked AS (
    SELECT *, rank() OVER (PARTITION BY tier ORDER BY price_usd_per_gpu_hour) AS rank,
           price_usd_per_gpu_hour / gpu_memory_gb AS usd_per_gb_vram_hour
    FROM tiered WHERE tier IS NOT NULL
)
SELECT tier, rank, gpu_model, provider, offering, region, pricing, gpu_count, gpu_memory_gb,
       price_usd_per_gpu_hour AS usd_per_gpu_hour, usd_per_gb_vram_hour, available, stock,
       carried_days
FROM ranked WHERE rank <= $per_tier
ORDER BY {order}, rank, provider, offering, region, pricing, gpu_model
"""
_OFFERS = "_tier_offers"  # the offers a report has read, as a temporary table


def _sql(offers: str, tiers: list[Tier]) -> str:
    order = " ".join(f"WHEN tier = '{t.name}' THEN {i}" for i, t in enumerate(tiers))
    return PER_TIER.format(offers=offers, tier=tier_sql("gpu_memory_gb", tiers),
                           order=f"CASE {order} END")


def per_tier_query(con: duckdb.DuckDBPyConnection, as_of: datetime, *, per_tier: int = 5,
                   tiers: list[Tier] | None = None, pricing: tuple[str, ...] | None = None,
                   place: Place = EVERYWHERE) -> tuple[str, dict[str, object]]:
    """The SQL and parameters of the cheapest `per_tier` comparable offers of each tier
    standing at `as_of` (of `pricing`, in `place`)."""
    offers, params = offers_query(con, as_of, pricing, place=place)
    sql = _sql(offers, tiers or load_tiers())
    return sql, bind(sql, params | {"per_tier": per_tier})


def top_per_tier(prices: Prices, *, per_tier: int = 5, tiers: list[Tier] | None = None,
                 pricing: tuple[str, ...] | None = None) -> pl.DataFrame:
    """PER_TIER over the comparable offers of `prices` (read once, kept by Prices)."""
    with held_table(prices.con, _OFFERS, prices.comparable(pricing)) as offers:
        return sql_frame(prices.con, _sql(offers, tiers or load_tiers()), {"per_tier": per_tier})
