"""The market price of a GPU-hour and its moves: a two-stage median over comparable offers.

Stage 1: each provider's median $/GPU-hour over its comparable offers (warehouse.semantic
OFFERS, default pricing set), so a provider with hundreds of regional rows gets one vote, like
a provider with one list price. Stage 2: the median of those across providers, with p25 and p75
of the provider medians, min and max = the lowest and highest counted offer, counts and a
dispersion figure (p75 - p25) / median; for all providers and per segment
(schemas/provider_segments.csv). A value that fails a rule of market.toml is withheld: stored
with its reason, never silently missing.

A MOVE between two days is measured over the providers quoting the GPU on both days (matched),
from the stored per-provider medians: a provider joining or leaving is a coverage change,
reported apart; a provider carried forward keeps its last seen price and is named. A move over
fewer matched providers than min_providers is withheld, like a market value.

A PLACE (warehouse.place: regions, geographies) gives the market of that place: the same two
stages over the offers placed there, computed when asked (the stored tables hold the market
everywhere); its moves compare the stage-one rows of both days computed for that place.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING

from contract import DEFAULT_PRICING
from warehouse.frames import sql_frame, temp_table
from warehouse.place import EVERYWHERE, Place
from warehouse.semantic import (
    ALL,
    MarketConfig,
    _default_config,
    bind,
    day_end,
    offers_params,
    offers_sql,
    placed,
)

if TYPE_CHECKING:  # frames where they are made: `explain market` reads rows without polars
    import duckdb
    import polars as pl

__all__ = ["MARKET", "MOVES", "PROVIDERS", "computed_market", "computed_market_query",
           "coverage_changes", "market_moves", "market_params", "read_market",
           "read_provider_prices", "stored_market"]

_STORED = "SELECT * FROM market_provider_price"

# Stage one: each provider's median of its comparable offers per GPU model (`{offers}`: the
# OFFERS query, or a table of its rows, of one moment), with its lowest and highest offer.
PROVIDERS = """
SELECT $day AS day, gpu_model, provider, segment,
       median(price_usd_per_gpu_hour) AS median_usd_per_gpu_hour,
       CAST(count(*) AS INTEGER) AS offers,
       CAST(count(DISTINCT offering) AS INTEGER) AS offerings,
       CAST(max(carried_days) AS INTEGER) AS carried_days,
       string_agg(DISTINCT source, ', ' ORDER BY source) AS sources,
       min(price_usd_per_gpu_hour) AS min_usd_per_gpu_hour,
       max(price_usd_per_gpu_hour) AS max_usd_per_gpu_hour
FROM ({offers}) WHERE excluded IS NULL
GROUP BY ALL ORDER BY gpu_model, provider
"""

# Stage two: across the providers of stage one (`{providers}`: PROVIDERS rows of one day),
# for all of them and per segment, with the rules of market.toml.
MARKET = """
WITH providers AS (
    SELECT * FROM ({providers})
), grouped AS (
    SELECT *, 'all' AS grp FROM providers
    UNION ALL
    SELECT *, segment AS grp FROM providers
), stats AS (
    SELECT gpu_model, grp AS segment, median(median_usd_per_gpu_hour) AS median_usd,
           min(min_usd_per_gpu_hour) AS min_usd,
           quantile_cont(median_usd_per_gpu_hour, 0.25) AS p25_usd,
           quantile_cont(median_usd_per_gpu_hour, 0.75) AS p75_usd,
           max(max_usd_per_gpu_hour) AS max_usd,
           count(*) AS providers, sum(offers) AS offers, sum(offerings) AS offerings,
           first(provider ORDER BY offerings DESC, provider) AS top_provider,
           max(offerings) AS top_offerings,
           list_sort(coalesce(list(provider) FILTER (WHERE carried_days > 0),
                              []::VARCHAR[])) AS carried_providers,
           CASE WHEN grp = 'all' THEN $min_providers ELSE $min_providers_segment END AS needed
    FROM grouped GROUP BY gpu_model, grp
), ruled AS (
    SELECT *, (p75_usd - p25_usd) / median_usd AS dispersion,
           offerings AS all_offerings, top_offerings / offerings AS top_share
    FROM stats
), reasoned AS (
    SELECT *, CASE
        WHEN providers < needed
            THEN format('only {{}} provider(s) quote it; the rule needs {{}}', providers, needed)
        WHEN top_share > $max_share
            THEN format('one provider ({{}}) lists {{}} of {{}} offerings ({{}}% > {{}}%)',
                        top_provider, top_offerings, all_offerings,
                        CAST(round(top_share * 100) AS BIGINT), $max_share_pct)
        WHEN dispersion > $max_dispersion
            THEN format('providers disagree: dispersion (p75-p25)/median {{}} > {{}}',
                        round(dispersion, 2), $max_dispersion_text)
        END AS withheld_reason
    FROM ruled
)
SELECT $day AS day, gpu_model, segment,
       CASE WHEN withheld_reason IS NULL THEN median_usd END AS market_usd_per_gpu_hour,
       median_usd AS median_usd_per_gpu_hour, min_usd AS min_usd_per_gpu_hour,
       p25_usd AS p25_usd_per_gpu_hour, p75_usd AS p75_usd_per_gpu_hour,
       max_usd AS max_usd_per_gpu_hour, CAST(providers AS INTEGER) AS providers,
       CAST(offers AS INTEGER) AS offers, dispersion, carried_providers, withheld_reason,
       $pricing_text AS pricing
