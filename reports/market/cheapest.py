"""THE cheapest-offers question: the comparable offers matching the filters, cheapest
$/GPU-hour first, as one SQL statement over the semantic layer's offers (warehouse.semantic
OFFERS: available, fresh, whole GPUs, the pricing set, no outliers; ties in OFFER_ORDER), so
the first offer of a GPU model is the cheapest every other view names.

`cheapest_offers` reads it as a frame (gpuprices.api.cheapest, MCP); the CLI's table prints
its rows as DuckDB gives them, without polars (gpuprices.api.offer_table; start-up: issue 23).
With `include_unavailable` the offers left out only for being unavailable follow the rest;
with `in_stock` only those a source says can be rented now are kept (contract.IN_STOCK).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from contract import IN_STOCK
from warehouse.frames import sql_frame
from warehouse.place import EVERYWHERE, Place
from warehouse.semantic import OFFER_ORDER, bind, offers_query

if TYPE_CHECKING:
    import duckdb
    import polars as pl

    from schemas.tiers import Tier
    from warehouse.semantic import MarketConfig, Prices

__all__ = ["CHEAPEST_OFFERS", "OFFER_COLUMNS", "cheapest_offers", "cheapest_offers_query"]

# What each listed offer shows, in this order.
OFFER_COLUMNS = ("gpu_model", "provider", "offering", "region", "pricing", "gpu_count",
                 "gpu_memory_gb", "price_usd_per_gpu_hour", "price_usd_per_hour", "available",
                 "stock", "gpus_available", "carried_days", "source")
# `{offers}`: offers_sql(...); a filter whose parameter is NULL keeps every offer. Offers of
# several GPU models can tie on every OFFER_ORDER column (one RunPod serverless offering at one
# price for three models): they are listed by model.
CHEAPEST_OFFERS = f"""
SELECT {", ".join(OFFER_COLUMNS)} FROM ({{offers}})
WHERE (excluded IS NULL OR ($with_unavailable AND excluded = 'unavailable'))
  AND ($stock_states IS NULL OR list_contains($stock_states, stock))
  AND ($asked_models IS NULL OR list_contains($asked_models, gpu_model))
  AND ($min_vram IS NULL OR gpu_memory_gb >= $min_vram)
  AND ($tier_min IS NULL OR gpu_memory_gb BETWEEN $tier_min AND $tier_max)
  AND ($asked_providers IS NULL OR list_contains($asked_providers, provider))
ORDER BY excluded IS NOT NULL, {", ".join(OFFER_ORDER)}, gpu_model
"""


def cheapest_offers_query(
    con: duckdb.DuckDBPyConnection, as_of: datetime, *, pricing: tuple[str, ...] | None = None,
    place: Place = EVERYWHERE, of_models: Sequence[str] | None = None,
    config: MarketConfig | None = None, segments: dict[str, str] | None = None,
    gpu_models: list[str] | None = None, min_vram_gb: float | None = None,
    tier: Tier | None = None, providers: list[str] | None = None,
    include_unavailable: bool = False, in_stock: bool = False,
) -> tuple[str, dict[str, object]]:
    """The SQL and parameters of the offers standing at `as_of` that match: the offers of
    `pricing` in `place` (`of_models`: read those models' offers alone, as
    Prices(gpu_models=) does), then the filters. An empty list or a zero filters nothing."""
    offers, params = offers_query(con, as_of, pricing, place=place, gpu_models=of_models,
                                  config=config, segments=segments)
    sql = CHEAPEST_OFFERS.format(offers=offers)
    params |= {
        "with_unavailable": include_unavailable,
        "stock_states": list(IN_STOCK) if in_stock else None,
        "asked_models": list(gpu_models) if gpu_models else None,
        "min_vram": float(min_vram_gb) if min_vram_gb else None,
        "tier_min": tier.min_gb if tier else None, "tier_max": tier.max_gb if tier else None,
        "asked_providers": list(providers) if providers else None,
    }
    return sql, bind(sql, params)


def cheapest_offers(
    prices: Prices, *, gpu_models: list[str] | None = None, min_vram_gb: float | None = None,
    tier: Tier | None = None, pricing: tuple[str, ...] | None = None,
    providers: list[str] | None = None, include_unavailable: bool = False,
    in_stock: bool = False,
) -> pl.DataFrame:
    """The offers of `prices` (its moment, pricing set unless `pricing`, place and models)
    matching the filters, cheapest first: cheapest_offers_query's rows as a frame."""
    sql, params = cheapest_offers_query(
        prices.con, prices.as_of, pricing=pricing or prices.pricing, place=prices.place,
        of_models=prices.gpu_models, config=prices.config, segments=prices.segments,
        gpu_models=gpu_models, min_vram_gb=min_vram_gb, tier=tier, providers=providers,
        include_unavailable=include_unavailable, in_stock=in_stock)
    return sql_frame(prices.con, sql, params)
