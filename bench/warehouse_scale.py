"""Warehouse at scale: ten years of nightly prices (~50M observations), then the questions.

Generates the synthetic history (bench/synthetic.py) into a temporary warehouse, then times
each question through the project's views/macros and through a hand-written DuckDB query that
answers the same question over the same tables, in the same run, and prints both and the ratio.

    python -m bench.warehouse_scale [--size small] [--warehouse PATH] [--days N] [--before]

--warehouse reuses (or creates and keeps) a generated file, so the 50M-row history is built once;
--before answers through the views as they were before the summary tables (bench/plain_views.py).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import duckdb

from bench._common import best_of, header, size_arg, verdict
from bench.plain_views import install_plain_views
from bench.synthetic import generate, last_night
from warehouse.connection import connect

SIZES = {"small": (1_000, 400), "full": (14_000, 3_650)}


@dataclass(frozen=True, slots=True)
class Question:
    name: str
    target_s: float
    ours: Callable[[duckdb.DuckDBPyConnection], object]
    hand: Callable[[duckdb.DuckDBPyConnection], object]
    note: str = ""
    compare: bool = True  # does the 1.5x-of-hand-written rule apply?


def _rows(sql: str, params: dict[str, object] | None = None) -> Callable[..., int]:
    def run(con: duckdb.DuckDBPyConnection) -> int:
        return con.execute(sql, params or {}).arrow().read_all().num_rows

    return run


def questions(end: datetime, days: int, offering: str) -> list[Question]:
    year_ago = (end - timedelta(days=365)).date()
    as_of = end - timedelta(days=days // 2, hours=-3)
    report_dir = Path(tempfile.mkdtemp(prefix="gpuprices-bench-report-"))

    def report(con: duckdb.DuckDBPyConnection) -> int:
        from reports.weekly.report import build_report

        return len(build_report(con, as_of=end + timedelta(hours=6), chart_dir=report_dir)
                   .markdown)

    def report_queries(con: duckdb.DuckDBPyConnection) -> int:
        from reports.charts import series_models
        from warehouse.semantic import Prices
        from warehouse.semantic_history import cheapest_history

        when = end + timedelta(hours=6)
        models = [m for group in series_models().values() for m in group]
        now, week_ago = Prices(con, when), Prices(con, when - timedelta(days=7))
        return (now.offers().height + week_ago.offers().height + now.freshness().height
                + cheapest_history(con, models, since=when.date() - timedelta(days=90),
                                   until=when.date(), per_model=True, now=when).height)

    return [
        Question(
            "latest prices (latest_price)", 0.200,
            _rows("SELECT * FROM latest_price"),
            _rows("""
                WITH last AS (
                    SELECT source, arg_max(observed_at, finished_at) AS t FROM scrape_run
                    WHERE status = 'success' GROUP BY source
                ), cur AS (
                    SELECT o.*, s.aggregator FROM observation o
                    JOIN last ON o.source = last.source AND o.observed_at = last.t
                    JOIN source s ON s.source = o.source
                )
                SELECT * FROM cur WHERE NOT aggregator
                   OR provider NOT IN (SELECT provider FROM cur WHERE NOT aggregator)""")),
        Question(
            "one-year daily cheapest per GPU model (daily_cheapest)", 0.300,
            _rows("SELECT * FROM daily_cheapest WHERE day > $since", {"since": year_ago}),
            _rows("""
                SELECT CAST(observed_at AS DATE) AS day, gpu_model, pricing,
                       min(price_usd_per_gpu_hour), arg_min(provider, price_usd_per_gpu_hour),
                       arg_min(offering, price_usd_per_gpu_hour), count(*)
                FROM observation
                WHERE observed_at >= CAST($since AS TIMESTAMPTZ) + INTERVAL 1 DAY
                  AND NOT gpu_only AND gpu_model <> 'unknown'
                GROUP BY ALL""", {"since": year_ago})),
        Question(
            "point-in-time price of one offering (price_at)", 0.050,
            _rows("SELECT * FROM observations_at($t) WHERE offering = $o",
                  {"t": as_of, "o": offering}),
            _rows("""
                SELECT * FROM observation WHERE offering = $o AND observed_at <= $t
                ORDER BY observed_at DESC LIMIT 1""", {"t": as_of, "o": offering})),
        Question(
            "price changes over a year (price_change)", 0.500,
            _rows("SELECT * FROM price_change WHERE changed_on > $since", {"since": year_ago}),
            _rows("""
                WITH d AS (
                    SELECT observed_at, source, offering, region, pricing, price_usd_per_hour,
                           lag(price_usd_per_hour) OVER w AS old_price,
                           lag(observed_at) OVER w AS old_at
                    FROM observation
                    WINDOW w AS (PARTITION BY source, provider, offering, region, pricing
                                 ORDER BY observed_at)
                )
                SELECT * FROM d WHERE observed_at >= CAST($since AS TIMESTAMPTZ) + INTERVAL 1 DAY
                  AND old_price <> price_usd_per_hour""", {"since": year_ago})),
        Question("full weekly report (reports.weekly.build_report)", 5.0, report,
                 report_queries, compare=False,
                 note="hand = its queries alone; the rest is markdown + PNG chart rendering"),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = size_arg(__doc__.splitlines()[0])
    parser.add_argument("--warehouse", type=Path, help="reuse/keep the generated warehouse here")
    parser.add_argument("--before", action="store_true",
                        help="measure the plain views (no summary tables) instead")
    parser.add_argument("--days", type=int, help="synthetic nights (default by size; 30-3650), "
                        "e.g. 365 to compare one year with ten")
    args = parser.parse_args(argv)
    offerings, days = SIZES[args.size]
    if args.days is not None and not 30 <= args.days <= 3_650:
        parser.error("--days must be within 30-3650")
    days = args.days or days
    header(f"warehouse at scale: {offerings} offerings x {days} nights")
    workdir = Path(tempfile.mkdtemp(prefix="gpuprices-bench-wh-"))
    path = args.warehouse or workdir / "history.duckdb"
    try:
        fresh = not path.exists()
        start = time.perf_counter()
        con = connect(path)
        if fresh:
            rows = generate(con, offerings=offerings, days=days,
                            chunk_days=30 if args.size == "full" else 100)
            con.execute("CHECKPOINT")
            print(f"   generated {rows:,} observations in {time.perf_counter() - start:.0f} s "
                  f"({path.stat().st_size / 2**30:.2f} GiB on disk)")
        else:
            row = con.execute("SELECT count(*) FROM observation").fetchone()
            print(f"   reusing {path}: {row[0] if row else 0:,} observations "
                  f"(opened in {time.perf_counter() - start:.1f} s)")
        if args.before:
            install_plain_views(con)
            print("   BEFORE: plain views over observation (no summary tables)")
        offering = con.execute("SELECT offering FROM observation WHERE source = 'aws' "
                               "AND pricing = 'on_demand' LIMIT 1").fetchone()
        repeat = 3 if args.size == "small" else 5
        print(f"   {'question':<52}{'ours':>10}{'hand':>10}{'ratio':>8}{'target':>9}")
        for q in questions(last_night(con), days, offering[0] if offering else ""):
            if args.before:  # minutes per question at full size: once, hand-written skipped
                ours = best_of(lambda: q.ours(con), 1, warmup=0)  # noqa: B023
                print(f"   {q.name:<52}{ours * 1000:8.0f}ms  (before: plain view)")
                continue
            ours = best_of(lambda: q.ours(con), repeat)  # noqa: B023
            hand = best_of(lambda: q.hand(con), repeat)  # noqa: B023
            ratio = ours / hand if hand else float("inf")
            ok = ours <= q.target_s and (ratio <= 1.5 or not q.compare)
            print(f"   {q.name:<52}{ours * 1000:8.0f}ms{hand * 1000:8.0f}ms{ratio:8.2f}"
                  f"{q.target_s * 1000:7.0f}ms {verdict(ok)}" + (f"  ({q.note})" if q.note
                                                               else ""))
        con.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
