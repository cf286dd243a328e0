"""THE SEMANTIC LAYER: each concept a price question rests on, defined once, in SQL.

views.sql holds what needs no setting: freshness (`freshness_at`), the current price with
source precedence (`current_price_at`), the comparable-offer rule (`excluded_because`) and the
price moves of the speaking source (`price_move`). This module builds the rest on them, with
the settings bound as parameters (the pricing set; market.toml's outlier fences):

- `OFFERS`: every offer standing at a moment, with `excluded` = the first reason it is not a
  comparable offer (NULL: it is). Outliers are offers far from the preliminary market price
  (the two-stage median of the comparable offers of their model), so the same fences keep a
  suspicious listing out of the market price and out of every "cheapest" answer.
- `CHEAPEST`: the cheapest comparable offer per GPU model, ties broken by OFFER_ORDER.
- `Prices(con, as_of)`: the prices as they stood at one moment, the object every report,
  command, alert and board section reads: offers, comparable offers, the cheapest per GPU
  and freshness, for any pricing set (default contract.DEFAULT_PRICING) and any place
  (warehouse.place: regions and geographies; the offers of other places are left out before
  any rule applies, so every answer for a place is made of that place's offers).

Every offer carries its stock state (`stock`: the macro stock_state of views.sql over its own
availability, level and GPUs free; warehouse/semantic_stock.py has the series over time).

The market price (semantic_market.py) and the derived tables kept in the append's
transaction (semantic_daily.py) are built from the same OFFERS query.
"""

from __future__ import annotations

import csv
import itertools
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import duckdb

from contract import DEFAULT_PRICING, pricing_set
from warehouse.frames import sql_frame
from warehouse.held_prices import held_current_prices
from warehouse.place import EVERYWHERE, Place, register

if TYPE_CHECKING:  # polars where a frame is computed: the cheapest offers' SQL needs none
    import polars as pl

__all__ = [
    "ALL", "CHEAPEST", "CURRENT_PRICES", "EXCLUSIONS", "MARKET_TOML", "OFFERS", "OFFER_ORDER",
    "UNCLASSIFIED", "MarketConfig", "Prices", "at_moment", "bind", "cheapest_at", "day_end",
    "end_of_day", "listed_offers_query", "load_market_config", "load_segments",
    "offers_params", "offers_query", "offers_sql", "placed", "pricing_set", "segment_params",
    "segments",
]

MARKET_TOML = Path(__file__).with_name("market.toml")
SEGMENTS_CSV = Path(__file__).parents[1] / "schemas" / "provider_segments.csv"
ALL = "all"  # the segment name of a value over every provider
UNCLASSIFIED = "unclassified"  # a provider missing from provider_segments.csv
# Why an offer is not comparable, in the order the rules apply (the first that fits names it).
EXCLUSIONS = ("unknown_gpu", "gpu_only", "fractional", "other_pricing", "unavailable", "stale",
              "unconfirmed_jump", "outlier")
# How offers are ranked, cheapest first: equal prices by provider, offering, region, pricing.
OFFER_ORDER = ("price_usd_per_gpu_hour", "provider", "offering", "region", "pricing")
_ORDER_SQL = ", ".join(OFFER_ORDER)
# The offers listed (Prices.offers, listed_offers_query): by GPU model, then OFFER_ORDER.
_LISTED_ORDER = ("gpu_model", *OFFER_ORDER)
# An unconfirmed price jump (>= 25 %, flagged by schemas.screens.flag_jumps in
# observation.screen_flag) is not comparable until a later capture at that price confirms it.
UNCONFIRMED_JUMP = "screen_flag IS NOT NULL"


@dataclass(frozen=True, slots=True)
class MarketConfig:
    """The market price's own rules (market.toml documents each one)."""

    outlier_low_ratio: float = 3.0
    outlier_high_ratio: float = 5.0
    min_providers: int = 3
    min_providers_segment: int = 2
    max_offering_share: float = 0.75
    max_dispersion: float = 1.0

    def __post_init__(self) -> None:
        checks = {
            "outlier_low_ratio": 1 <= self.outlier_low_ratio <= 1000,
            "outlier_high_ratio": 1 <= self.outlier_high_ratio <= 1000,
            "min_providers": 1 <= self.min_providers <= 100,
            "min_providers_segment": 1 <= self.min_providers_segment <= 100,
            "max_offering_share": 0 < self.max_offering_share <= 1,
            "max_dispersion": 0 < self.max_dispersion <= 100,
        }
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            raise ValueError(f"market rules out of range: {', '.join(bad)}")


def load_market_config(path: Path = MARKET_TOML) -> MarketConfig:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    unknown = sorted(set(data) - {f.name for f in fields(MarketConfig)})
    if unknown:
        raise ValueError(f"{path.name}: unknown keys {', '.join(unknown)}")
    return MarketConfig(**data)


