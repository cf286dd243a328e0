"""The summary tables (filled by warehouse/summaries.py) equal the plain queries over observation.

Each scenario lands captures through the real append path (append_batch,
replace_capture_observations) and then compares every summary-backed view with the query it
replaced, run over the raw observation table, and each summary table with a rebuild from scratch.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest

from schemas.observation import OBSERVATION_SCHEMA
from warehouse.append import (
    ScrapeRecord,
    SourceInfo,
    append_batch,
    register_sources,
    replace_capture_observations,
)
from warehouse.connection import connect
from warehouse.semantic import Prices, end_of_day
from warehouse.summaries import SUMMARY_TABLES, rebuild

# The views as first written: straight over observation (UTC days). An offering's identity
# includes its reserved term (0: none); these rows announce no price (effective_from null).
PLAIN_DAILY_PRICE = """
    SELECT CAST(timezone('UTC', observed_at) AS DATE) AS day, source, provider, offering, region,
           pricing, coalesce(term_months, 0) AS term_months, gpu_model, gpu_count,
           arg_max(price_usd_per_hour, observed_at) AS price_usd_per_hour,
           arg_max(price_usd_per_gpu_hour, observed_at) AS price_usd_per_gpu_hour,
           bool_or(gpu_only) AS gpu_only
    FROM observation GROUP BY ALL"""
# When each source's prices were last seen (observed time of its last confirming run).
PLAIN_SEEN = """
    SELECT source, max(observed_at) AS last_success_at FROM scrape_run
    WHERE status IN ('success', 'unchanged') AND capture_id IS NOT NULL GROUP BY source"""
PLAIN = {
    "daily_price": PLAIN_DAILY_PRICE,
    "price_change": f"""
        WITH ordered AS (
            SELECT *, lag(price_usd_per_hour) OVER w AS old_price_usd_per_hour,
                      lag(day) OVER w AS old_day
            FROM ({PLAIN_DAILY_PRICE})
            WINDOW w AS (PARTITION BY source, provider, offering, region, pricing, term_months
                         ORDER BY day)
        )
        SELECT day AS changed_on, old_day AS previous_day, source, provider, offering, region,
               pricing, term_months, gpu_model, gpu_count, gpu_only, old_price_usd_per_hour,
               price_usd_per_hour AS new_price_usd_per_hour,
               round(100 * (price_usd_per_hour - old_price_usd_per_hour)
                     / old_price_usd_per_hour, 2) AS pct_change
        FROM ordered
        WHERE old_price_usd_per_hour IS NOT NULL
          AND price_usd_per_hour <> old_price_usd_per_hour""",
    "latest_price_all_sources": f"""
        SELECT o.*, src.aggregator, src.kind AS source_kind, s.last_success_at,
               CAST(timezone('UTC', now()) AS DATE)
                   - CAST(timezone('UTC', s.last_success_at) AS DATE) AS carried_days,
               (s.last_success_at < now() - INTERVAL 48 HOUR) AS stale
        FROM observation o
        JOIN latest_capture c ON o.source = c.source AND o.capture_id = c.capture_id
                             AND o.observed_at = c.observed_at
        JOIN ({PLAIN_SEEN}) s ON s.source = o.source
        JOIN source src ON src.source = o.source""",
    "latest_price": f"""
        WITH current AS (
            SELECT o.*, src.aggregator, src.kind AS source_kind, s.last_success_at
            FROM observation o
            JOIN latest_capture c ON o.source = c.source AND o.capture_id = c.capture_id
                                 AND o.observed_at = c.observed_at
            JOIN ({PLAIN_SEEN}) s ON s.source = o.source
            JOIN source src ON src.source = o.source
        ), direct_providers AS (SELECT DISTINCT provider FROM current WHERE NOT aggregator)
        SELECT c.*, CAST(timezone('UTC', now()) AS DATE)
                        - CAST(timezone('UTC', c.last_success_at) AS DATE) AS carried_days,
               (c.last_success_at < now() - INTERVAL 48 HOUR) AS stale
        FROM current c
        WHERE NOT c.aggregator OR c.provider NOT IN (SELECT provider FROM direct_providers)""",
    # A move counts when its source spoke for the offering that day (daily_source), as the
    # view first read it: a join, before the counted moves were stored (daily_move).
    "price_move": """
        SELECT c.changed_on, c.previous_day, c.provider, c.offering, c.region, c.pricing,
               c.term_months, c.gpu_model, c.gpu_count,
               round(c.old_price_usd_per_hour / c.gpu_count, 4) AS old_usd_per_gpu_hour,
               round(c.new_price_usd_per_hour / c.gpu_count, 4) AS new_usd_per_gpu_hour,
               c.pct_change, c.old_price_usd_per_hour, c.new_price_usd_per_hour, c.source
        FROM price_change c
        SEMI JOIN daily_source d ON d.day = c.changed_on AND d.source = c.source
            AND d.provider = c.provider AND d.gpu_model = c.gpu_model AND d.pricing = c.pricing
        WHERE excluded_because(c.gpu_model, c.gpu_only, c.gpu_count, c.pricing, [c.pricing],
                               NULL, false) IS NULL""",
}
# The capture each source's prices came from at $t, from the run record alone: its last
# confirming run by then, and when that capture was first stored and how many rows it stored
# (capture_seen, over every run).
PLAIN_LAST_CAPTURE = """
    SELECT source, arg_max(capture_id, observed_at) AS capture_id, max(observed_at) AS seen_at
    FROM scrape_run
    WHERE status IN ('success', 'unchanged') AND capture_id IS NOT NULL AND observed_at <= $t
    GROUP BY source"""
PLAIN_CAPTURE_AT = f"""
    SELECT l.source, l.capture_id, c.stored_observed_at AS observed_at, l.seen_at
    FROM ({PLAIN_LAST_CAPTURE}) l JOIN capture_seen c USING (source, capture_id)"""
PLAIN_FRESHNESS_AT = f"""
    SELECT src.source, l.seen_at AS last_success_at, c.stored_observed_at AS prices_as_of,
           coalesce(c.rows_stored, 0) AS rows
    FROM source src LEFT JOIN ({PLAIN_LAST_CAPTURE}) l USING (source)
    LEFT JOIN capture_seen c USING (source, capture_id)"""
START = datetime(2025, 3, 1, 2, 0, tzinfo=UTC)
TIE_BREAK = {("alpha", "alpha"): 0.001, ("beta", "beta"): 0.002, ("sky", "alpha"): 0.003,
             ("sky", "gamma"): 0.004}
OFFERINGS = [("h100-8x", "H100 SXM", 8.0), ("a100", "A100 80GB", 1.0), ("4090", "RTX 4090", 1.0),
             ("l4", "L4", 1.0), ("t4-2x", "T4", 2.0)]


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort(frame.columns, nulls_last=True)


def plain_daily_cheapest(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Issue 11/21: the cheapest comparable offer (warehouse.semantic) per model and segment at
    the end of each observed day, computed day by day from scratch."""
    days = [d for (d,) in con.execute(f"SELECT DISTINCT day FROM ({PLAIN_DAILY_PRICE})"
                                      ).fetchall()]
    frames = [Prices(con, end_of_day(day)).comparable().group_by(
        "gpu_model", "segment", maintain_order=True).agg(
        pl.col("price_usd_per_gpu_hour").first(),
        pl.col("provider").first(), pl.col("offering").first(), pl.len().alias("offers"),
    ).with_columns(pl.lit(day).alias("day")) for day in days]
    return pl.concat(frames) if frames else pl.DataFrame()


