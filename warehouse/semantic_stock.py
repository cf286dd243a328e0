"""AVAILABILITY AS A SERIES: whether a provider's GPU could be rented in a region, run by run.

A source that says whether an offer can be rented now (`available`), how many GPUs are free
(`gpus_available`) or how much stock there is (`stock_level`) says it again at every run; each
confirming run (a new capture, or an unchanged one seen again) is one observation of every
provider x GPU model x region (a "key") its source reports stock for. Prices are not read.

The rules, once:
- which keys there are: the regions a source reported stock for in the window or in the
  KEY_LOOKBACK_DAYS before it (a region sold out for the whole window is still a region, at
  0 %; one not listed for longer is gone, not out of stock);
- who speaks for a key's stock: of the sources that report availability for the provider's
  GPU in that time, the best by source precedence (source_rank: API, page, catalog); an
  aggregator only for a provider that has no direct source;
- the offers that count: those of the pricing set that are comparable in themselves (a known
  GPU, a whole offering, whole GPUs: the macro excluded_because without its availability and
  freshness rules), in the place asked for (warehouse.place);
- a key at one run: in stock when any of its offers is; out of stock when none is, or when
  the run's capture no longer lists it (a sold-out Vast.ai region or Lambda region is simply
  absent); unknown when its offers say nothing (not counted). Its stock state is the macro
  stock_state (views.sql) over the offers' availability, level and GPUs free;
- a `global` row that was never in stock, for a provider x GPU whose source also names
  regions, is the source's way of saying "no region has it" (Lambda), not a region: the named
  regions are out of stock at those runs, and it is not a key of its own;
- share in stock = runs in stock / runs with a known state, within the window (`since`,
  `as_of`]; last in stock = the newest run in stock, whenever it was; the state now is the
  last run's, `unknown` once that run is older than the freshness limit (stale_after()).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from contract import DEFAULT_PRICING, IN_STOCK
from warehouse.frames import sql_frame
from warehouse.place import EVERYWHERE, Place
from warehouse.semantic import bind, placed, pricing_set

if TYPE_CHECKING:  # frames where they are made: `availability` prints rows without polars
    import duckdb
    import polars as pl

__all__ = ["AVAILABILITY", "HARD_TO_GET_SHARE", "IN_STOCK", "KEY_LOOKBACK_DAYS", "availability",
           "availability_query", "hard_to_get"]

# A key in stock for less than this share of the window's runs is hard to get (the report).
HARD_TO_GET_SHARE = 0.5
# A region listed this many days before the window still counts as one of the provider's.
KEY_LOOKBACK_DAYS = 30

# Only the runs of the window and of the KEY_LOOKBACK_DAYS before it are read (`runs`), so a
# question costs the same at any history size; what the rules need from earlier runs is one
# date, the last in stock of a key not in stock since, looked up for those keys alone.
_OFFERS_THAT_COUNT = """
    ($models IS NULL OR list_contains($models, {o}.gpu_model))
    AND excluded_because({o}.gpu_model, {o}.gpu_only, {o}.gpu_count, {o}.pricing, $pricing,
                         NULL, false) IS NULL"""
# When each capture the runs `{runs}` saw was stored: its first successful run (capture_seen's
# rule, views.sql), looked up for those captures alone.
_STORED = """SELECT c.source, c.capture_id, min(s.observed_at) AS stored_at
    FROM (SELECT DISTINCT source, capture_id FROM {runs}) c
    JOIN scrape_run s ON s.source = c.source AND s.capture_id = c.capture_id
    WHERE s.status = 'success'
    GROUP BY c.source, c.capture_id"""
AVAILABILITY = """
WITH runs AS (
    SELECT source, observed_at AS seen_at, capture_id
    FROM scrape_run
    WHERE confirms(status) AND capture_id IS NOT NULL
      AND observed_at > $since - to_days($lookback) AND observed_at <= $as_of
), stored AS (  -- when each capture read was stored, for the captures the window's runs
    -- saw, not grouped over every run
    """ + _STORED.format(runs="runs") + """
), captures AS (  -- each a small number: the rows below carry it, not a 64-character id
    SELECT c.*, s.stored_at, CAST(row_number() OVER () AS INTEGER) AS cap
    FROM (SELECT DISTINCT source, capture_id FROM runs) c
    LEFT JOIN stored s USING (source, capture_id)
), run_caps AS (
    SELECT r.*, c.cap FROM runs r JOIN captures c USING (source, capture_id)
), before_window AS (  -- per capture, its last run before the window
    SELECT cap, max(seen_at) AS seen_at FROM run_caps WHERE seen_at <= $since GROUP BY cap
), recent AS (
    SELECT o.source, o.provider, o.gpu_model, o.region, c.cap, o.available,
           o.gpus_available, o.stock_level
    FROM observation o
    JOIN captures c ON o.source = c.source AND o.capture_id = c.capture_id
                   AND o.observed_at = c.stored_at
    WHERE """ + _OFFERS_THAT_COUNT.format(o="o") + """
), direct AS (
    SELECT DISTINCT provider FROM source WHERE NOT aggregator
), speaking AS (
    SELECT r.provider, r.gpu_model,
           first(r.source ORDER BY source_rank(src.aggregator, src.kind), r.source) AS source
    FROM recent r JOIN source src USING (source)
    WHERE r.available IS NOT NULL
      AND (NOT src.aggregator OR r.provider NOT IN (SELECT provider FROM direct))
    GROUP BY r.provider, r.gpu_model
), spoken AS (
    SELECT r.* FROM recent r SEMI JOIN speaking USING (provider, gpu_model, source)
), reported AS (  -- the keys; a run before the window counts only as the last one in
    -- stock (`in_stock_before`): a key is in stock at a run when one of its offers in the
    -- run's capture is available
    SELECT r.provider, r.gpu_model, r.region, r.source,
           coalesce(bool_or(r.available), false) AS ever_in_stock,
           max(b.seen_at) FILTER (WHERE r.available) AS in_stock_before
    FROM recent r SEMI JOIN speaking USING (provider, gpu_model, source)
    LEFT JOIN before_window b ON b.cap = r.cap
    WHERE r.available IS NOT NULL AND {place}
    GROUP BY r.provider, r.gpu_model, r.region, r.source
), regional AS (  -- the GPUs a source names regions for (read once, not once per key)
    SELECT DISTINCT provider, gpu_model, source FROM recent WHERE region <> 'global'
), keys AS (  -- each key numbered: the rows below group by the number, not four names
    SELECT *, CAST(row_number() OVER () AS INTEGER) AS key_id
    FROM (SELECT k.* EXCLUDE (ever_in_stock) FROM reported k
          WHERE NOT (k.region = 'global' AND NOT k.ever_in_stock
                     AND (k.provider, k.gpu_model, k.source) IN (SELECT * FROM regional)))
), observed AS (  -- every run of the window, per key: what its capture says of the key
    SELECT k.key_id, w.seen_at,
           count(x.cap) AS listed, count(x.available) AS known,
           coalesce(bool_or(x.available), false) AS any_in_stock,
           count(*) FILTER (WHERE x.available) AS in_stock_offers,
           count(*) FILTER (WHERE x.available AND x.stock_level = 'low') AS low_offers,
           count(x.gpus_available) FILTER (WHERE x.available) AS counted_offers,
           sum(x.gpus_available) FILTER (WHERE x.available) AS free
    FROM keys k JOIN run_caps w ON w.source = k.source AND w.seen_at > $since
    LEFT JOIN spoken x ON x.source = k.source AND x.cap = w.cap
         AND x.provider = k.provider AND x.gpu_model = k.gpu_model AND x.region = k.region
    GROUP BY k.key_id, w.seen_at
), states AS (
    SELECT *,
           CASE WHEN listed = 0 THEN false WHEN known > 0 THEN any_in_stock END AS in_stock,
           CASE WHEN in_stock_offers > 0 AND low_offers = in_stock_offers THEN 'low' END
               AS level,
           CASE WHEN in_stock_offers > 0 AND counted_offers = in_stock_offers THEN free END
               AS gpus_free
    FROM observed
), series AS (  -- the last run, its state and GPUs free are the window's: a key shown
    -- has runs in it, and they are its newest
    SELECT k.provider, k.gpu_model, k.region, k.source,
           s.* EXCLUDE (key_id, last_in_stock),
           greatest(s.last_in_stock, k.in_stock_before) AS last_in_stock
    FROM (SELECT key_id, CAST(count(in_stock) AS INTEGER) AS observations,
                 CAST(count(*) FILTER (WHERE in_stock) AS INTEGER) AS in_stock_observations,
                 max(seen_at) FILTER (WHERE in_stock) AS last_in_stock,
                 max(seen_at) AS last_seen,
                 arg_max(stock_state(in_stock, level, gpus_free), seen_at) AS last_state,
                 arg_max(gpus_free, seen_at) AS gpus_free
          FROM states GROUP BY key_id) s
    JOIN keys k USING (key_id)
), not_lately AS (  -- keys not in stock at any run read: when were they last, before those?
    SELECT provider, gpu_model, region, source FROM series
    WHERE last_in_stock IS NULL AND observations > 0
), earlier_runs AS (  -- the runs before those, of these keys' sources alone
    SELECT s.source, s.observed_at AS seen_at, s.capture_id
    FROM (SELECT DISTINCT source FROM not_lately) k JOIN scrape_run s USING (source)
    WHERE confirms(s.status) AND s.capture_id IS NOT NULL
      AND s.observed_at <= $since - to_days($lookback)
), earlier_stored AS (  -- as `stored`, for these runs' captures
    """ + _STORED.format(runs="earlier_runs") + """
), earlier AS (
    SELECT k.provider, k.gpu_model, k.region, k.source, max(w.seen_at) AS last_in_stock
    FROM not_lately k
    JOIN earlier_runs w ON w.source = k.source
    JOIN earlier_stored c ON c.source = w.source AND c.capture_id = w.capture_id
    JOIN observation x ON x.source = w.source AND x.capture_id = w.capture_id
         AND x.observed_at = c.stored_at AND x.provider = k.provider
         AND x.gpu_model = k.gpu_model AND x.region = k.region
    WHERE x.available AND """ + _OFFERS_THAT_COUNT.format(o="x") + """
    GROUP BY ALL
)
SELECT gpu_model, provider, region, observations, in_stock_observations,
       round(in_stock_observations / nullif(observations, 0), 4) AS share_in_stock,
       coalesce(s.last_in_stock, e.last_in_stock) AS last_in_stock,
       CASE WHEN last_seen < $as_of - stale_after() THEN 'unknown' ELSE last_state END
           AS state,
       gpus_free, last_seen, source
