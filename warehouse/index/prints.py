"""What the index reads from the warehouse for one fixing: each provider's print per series,
and the raw captures standing at the fixing time.

The offers are the semantic layer's (warehouse.semantic OFFERS at `as_of`: source precedence,
announced prices, the comparable-offer rule) with two differences, both because the index has
screens of its own that flag instead of dropping (warehouse/index/engine.py):
- the market price's outlier fences and the landing-time jump flag do not apply (the index's
  plausibility band, jump and own-outlier screens judge each print, and keep it with its flag);
- only fresh offers count (their source was seen on the fixing's day): a provider missing a
  day is carried forward from the index's own record, not from the warehouse.

A SERIES is one GPU model x kind (on_demand, spot, reserved by term) x scope: all providers,
one provider segment, or one geography (schemas.regions.geo_of of the offer's region). A
provider's PRINT in a series is the median $/GPU-hour of its offers there (one vote per
provider, however many regional rows it lists), with the offers' sources and capture ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import duckdb
import polars as pl

from schemas.regions import with_geo
from warehouse.frames import sql_frame
from warehouse.index.params import IndexParams
from warehouse.semantic import ALL, bind, offers_query

__all__ = ["INPUTS_SQL", "PRINT_SCHEMA", "SERIES_KEY", "SeriesScope", "candidate_offers",
           "day_inputs", "day_prints", "prints_of"]

SERIES_KEY = ("gpu_model", "kind", "term_months", "segment", "geo")


@dataclass(frozen=True, slots=True)
class SeriesScope:
    """The series a day not fixed yet is computed for (None: any): a series' fixing reads its
    own prints and earlier votes alone, and the plausibility band comes from the day's
    all-provider prints of its model and kind, read whatever the scope. So a scoped day is
    the whole day's fixings of those series (`index` shows the on-demand ones of every
    provider and place: 71 of 1,470 series at 50 M observations)."""

    kind: str | None = None
    segment: str | None = None
    geo: str | None = None

    def keeps(self, key: tuple[str, str, int, str, str]) -> bool:
        """Is the series `key` (SERIES_KEY order) in scope?"""
        return all(want is None or want == got
                   for want, got in ((self.kind, key[1]), (self.segment, key[3]),
                                     (self.geo, key[4])))


# The market's own verdicts the index replaces with its screens (see the module docstring).
_INDEX_JUDGES = ("outlier", "unconfirmed_jump")
_OFFER_COLUMNS = ("source, capture_id, observed_at, provider, offering, region, pricing, "
                  "term_months, gpu_model, gpu_count, price_usd_per_gpu_hour, currency, "
                  "price_native_per_hour, aggregator, segment, carried_days")
PRINT_SCHEMA: dict[str, pl.DataType] = {
    "gpu_model": pl.String(), "kind": pl.String(), "term_months": pl.Int32(),
    "segment": pl.String(), "geo": pl.String(), "provider": pl.String(),
    "provider_segment": pl.String(), "value": pl.Float64(), "native_value": pl.Float64(),
    "currency": pl.String(), "offers": pl.Int32(), "via_aggregator": pl.Boolean(),
    "sources": pl.List(pl.String()), "capture_ids": pl.List(pl.String()),
}

# Every capture standing at $as_of (whole captures and an aggregator's parts still in force),
# read from the semantic layer's observations_at: what a fixing is made of and `reproduce`
# re-parses. rows_hash changes when a reparse changes a capture's stored rows.
INPUTS_SQL = """
SELECT source, capture_id, observed_at, max(last_success_at) AS seen_at,
       bool_or(aggregator) AS aggregator,
       list(DISTINCT provider ORDER BY provider) AS providers,
       CAST(count(*) AS INTEGER) AS rows,
       CAST(sum(hash(provider, offering, region, pricing, term_months, gpu_model, gpu_count,
                     price_usd_per_hour, available, gpu_only, effective_from, currency,
                     price_native_per_hour)) AS VARCHAR) AS rows_hash
