"""Prices quoted in another currency, converted to USD at a dated rate (pure: rates passed in).

A parser that reads a price in euros (or any non-USD currency) writes `currency` and
`price_native_per_hour` and leaves `price_usd_per_hour` null. `convert` fills the USD price
from the rate of the day, and keeps that rate and the day it was published with the row
(`fx_rate`: USD per unit of the currency; `fx_date`: the reference day), so every stored USD
figure says what it was converted at. A row whose currency has no rate (none published within
MAX_RATE_AGE_DAYS of the capture's day) is never priced: it is held out with the reason, and
lands in quarantine until `reparse` finds a rate. Finding "the rate of a day" is the
warehouse's job (warehouse.fx); this module only applies it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

import polars as pl

__all__ = [
    "FX_COLUMNS",
    "MAX_RATE_AGE_DAYS",
    "Converted",
    "Rate",
    "convert",
    "needs_rate",
    "no_rate_reason",
]

# Added to the observation by migration 009, after the columns of migration 006.
FX_COLUMNS: dict[str, pl.DataType] = {"fx_rate": pl.Float64(), "fx_date": pl.Date()}
MAX_RATE_AGE_DAYS = 7  # a rate older than this (a week without publication) is no rate
USD = "USD"
NO_NATIVE_PRICE = "currency given without price_native_per_hour"


@dataclass(frozen=True, slots=True)
class Rate:
    """The rate a currency converts at on some day: USD for one unit, and its reference day."""

    usd_per_unit: float
    rate_date: date


@dataclass(frozen=True, slots=True)
class Converted:
    """A batch after conversion: the rows to validate, and the rows held out (with
    `failed_check`, the reason), which join the batch's quarantine."""

    rows: pl.DataFrame
    held: pl.DataFrame


def no_rate_reason(currency: str, as_of: date) -> str:
    """'no EUR rate within 7 days of 2026-11-20' (the quarantine reason, and its search key)."""
    return f"no {currency} rate within {MAX_RATE_AGE_DAYS} days of {as_of:%Y-%m-%d}"


def needs_rate() -> pl.Expr:
    """True for a row quoted in a currency other than USD (null currency means USD)."""
    return pl.col("currency").is_not_null() & (pl.col("currency") != USD)


def _with_fx_columns(frame: pl.DataFrame) -> pl.DataFrame:
    missing = [pl.lit(None, kind).alias(c) for c, kind in FX_COLUMNS.items()
               if c not in frame.columns]
    return frame.with_columns(missing) if missing else frame


def convert(frame: pl.DataFrame, rates: Mapping[str, Rate], as_of: date) -> Converted:
    """Fill price_usd_per_hour (and the per-GPU price, when the frame has it), fx_rate and
    fx_date of every non-USD row that has a rate in `rates`; hold the others out.

    USD rows pass untouched (fx_rate, fx_date null). For a converted row the native price is
    the truth: any USD price a parser also wrote is replaced by the converted one.
    """
    frame = _with_fx_columns(frame)
    if frame.height == 0 or frame.filter(needs_rate()).height == 0:
        return Converted(frame, frame.clear().with_columns(
            pl.lit(None, pl.String).alias("failed_check")))
    table = pl.DataFrame(
        [(code, rate.usd_per_unit, rate.rate_date) for code, rate in rates.items()],
        schema={"currency": pl.String(), "_usd_per_unit": pl.Float64(), "_rate_date": pl.Date()},
        orient="row")
    joined = frame.with_row_index("_row").join(table, on="currency", how="left").sort("_row")
    native = pl.col("price_native_per_hour")
    reason = (pl.when(native.is_null()).then(pl.lit(NO_NATIVE_PRICE))
              .when(pl.col("_usd_per_unit").is_null())
              .then(pl.format("no {} rate within {} days of {}", pl.col("currency"),
                              pl.lit(MAX_RATE_AGE_DAYS), pl.lit(f"{as_of:%Y-%m-%d}")))
              .otherwise(pl.lit(None, pl.String)))
    joined = joined.with_columns(pl.when(needs_rate()).then(reason).alias("failed_check"))
    usd = (native * pl.col("_usd_per_unit")).round(6)
    converting = needs_rate() & pl.col("failed_check").is_null()
    updates = [
        pl.when(converting).then(usd).otherwise(pl.col("price_usd_per_hour"))
        .alias("price_usd_per_hour"),
        pl.when(converting).then(pl.col("_usd_per_unit")).otherwise(pl.col("fx_rate"))
        .alias("fx_rate"),
        pl.when(converting).then(pl.col("_rate_date")).otherwise(pl.col("fx_date"))
        .alias("fx_date"),
    ]
    joined = joined.with_columns(updates)
    if "price_usd_per_gpu_hour" in frame.columns:
        joined = joined.with_columns(
            pl.when(converting).then(pl.col("price_usd_per_hour") / pl.col("gpu_count"))
            .otherwise(pl.col("price_usd_per_gpu_hour")).alias("price_usd_per_gpu_hour"))
    held = joined.filter(pl.col("failed_check").is_not_null())
    rows = joined.filter(pl.col("failed_check").is_null())
    return Converted(rows.select(frame.columns), held.select([*frame.columns, "failed_check"]))
