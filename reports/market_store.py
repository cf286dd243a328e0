"""Keep the market_price tables (reports/market.sql) equal to what reports.market computes.

`update_market` runs after every refresh: it recomputes the days from the newest stored one
(today's value moves with each refresh) to the newest observed day, each day in its own
transaction, so running it twice changes nothing. `update_market_from` recomputes from a given
day on (a backfill or reparse changed that day: a day's value depends only on the prices
observed up to its end, so the days before it stand). `rebuild_market` recomputes every day.
Like reports.alerts, this is a report that keeps a record.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl

from reports.market import (
    MarketConfig,
    day_end,
    load_market_config,
    load_segments,
    market_at,
)
from reports.queries import table_exists
from warehouse.dialect import for_lake, on_lake
from warehouse.txn import retrying, write_transaction

__all__ = ["ensure_market_tables", "read_market", "read_provider_prices", "rebuild_market",
           "store_market_day", "update_market", "update_market_after_refresh",
           "update_market_from"]

MARKET_SQL = Path(__file__).with_name("market.sql")


def ensure_market_tables(con: duckdb.DuckDBPyConnection) -> None:
    sql = MARKET_SQL.read_text(encoding="utf-8")
    con.execute(for_lake(sql) if on_lake(con) else sql)  # a lake: no index (dialect)


def _insert(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame) -> None:
    if frame.height == 0:
        return
    con.register("_market_rows", frame.to_arrow())
    try:
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _market_rows")
    finally:
        con.unregister("_market_rows")


def store_market_day(con: duckdb.DuckDBPyConnection, day: date, *, now: datetime | None = None,
                     config: MarketConfig | None = None,
                     segments: dict[str, str] | None = None) -> int:
    """Recompute and replace one day's rows (as prices stood at the end of it). Rows written.
    On a lake, computed again when another writer committed first (warehouse.txn)."""
    now = now or datetime.now(UTC)

    def store() -> int:
        providers, market = market_at(con, day_end(day, now), config, segments)
        counts = {c: pl.Int32 for c in ("providers", "offers", "offerings", "carried_days")}
        with write_transaction(con):
            for table in ("market_price", "market_provider_price"):
                con.execute(f"DELETE FROM {table} WHERE day = $d", {"d": day})
            _insert(con, "market_price", market.with_columns(pl.lit(now).alias("computed_at"))
                    .cast({k: v for k, v in counts.items() if k in market.columns}))
            _insert(con, "market_provider_price", providers.cast(
                {k: v for k, v in counts.items() if k in providers.columns}))
        return market.height
    return retrying(store, what=f"market prices of {day}")


def _observed_days(con: duckdb.DuckDBPyConnection, now: datetime) -> tuple[date, date] | None:
    row = con.execute(
        "SELECT min(observed_at), max(observed_at) FROM scrape_run "
        "WHERE status IN ('success', 'unchanged') AND capture_id IS NOT NULL "
        "AND observed_at <= $now", {"now": now}).fetchone()
    if not row or row[0] is None:
        return None
    return row[0].astimezone(UTC).date(), row[1].astimezone(UTC).date()


def _days_with_prices(con: duckdb.DuckDBPyConnection, first: date, last: date,
                      now: datetime, config: MarketConfig) -> set[date]:
    """The days some source's prices are fresh on: a run stored or re-confirmed them at most
    carry_forward_days before (the market's own staleness rule, reports.market.market_offers).
    On the other days every offer is stale, so the day has no rows."""
    carry = timedelta(days=config.carry_forward_days)
    seen = con.execute(
        "SELECT DISTINCT observed_at FROM scrape_run WHERE status IN ('success', 'unchanged') "
        "AND capture_id IS NOT NULL AND observed_at <= $now "
        "AND observed_at >= $since", {"now": now, "since": datetime.combine(
            first - carry - timedelta(days=1), datetime.min.time(), UTC)}).fetchall()
    days: set[date] = set()
    for (observed_at,) in seen:
        day = observed_at.astimezone(UTC).date()
        days.update(day + timedelta(days=k) for k in range(config.carry_forward_days + 1))
    return {day for day in days if first <= day <= last}


def _fill(con: duckdb.DuckDBPyConnection, first: date, last: date, now: datetime,
          config: MarketConfig) -> list[date]:
    segments = load_segments()
    days = [first + timedelta(days=i) for i in range((last - first).days + 1)]
    priced = _days_with_prices(con, first, last, now, config)
    silent = [day for day in days if day not in priced]
    if silent:  # nothing to compute: only rows stored earlier to clear
        for table in ("market_price", "market_provider_price"):
            con.execute(f"DELETE FROM {table} WHERE list_contains($days, day)",
                        {"days": silent})
    for day in days:
        if day in priced:
            store_market_day(con, day, now=now, config=config, segments=segments)
    return days


def _last_day(observed_last: date, now: datetime, config: MarketConfig) -> date:
    # Carried-forward values go on for carry_forward_days after the last run, not past today.
    return min(now.astimezone(UTC).date(),
               observed_last + timedelta(days=config.carry_forward_days))


def update_market(con: duckdb.DuckDBPyConnection, *, now: datetime | None = None,
                  config: MarketConfig | None = None) -> list[date]:
    """Fill the days since the newest stored day (that day included). Returns the days."""
    ensure_market_tables(con)
    row = con.execute("SELECT max(day) FROM market_price").fetchone()
    return update_market_from(con, row[0] if row and row[0] is not None else date.min,
                              now=now, config=config)


def update_market_from(con: duckdb.DuckDBPyConnection, first_changed: date, *,
                       now: datetime | None = None,
                       config: MarketConfig | None = None) -> list[date]:
    """Recompute the days from `first_changed` (or the first observed day, if later) to the
    last one; the stored days before it are kept. Returns the days recomputed."""
    now = now or datetime.now(UTC)
    config = config or load_market_config()
    ensure_market_tables(con)
    observed = _observed_days(con, now)
    if observed is None:
        return []
    first, last = max(first_changed, observed[0]), _last_day(observed[1], now, config)
    return _fill(con, first, last, now, config) if first <= last else []


def rebuild_market(con: duckdb.DuckDBPyConnection, *, now: datetime | None = None,
                   config: MarketConfig | None = None) -> list[date]:
    """Recompute every day from the first observed one (e.g. after a backfill)."""
    now = now or datetime.now(UTC)
    config = config or load_market_config()
    ensure_market_tables(con)
    con.execute("DELETE FROM market_price")
    con.execute("DELETE FROM market_provider_price")
    observed = _observed_days(con, now)
    if observed is None:
        return []
    return _fill(con, observed[0], _last_day(observed[1], now, config), now, config)


def read_market(con: duckdb.DuckDBPyConnection, *, gpu_models: list[str] | None = None,
                since: date | None = None, until: date | None = None,
                segment: str | None = None) -> pl.DataFrame | None:
    """Stored market values (None when this warehouse has no market table yet)."""
    if not table_exists(con, "market_price"):
        return None
    return con.execute(
        """
        SELECT * EXCLUDE (computed_at) FROM market_price
        WHERE ($models IS NULL OR list_contains($models, gpu_model))
          AND ($since IS NULL OR day >= $since) AND ($until IS NULL OR day <= $until)
          AND ($segment IS NULL OR segment = $segment)
        ORDER BY day, gpu_model, segment <> 'all', segment
        """,
        {"models": gpu_models, "since": since, "until": until, "segment": segment},
    ).pl()


def read_provider_prices(con: duckdb.DuckDBPyConnection, days: list[date],
                         gpu_models: list[str] | None = None) -> pl.DataFrame | None:
    if not table_exists(con, "market_provider_price"):
        return None
    return con.execute(
        "SELECT * FROM market_provider_price WHERE list_contains($days, day) "
        "AND ($models IS NULL OR list_contains($models, gpu_model)) "
        "ORDER BY day, gpu_model, provider",
        {"days": days, "models": gpu_models},
    ).pl()


def update_market_after_refresh(con: duckdb.DuckDBPyConnection) -> list[date]:
    """The refresh's call: the night's prices are already committed, so a failure here is
    logged loudly and the refresh goes on (`gpuprices market --rebuild` repairs the table)."""
    import logging

    try:
        return update_market(con)
    except Exception:
        logging.getLogger("gpuprices.market").exception("market price update failed")
        return []
