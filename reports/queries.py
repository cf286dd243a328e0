"""Read-only questions asked of the warehouse, as small functions returning polars frames.

Every value that comes from a user is a bound parameter; only our own tier bounds are
formatted into SQL text.
"""

from __future__ import annotations

import duckdb
import polars as pl

from schemas.tiers import Tier, load_tiers, tier_sql


def rows_per_source(con: duckdb.DuckDBPyConnection, run_id: str | None = None) -> pl.DataFrame:
    """What each source did in one run (the latest refresh when run_id is None)."""
    if run_id is None:
        row = con.execute(
            "SELECT run_id FROM refresh_run WHERE flow = 'refresh' ORDER BY started_at DESC LIMIT 1"
        ).fetchone()
        run_id = row[0] if row else ""
    return con.execute(
        "SELECT source, status, rows_parsed, rows_stored, rows_quarantined, attempts, "
        "coalesce(error, note) AS detail FROM scrape_run WHERE run_id = ? ORDER BY source",
        [run_id],
    ).pl()


def unknown_gpus(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    return con.execute("SELECT * FROM unknown_gpu ORDER BY rows DESC, gpu_name").pl()


def cheapest_per_tier(
    con: duckdb.DuckDBPyConnection, *, per_tier: int = 1, tiers: list[Tier] | None = None,
    pricing: tuple[str, ...] = ("on_demand",),
) -> pl.DataFrame:
    """The cheapest current whole-offering $/GPU-hour per VRAM tier (GPU-only SKUs excluded)."""
    tiers = tiers or load_tiers()
    order = {t.name: i for i, t in enumerate(tiers)}
    memory = "coalesce(p.gpu_memory_gb, g.memory_gb)"
    frame = con.execute(
        f"""
        WITH offers AS (
            SELECT {tier_sql(memory, tiers)} AS tier, p.gpu_model, p.provider, p.offering,
                   p.region, p.pricing, p.gpu_count, {memory} AS gpu_memory_gb,
                   round(p.price_usd_per_gpu_hour, 4) AS usd_per_gpu_hour,
                   round(p.price_usd_per_gpu_hour / {memory}, 5) AS usd_per_gb_vram_hour,
                   p.available, p.stale
            FROM latest_price p LEFT JOIN gpu_catalog g USING (gpu_model)
            WHERE NOT p.gpu_only AND p.gpu_model <> 'unknown' AND list_contains(?, p.pricing)
        )
        SELECT * FROM offers WHERE tier IS NOT NULL
        QUALIFY row_number() OVER (PARTITION BY tier
                                   ORDER BY usd_per_gpu_hour, provider, offering, region) <= ?
        """,
        [list(pricing), per_tier],
    ).pl()
    return frame.sort(
        pl.col("tier").replace_strict(order, default=len(order)), "usd_per_gpu_hour"
    )