FROM series s LEFT JOIN earlier e USING (provider, gpu_model, region, source)
WHERE observations > 0
ORDER BY gpu_model, provider, region
"""


def availability(con: duckdb.DuckDBPyConnection, *, as_of: datetime, since: datetime,
                 gpu_models: list[str] | None = None, pricing: tuple[str, ...] | None = None,
                 place: Place = EVERYWHERE) -> pl.DataFrame:
    """Per GPU model x provider x region whose source reports stock in (since, as_of]: runs
    observed, runs in stock, the share in stock, the last run in stock, the state now, the
    GPUs free now (where counted), the last run and the source (see the module docstring)."""
    return sql_frame(con, *availability_query(con, as_of=as_of, since=since,
                                              gpu_models=gpu_models, pricing=pricing,
                                              place=place))


def availability_query(con: duckdb.DuckDBPyConnection, *, as_of: datetime, since: datetime,
                       gpu_models: list[str] | None = None,
                       pricing: tuple[str, ...] | None = None, place: Place = EVERYWHERE
                       ) -> tuple[str, dict[str, object]]:
    """AVAILABILITY's SQL and parameters (`availability` reads them as a frame)."""
    chosen = pricing_set(pricing or DEFAULT_PRICING)
    sql = AVAILABILITY.format(place=placed(con, place).sql("r.provider", "r.region"))
    return sql, bind(sql, {
        "as_of": as_of, "since": since, "models": gpu_models, "pricing": list(chosen),
        "lookback": KEY_LOOKBACK_DAYS, **place.params()})


def hard_to_get(series: pl.DataFrame, share: float = HARD_TO_GET_SHARE) -> pl.DataFrame:
    """The keys of an `availability` frame that were in stock for less than `share` of the
    window, or are not in stock now (out of stock or low), least available first."""
    import polars as pl

    return series.filter((pl.col("share_in_stock") < share)
                         | pl.col("state").is_in(["out_of_stock", "low"])).sort(
        "share_in_stock", "gpu_model", "provider", "region")
