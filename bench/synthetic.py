"""A synthetic but realistic price history, written in bulk with DuckDB SQL (no Python loops).

~14k offerings across a dozen direct sources and one aggregator, observed nightly for ten
years: ~50M observations. Prices drift down with the years (~12 %/year) and move in steps:
each offering keeps a price level for a stretch (weeks to a year; days for spot/interruptible)
and then jumps to another. One provider stops publishing three years before the end (a stale
source), as happens in real life. The run records (refresh_run, scrape_run, raw_capture) are
written too, so every view and macro works as on a real warehouse.

Rows land in time order, a month at a time, as nightly appends would have put them.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from time import perf_counter

import duckdb

from bench._common import header
from warehouse.connection import connect
from warehouse.index.publish import fix_index
from warehouse.semantic import day_end
from warehouse.semantic_daily import refresh_days
from warehouse.summaries import rebuild
from warehouse.transaction import transaction

# source, provider, share of the offerings, aggregator, retired (days before the end)
SOURCES: tuple[tuple[str, str, float, bool, int], ...] = (
    ("vastai", "vastai", 0.22, False, 0), ("runpod", "runpod", 0.06, False, 0),
    ("lambda", "lambda", 0.03, False, 0), ("aws", "aws", 0.18, False, 0),
    ("azure", "azure", 0.18, False, 0), ("gcp", "gcp", 0.10, False, 0),
    ("paperspace", "paperspace", 0.03, False, 0), ("coreweave", "coreweave", 0.03, False, 0),
    ("modal", "modal", 0.01, False, 0), ("tensordock", "tensordock", 0.04, False, 0),
    ("oracle", "oracle", 0.03, False, 0), ("jarvislabs", "jarvislabs", 0.02, False, 1095),
    ("skypilot-catalog", "*", 0.07, True, 0),
)
REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1",
           "ap-southeast-1", "us-central1", "europe-west4", "eastus", "westeurope",
           "Quebec, CA", "Texas, US", "Finland, FI", "Taiwan, TW", "global")


INDEX_DAYS = 14


def start_of(days: int, last_night: date | None = None) -> datetime:
    """The first night of a `days`-night history whose last night is `last_night` (default
    today, UTC), so that read commands asked now find fresh prices."""
    last_night = last_night or datetime.now(UTC).date()
    return datetime.combine(last_night - timedelta(days=days - 1), time(2, 0), UTC)


def last_night(con: duckdb.DuckDBPyConnection) -> datetime:
    """The last night a generated warehouse holds (a reused file may be days old)."""
    row = con.execute("SELECT max(observed_at) FROM scrape_run").fetchone()
    if not row or row[0] is None:
        raise ValueError("the warehouse holds no generated history")
    return row[0].astimezone(UTC).replace(hour=2, minute=0, second=0, microsecond=0)


def generate(con: duckdb.DuckDBPyConnection, *, offerings: int = 14_000, days: int = 3_650,
             chunk_days: int = 30, last: date | None = None) -> int:
    """Fill an empty, migrated warehouse with `days` nights up to `last` (default today).
    Returns the number of observations written."""
    start = start_of(days, last)
    con.execute("CREATE OR REPLACE TEMP TABLE syn_source (source VARCHAR, provider VARCHAR, "
                "share DOUBLE, aggregator BOOLEAN, retired INTEGER, s INTEGER)")
    con.executemany("INSERT INTO syn_source VALUES (?, ?, ?, ?, ?, ?)",
                    [(*row, i) for i, row in enumerate(SOURCES)])
    con.execute("""
        INSERT INTO source SELECT source, provider, 'api', 'https://example.test/' || source,
               aggregator FROM syn_source""")
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE syn_offering AS
        WITH bounds AS (
            SELECT *, sum(share) OVER (ORDER BY s) - share AS lo, sum(share) OVER (ORDER BY s) AS hi
            FROM syn_source
        ), models AS (
            SELECT gpu_model, memory_gb, bf16_tflops,
                   row_number() OVER (ORDER BY gpu_model) - 1 AS m, count(*) OVER () AS n
            FROM gpu_catalog WHERE bf16_tflops BETWEEN 20 AND 2500 AND vendor = 'NVIDIA'
        ), raw AS (
            SELECT i, (hash(i, 'model') % 1000003)::BIGINT AS h1,
                   (hash(i, 'count') % 1000003)::BIGINT AS h2,
                   (hash(i, 'region') % 1000003)::BIGINT AS h3,
                   (hash(i, 'pricing') % 100)::BIGINT AS hp,
                   (hash(i, 'price') % 1000) / 1000.0 AS u,
                   (i + 0.5) / {offerings} AS pos
            FROM range({offerings}) t(i)
        )
        SELECT r.i AS oid, b.source, b.s, b.aggregator, b.retired,
               CASE WHEN b.aggregator THEN ['aws', 'azure', 'gcp', 'lambda', 'vultr'][1 + r.i % 5]
                    ELSE b.provider END AS provider,
               b.source || '-' || md.gpu_model || '-' || r.i AS offering,
               md.gpu_model, md.memory_gb, [1, 1, 1, 2, 4, 8][1 + r.h2 % 6]::DOUBLE AS gpu_count,
               {list(REGIONS)}[1 + r.h3 % {len(REGIONS)}] AS region,
               CASE WHEN r.hp < 60 THEN 'on_demand'
                    WHEN r.hp < 85 THEN CASE WHEN b.source = 'vastai' THEN 'interruptible'
                                             ELSE 'spot' END
                    ELSE 'reserved' END AS pricing,
               greatest(md.bf16_tflops * 0.0025, 0.08) * (0.7 + 0.6 * r.u) AS base_per_gpu,
               CASE WHEN r.hp BETWEEN 60 AND 84 THEN 3 + r.h1 % 18 ELSE 45 + r.h1 % 320 END
                   AS period_days,
               r.h3 % 400 AS phase,
               (b.source = 'gcp' AND r.i % 7 = 0) AS gpu_only
        FROM raw r
        JOIN bounds b ON r.pos >= b.lo AND r.pos < b.hi
        JOIN models md ON md.m = r.h1 % md.n
    """)
    # One capture per source per night; jarvislabs stops `retired` days before the end.
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE syn_capture AS
        SELECT d.day, s.source, s.s,
               TIMESTAMPTZ '{start.isoformat()}' + to_days(d.day::INTEGER)
                   + to_minutes(s.s::INTEGER) AS observed_at,
               sha256(s.source || '/' || d.day) AS capture_id,
               'syn-' || lpad(d.day::VARCHAR, 5, '0') AS run_id
        FROM range({days}) d(day), syn_source s
        WHERE d.day < {days} - s.retired
    """)
    con.execute(f"""
        INSERT INTO refresh_run
        SELECT 'syn-' || lpad(day::VARCHAR, 5, '0'), 'refresh',
               TIMESTAMPTZ '{start.isoformat()}' + to_days(day::INTEGER),
               TIMESTAMPTZ '{start.isoformat()}' + to_days(day::INTEGER) + INTERVAL 20 MINUTE,
               false, 'completed', 'synthetic'
        FROM range({days}) d(day)""")
    con.execute("""
        INSERT INTO raw_capture
        SELECT capture_id, source, 'https://example.test/' || source, observed_at,
               'application/json', 1000000, substr(capture_id, 1, 2) || '/' || capture_id || '.gz'
        FROM syn_capture""")
    con.execute("""
        INSERT INTO scrape_run (run_id, source, started_at, finished_at, observed_at, status,
            attempts, capture_id, rows_parsed, rows_stored, rows_quarantined, unknown_gpus)
        SELECT c.run_id, c.source, c.observed_at, c.observed_at + INTERVAL 30 SECOND,
               c.observed_at, 'success', 1, c.capture_id, n.rows, n.rows, 0, []
        FROM syn_capture c JOIN (SELECT source, count(*) AS rows FROM syn_offering GROUP BY ALL) n
          USING (source)""")
    for first in range(0, days, chunk_days):
        last = min(first + chunk_days, days)
        con.execute(f"""
            INSERT INTO observation (observed_at, run_id, capture_id, source, source_url,
                provider, offering, gpu_name, gpu_count, gpu_memory_gb, vcpus, ram_gb, region,
                pricing, price_usd_per_hour, billing_increment_s, available, gpu_only,
                monthly_fee_usd, gpu_model, price_usd_per_gpu_hour)
            WITH pairs AS (
                SELECT c.observed_at, c.run_id, c.capture_id, c.day, o.*,
                       (c.day + o.phase) // o.period_days AS epoch
                FROM syn_capture c JOIN syn_offering o ON o.source = c.source
                WHERE c.day >= {first} AND c.day < {last}
            ), priced AS (
                -- a price level per stretch; the yearly drift is applied at the stretch's start
                SELECT *, round(base_per_gpu
                                * exp(-0.12 * greatest(epoch * period_days - phase, 0) / 365)
                                * (0.85 + 0.3 * (hash(oid, epoch) % 1000) / 1000.0), 4)
                              AS per_gpu
                FROM pairs
            )
            SELECT observed_at, run_id, capture_id, source, 'https://example.test/' || source,
                   provider, offering, gpu_model, gpu_count, memory_gb, 8 * gpu_count,
                   64 * gpu_count, region, pricing, per_gpu * gpu_count, 1, true, gpu_only,
                   NULL, gpu_model, per_gpu
            FROM priced
            ORDER BY observed_at, oid
        """)
    row = con.execute("SELECT count(*) FROM observation").fetchone()
    written = int(row[0]) if row else 0
    con.execute("DROP TABLE syn_capture; DROP TABLE syn_offering; DROP TABLE syn_source")
    # A bulk load bypasses append_batch, so the summary tables are computed once at the end:
    # the day-by-day ones a year per transaction, as a transaction holds what it wrote until
    # it commits (one for ten years at 14k offerings takes 10 min and ~20 GB).
    with transaction(con):
        rebuild(con, day_tables=False)
    now = datetime.now(UTC)
    for first in range(0, days, 365):
        until = start + timedelta(days=min(first + 365, days) - 1)
        with transaction(con):
            refresh_days(con, (start + timedelta(days=first)).date(),
                         now=now if first + 365 >= days else day_end(until.date()))
    # The nightly index fixing of the last INDEX_DAYS, so the report and the board read
    # published fixings as on a warehouse kept by nightly runs (~1.2 s a day at full size:
    # ten years of fixings would take over an hour).
    fix_index(con, since=(start + timedelta(days=max(days - INDEX_DAYS, 0))).date(),
              through=(start + timedelta(days=days - 1)).date())
    return written


def history_for(warehouse: Path | None, workdir: Path, *, offerings: int, days: int,
                what: str) -> Path:
    """`warehouse` as it is, or a history of `offerings` x `days` nights generated into
    `workdir` (export_memory and rebuild_memory measure `what` on a long history)."""
    if warehouse is not None:
        header(f"{what} of {warehouse}")
        return warehouse
    header(f"{what}: {offerings} offerings x {days} nights (generated)")
    path = workdir / "history.duckdb"
    started = perf_counter()
    con = connect(path)
    rows = generate(con, offerings=offerings, days=days, chunk_days=30)
    con.execute("CHECKPOINT")
    con.close()
    print(f"   generated {rows:,} observations in {perf_counter() - started:.0f} s")
    return path