def table(con: duckdb.DuckDBPyConnection, name: str) -> pl.DataFrame:
    """A summary table's rows, sorted; market_price without its computed_at stamp."""
    drop = " EXCLUDE (computed_at)" if name == "market_price" else ""
    return _sorted(con.execute(f"SELECT *{drop} FROM {name}").pl())


def assert_views_match_plain(con: duckdb.DuckDBPyConnection) -> None:
    for view, plain in PLAIN.items():
        ours = con.execute(f"SELECT * FROM {view}").pl()
        expected = con.execute(plain).pl().select(ours.columns)
        assert _sorted(ours).equals(_sorted(expected)), view
    assert_capture_at_matches_the_run_record(con)
    expected = plain_daily_cheapest(con)
    ours = con.execute("SELECT * FROM daily_cheapest_segment").pl()
    if expected.height or ours.height:
        shown = expected.columns
        assert _sorted(ours.select(shown)).equals(_sorted(expected.cast(
            ours.select(shown).schema))), "daily_cheapest_segment"
    assert_summaries_equal_a_rebuild(con)


def assert_capture_at_matches_the_run_record(con: duckdb.DuckDBPyConnection) -> None:
    """capture_at takes a current capture's stored time from latest_observation and an older
    one's from the run record, and freshness_at counts rows for those captures only: both
    equal the run record's rule at every run's time, just before it, and now."""
    moments = [t for (run_at,) in con.execute("SELECT DISTINCT observed_at FROM scrape_run "
                                              "WHERE observed_at IS NOT NULL").fetchall()
               for t in (run_at - timedelta(microseconds=1), run_at)]
    for moment in [*moments, datetime.now(UTC)]:
        for ours_sql, plain_sql in (("SELECT * FROM capture_at($t)", PLAIN_CAPTURE_AT),
                                    ("SELECT source, last_success_at, prices_as_of, rows "
                                     "FROM freshness_at($t)", PLAIN_FRESHNESS_AT)):
            ours = con.execute(ours_sql, {"t": moment}).pl()
            plain = con.execute(plain_sql, {"t": moment}).pl().select(ours.columns)
            assert _sorted(ours).equals(_sorted(plain)), (moment, ours_sql)


