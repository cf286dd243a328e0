"""`--currency`: the amounts a command prints, in another currency (the flag is defined once
in gpuprices.options; the conversion is warehouse.fx.in_currency, the rate of the day shown).

A command converts its frame (`Money.convert`, before it picks its table columns, so the
amounts it rounds and renames are already converted), then prints it with `Money.show`: the
amount columns are named for the currency (usd_per_gpu_hour -> eur_per_gpu_hour, "$/hour" ->
"EUR/hour"), csv and json keep fx_rate / fx_date / fx_note, and a table ends with a footnote
that gives the rate and its day. Every row held out (no rate for its day) is an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING

import typer

from gpuprices.options import fail
from gpuprices.output import Format, print_frame

if TYPE_CHECKING:
    import duckdb
    import polars as pl

__all__ = ["Money"]

_WORD = re.compile(r"(?<![a-z])usd(?![a-z])")
FX_COLUMNS = ("fx_rate", "fx_date", "fx_note")  # what warehouse.fx.in_currency adds


@dataclass(slots=True)
class Money:
    """The currency amounts are printed in; USD: as stored, nothing converted."""

    currency: str = "USD"
    _rates: dict[date, tuple[float | None, date | None, str | None]] = field(
        default_factory=dict, repr=False)

    @classmethod
    def of(cls, currency: str | None) -> Money:
        return cls(currency or "USD")

    @property
    def converting(self) -> bool:
        return self.currency != "USD"

    def convert(self, con: duckdb.DuckDBPyConnection, frame: pl.DataFrame, *,
                day: date | None = None, day_column: str | None = None) -> pl.DataFrame:
        """`frame`'s amounts at the rate of `day` (or of each row's `day_column`)."""
        if not self.converting:
            return frame
        from warehouse.fx import currencies, in_currency

        known = currencies(con)
        if self.currency not in known:
            raise fail(f"no ECB rates for {self.currency} in the warehouse"
                       + (f"; it has {', '.join(known)}" if known else
                          ": run `gpuprices backfill ecb` first"), 2)
        converted = in_currency(con, frame, self.currency, day=day, day_column=day_column)
        for row in converted.select("fx_rate", "fx_date", "fx_note",
                                    *([day_column] if day_column else [])).unique().iter_rows():
            shown = row[3] if day_column else day
            self._rates[shown] = (row[0], row[1], row[2])  # type: ignore[index]
        if converted.height and converted["fx_rate"].null_count() == converted.height:
            raise fail(str(converted["fx_note"].drop_nulls()[0]))
        return converted

    def label(self, text: str) -> str:
        """A column name or title, in the currency: usd -> eur, $ -> EUR."""
        if not self.converting:
            return text
        return _WORD.sub(self.currency.lower(), text).replace("$", f"{self.currency} ")\
            .replace(f"{self.currency} /", f"{self.currency}/")

    def show(self, frame: pl.DataFrame, fmt: Format, *, title: str | None = None,
             max_rows: int | None = None) -> None:
        """Print `frame` with its amounts named in the currency (and a footnote: the rate)."""
        if self.converting:
            if fmt is Format.table:  # the footnote gives the rates
                frame = frame.drop([c for c in FX_COLUMNS if c in frame.columns])
            frame = frame.rename({c: self.label(c) for c in frame.columns})
            title = self.label(title) if title else title
        print_frame(frame, fmt, title=title, max_rows=max_rows)
        if self.converting and fmt is Format.table:
            typer.echo(self.footnote())

    def footnote(self) -> str:
        """How the amounts were converted: the rate and its day, or why a day has none."""
        lines = [self._line(shown, *used) for shown, used in
                 sorted(self._rates.items(), key=lambda item: str(item[0]))]
        if len(lines) == 1:
            [(shown, (rate, rate_day, note))] = self._rates.items()
            if rate is None:
                return f"amounts in {self.currency}: held out: {note}"
            return (f"amounts in {self.currency} at 1 {self.currency} = {rate:.6g} USD, the ECB "
                    f"reference rate of {rate_day} (the rate of {shown})")
        return (f"amounts in {self.currency}, each at the ECB rate of the day shown:\n  "
                + "\n  ".join(lines))

    def _line(self, shown: date, rate: float | None, rate_day: date | None,
              note: str | None) -> str:
        if rate is None:
            return f"{shown}: {note} (held out: no amount)"
        return (f"{shown}: 1 {self.currency} = {rate:.6g} USD, the ECB reference rate of "
                f"{rate_day}")