@cache
def _default_config() -> MarketConfig:
    return load_market_config()


def load_segments(path: Path = SEGMENTS_CSV) -> dict[str, str]:
    """provider -> segment (hyperscaler, neocloud, marketplace, serverless)."""
    with path.open(encoding="utf-8", newline="") as handle:
        return {row["provider"]: row["segment"] for row in csv.DictReader(handle)}


@cache
def _default_segments() -> tuple[tuple[str, ...], tuple[str, ...]]:
    segments = load_segments()
    return tuple(segments), tuple(segments.values())


def segments() -> list[str]:
    """Every segment name a market value can have ('all' first)."""
    return [ALL, *sorted({UNCLASSIFIED, *load_segments().values()})]


def segment_params(segments: dict[str, str] | None = None) -> dict[str, list[str]]:
    """The provider -> segment map as the two list parameters the SQL reads."""
    if segments is None:
        providers, names = _default_segments()
        return {"providers": list(providers), "segments": list(names)}
    return {"providers": list(segments), "segments": list(segments.values())}


def bind(sql: str, params: dict[str, object]) -> dict[str, object]:
    """The parameters `sql` names ($name), from `params` (DuckDB refuses unused ones)."""
    return {k: v for k, v in params.items() if re.search(rf"\${k}\b", sql)}


def end_of_day(day: date) -> datetime:
    """The last microsecond of a UTC day: the moment a day's prices are taken at."""
    return datetime.combine(day + timedelta(days=1), time(), UTC) - timedelta(microseconds=1)


def day_end(day: date, now: datetime | None = None) -> datetime:
    """end_of_day(day), or `now` when the day is not over yet."""
    end = end_of_day(day)
    return min(end, now) if now is not None else end


# ---- the comparable offer ----------------------------------------------------------------

# `{current}`: current_price_at($as_of), or a table holding its rows for one moment;
# `{place}`: warehouse.place.Place.sql over c.provider, c.region (true: everywhere).
OFFERS = """
WITH cur AS (
    SELECT c.* REPLACE (coalesce(c.gpu_memory_gb, g.memory_gb) AS gpu_memory_gb),
           coalesce(g.family, c.gpu_model) AS family, g.bf16_tflops,
           coalesce($segments[list_position($providers, c.provider)], 'unclassified')
               AS segment,
           stock_state(c.available, c.stock_level, c.gpus_available) AS stock
    FROM {current} c LEFT JOIN gpu_catalog g USING (gpu_model)
    WHERE {place}
), ruled AS (
    SELECT *, coalesce(
        excluded_because(gpu_model, gpu_only, gpu_count, pricing, $pricing, available, stale),
        CASE WHEN {jump} THEN 'unconfirmed_jump' END) AS ruled_out
    FROM cur
), preliminary AS (
    SELECT gpu_model, median(usd) AS preliminary_usd
    FROM (SELECT gpu_model, provider, median(price_usd_per_gpu_hour) AS usd
          FROM ruled WHERE ruled_out IS NULL GROUP BY ALL)
    GROUP BY gpu_model
)
SELECT r.* EXCLUDE (ruled_out), p.preliminary_usd,
       coalesce(r.ruled_out, CASE
           WHEN r.price_usd_per_gpu_hour < p.preliminary_usd / $low
             OR r.price_usd_per_gpu_hour > p.preliminary_usd * $high THEN 'outlier' END)
           AS excluded
FROM ruled r LEFT JOIN preliminary p USING (gpu_model)
"""

# `{offers}`: offers_sql(...), of the models asked for (of_models) when they are named.
CHEAPEST = f"""
SELECT * FROM ({{offers}})
WHERE excluded IS NULL
  AND ($only IS NULL OR list_contains($only, provider))
QUALIFY row_number() OVER (PARTITION BY gpu_model ORDER BY {_ORDER_SQL}) = 1
ORDER BY {_ORDER_SQL}
"""


# Only some GPU models' offers (Prices.gpu_models): every rule of the comparable offer reads
# the offers of the same GPU model alone (the preliminary median is per model), so these rows
# are exactly those models' rows of all offers.
_OF_MODELS = " AND list_contains($offer_models, c.gpu_model)"


# The current prices OFFERS reads by default (Prices(hold_current=True) holds their rows).
CURRENT_PRICES = "current_price_at($as_of)"


def offers_sql(current: str = CURRENT_PRICES, place: Place = EVERYWHERE, *,
               of_models: bool = False) -> str:
    """OFFERS over `current`, in `place` (its parameters: offers_params(..., place=)); with
    `of_models`, only the models of the parameter $offer_models."""
    return OFFERS.format(current=current, jump=UNCONFIRMED_JUMP,
                         place=place.sql("c.provider", "c.region")
                         + (_OF_MODELS if of_models else ""))


