"""Exchange rates in the warehouse: the dated ECB rates, "the rate of a day", and conversion.

`store_rates` keeps a parsed ECB file (scrapers.ecb) in `fx_rate` (migration 009), each rate
with the raw capture it came from (archived like any payload). Rates are never revised: the
first value stored for a (day, currency) stays, so a conversion made with it can always be
found again.

The rate of a day (`rates_for`): for a currency on day D, the latest rate the ECB published on
or before D, at most MAX_RATE_AGE_DAYS (7) days old; none otherwise. The ECB quotes units per
euro, so one unit of currency C is worth USD/C dollars, both taken from the same reference
day (for EUR, the USD quotation itself). A weekend or holiday gets the last working day's rate.

`convert_batch` applies it to a batch of observations before validation (warehouse.ingest):
converted rows carry fx_rate and fx_date, rows with no rate are held out and quarantined with
the reason ("no EUR rate within 7 days of 2026-11-20") until a reparse finds one.

`in_currency` is THE conversion of printed amounts (`--currency EUR` on every command that
prints money): USD amounts to another currency at the rate of the day each row shows, with the
rate and its reference day beside them; a row whose day has no rate is held out (no amount)
with the same reason. `unit_of` is the same rate for text that prints amounts one by one (the
weekly report, the board, `explain`): a `Unit` converts each USD amount at one day's rate.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from contract import RawCapture
from schemas.fx import MAX_RATE_AGE_DAYS, Converted, Rate, convert, needs_rate, no_rate_reason
from warehouse.frames import scanned_once
from warehouse.transaction import retrying, transaction
from warehouse.unit import USD, Unit, named_in

if TYPE_CHECKING:  # pandera and httpx: only a refresh needs them, never a printed amount
    from schemas.observation import ValidatedBatch

__all__ = [
    "MONEY_COLUMN",
    "USD",
    "RatesStored",
    "Unit",
    "convert_batch",
    "currencies",
    "hold_out",
    "in_currency",
    "latest_rate_date",
    "money_columns",
    "named_in",
    "rates_for",
    "store_rates",
    "unit_of",
]

SOURCE = "ecb"  # fx_rate.source and raw_capture.source of the ECB files


@dataclass(frozen=True, slots=True)
class RatesStored:
    """What one rates file added: new (day, currency) rates, over how many days."""

    capture_id: str
    rates_in_file: int
    rates_added: int
    first_day: date | None
    last_day: date | None


def store_rates(con: duckdb.DuckDBPyConnection, raw: RawCapture, rates: pl.DataFrame, *,
                archive_root: Path, rate_date: date | None = None) -> RatesStored:
    """Archive `raw` and keep its rates (scrapers.ecb.RATES_SCHEMA), in one transaction.

    `rate_date`: store every rate under this day instead of the file's own (the offline replay
    dates its bundled file as of the replay, as it does the bundled prices). A rate already
    stored for a (day, currency) is kept as it is.
    """
    if rate_date is not None:
        rates = rates.with_columns(pl.lit(rate_date).alias("rate_date")).unique(
            ["rate_date", "currency"], keep="last")
    from warehouse.archive import archive

    archive_rel = archive(raw, archive_root)
    def write() -> int:
        with transaction(con):
            con.execute(
                "INSERT INTO raw_capture SELECT ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS "
                "(SELECT 1 FROM raw_capture WHERE capture_id = ?)",
                [raw.capture_id, SOURCE, raw.url, raw.fetched_at, raw.content_type,
                 len(raw.body), str(archive_rel), raw.capture_id])
            before = _count(con)
            # a rate already stored for a (day, currency) is kept
            with scanned_once(con, "_fx_batch", rates.select("rate_date", "currency", "per_eur")):
                con.execute("INSERT INTO fx_rate SELECT b.rate_date, b.currency, b.per_eur, ?, ? "
                            "FROM _fx_batch b ANTI JOIN fx_rate f ON f.rate_date = b.rate_date "
                            "AND f.currency = b.currency", [SOURCE, raw.capture_id])
            return _count(con) - before
    added = retrying(write, what="storing exchange rates")
    days = rates["rate_date"]
    return RatesStored(raw.capture_id, rates.height, added,
                       days.min() if rates.height else None,  # type: ignore[arg-type]
                       days.max() if rates.height else None)  # type: ignore[arg-type]


def _count(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT count(*) FROM fx_rate").fetchone()
    return int(row[0]) if row else 0


def latest_rate_date(con: duckdb.DuckDBPyConnection) -> date | None:
    row = con.execute("SELECT max(rate_date) FROM fx_rate").fetchone()
    return row[0] if row else None


# The rate of a day, for several currencies at once: per currency, the newest reference day
# on or before $day (and at most $max_age days before it) that quotes both USD and it.
_RATES_SQL = """
WITH wanted AS (SELECT unnest($currencies::VARCHAR[]) AS currency),
usd AS (
    SELECT rate_date, per_eur FROM fx_rate
    WHERE currency = 'USD' AND rate_date <= $day AND rate_date >= $day - $max_age::INTEGER
),
quoted AS (
    SELECT w.currency, u.rate_date, u.per_eur / coalesce(f.per_eur, 1.0) AS usd_per_unit
    FROM wanted w CROSS JOIN usd u
    LEFT JOIN fx_rate f ON f.rate_date = u.rate_date AND f.currency = w.currency
    WHERE w.currency = 'EUR' OR f.per_eur IS NOT NULL
)
SELECT currency, arg_max(usd_per_unit, rate_date), max(rate_date)
FROM quoted GROUP BY currency
"""


def rates_for(con: duckdb.DuckDBPyConnection, currencies: Iterable[str], day: date,
              max_age_days: int = MAX_RATE_AGE_DAYS) -> dict[str, Rate]:
    """The rate of `day` for each currency that has one (see the module docstring)."""
    wanted = sorted({c for c in currencies if c and c != "USD"})
    if not wanted:
        return {}
    rows = con.execute(_RATES_SQL, {"currencies": wanted, "day": day,
                                    "max_age": max_age_days}).fetchall()
    return {str(code): Rate(float(value), when) for code, value, when in rows}


def convert_batch(con: duckdb.DuckDBPyConnection | None, observations: pl.DataFrame,
                  as_of: date | datetime) -> Converted:
    """Convert the batch's non-USD prices at the rates of `as_of` (the capture's UTC day).

    Without a warehouse (`con` None) no rate is known: non-USD rows are held out.
    """
    day = as_of.astimezone(UTC).date() if isinstance(as_of, datetime) else as_of
    currencies: list[str] = []
    if "currency" in observations.columns:
        currencies = (observations.filter(needs_rate())["currency"].unique().to_list())
    rates = rates_for(con, currencies, day) if con is not None and currencies else {}
    return convert(observations, rates, day)


def hold_out(batch: ValidatedBatch, converted: Converted) -> ValidatedBatch:
    """`batch` (the validated converted rows) with the held-out rows added to its quarantine."""
    held = converted.held
    if held.height == 0:
        return batch
    quarantined = pl.concat([batch.quarantined, held.select(batch.quarantined.columns)],
                            how="vertical_relaxed")
    return replace(batch, quarantined=quarantined,
                   screens=batch.screens + Counter(no_exchange_rate=held.height))


# ---- printed amounts in another currency ---------------------------------------------------

# An amount column says its currency as a word of its name: usd_per_gpu_hour, min_usd,
# price_usd_per_hour, old_usd_per_gpu_hour ...
MONEY_COLUMN = re.compile(r"(?:^|_)usd(?:_|$)")


def money_columns(frame: pl.DataFrame) -> list[str]:
    """The USD amount columns of `frame` (named with the word usd, numeric)."""
    return [c for c, kind in frame.schema.items()
            if MONEY_COLUMN.search(c) and kind.is_numeric()]


def currencies(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every currency the stored ECB rates quote (EUR included: the base), sorted."""
    rows = con.execute("SELECT DISTINCT currency FROM fx_rate").fetchall()
    found = {str(code) for (code,) in rows}
    return sorted(found | {"EUR"}) if "USD" in found else sorted(found)


