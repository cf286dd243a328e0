"""The market price of a GPU-hour: a two-stage median over comparable offers, per model and day.

Stage 1: each provider's median $/GPU-hour over its comparable offers, so a provider with
hundreds of regional rows gets one vote, like a provider with one list price. Stage 2: the
median of those across providers, with min, p25, p75, max, counts and a dispersion figure
(p75 - p25) / median; for all providers and per segment (schemas/provider_segments.csv).
A value that fails a rule of reports/market.toml is withheld: stored with its reason, never
silently missing. `market_offers` is the one place that decides which offers count.
"""

from __future__ import annotations

import csv
import tomllib
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import duckdb
import polars as pl

from reports.offers import STEADY_PRICING, exclusion_rules
from reports.queries import current_prices_at

__all__ = [
    "ALL", "EXCLUSIONS", "MarketConfig", "day_end", "load_market_config", "load_segments",
    "market_at", "market_offers", "market_values", "source_seen", "with_capture_ids",
]

MARKET_TOML = Path(__file__).with_name("market.toml")
SEGMENTS_CSV = Path(__file__).parents[1] / "schemas" / "provider_segments.csv"
ALL = "all"  # the segment name of the value over every provider
UNCLASSIFIED = "unclassified"  # a provider missing from provider_segments.csv
# Why an offer does not count, in the order the rules are applied (the first that fits).
EXCLUSIONS = ("unknown_gpu", "gpu_only", "other_pricing", "unavailable", "fractional", "stale",
              "outlier")


@dataclass(frozen=True, slots=True)
class MarketConfig:
    """The rules of the index (reports/market.toml documents each one)."""

    pricing: tuple[str, ...] = STEADY_PRICING
    carry_forward_days: int = 3
    outlier_low_ratio: float = 3.0
    outlier_high_ratio: float = 5.0
    min_providers: int = 3
    min_providers_segment: int = 2
    max_offering_share: float = 0.75
    max_dispersion: float = 1.0

    def __post_init__(self) -> None:
        checks = {
            "carry_forward_days": 0 <= self.carry_forward_days <= 30,
            "outlier_low_ratio": self.outlier_low_ratio >= 1,
            "outlier_high_ratio": self.outlier_high_ratio >= 1,
            "min_providers": 1 <= self.min_providers <= 100,
            "min_providers_segment": 1 <= self.min_providers_segment <= 100,
            "max_offering_share": 0 < self.max_offering_share <= 1,
            "max_dispersion": self.max_dispersion > 0,
            "pricing": bool(self.pricing),
        }
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            raise ValueError(f"market rules out of range: {', '.join(bad)}")


