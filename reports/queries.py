"""Read-only questions asked of the warehouse, as small functions returning polars frames.

Every value that comes from a user is a bound parameter; only our own tier bounds are
formatted into SQL text.
"""

from __future__ import annotations

from datetime import date, datetime

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
        -- Available and live offers first (reports.rankings.available_live_first).
        QUALIFY row_number() OVER (PARTITION BY tier
                                   ORDER BY available IS FALSE, stale, usd_per_gpu_hour,
                                            provider, offering, region) <= ?
        """,
        [list(pricing), per_tier],
    ).pl()
    return frame.sort(
        pl.col("tier").replace_strict(order, default=len(order)), "usd_per_gpu_hour"
    )


# ---- the weekly report and the question commands read through these -------------------------

STALE_AFTER_H = 48
# Pay-as-you-go prices that are not interruptible: what rankings, scenarios and fit compare.
STEADY_PRICING: tuple[str, ...] = ("on_demand", "community", "serverless")
INTERRUPTIBLE_PRICING: tuple[str, ...] = ("spot", "interruptible", "community_spot")


def table_exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]
    ).fetchone()
    return bool(row and row[0])


def prices_at(con: duckdb.DuckDBPyConnection, as_of: datetime) -> pl.DataFrame:
    """Every offering's price as it stood at `as_of`, with its source's staleness at that time.

    The capture a source's prices come from is the last one a run stored or re-confirmed with
    observed_at <= as_of (like the price_at macro). As in the latest_price view, one source
    speaks per provider x GPU model x pricing (warehouse/views.sql `source_rank`: own API, own
    page, catalogs, then aggregators, which fill in only for providers with no direct source).
    `stale` = the source's last success is more than 48 h before `as_of`.
    """
    return con.execute(
        """
        WITH seen AS (
            SELECT s.source, s.capture_id, s.observed_at, s.finished_at, c.stored_observed_at
            FROM scrape_run s JOIN capture_seen c USING (source, capture_id)
            WHERE s.status IN ('success', 'unchanged') AND s.observed_at <= $as_of
        ), cap AS (
            SELECT source, arg_max(capture_id, observed_at) AS capture_id,
                   arg_max(stored_observed_at, observed_at) AS stored_observed_at,
                   max(finished_at) AS last_success_at
            FROM seen GROUP BY source
        ), current AS (
            SELECT o.*, src.aggregator, src.kind AS source_kind, cap.last_success_at
            FROM observation o
            JOIN cap ON o.source = cap.source AND o.capture_id = cap.capture_id
                    AND o.observed_at = cap.stored_observed_at
            JOIN source src ON src.source = o.source
        ), direct_providers AS (SELECT DISTINCT provider FROM current WHERE NOT aggregator
        ), kept AS (
            SELECT * FROM current
            WHERE NOT aggregator OR provider NOT IN (SELECT provider FROM direct_providers)
        ), best AS (
            SELECT provider, gpu_model, pricing,
                   first(source ORDER BY source_rank(aggregator, source_kind), source) AS source
            FROM kept GROUP BY provider, gpu_model, pricing
        )
        SELECT c.source, c.provider, c.offering, c.gpu_name, c.gpu_model,
               coalesce(g.family, c.gpu_model) AS family, c.gpu_count,
               coalesce(c.gpu_memory_gb, g.memory_gb) AS gpu_memory_gb, g.bf16_tflops,
               c.region, c.pricing, c.price_usd_per_hour, c.price_usd_per_gpu_hour,
               c.available, c.gpu_only, c.aggregator, c.source_kind, c.observed_at, c.run_id,
               c.last_success_at,
               c.last_success_at < $as_of - INTERVAL (48) HOUR AS stale
        FROM kept c SEMI JOIN best b USING (provider, gpu_model, pricing, source)
        LEFT JOIN gpu_catalog g USING (gpu_model)
        ORDER BY c.provider, c.gpu_model, c.offering, c.region, c.pricing
        """,
        {"as_of": as_of},
    ).pl()


def source_freshness(con: duckdb.DuckDBPyConnection, as_of: datetime) -> pl.DataFrame:
    """Every registered source: last success (at or before as_of), rows, stale flag."""
    return con.execute(
        """
        WITH runs AS (
            SELECT * FROM scrape_run WHERE finished_at <= $as_of OR observed_at <= $as_of
        ), ok AS (
            SELECT source, max(finished_at) AS last_success_at,
                   arg_max(observed_at, finished_at) AS prices_as_of,
                   arg_max(capture_id, finished_at) AS capture_id
            FROM runs WHERE status IN ('success', 'unchanged') GROUP BY source
        ), last_run AS (
            SELECT source, arg_max(status, finished_at) AS last_status,
                   arg_max(error, finished_at) AS last_error
            FROM runs GROUP BY source
        )
        SELECT s.source, s.provider, s.kind, ok.last_success_at, ok.prices_as_of,
               coalesce(cs.rows_stored, 0) AS rows, coalesce(r.last_status, 'never run')
                   AS last_status, r.last_error,
               (ok.last_success_at IS NULL
                OR ok.last_success_at < $as_of - INTERVAL (48) HOUR) AS stale
        FROM source s
        LEFT JOIN ok USING (source)
        LEFT JOIN capture_seen cs ON cs.source = s.source AND cs.capture_id = ok.capture_id
        LEFT JOIN last_run r ON r.source = s.source
        ORDER BY s.source
        """,
        {"as_of": as_of},
    ).pl()


def daily_cheapest_history(
    con: duckdb.DuckDBPyConnection, gpu_models: list[str], *, since: date, until: date,
    pricing: tuple[str, ...] = ("on_demand",), providers: list[str] | None = None,
) -> pl.DataFrame:
    """Cheapest whole-offering $/GPU-hour per model and day (GPU-only SKUs left out).

    As in latest_price, aggregator rows count only for providers without a direct source
    that day, so the history agrees with the report's current tables.
    """
    return con.execute(
        """
        WITH days AS (
            SELECT dp.*, src.aggregator FROM daily_price dp JOIN source src USING (source)
            WHERE dp.day BETWEEN $since AND $until
        ), direct AS (SELECT DISTINCT day, provider FROM days WHERE NOT aggregator)
        SELECT day, gpu_model, min(price_usd_per_gpu_hour) AS usd_per_gpu_hour,
               arg_min(provider, price_usd_per_gpu_hour) AS provider,
               arg_min(offering, price_usd_per_gpu_hour) AS offering
        FROM days d
        WHERE NOT gpu_only AND list_contains($models, gpu_model)
          AND list_contains($pricing, pricing)
          AND ($providers IS NULL OR list_contains($providers, provider))
          AND (NOT aggregator OR NOT EXISTS (
              SELECT 1 FROM direct x WHERE x.day = d.day AND x.provider = d.provider))
        GROUP BY day, gpu_model ORDER BY gpu_model, day
        """,
        {"models": gpu_models, "pricing": list(pricing), "since": since, "until": until,
         "providers": providers},
    ).pl()


def reference_table(con: duckdb.DuckDBPyConnection, name: str) -> pl.DataFrame | None:
    """A reference table (plan, gpu_ownership) or None when this warehouse has none yet."""
    if name not in ("plan", "gpu_ownership") or not table_exists(con, name):
        return None
    return con.execute(f"SELECT * FROM {name}").pl()


def refresh_runs(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> pl.DataFrame:
    return con.execute(
        "SELECT run_id, flow, started_at, finished_at, offline, status FROM refresh_run "
        "WHERE list_contains(?, run_id) ORDER BY started_at",
        [run_ids],
    ).pl()
