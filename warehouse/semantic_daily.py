"""The semantic layer's day-by-day tables, and the histories read from them.

Kept up by warehouse.summaries.after_append inside every append's transaction (one step for
every derived table), from the first day the append changed to the last day with prices:

- daily_source: which source speaks for each provider x GPU model x pricing at the end of
  each observed day (source precedence);
- daily_move: the price moves that count: the moves (price_change) of the source that spoke
  for the offering that day, which the price_move view reads;
- daily_cheapest_segment: the cheapest comparable offer (warehouse.semantic OFFERS, default
  pricing set) per GPU model and provider segment, per observed day, with its provenance (the
  view daily_cheapest is its cheapest per GPU model and day);
- market_price, market_provider_price: the market price (semantic_market MARKET) of every day
  on which some source's prices are fresh, carried-forward days included.

A day's values are the prices as they stood at its end (or at `now`, for today), so the days
before the first changed day stand. warehouse.semantic_history reads daily_cheapest.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta

import duckdb

from contract import STALE_AFTER_H
from warehouse.semantic import (
    OFFER_ORDER,
    MarketConfig,
    bind,
    day_end,
    offers_sql,
)
from warehouse.semantic_market import MARKET, PROVIDERS, market_params

__all__ = ["DERIVED_TABLES", "TEMP_TABLE_DAYS", "WINDOW_DAYS", "refresh_days"]

DERIVED_TABLES = ("daily_source", "daily_move", "daily_cheapest_segment", "market_price",
                  "market_provider_price")
# Up to this many days, refresh_days keeps each day's offers in a temporary table.
TEMP_TABLE_DAYS = 7
# A price counts on the day it was seen and, carried forward, up to this many days after.
WINDOW_DAYS = math.ceil(STALE_AFTER_H / 24)
_ORDER = ", ".join(OFFER_ORDER)
_CHEAPEST_ROWS = f"""
    INSERT INTO daily_cheapest_segment {{with_offers}}
    SELECT $day, gpu_model, segment, price_usd_per_gpu_hour, provider, offering, region,
           pricing, gpu_count, price_usd_per_hour, source, capture_id, observed_at,
           count(*) OVER (PARTITION BY gpu_model, segment)
    FROM _day_offers WHERE excluded IS NULL
    QUALIFY row_number() OVER (PARTITION BY gpu_model, segment ORDER BY {_ORDER}) = 1
"""
# The moves that count, from `$since` to `$today`: a source's move counts on a day it spoke
# for the offering (daily_source). One statement after the days' daily_source rows.
_COUNTED_MOVES = """
    INSERT INTO daily_move
    SELECT c.* FROM price_change c
    SEMI JOIN (SELECT * FROM daily_source WHERE day BETWEEN $since AND $today) d
        ON d.day = c.changed_on AND d.source = c.source AND d.provider = c.provider
        AND d.gpu_model = c.gpu_model AND d.pricing = c.pricing
    WHERE c.changed_on BETWEEN $since AND $today
    ORDER BY c.changed_on
"""
_DAY_COLUMNS = ("provider, gpu_model, pricing, source, segment, offering, region, gpu_count, "
                "price_usd_per_hour, price_usd_per_gpu_hour, capture_id, observed_at, "
                "carried_days, excluded")
def _days(con: duckdb.DuckDBPyConnection, since: date, today: date) -> tuple[set[date], set[date]]:
    """(observed days, priced days) from `since` to `today`: the days some source has prices
    for (daily_price), and the days some source's prices are fresh on: a confirming run saw
    them that day or at most WINDOW_DAYS before (on other days every offer is stale)."""
    first = since - timedelta(days=WINDOW_DAYS) if since > date.min + timedelta(days=7) \
        else date.min
    rows = con.execute(
        "SELECT true, day FROM (SELECT DISTINCT day FROM daily_price "
        "                       WHERE day BETWEEN $since AND $today) "
        "UNION ALL "
        "SELECT false, seen FROM (SELECT DISTINCT utc_day(observed_at) AS seen FROM scrape_run "
        "    WHERE confirms(status) AND capture_id IS NOT NULL "
        "    AND utc_day(observed_at) BETWEEN $first AND $today)",
        {"since": since, "first": first, "today": today}).fetchall()
    observed = {day for is_observed, day in rows if is_observed}
    priced = {day + timedelta(days=k) for is_observed, day in rows if not is_observed
              for k in range(WINDOW_DAYS + 1) if since <= day + timedelta(days=k) <= today}
    return observed, priced


def refresh_days(con: duckdb.DuckDBPyConnection, since: date | None, *,
                 now: datetime | None = None, config: MarketConfig | None = None,
                 segments: dict[str, str] | None = None) -> list[date]:
    """Recompute the day-by-day tables from `since` (None: from the start); the caller holds
    the transaction. Returns the days recomputed."""
    now = now or datetime.now(UTC)
    today = now.astimezone(UTC).date()
    since = since or date.min
    for table in DERIVED_TABLES:
        con.execute(f"DELETE FROM {table} WHERE day >= $d", {"d": since})
    observed, priced = _days(con, since, today)
    params = market_params(today, config, segments)
    # One materialised read of the day's offers (every current row, with why it is not
    # comparable), the columns the four tables need; each table is then a small query on it,
    # and the market value is made from the stored stage one.
    offers = f"SELECT {_DAY_COLUMNS} FROM ({offers_sql()})"
    providers_sql = PROVIDERS.format(offers="SELECT * FROM _day_offers")
    market_sql = MARKET.format(providers="SELECT * FROM market_provider_price WHERE day = $day")
    days = sorted(observed | priced)
    # A few days (an append): each day's offers once, in a temporary table. Many days (a
    # rebuild): the offers in each statement (WITH ... MATERIALIZED), as a transaction keeps
    # every version of a temporary table it replaced until it commits (a year of 14k offers:
    # 4.2 GB; ten years do not fit in memory).
    in_table = len(days) <= TEMP_TABLE_DAYS
    for day in days:
        params["day"], params["as_of"] = day, day_end(day, now)
        if in_table:
            con.execute(f"CREATE OR REPLACE TEMP TABLE _day_offers AS {offers}",
                        bind(offers, params))
        with_offers = "" if in_table else f"WITH _day_offers AS MATERIALIZED ({offers}) "
        statements = []
        if day in observed:
            statements += ["INSERT INTO daily_source " + with_offers + "SELECT DISTINCT $day, "
                           "provider, gpu_model, pricing, source FROM _day_offers",
                           _CHEAPEST_ROWS.format(with_offers=with_offers)]
        if day in priced:
            statements += [f"INSERT INTO market_provider_price BY NAME {with_offers}"
                           f"{providers_sql}",
                           f"INSERT INTO market_price BY NAME SELECT *, $now AS computed_at "
                           f"FROM ({market_sql})"]
        for sql in statements:
            con.execute(sql, bind(sql, {**params, "now": now}))
    if days and in_table:
        con.execute("DROP TABLE _day_offers")
    con.execute(_COUNTED_MOVES, {"since": since, "today": today})
    return days
