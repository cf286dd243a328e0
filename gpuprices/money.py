"""`--currency`: the amounts a command prints, in another currency (the flag is defined once
in gpuprices.options; gpuprices.api converts, with warehouse.fx.in_currency at the rate of the
day shown, and names the amount columns for the currency: usd_per_gpu_hour -> eur_per_gpu_hour).

A command reads the rates of the frame the API gave it (`Money.seen`, before it picks its
table columns, which it names with `Money.label`), then prints it with `Money.show`: csv and
json keep fx_rate / fx_date / fx_note, and a table ends with a footnote that gives the rate
and its day (or why a day has none).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING

import typer

from gpuprices.output import Format, Section, print_frame, print_frames
from warehouse.frames import Rows

if TYPE_CHECKING:
    import polars as pl

__all__ = ["FX_COLUMNS", "Money"]

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

    @property
    def code(self) -> str | None:
        """What gpuprices.api takes as `currency` (None: USD, nothing converted)."""
        return self.currency if self.converting else None

    def seen(self, frame: pl.DataFrame, *, day: date | None = None,
             day_column: str | None = None) -> pl.DataFrame:
        """`frame` (converted by gpuprices.api at the rate of `day`, or of each row's
        `day_column`), its rates kept for the footnote."""
        if not self.converting or "fx_rate" not in frame.columns:
            return frame
        for row in frame.select(*FX_COLUMNS, *([day_column] if day_column else [])
                                ).unique().iter_rows():
            shown = row[3] if day_column else day
            self._rates[shown] = (row[0], row[1], row[2])  # type: ignore[index]
        return frame

    def label(self, text: str) -> str:
        """A column name or title, in the currency: usd -> eur, $ -> EUR."""
        if not self.converting:
            return text
        from warehouse.fx import named_in

        return named_in(text, self.currency)

    def _shown(self, frame: pl.DataFrame | Rows, fmt: Format) -> pl.DataFrame | Rows:
        if not self.converting:
            return frame
        if isinstance(frame, Rows):
            raise TypeError("amounts in another currency are a polars frame's")
        if fmt is Format.table:  # the footnote gives the rates
            frame = frame.drop([c for c in FX_COLUMNS if c in frame.columns])
        return frame.rename({c: self.label(c) for c in frame.columns})

    def show(self, frame: pl.DataFrame | Rows, fmt: Format, *, title: str | None = None,
             max_rows: int | None = None, priority: Sequence[str] | None = None) -> None:
        """Print `frame` with its amounts named in the currency (and a footnote: the rate)."""
        print_frame(self._shown(frame, fmt), fmt, title=self.label(title) if title else title,
                    max_rows=max_rows,
                    priority=[self.label(c) for c in priority] if priority else None)
        self._footnote(fmt)

    def show_frames(self, sections: Sequence[Section], fmt: Format) -> None:
        """Print a command's tables (one JSON document), then the footnote once."""
        print_frames([(key, self.label(title), self._shown(frame, fmt))
                      for key, title, frame in sections], fmt)
        self._footnote(fmt)

    def _footnote(self, fmt: Format) -> None:
        if self.converting and fmt is Format.table and self._rates:
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