def offers_params(pricing: tuple[str, ...], config: MarketConfig | None = None,
                  segments: dict[str, str] | None = None, place: Place = EVERYWHERE,
                  gpu_models: Sequence[str] | None = None) -> dict[str, object]:
    """The parameters of offers_sql(..., place=, of_models=gpu_models is not None)."""
    config = config or _default_config()
    models = {} if gpu_models is None else {"offer_models": list(gpu_models)}
    return {"pricing": list(pricing), "low": config.outlier_low_ratio,
            "high": config.outlier_high_ratio, **segment_params(segments), **place.params(),
            **models}


def offers_query(con: duckdb.DuckDBPyConnection, as_of: datetime,
                 pricing: Sequence[str] | None = None, *, place: Place = EVERYWHERE,
                 gpu_models: Sequence[str] | None = None, config: MarketConfig | None = None,
                 segments: dict[str, str] | None = None,
                 current: str = CURRENT_PRICES) -> tuple[str, dict[str, object]]:
    """OFFERS standing at `as_of`, of the pricing set, in `place` (of `gpu_models` alone when
    named), and its parameters: the SQL a question wraps (filters, an order, the cheapest)
    and binds with its own parameters added (bind). `current`: the current prices at
    `as_of` (their rows held in a table, or the macro: from a read snapshot's held rows
    when they stand at `as_of`, warehouse.held_prices)."""
    place = placed(con, place)
    if current == CURRENT_PRICES:  # a read snapshot's held rows, when they stand at as_of
        current = held_current_prices(con, as_of) or CURRENT_PRICES
    return (offers_sql(current, place=place, of_models=gpu_models is not None),
            {"as_of": as_of, **offers_params(pricing_set(tuple(pricing or ())), config,
                                             segments, place, gpu_models)})


def listed_offers_query(con: duckdb.DuckDBPyConnection, as_of: datetime,
                        pricing: Sequence[str] | None = None, *, place: Place = EVERYWHERE,
                        gpu_models: Sequence[str] | None = None,
                        config: MarketConfig | None = None,
                        segments: dict[str, str] | None = None) -> tuple[str, dict[str, object]]:
    """offers_query's offers by GPU model, then OFFER_ORDER: the rows of Prices.offers, in
    its order."""
    offers, params = offers_query(con, as_of, pricing, place=place, gpu_models=gpu_models,
                                  config=config, segments=segments)
    sql = f"SELECT * FROM ({offers}) ORDER BY {', '.join(_LISTED_ORDER)}"
    return sql, bind(sql, params)


def placed(con: duckdb.DuckDBPyConnection, place: Place) -> Place:
    """`place`, with what its SQL needs added to `con` (the region_geo function)."""
    if place.geos:
        register(con)
    return place


# Each held set of current prices its own temporary table (Prices.hold_current).
_HELD_TABLES = itertools.count(1)


