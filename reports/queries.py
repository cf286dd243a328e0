"""Read-only questions asked of the warehouse, as small functions returning polars frames.

Every value that comes from a user is a bound parameter; only our own tier bounds are
formatted into SQL text.
"""

from __future__ import annotations

from datetime import date, datetime

import duckdb
import polars as pl

from reports.offers import INTERRUPTIBLE_PRICING, STEADY_PRICING  # noqa: F401  (old home)
from warehouse.summaries import end_of_day


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


# ---- the weekly report and the question commands read through these -------------------------



def table_exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]
    ).fetchone()
    return bool(row and row[0])


def current_prices_at(con: duckdb.DuckDBPyConnection, as_of: datetime) -> pl.DataFrame:
    """The current price of every offering at `as_of` (views.sql `current_price_at`: one
    source per provider x GPU model x pricing, `stale` = no success in STALE_AFTER_H hours
    before `as_of`), with the catalog's family, memory and throughput."""
    return con.execute(
        """
        SELECT c.source, c.provider, c.offering, c.gpu_name, c.gpu_model,
               coalesce(g.family, c.gpu_model) AS family, c.gpu_count,
               coalesce(c.gpu_memory_gb, g.memory_gb) AS gpu_memory_gb, g.bf16_tflops,
               c.region, c.pricing, c.price_usd_per_hour, c.price_usd_per_gpu_hour,
               c.available, c.gpu_only, c.aggregator, c.source_kind, c.observed_at, c.run_id,
               c.last_success_at, c.stale
        FROM current_price_at($as_of) c
        LEFT JOIN gpu_catalog g USING (gpu_model)
        ORDER BY c.provider, c.gpu_model, c.offering, c.region, c.pricing
        """,
        {"as_of": as_of},
    ).pl()


# The old name, for code written before the rename (it says "prices" but not "current").


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
                OR ok.last_success_at < $as_of - stale_after()) AS stale
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
    """Cheapest whole-offering $/GPU-hour per model and observed day (GPU-only SKUs and stale
    sources left out), from the current price at the end of each day (`current_price_at`),
    so the history agrees with the report's current tables. Without a provider filter it is
    read from the daily_cheapest summary; with one, computed for those days."""
    params = {"models": gpu_models, "pricing": list(pricing), "since": since, "until": until}
    if not providers:
        return con.execute(
            """
            SELECT day, gpu_model, min(min_usd_per_gpu_hour) AS usd_per_gpu_hour,
                   arg_min(provider, min_usd_per_gpu_hour) AS provider,
                   arg_min(offering, min_usd_per_gpu_hour) AS offering
            FROM daily_cheapest
            WHERE day BETWEEN $since AND $until AND list_contains($models, gpu_model)
              AND list_contains($pricing, pricing)
            GROUP BY day, gpu_model ORDER BY gpu_model, day
            """, params).pl()
    days = con.execute("SELECT DISTINCT day FROM daily_price WHERE day BETWEEN $since AND "
                       "$until ORDER BY day", {"since": since, "until": until}).fetchall()
    frames = [con.execute(
        """
        SELECT $day AS day, gpu_model, min(price_usd_per_gpu_hour) AS usd_per_gpu_hour,
               arg_min(provider, price_usd_per_gpu_hour) AS provider,
               arg_min(offering, price_usd_per_gpu_hour) AS offering
        FROM current_price_at($end_of_day)
        WHERE NOT stale AND NOT gpu_only AND list_contains($models, gpu_model)
          AND list_contains($pricing, pricing) AND list_contains($providers, provider)
        GROUP BY gpu_model
        """, {"models": gpu_models, "pricing": list(pricing), "providers": providers,
              "day": day, "end_of_day": end_of_day(day)}).pl() for (day,) in days]
    columns = {"day": pl.Date, "gpu_model": pl.String, "usd_per_gpu_hour": pl.Float64,
               "provider": pl.String, "offering": pl.String}
    return pl.concat([f.cast(columns) for f in frames]).sort("gpu_model", "day") if frames \
        else pl.DataFrame(schema=columns)


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