def assert_summaries_equal_a_rebuild(con: duckdb.DuckDBPyConnection) -> None:
    """Every summary table as maintained equals a rebuild from scratch (rolled back)."""
    maintained = {t: table(con, t) for t in SUMMARY_TABLES}
    con.execute("BEGIN TRANSACTION")
    rebuild(con)
    for name, frame in maintained.items():
        assert frame.equals(table(con, name)), name
    con.execute("ROLLBACK")


def batch(source: str, provider: str, at: datetime, capture: str, rng: random.Random,
          *, offerings: list[tuple[str, str, float]] = OFFERINGS) -> pl.DataFrame:
    rows = []
    for name, model, count in offerings:
        for pricing in ("on_demand", "spot"):
            # a per-source/provider offset keeps the cheapest unique (arg_min has no tie rule)
            per_gpu = round(rng.choice((1.0, 1.0, 1.0, 1.2, 0.8)) * (2.0 if "H100" in model
                                                                     else 0.5)
                            + TIE_BREAK[source, provider], 4)
            rows.append({
                "observed_at": at, "run_id": f"run-{at:%Y%m%d%H}", "capture_id": capture,
                "source": source, "source_url": f"https://example.test/{source}",
                "provider": provider, "offering": f"{provider}-{name}", "gpu_name": model,
                "gpu_count": count, "gpu_memory_gb": 80.0, "vcpus": 8.0, "ram_gb": 64.0,
                "region": "us-east-1", "pricing": pricing,
                "price_usd_per_hour": per_gpu * count, "billing_increment_s": 1,
                "available": True, "gpu_only": name == "l4", "monthly_fee_usd": None,
                "gpu_model": model, "price_usd_per_gpu_hour": per_gpu,
            })
    return pl.DataFrame(rows, schema=OBSERVATION_SCHEMA)


def land(con: duckdb.DuckDBPyConnection, source: str, good: pl.DataFrame | None,
         at: datetime, capture: str, status: str = "success") -> None:
    record = ScrapeRecord(run_id=f"run-{at:%Y%m%d%H%M}", source=source, started_at=at,
                          status=status, observed_at=at, capture_id=capture,
                          rows_parsed=0 if good is None else good.height,
                          rows_stored=0 if good is None else good.height, finished_at=at)
    append_batch(con, record, good=good)