@dataclass(slots=True)
class Prices:
    """The prices as they stood at `as_of`: the one object every view of them reads.

    `pricing` is the pricing set its questions answer in unless one names another (default
    contract.DEFAULT_PRICING; the CLI's --pricing sets it). `place`: the regions and
    geographies asked for (default everywhere; the CLI's --region and --geo). Each frame is
    read once per pricing set and kept. `offers` rows carry every column of observation, plus
    family, bf16_tflops, segment, `stock` (the stock state), the source's `aggregator`,
    `source_kind`, `last_success_at` (when its source last saw them), `carried_days`, `stale`,
    `preliminary_usd` and `excluded`. `gpu_models`: only these models' offers (the same rows
    as all offers filtered to them, read faster: 14,000 offers are ~80 ms at 50 M
    observations; a question about one GPU needs its few hundred). `hold_current`: several
    pricing sets will be asked (the board and the report ask three): the current prices'
    rows are held once, in a temporary table of the connection, and each set's offers read
    from them (the same rows; one current_price_at instead of one per set). It stays until
    the connection closes. A read snapshot that holds them already (warehouse.held_prices)
    is read instead, and nothing is held again.
    """

    ORDER: ClassVar[tuple[str, ...]] = OFFER_ORDER

    con: duckdb.DuckDBPyConnection
    as_of: datetime
    pricing: tuple[str, ...] = DEFAULT_PRICING
    config: MarketConfig | None = None
    segments: dict[str, str] | None = None
    place: Place = EVERYWHERE
    gpu_models: tuple[str, ...] | None = None
    hold_current: bool = False
    _held: str | None = field(default=None, repr=False)
    _offers: dict[tuple[str, ...], pl.DataFrame] = field(default_factory=dict, repr=False)
    _comparable: dict[tuple[str, ...], pl.DataFrame] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.pricing = pricing_set(self.pricing)

    @property
    def day(self) -> date:
        return self.as_of.astimezone(UTC).date()

    def offers(self, pricing: tuple[str, ...] | None = None) -> pl.DataFrame:
        """Every offer standing at as_of, with why it is not comparable (`excluded`), by GPU
        model, then OFFER_ORDER."""
        chosen = pricing_set(pricing or self.pricing)
        if chosen not in self._offers:
            sql, params = offers_query(self.con, self.as_of, chosen, place=self.place,
                                       gpu_models=self.gpu_models, config=self.config,
                                       segments=self.segments, current=self._current())
            # listed_offers_query's order, sorted by polars: DuckDB would sort every column
            # with the keys (~18 ms for 13k offers at 50 M, polars ~7 ms). NULLs last, as
            # DuckDB's; rows tied on every key keep the order they came in.
            self._offers[chosen] = sql_frame(self.con, sql, bind(sql, params)).sort(
                _LISTED_ORDER, nulls_last=True, maintain_order=True)
        return self._offers[chosen]

    def _current(self) -> str:
        """What OFFERS reads as the current prices: the macro (or a snapshot's held rows:
        offers_query), or (hold_current) the snapshot's held rows, else the temporary table
        its rows at as_of are held in, filled on first use."""
        if not self.hold_current:
            return CURRENT_PRICES
        if self._held is None:  # a read snapshot may hold them already
            self._held = held_current_prices(self.con, self.as_of)
        if self._held is None:
            name = f"_current_prices_{next(_HELD_TABLES)}"
            self.con.execute(f"CREATE TEMP TABLE {name} AS SELECT * FROM {CURRENT_PRICES}",
                             {"as_of": self.as_of})
            self._held = f"temp.main.{name}"
        return self._held

    def comparable(self, pricing: tuple[str, ...] | None = None) -> pl.DataFrame:
        """The comparable offers, cheapest first (OFFER_ORDER)."""
        import polars as pl

        chosen = pricing_set(pricing or self.pricing)
        if chosen not in self._comparable:  # a board asks ~40 times: sorted once
            self._comparable[chosen] = self.offers(chosen).filter(
                pl.col("excluded").is_null()).sort(OFFER_ORDER)
        return self._comparable[chosen]

    def cheapest(self, pricing: tuple[str, ...] | None = None, *,
                 gpu_models: list[str] | None = None,
                 providers: list[str] | None = None) -> pl.DataFrame:
        """The cheapest comparable offer per GPU model (one row each, cheapest first)."""
        import polars as pl

        offers = self.comparable(pricing)
        if gpu_models:
            offers = offers.filter(pl.col("gpu_model").is_in(gpu_models))
        if providers:
            offers = offers.filter(pl.col("provider").is_in(providers))
        return offers.group_by("gpu_model", maintain_order=True).first()

    def freshness(self) -> pl.DataFrame:
        """Every registered source as of as_of: last success, rows, last run, stale."""
        return sql_frame(self.con, "SELECT * FROM freshness_at($as_of) ORDER BY source",
                         {"as_of": self.as_of})

    def run_ids(self) -> list[str]:
        """The runs that stored the prices standing at as_of."""
        return sorted(self.offers()["run_id"].unique().to_list())


def at_moment(prices: Prices | None, con: duckdb.DuckDBPyConnection,
              as_of: datetime) -> Prices:
    """`prices` when given (they must stand at `as_of` and read `con`), else Prices(con, as_of)
    holding the current prices (a view of several pricing sets): views built together share
    one Prices, so each set of offers is read once."""
    if prices is None:
        return Prices(con, as_of, hold_current=True)
    if prices.as_of != as_of or prices.con is not con:
        raise ValueError(f"prices at {prices.as_of} (another connection?) given for {as_of}")
    if prices.gpu_models is not None:
        raise ValueError(f"prices of {', '.join(prices.gpu_models)} alone given for a view "
                         "of every GPU")
    return prices


def cheapest_at(con: duckdb.DuckDBPyConnection, as_of: datetime,
                pricing: tuple[str, ...] | None = None, *, gpu_models: list[str] | None = None,
                providers: list[str] | None = None, place: Place = EVERYWHERE) -> pl.DataFrame:
    """The cheapest comparable offer per GPU model at `as_of`, in one SQL statement (the
    history of a provider, a place or another pricing set is made of these, a day at a
    time)."""
    # the models' offers alone, as Prices.gpu_models reads them (a day-by-day history asks
    # this once a day)
    offers, params = offers_query(con, as_of, pricing, place=place, gpu_models=gpu_models)
    sql = CHEAPEST.format(offers=offers)
    return sql_frame(con, sql, bind(sql, {**params, "only": providers}))
