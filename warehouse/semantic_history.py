"""THE cheapest-per-day question: a GPU's cheapest comparable offer on each observed day, with
where it came from, as one SQL statement (history_query) that `history`'s table prints without
polars (start-up: issue 23) and every frame of it reads (cheapest_history, the report's chart,
the API).

Days before today are read from daily_cheapest (default pricing set, every provider,
everywhere: kept by warehouse.semantic_daily in each append's transaction) or computed the
same way, day by day at each day's end (another pricing set, a few providers, a place);
today's point is the live cheapest at `now` (the answer `cheapest` gives).
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

from contract import DEFAULT_PRICING
from warehouse.frames import rounded_sql, sql_frame
from warehouse.place import EVERYWHERE, Place
from warehouse.semantic import CHEAPEST, OFFER_ORDER, bind, day_end, offers_query, pricing_set

if TYPE_CHECKING:
    import duckdb
    import polars as pl

__all__ = ["HISTORY_POINTS", "cheapest_history", "drop_computed", "history_query",
           "points_query", "segment_history"]

# A point's columns and their types (one type whichever table or query a row comes from).
_POINT = ("$day::DATE AS day, gpu_model::VARCHAR AS gpu_model, "
          "price_usd_per_gpu_hour::DOUBLE AS price_usd_per_gpu_hour, "
          "provider::VARCHAR AS provider, offering::VARCHAR AS offering, "
          "region::VARCHAR AS region, pricing::VARCHAR AS pricing, "
          "gpu_count::DOUBLE AS gpu_count, price_usd_per_hour::DOUBLE AS price_usd_per_hour, "
          "source::VARCHAR AS source, capture_id::VARCHAR AS capture_id, "
          "observed_at::TIMESTAMPTZ AS observed_at")
_POINT_TYPES = ("day DATE, gpu_model VARCHAR, price_usd_per_gpu_hour DOUBLE, provider VARCHAR, "
                "offering VARCHAR, region VARCHAR, pricing VARCHAR, gpu_count DOUBLE, "
                "price_usd_per_hour DOUBLE, source VARCHAR, capture_id VARCHAR, "
                "observed_at TIMESTAMPTZ")
_STORED = f"""
SELECT {_POINT.replace("$day::DATE", "day::DATE")} FROM daily_cheapest
WHERE day BETWEEN $since AND $until AND day < $today AND list_contains($models, gpu_model)
"""
# One day's cheapest of another pricing set, a few providers or a place: computed at the
# day's end into a temporary table (a read-only warehouse holds temporary tables too).
_COMPUTED = "_history_days"
# `{rows}`: the points of every day; `{keys}`: day, or day and gpu_model. The cheapest of a
# day in the offers' order; offers of several models tying on it are taken by model.
_PICK = f"""
SELECT * FROM ({{rows}})
QUALIFY row_number() OVER (PARTITION BY {{keys}} ORDER BY {", ".join(OFFER_ORDER)}, gpu_model)
    = 1
ORDER BY {{keys}}
"""
# What `history` shows of each point: the price rounded to 4 decimals as polars rounds
# (rounded_sql), the capture's id shortened. `{history}`: history_query's SQL.
HISTORY_POINTS = f"""
SELECT day, {rounded_sql("price_usd_per_gpu_hour", 4)} AS price_usd_per_gpu_hour,
       gpu_model, provider, offering, region, pricing, source, left(capture_id, 12) AS capture,
       observed_at