def load_market_config(path: Path = MARKET_TOML) -> MarketConfig:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    known = {f.name for f in fields(MarketConfig)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{path.name}: unknown keys {', '.join(unknown)}")
    if "pricing" in data:
        data["pricing"] = tuple(data["pricing"])
    return MarketConfig(**data)


def load_segments(path: Path = SEGMENTS_CSV) -> dict[str, str]:
    with path.open(encoding="utf-8", newline="") as handle:
        return {row["provider"]: row["segment"] for row in csv.DictReader(handle)}


def day_end(day: date, now: datetime | None = None) -> datetime:
    """The last instant of UTC `day` (or `now`, when the day is not over yet)."""
    end = datetime.combine(day + timedelta(days=1), time(), UTC) - timedelta(microseconds=1)
    return min(end, now) if now is not None else end


def source_seen(con: duckdb.DuckDBPyConnection, as_of: datetime) -> pl.DataFrame:
    """Per source: the newest time a run stored or re-confirmed its prices, up to `as_of`.

    Observed time, not run time, so a backfilled snapshot counts as of its own date.
    """
    return con.execute(
        "SELECT source, max(observed_at) AS seen_at FROM scrape_run "
        "WHERE status IN ('success', 'unchanged') AND capture_id IS NOT NULL "
        "AND observed_at <= $as_of GROUP BY source",
        {"as_of": as_of},
    ).pl()


def with_capture_ids(con: duckdb.DuckDBPyConnection, prices: pl.DataFrame) -> pl.DataFrame:
    """`prices` (rows of current_prices_at) with the capture each row was parsed from."""
    # An observation's run stored exactly one capture of its source.
    captures = con.execute(
        "SELECT run_id, source, capture_id FROM scrape_run WHERE capture_id IS NOT NULL"
    ).pl()
    return prices.join(captures, on=["run_id", "source"], how="left")


def market_offers(con: duckdb.DuckDBPyConnection, as_of: datetime,
                  config: MarketConfig | None = None,
                  segments: dict[str, str] | None = None) -> pl.DataFrame:
    """Every offer standing at `as_of`, with `excluded` = why it does not count (null: it does).

    The comparable-offer rule of the market price, whole, in this one function. An offer
    counts when it is
    - of a catalog GPU model (not 'unknown');
    - a whole offering: not gpu_only (a GPU price without its machine), and at least one
      whole GPU (no fractional slices);
    - of one of the chosen pricing kinds (`config.pricing`);
    - available (unknown availability counts: most sources do not say);
    - not stale: its source stored or re-confirmed it at most `config.carry_forward_days`
      UTC days before `as_of`'s day; 1..N days old = carried forward (`carried_days`, flagged);
    - not an outlier: below 1/outlier_low_ratio or above outlier_high_ratio times the
      preliminary market (the two-stage median of the offers that pass the rules above).
    Which source speaks for a provider is not decided here: prices come from
    reports.queries.current_prices_at, the point-in-time form of the latest_price view.
    """
    config = config or load_market_config()
    segments = segments if segments is not None else load_segments()
    day = as_of.astimezone(UTC).date()
    prices = current_prices_at(con, as_of)
    seen = source_seen(con, as_of)
    frame = (
        with_capture_ids(con, prices).join(seen, on="source", how="left")
        .with_columns(
            pl.col("provider").replace_strict(segments, default=UNCLASSIFIED).alias("segment"),
            (pl.lit(day) - pl.col("seen_at").dt.convert_time_zone("UTC").dt.date())
            .dt.total_days().cast(pl.Int32).alias("carried_days"),
        )
    )
    # The shared comparable-offer rule (reports.offers), plus the market's own: whole GPUs
    # only, and a source silent for longer than the carry-forward window does not vote.
    rules = [
        *exclusion_rules(config.pricing, available_only=True),
        ("fractional", pl.col("gpu_count") < 1),
        ("stale", pl.col("carried_days").is_null()
         | (pl.col("carried_days") > config.carry_forward_days)),
    ]
    reason: pl.Expr = pl.lit(None, pl.String)
    for name, test in reversed(rules):
        reason = pl.when(test).then(pl.lit(name)).otherwise(reason)
    frame = frame.with_columns(reason.alias("excluded"))
    frame = _mark_outliers(frame, config)
    return frame.select(
        pl.lit(day).alias("day"), "gpu_model", "provider", "segment", "source", "capture_id",
        "observed_at", "seen_at", "carried_days", "offering", "region", "pricing", "gpu_count",
        "gpu_memory_gb", "bf16_tflops", "price_usd_per_hour",
        pl.col("price_usd_per_gpu_hour").alias("usd_per_gpu_hour"), "available", "gpu_only",
        "stale", "excluded", "preliminary_usd",
    ).sort("gpu_model", "provider", "usd_per_gpu_hour", "offering", "region")


def _mark_outliers(frame: pl.DataFrame, config: MarketConfig) -> pl.DataFrame:
    counted = frame.filter(pl.col("excluded").is_null())
    preliminary = (
        counted.group_by("gpu_model", "provider")
        .agg(pl.col("price_usd_per_gpu_hour").median().alias("provider_usd"))
        .group_by("gpu_model")
        .agg(pl.col("provider_usd").median().alias("preliminary_usd"))
    )
    price, market = pl.col("price_usd_per_gpu_hour"), pl.col("preliminary_usd")
    outlier = (pl.col("excluded").is_null()
               & ((price < market / config.outlier_low_ratio)
                  | (price > market * config.outlier_high_ratio)))
    return frame.join(preliminary, on="gpu_model", how="left").with_columns(
        pl.when(outlier).then(pl.lit("outlier")).otherwise(pl.col("excluded")).alias("excluded"))


def market_values(offers: pl.DataFrame, config: MarketConfig | None = None
                  ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(per-provider medians, market values) from `market_offers` rows of one day.

    Market rows: one per GPU model for segment 'all', and one per model and segment.
    `usd_per_gpu_hour` is null when the value is withheld; `withheld_reason` says why.
    """
    config = config or load_market_config()
    counted = offers.filter(pl.col("excluded").is_null())
    providers = (
        counted.group_by("day", "gpu_model", "provider", "segment")
        .agg(pl.col("usd_per_gpu_hour").median(), pl.len().alias("offers"),
             pl.col("offering").n_unique().alias("offerings"),
             pl.col("carried_days").max(),
             pl.col("source").unique().sort().str.join(", ").alias("sources"))
        .sort("gpu_model", "provider")
    )
    overall = _cross_provider(providers.with_columns(pl.lit(ALL).alias("group")),
                              config.min_providers, config)
    per_segment = _cross_provider(providers.with_columns(pl.col("segment").alias("group")),
                                  config.min_providers_segment, config)
    market = pl.concat([overall, per_segment]).sort(
        "gpu_model", pl.col("segment") != ALL, "segment")
    return providers, market


def _cross_provider(providers: pl.DataFrame, min_providers: int,
                    config: MarketConfig) -> pl.DataFrame:
    price = pl.col("usd_per_gpu_hour")
    stats = (
        providers.group_by("day", "gpu_model", "group")
        .agg(price.median().alias("median"), price.min().alias("min_usd"),
             price.quantile(0.25, "linear").alias("p25_usd"),
             price.quantile(0.75, "linear").alias("p75_usd"), price.max().alias("max_usd"),
             pl.len().alias("providers"), pl.col("offers").sum().alias("offers"),
             pl.col("offerings").sum().alias("offerings"),
             pl.col("provider").sort_by("offerings", "provider", descending=[True, False])
             .first().alias("top_provider"),
             pl.col("offerings").max().alias("top_offerings"),
             pl.col("provider").filter(pl.col("carried_days") > 0).sort()
             .alias("carried_providers"))
        .with_columns(((pl.col("p75_usd") - pl.col("p25_usd")) / pl.col("median"))
                      .alias("dispersion"),
                      (pl.col("top_offerings") / pl.col("offerings")).alias("top_share"))
    )
    reason = (
        pl.when(pl.col("providers") < min_providers)
        .then(pl.format("only {} provider(s) quote it; the rule needs {}",
                        pl.col("providers"), pl.lit(min_providers)))
        .when(pl.col("top_share") > config.max_offering_share)
        .then(pl.format("one provider ({}) lists {} of {} offerings ({}% > {}%)",
                        pl.col("top_provider"), pl.col("top_offerings"), pl.col("offerings"),
                        (pl.col("top_share") * 100).round(0).cast(pl.Int64),
                        pl.lit(round(config.max_offering_share * 100))))
        .when(pl.col("dispersion") > config.max_dispersion)
        .then(pl.format("providers disagree: dispersion (p75-p25)/median {} > {}",
                        pl.col("dispersion").round(2), pl.lit(config.max_dispersion)))
    )
    return stats.with_columns(reason.alias("withheld_reason")).select(
        "day", "gpu_model", pl.col("group").alias("segment"),
        pl.when(reason.is_null()).then(pl.col("median")).alias("usd_per_gpu_hour"),
        pl.col("median").alias("median_usd"), "min_usd", "p25_usd", "p75_usd", "max_usd",
        "providers", "offers", "dispersion", "carried_providers", "withheld_reason",
        pl.lit(",".join(config.pricing)).alias("pricing"),
    )


def market_at(con: duckdb.DuckDBPyConnection, as_of: datetime,
              config: MarketConfig | None = None,
              segments: dict[str, str] | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(per-provider medians, market values) as the prices stood at `as_of`."""
    config = config or load_market_config()
    return market_values(market_offers(con, as_of, config, segments), config)