FROM observations_at($as_of)
GROUP BY source, capture_id, observed_at
ORDER BY source, observed_at, capture_id
"""


def candidate_offers(con: duckdb.DuckDBPyConnection, as_of: datetime, params: IndexParams,
                     gpu_models: Sequence[str] | None = None) -> pl.DataFrame:
    """The fresh comparable offers at `as_of` in any pricing kind an index kind counts (of
    `gpu_models` alone when given: every rule of the offers reads offers of the same model)."""
    offers, asked = offers_query(con, as_of, params.pricing, gpu_models=gpu_models)
    sql = (f"SELECT {_OFFER_COLUMNS} FROM ({offers}) "
           f"WHERE (excluded IS NULL OR list_contains($judged, excluded)) "
           f"AND carried_days = 0")
    return sql_frame(con, sql, bind(sql, {**asked, "judged": list(_INDEX_JUDGES)}))


def prints_of(offers: pl.DataFrame, params: IndexParams) -> pl.DataFrame:
    """Each provider's print per series (PRINT_SCHEMA rows) from candidate offers."""
    if offers.height == 0:
        return pl.DataFrame(schema=PRINT_SCHEMA)
    kinds = {pricing: kind for kind in ("on_demand", "spot", "reserved")
             for pricing in getattr(params, kind)}
    terms = [float(t) for t in params.terms_months]
    rows = (offers
            .with_columns(pl.col("pricing").replace_strict(kinds, default=None).alias("kind"))
            .filter(pl.col("kind").is_not_null())
            .with_columns(pl.when(pl.col("kind") == "reserved").then(pl.col("term_months"))
                          .otherwise(0.0).alias("term"))
            .filter((pl.col("kind") != "reserved") | pl.col("term").is_in(terms))
            .with_columns(
                pl.col("term").cast(pl.Int32).alias("term_months"),
                pl.when(pl.col("currency").is_not_null() & (pl.col("currency") != "USD")
                        & pl.col("price_native_per_hour").is_not_null())
                .then(pl.col("price_native_per_hour") / pl.col("gpu_count"))
                .otherwise(pl.col("price_usd_per_gpu_hour")).alias("native"),
                pl.col("currency").fill_null("USD"),
                pl.col("segment").alias("provider_segment"))
            .drop("term"))
    rows = with_geo(rows)
    scopes = [rows.with_columns(pl.lit(ALL).alias("scope_segment"), pl.lit(ALL).alias("scope_geo"))]
    if params.segments:
        scopes.append(rows.with_columns(pl.col("provider_segment").alias("scope_segment"),
                                        pl.lit(ALL).alias("scope_geo")))
    if params.geographies:
        scopes.append(rows.filter(pl.col("geo").is_not_null()).with_columns(
            pl.lit(ALL).alias("scope_segment"), pl.col("geo").alias("scope_geo")))
    stacked = pl.concat([s.drop("segment", "geo") for s in scopes]).rename(
        {"scope_segment": "segment", "scope_geo": "geo"})
    prints = stacked.group_by([*SERIES_KEY, "provider"]).agg(
        pl.col("provider_segment").first(),
        pl.col("price_usd_per_gpu_hour").median().alias("value"),
        pl.col("native").median().alias("native_value"),
        pl.col("currency").unique().alias("_currencies"),
        pl.len().cast(pl.Int32).alias("offers"),
        pl.col("aggregator").all().alias("via_aggregator"),
        pl.col("source").unique().sort().alias("sources"),
        pl.col("capture_id").unique().sort().alias("capture_ids"))
    # one quoted currency: the print in it; mixed currencies: the USD print
    single = pl.col("_currencies").list.len() == 1
    prints = prints.with_columns(
        pl.when(single).then(pl.col("_currencies").list.first()).otherwise(pl.lit("USD"))
        .alias("currency"),
        pl.when(single).then(pl.col("native_value")).otherwise(pl.col("value"))
        .alias("native_value"))
    return prints.select(list(PRINT_SCHEMA)).cast(PRINT_SCHEMA).sort([*SERIES_KEY, "provider"])


def day_prints(con: duckdb.DuckDBPyConnection, as_of: datetime, params: IndexParams,
               gpu_models: Sequence[str] | None = None) -> pl.DataFrame:
    """Every provider's print per series at `as_of` (of `gpu_models` alone when given: a
    print is one provider's median over one model's offers)."""
    return prints_of(candidate_offers(con, as_of, params, gpu_models), params)


def day_inputs(con: duckdb.DuckDBPyConnection, as_of: datetime) -> pl.DataFrame:
    """The captures standing at `as_of` (INPUTS_SQL); `providers` only for aggregators."""
    frame = sql_frame(con, INPUTS_SQL, {"as_of": as_of})
    return frame.with_columns(
        pl.when(pl.col("aggregator")).then(pl.col("providers")).otherwise(None)
        .alias("providers")).drop("aggregator")