FROM ({{history}})
"""


def history_query(con: duckdb.DuckDBPyConnection, gpu_models: list[str], *, since: date,
                  until: date, pricing: tuple[str, ...] | None = None,
                  providers: list[str] | None = None, per_model: bool = False,
                  now: datetime | None = None, place: Place = EVERYWHERE
                  ) -> tuple[str, dict[str, object]]:
    """The SQL and parameters of the cheapest comparable offer of `gpu_models` per observed
    day from `since` to `until` (per GPU model with `per_model`, else the cheapest of the
    models that day), in `pricing` (default set), of `providers` (None: all) and `place`.
    Days another pricing set, provider list or place asks for are computed first, on `con`,
    into a temporary table the SQL reads (dropped by the next question, or the connection's
    end)."""
    now = now or datetime.now(UTC)
    today = now.astimezone(UTC).date()
    chosen = pricing_set(pricing)
    params: dict[str, object] = {"since": since, "until": until, "today": today,
                                 "models": list(gpu_models)}
    if chosen == DEFAULT_PRICING and not providers and place.everywhere:
        parts = [_STORED]
    else:
        _compute_days(con, gpu_models, since, until, today, chosen, providers, now, place)
        parts = [f"SELECT * FROM {_COMPUTED}"]
    if since <= today <= until:
        offers, live = offers_query(con, now, chosen, place=place, gpu_models=gpu_models)
        parts.append(f"SELECT {_POINT.replace('$day', '$today')} "
                     f"FROM ({CHEAPEST.format(offers=offers)})")
        params |= live | {"only": providers or None}
    sql = _PICK.format(rows=" UNION ALL ".join(parts),
                       keys="day, gpu_model" if per_model else "day")
    return sql, bind(sql, params)


def _compute_days(con: duckdb.DuckDBPyConnection, gpu_models: list[str], since: date,
                  until: date, today: date, pricing: tuple[str, ...],
                  providers: list[str] | None, now: datetime, place: Place) -> None:
    """The cheapest of `gpu_models` per GPU model on each observed day before today, as the
    prices stood at its end, into the temporary table _COMPUTED."""
    offers, params = offers_query(con, now, pricing, place=place, gpu_models=gpu_models)
    cheapest = f"SELECT {_POINT} FROM ({CHEAPEST.format(offers=offers)})"
    con.execute(f"CREATE OR REPLACE TEMP TABLE {_COMPUTED} ({_POINT_TYPES})")
    days = con.execute("SELECT DISTINCT day FROM daily_price WHERE day BETWEEN $since "
                       "AND $until AND day < $today ORDER BY day",
                       {"since": since, "until": until, "today": today}).fetchall()
    insert = f"INSERT INTO {_COMPUTED} {cheapest}"
    for (day,) in days:
        con.execute(insert, bind(insert, params | {"as_of": day_end(day, now), "day": day,
                                                   "only": providers or None}))


def points_query(con: duckdb.DuckDBPyConnection, gpu_models: list[str], *, since: date,
                 until: date, pricing: tuple[str, ...] | None = None,
                 providers: list[str] | None = None, now: datetime | None = None,
                 place: Place = EVERYWHERE) -> tuple[str, dict[str, object]]:
    """history_query's points as `history` shows them (HISTORY_POINTS), oldest first."""
    sql, params = history_query(con, gpu_models, since=since, until=until, pricing=pricing,
                                providers=providers, now=now, place=place)
    return HISTORY_POINTS.format(history=sql) + "ORDER BY day", params


def cheapest_history(con: duckdb.DuckDBPyConnection, gpu_models: list[str], *, since: date,
                     until: date, pricing: tuple[str, ...] | None = None,
                     providers: list[str] | None = None, per_model: bool = False,
                     now: datetime | None = None, place: Place = EVERYWHERE) -> pl.DataFrame:
    """history_query's rows as a frame (day, gpu_model, price_usd_per_gpu_hour, provider,
    offering, region, pricing, gpu_count, price_usd_per_hour, source, capture_id,
    observed_at)."""
    import polars as pl

    sql, params = history_query(con, gpu_models, since=since, until=until, pricing=pricing,
                                providers=providers, per_model=per_model, now=now, place=place)
    try:
        return sql_frame(con, sql, params).cast({"observed_at": pl.Datetime("us", "UTC")})
    finally:
        drop_computed(con)


def drop_computed(con: duckdb.DuckDBPyConnection) -> None:
    """Drop the days history_query computed on `con`, once its rows are read."""
    con.execute(f"DROP TABLE IF EXISTS temp.main.{_COMPUTED}")


def segment_history(con: duckdb.DuckDBPyConnection, gpu_models: list[str], *,
                    until: date) -> pl.DataFrame:
    """daily_cheapest_segment rows up to `until`: the cheapest comparable offer per GPU model,
    provider segment and observed day (the board's history lines)."""
    return sql_frame(
        con, "SELECT gpu_model, segment, day, price_usd_per_gpu_hour, provider, offering, "
        "source "
        "FROM daily_cheapest_segment WHERE day <= $until AND list_contains($models, gpu_model) "
        "ORDER BY gpu_model, segment, day", {"until": until, "models": gpu_models})