@pytest.fixture
def con(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    connection = connect(tmp_path / "w.duckdb")
    register_sources(connection, [
        SourceInfo("alpha", "alpha", "api", "https://example.test/alpha", False),
        SourceInfo("beta", "beta", "api", "https://example.test/beta", False),
        SourceInfo("sky", "*", "catalog", "https://example.test/sky", True),
    ])
    yield connection
    connection.close()


def test_nightly_appends_in_order_match_plain_queries(con: duckdb.DuckDBPyConnection) -> None:
    rng = random.Random(1)
    for night in range(12):
        at = START + timedelta(days=night)
        land(con, "alpha", batch("alpha", "alpha", at, f"a{night:062d}", rng), at,
             f"a{night:062d}")
        if night % 3:  # beta misses some nights: changes span the gap
            land(con, "beta", batch("beta", "beta", at, f"b{night:062d}", rng), at,
                 f"b{night:062d}")
        sky = batch("sky", "alpha", at, f"s{night:062d}", rng)  # aggregator, hidden by alpha
        land(con, "sky", pl.concat([sky, batch("sky", "gamma", at, f"s{night:062d}", rng)]),
             at, f"s{night:062d}")
    assert con.execute("SELECT count(*) FROM price_change").fetchone()[0] > 20
    latest = con.execute("SELECT DISTINCT provider FROM latest_price ORDER BY 1").fetchall()
    assert latest == [("alpha",), ("beta",), ("gamma",)]
    assert_views_match_plain(con)


def test_out_of_order_reconfirmed_same_day_and_reparse(con: duckdb.DuckDBPyConnection) -> None:
    rng = random.Random(2)
    captures = {}
    for night in (0, 1, 2, 5, 6):
        at = START + timedelta(days=night)
        captures[night] = (at, f"{night:064d}")
        land(con, "alpha", batch("alpha", "alpha", at, captures[night][1], rng), at,
             captures[night][1])
    assert_views_match_plain(con)
    # a backfill lands behind newer data
    at = START + timedelta(days=3)
    land(con, "alpha", batch("alpha", "alpha", at, "3" * 64, rng), at, "3" * 64)
    assert_views_match_plain(con)
    # a second capture the same day, later, with other prices
    at = START + timedelta(days=6, hours=12)
    land(con, "alpha", batch("alpha", "alpha", at, "7" * 64, rng), at, "7" * 64)
    assert_views_match_plain(con)
    # an older payload is served again: the run re-confirms that capture (no new rows)
    at = START + timedelta(days=7)
    land(con, "alpha", None, at, captures[1][1], status="unchanged")
    assert con.execute("SELECT DISTINCT capture_id FROM latest_price").fetchall() == [
        (captures[1][1],)]
    assert_views_match_plain(con)
    # a failed run changes nothing
    land(con, "alpha", None, START + timedelta(days=8), "f" * 64, status="failed")
    assert_views_match_plain(con)
    # re-parse of the current capture, with one offering fewer and new prices
    old_at, capture = captures[1]
    fewer = batch("alpha", "alpha", old_at, capture, rng, offerings=OFFERINGS[1:])
    record = ScrapeRecord(run_id="reparse", source="alpha", started_at=old_at,
                          status="success", observed_at=old_at, capture_id=capture,
                          rows_parsed=fewer.height, rows_stored=fewer.height)
    replaced = replace_capture_observations(con, record, capture, fewer, fewer.clear())
    assert replaced == len(OFFERINGS) * 2
    assert con.execute("SELECT count(*) FROM latest_price").fetchone()[0] == fewer.height
    assert_views_match_plain(con)
    # a new night: the re-confirmed capture is an older one now, seen on day 7, stored on day 1
    at = START + timedelta(days=9)
    land(con, "alpha", batch("alpha", "alpha", at, "9" * 64, rng), at, "9" * 64)
    assert con.execute("SELECT capture_id, observed_at, seen_at FROM capture_at($t)",
                       {"t": START + timedelta(days=8)}).fetchall() == [
        (captures[1][1], captures[1][0], START + timedelta(days=7))]
    assert_views_match_plain(con)


def test_failed_append_leaves_summaries_untouched(con: duckdb.DuckDBPyConnection) -> None:
    rng = random.Random(3)
    land(con, "alpha", batch("alpha", "alpha", START, "1" * 64, rng), START, "1" * 64)
    before = {t: table(con, t) for t in SUMMARY_TABLES}
    bad = batch("alpha", "alpha", START + timedelta(days=1), "2" * 64, rng).with_columns(
        pl.lit(None, pl.String).alias("offering"))  # NOT NULL in observation: the insert fails
    with pytest.raises(duckdb.Error):
        land(con, "alpha", bad, START + timedelta(days=1), "2" * 64)
    for name, frame in before.items():
        assert frame.equals(table(con, name)), name
    assert_views_match_plain(con)


def test_migration_fills_summaries_of_an_existing_warehouse(tmp_path: Path) -> None:
    """A warehouse at schema 3 with history gets its summary tables filled on upgrade."""
    con = connect(tmp_path / "w.duckdb")
    rng = random.Random(4)
    register_sources(con, [SourceInfo("alpha", "alpha", "api", "https://x.test", False)])
    for night in range(4):
        at = START + timedelta(days=night)
        land(con, "alpha", batch("alpha", "alpha", at, f"{night:064d}", rng), at,
             f"{night:064d}")
    expected = {t: table(con, t) for t in SUMMARY_TABLES}
    con.execute("DROP TABLE latest_observation; DROP TABLE daily_price; "
                "DROP TABLE daily_cheapest_segment; DROP TABLE price_change; "
                "DROP TABLE price_state; DELETE FROM schema_version WHERE version >= 4")
    con.close()
    con = connect(tmp_path / "w.duckdb")  # applies 004 on again, filling from observation
    for name, frame in expected.items():
        assert frame.equals(table(con, name)), name
    assert_views_match_plain(con)
    con.close()


def test_a_rebuild_a_month_at_a_time_keeps_days_at_month_and_year_ends(
        con: duckdb.DuckDBPyConnection) -> None:
    """`rebuild` recomputes daily_price a UTC month at a time: nights on both sides of the
    month and year ends (just before and just after midnight UTC, read in a session zone
    where those instants fall on other days) keep their UTC days and every moved price."""
    from warehouse.summaries import _months

    con.execute("SET TimeZone = 'America/Los_Angeles'")
    rng = random.Random(7)
    # two captures a day on each side of a month end: a day cut in two would price it twice
    moments = [datetime(2025, 11, 30, 23, 59, tzinfo=UTC), datetime(2025, 12, 1, 0, 0, tzinfo=UTC),
               datetime(2025, 12, 1, 23, 50, tzinfo=UTC), datetime(2025, 12, 31, 0, 10, tzinfo=UTC),
               datetime(2025, 12, 31, 23, 30, tzinfo=UTC), datetime(2026, 1, 1, 0, 30, tzinfo=UTC),
               datetime(2026, 1, 1, 18, 0, tzinfo=UTC), datetime(2026, 2, 2, 12, 0, tzinfo=UTC)]
    for n, at in enumerate(moments):
        land(con, "alpha", batch("alpha", "alpha", at, f"m{n:062d}", rng), at, f"m{n:062d}")
    assert [start.date().isoformat() for start, _ in _months(con)] == \
        ["2025-11-01", "2025-12-01", "2026-01-01", "2026-02-01"]
    days = {d for (d,) in con.execute("SELECT DISTINCT day FROM daily_price").fetchall()}
    assert {d.isoformat() for d in days} == \
        {"2025-11-30", "2025-12-01", "2025-12-31", "2026-01-01", "2026-02-02"}
    assert con.execute("SELECT count(*) FROM price_change").fetchone()[0] > 0
    assert_views_match_plain(con)


def test_a_rebuild_computes_the_day_tables_on_one_thread(con: duckdb.DuckDBPyConnection,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Their small INSERTs, on several threads, kept each thread's part of a row group in the
    transaction's memory (BENCHMARKS.md §20); the connection's threads come back after."""
    import warehouse.summaries as summaries

    rng = random.Random(3)
    for night in range(3):
        at = START + timedelta(days=night)
        land(con, "alpha", batch("alpha", "alpha", at, f"t{night:062d}", rng), at,
             f"t{night:062d}")
    threads_seen: list[int] = []
    real = summaries.refresh_days

    def refresh_days(connection: duckdb.DuckDBPyConnection, since: object) -> object:
        threads_seen.append(int(connection.execute(
            "SELECT current_setting('threads')").fetchone()[0]))
        return real(connection, since)

    monkeypatch.setattr(summaries, "refresh_days", refresh_days)
    con.execute("SET threads = 2")
    con.execute("BEGIN TRANSACTION")
    summaries.rebuild(con)
    con.execute("ROLLBACK")
    assert threads_seen == [1]
    assert con.execute("SELECT current_setting('threads')").fetchone()[0] == 2


def test_migration_16_fills_the_counted_moves_as_the_append_path_keeps_them(
        con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch) -> None:
    """016 makes daily_move from price_change and daily_source on an existing warehouse: the
    same rows the append path keeps, so no rebuild runs; moves of an aggregator hidden by a
    direct source are not among them."""
    rng = random.Random(5)
    for night in range(5):
        at = START + timedelta(days=night)
        land(con, "alpha", batch("alpha", "alpha", at, f"a{night:063d}", rng), at,
             f"a{night:063d}")
        land(con, "sky", batch("sky", "alpha", at, f"s{night:063d}", rng), at,
             f"s{night:063d}")
    kept = table(con, "daily_move")
    sky_moves = con.execute("SELECT count(*) FROM price_change WHERE source = 'sky'").fetchone()
    assert kept.height > 0 and sky_moves[0] > 0
    assert set(kept["source"]) == {"alpha"}
    con.execute("DROP TABLE daily_move; DELETE FROM schema_version WHERE version >= 16")
    path = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = "
                       "current_database()").fetchone()[0]
    con.close()
    import warehouse.summaries as summaries

    rebuilt: list[object] = []
    monkeypatch.setattr(summaries, "rebuild_committed", rebuilt.append)
    upgraded = connect(path)
    try:
        assert rebuilt == []
        assert table(upgraded, "daily_move").equals(kept)
        assert_views_match_plain(upgraded)
    finally:
        upgraded.close()