FROM reasoned
ORDER BY gpu_model, segment <> 'all', segment
"""

# `{old}`, `{new}`: stage-one rows (the table, or those computed for a place).
MOVES = """
WITH old AS (SELECT * FROM ({old}) WHERE day = $old_day
), new AS (SELECT * FROM ({new}) WHERE day = $new_day
), matched AS (
    SELECT o.gpu_model, o.provider, o.median_usd_per_gpu_hour AS old_usd,
           n.median_usd_per_gpu_hour AS new_usd,
           greatest(o.carried_days, n.carried_days) AS carried
    FROM old o JOIN new n USING (gpu_model, provider)
    WHERE $models IS NULL OR list_contains($models, o.gpu_model)
), moves AS (
    SELECT gpu_model, CAST(count(*) AS INTEGER) AS matched, median(old_usd) AS old_usd,
           median(new_usd) AS new_usd,
           round(median((new_usd / old_usd - 1) * 100), 2) AS median_provider_pct,
           CAST(count(*) FILTER (WHERE new_usd < old_usd) AS INTEGER) AS providers_down,
           CAST(count(*) FILTER (WHERE new_usd > old_usd) AS INTEGER) AS providers_up,
           list_sort(coalesce(list(provider) FILTER (WHERE carried > 0), []::VARCHAR[]))
               AS carried
    FROM matched GROUP BY gpu_model
)
SELECT gpu_model, matched, old_usd AS old_usd_per_gpu_hour, new_usd AS new_usd_per_gpu_hour,
       CASE WHEN matched >= $min_providers
            THEN round((new_usd / old_usd - 1) * 100, 2) END AS pct_change,
       median_provider_pct, providers_down, providers_up, carried,
       CASE WHEN matched < $min_providers
            THEN format('only {{}} matched provider(s); the rule needs {{}}', matched,
                        $min_providers) END AS withheld_reason
FROM moves
ORDER BY pct_change NULLS LAST, gpu_model
"""

COVERAGE = """
WITH old AS (SELECT * FROM ({old}) WHERE day = $old_day
), new AS (SELECT * FROM ({new}) WHERE day = $new_day)
SELECT gpu_model, provider, segment, change, median_usd_per_gpu_hour FROM (
    SELECT n.gpu_model, n.provider, n.segment, 'joined' AS change, n.median_usd_per_gpu_hour
    FROM new n ANTI JOIN old o USING (gpu_model, provider)
    UNION ALL
    SELECT o.gpu_model, o.provider, o.segment, 'left' AS change, o.median_usd_per_gpu_hour
    FROM old o ANTI JOIN new n USING (gpu_model, provider))