def in_currency(con: duckdb.DuckDBPyConnection, frame: pl.DataFrame, currency: str, *,
                day: date | None = None, day_column: str | None = None,
                columns: Iterable[str] | None = None) -> pl.DataFrame:
    """`frame`'s USD amounts (`columns`, default money_columns) in `currency`, each row at the
    rate of the day it shows (`day` for every row, or its `day_column`), with `fx_rate` (USD
    per unit of the currency), `fx_date` (the ECB reference day of that rate) and `fx_note`
    (why a row has no amount: no rate within MAX_RATE_AGE_DAYS of its day). Column names are
    unchanged: the caller names the currency where it prints them. USD: the frame as it is."""
    if currency == "USD":
        return frame
    if (day is None) == (day_column is None):
        raise ValueError("in_currency: give `day` or `day_column`")
    days = ([day] if day is not None else frame.select(pl.col(day_column).cast(pl.Date))
            .to_series().drop_nulls().unique().sort().to_list())
    known = {d: rates_for(con, [currency], d).get(currency) for d in days}
    table = pl.DataFrame(
        [(d, r.usd_per_unit if r else None, r.rate_date if r else None,
          None if r else no_rate_reason(currency, d)) for d, r in known.items()],
        schema={"_day": pl.Date(), "fx_rate": pl.Float64(), "fx_date": pl.Date(),
                "fx_note": pl.String()}, orient="row")
    keyed = (frame.with_columns(pl.lit(day, pl.Date).alias("_day")) if day is not None else
             frame.with_columns(pl.col(day_column).cast(pl.Date).alias("_day")))
    joined = keyed.drop([c for c in ("fx_rate", "fx_date", "fx_note") if c in frame.columns]
                        ).join(table, on="_day", how="left", maintain_order="left")
    return joined.with_columns(
        [(pl.col(c) / pl.col("fx_rate")).alias(c)
         for c in (money_columns(frame) if columns is None else columns)]
    ).drop("_day")


def unit_of(con: duckdb.DuckDBPyConnection, currency: str | None, day: date) -> Unit:
    """The unit amounts of `day` print in: USD as stored (None or 'USD'), else `currency` at
    its rate of `day` (rates_for); no rate within reach: a unit that holds every amount out,
    with the reason."""
    if currency is None or currency == "USD":
        return USD
    rate = rates_for(con, [currency], day).get(currency)
    if rate is None:
        return Unit(currency, day, None, None, no_rate_reason(currency, day))
    return Unit(currency, day, rate.usd_per_unit, rate.rate_date)
