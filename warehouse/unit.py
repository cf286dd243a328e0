"""The unit money amounts are printed in: USD as stored, or another currency at one day's ECB
rate (warehouse.fx.unit_of makes one from the stored rates). Apart from warehouse.fx so that
text printed in USD (`explain`) needs neither polars nor the rates."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

__all__ = ["USD", "Unit", "named_in"]

_USD_WORD = re.compile(r"(?<![a-z])usd(?![a-z])")


def named_in(text: str, currency: str) -> str:
    """A column name or title naming its amounts in `currency`: usd -> eur, $ -> EUR."""
    if currency == "USD":
        return text
    return _USD_WORD.sub(currency.lower(), text).replace("$", f"{currency} ")\
        .replace(f"{currency} /", f"{currency}/")


@dataclass(frozen=True, slots=True)
class Unit:
    """The money amounts are printed in: USD as stored, or `currency` at the ECB rate of
    `day` (`usd_per_unit` of its reference day `rate_date`; None with `note` when the day has
    no rate: every amount is then held out)."""

    currency: str = "USD"
    day: date | None = None
    usd_per_unit: float | None = 1.0
    rate_date: date | None = None
    note: str | None = None

    @property
    def converting(self) -> bool:
        return self.currency != "USD"

    def amount(self, usd: float | None) -> float | None:
        """A USD amount in this unit (None: no amount, or no rate)."""
        if usd is None or self.usd_per_unit is None:
            return None
        return usd / self.usd_per_unit

    def label(self, text: str) -> str:
        """A heading or column name in this unit: $/GPU-h -> EUR/GPU-h, usd -> eur."""
        return named_in(text, self.currency)

    def convert(self, frame: pl.DataFrame, columns: Iterable[str]) -> pl.DataFrame:
        """`frame` with its USD amount `columns` in this unit (null without a rate), and,
        when converting, `currency`, `fx_rate` and `fx_date` beside them."""
        if not self.converting:
            return frame
        import polars as pl

        rate = pl.lit(self.usd_per_unit, pl.Float64)
        return frame.with_columns(
            *[(pl.col(c) / rate).alias(c) for c in columns if c in frame.columns],
            pl.lit(self.currency).alias("currency"), rate.alias("fx_rate"),
            pl.lit(self.rate_date, pl.Date).alias("fx_date"))

    def as_printed(self) -> Unit:
        """This unit for amounts converted already (each at its own day's rate, e.g. by
        in_currency): named in its currency, printed as they are."""
        return replace(self, usd_per_unit=1.0) if self.converting else self

    def describe(self) -> str:
        """How amounts are converted, in one sentence ('' for USD)."""
        if not self.converting:
            return ""
        if self.usd_per_unit is None:
            return f"Amounts in {self.currency}: held out: {self.note}."
        return (f"Amounts in {self.currency} at the ECB reference rate of {self.day}: "
                f"1 {self.currency} = {self.usd_per_unit:.6g} USD (the rate of "
                f"{self.rate_date}).")


USD = Unit()