WHERE $models IS NULL OR list_contains($models, gpu_model)
ORDER BY gpu_model, change, provider
"""


def market_params(day: date, config: MarketConfig | None = None,
                  segments: dict[str, str] | None = None,
                  place: Place = EVERYWHERE) -> dict[str, object]:
    """Every parameter MARKET and PROVIDERS read (the offers' ones included)."""
    config = config or _default_config()
    return {
        "day": day, "min_providers": config.min_providers,
        "min_providers_segment": config.min_providers_segment,
        "max_share": config.max_offering_share,
        "max_share_pct": round(config.max_offering_share * 100),
        "max_dispersion": config.max_dispersion,
        "max_dispersion_text": f"{config.max_dispersion}",
        "pricing_text": ",".join(DEFAULT_PRICING),
        **offers_params(DEFAULT_PRICING, config, segments, place),
    }


def computed_market(con: duckdb.DuckDBPyConnection, as_of: datetime,
                    config: MarketConfig | None = None, segments: dict[str, str] | None = None,
                    *, offers: str | None = None, place: Place = EVERYWHERE,
                    day: date | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(per-provider medians, market values) as the prices stood at `as_of`, computed now,
    over the offers in `place`, dated `day` (default as_of's day).

    `offers`: a relation already holding the OFFERS rows of that moment (default: computed).
    """
    (providers_sql, providers), (market_sql, market) = computed_market_query(
        con, as_of, config, segments, offers=offers, place=place, day=day)
    return sql_frame(con, providers_sql, providers), sql_frame(con, market_sql, market)


def computed_market_query(con: duckdb.DuckDBPyConnection, as_of: datetime,
                          config: MarketConfig | None = None,
                          segments: dict[str, str] | None = None, *, offers: str | None = None,
                          place: Place = EVERYWHERE, day: date | None = None
                          ) -> tuple[tuple[str, dict[str, object]], tuple[str, dict[str, object]]]:
    """computed_market's two questions, each as SQL and its parameters: the per-provider
    medians, then the market values."""
    params = {"as_of": as_of, **market_params(day or as_of.date(), config, segments, place)}
    providers_sql = PROVIDERS.format(offers=offers or offers_sql(place=placed(con, place)))
    market_sql = MARKET.format(providers=providers_sql)
    return ((providers_sql, bind(providers_sql, params)),
            (market_sql, bind(market_sql, params)))


def read_market(con: duckdb.DuckDBPyConnection, *, gpu_models: list[str] | None = None,
                since: date | None = None, until: date | None = None,
                segment: str | None = None) -> pl.DataFrame:
    """Stored market values (the market_price table, kept up by every append)."""
    return sql_frame(
        con, """
        SELECT * EXCLUDE (computed_at) FROM market_price
        WHERE ($models IS NULL OR list_contains($models, gpu_model))
          AND ($since IS NULL OR day >= $since) AND ($until IS NULL OR day <= $until)
          AND ($segment IS NULL OR segment = $segment)
        ORDER BY day, gpu_model, segment <> 'all', segment
        """,
        {"models": gpu_models, "since": since, "until": until, "segment": segment},
    )


def read_provider_prices(con: duckdb.DuckDBPyConnection, day: date,
                         gpu_models: list[str] | None = None) -> pl.DataFrame:
    """Stored stage-one rows of one day."""
    return sql_frame(
        con, "SELECT * FROM market_provider_price WHERE day = $day "
        "AND ($models IS NULL OR list_contains($models, gpu_model)) ORDER BY gpu_model, provider",
        {"day": day, "models": gpu_models})


def stored_market(con: duckdb.DuckDBPyConnection, day: date, *,
                  gpu_models: list[str] | None = None, segment: str | None = ALL,
                  now: datetime | None = None,
                  place: Place = EVERYWHERE) -> tuple[pl.DataFrame, bool]:
    """(market values of `day`, stored?): the stored rows, else (a day the table does not
    hold, e.g. before the first append of this code, or a place: the table holds the market
    everywhere) the same SQL computed at the day's end."""
    if place.everywhere:
        stored = read_market(con, gpu_models=gpu_models, since=day, until=day, segment=segment)
        if stored.height:
            return stored, True
    _, market = computed_market(con, day_end(day, now), place=place, day=day)
    import polars as pl

    if gpu_models:
        market = market.filter(pl.col("gpu_model").is_in(gpu_models))
    if segment:
        market = market.filter(pl.col("segment") == segment)
    return market, False


def _stage_one(con: duckdb.DuckDBPyConnection, old_day: date, new_day: date, place: Place,
               now: datetime | None) -> tuple[str, str]:
    """The two stage-one relations MOVES and COVERAGE compare: the stored table, or (a place)
    the rows computed for it at each day's end, registered on `con`."""
    if place.everywhere:
        return _STORED, _STORED
    names = []
    for which, day in (("old", old_day), ("new", new_day)):
        providers, _ = computed_market(con, day_end(day, now), place=place, day=day)
        name = f"_{which}_provider_price"
        temp_table(con, name, providers)  # read by the comparison's joins more than once
        names.append(f"SELECT * FROM {name}")
    return names[0], names[1]


def _compare(con: duckdb.DuckDBPyConnection, sql: str, old_day: date, new_day: date,
             place: Place, now: datetime | None, params: dict[str, object]) -> pl.DataFrame:
    old, new = _stage_one(con, old_day, new_day, place, now)
    try:
        return sql_frame(con, sql.format(old=old, new=new),
                         {"old_day": old_day, "new_day": new_day, **params})
    finally:
        if not place.everywhere:
            con.execute("DROP TABLE IF EXISTS temp._old_provider_price")
            con.execute("DROP TABLE IF EXISTS temp._new_provider_price")


def market_moves(con: duckdb.DuckDBPyConnection, old_day: date, new_day: date, *,
                 gpu_models: list[str] | None = None, config: MarketConfig | None = None,
                 place: Place = EVERYWHERE, now: datetime | None = None) -> pl.DataFrame:
    """Per GPU model quoted on both days: the median over matched providers, old -> new, the
    change in % (NULL when withheld: fewer matched providers than min_providers), the median
    of each matched provider's own change, and the providers carried forward."""
    config = config or _default_config()
    return _compare(con, MOVES, old_day, new_day, place, now,
                    {"models": gpu_models, "min_providers": config.min_providers})


def coverage_changes(con: duckdb.DuckDBPyConnection, old_day: date, new_day: date, *,
                     gpu_models: list[str] | None = None, place: Place = EVERYWHERE,
                     now: datetime | None = None) -> pl.DataFrame:
    """Providers that started or stopped quoting a GPU model between the two days."""
    return _compare(con, COVERAGE, old_day, new_day, place, now, {"models": gpu_models})
