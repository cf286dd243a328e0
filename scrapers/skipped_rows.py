"""Rows a source saw but did not store, counted by reason; a strategy parser that keeps them.

A page shows more than prices a tracker can store: "Contact sales" instead of a number, a
machine name in a price cell, a legacy part whose name gives no GPU, a price in another
currency. Such rows are skipped, never guessed, and the reasons are counted so that a test,
a log line or `gpuprices parse` can say what was left out and why.

`CountedParser` is a `pagekit.StrategyParser` whose strategies return a `Reading` (rows +
skip counts) instead of a frame; it runs them in the same order with the same ParseError, and
keeps the skip counts of the strategy that read the page.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import polars as pl
from bs4 import BeautifulSoup

from scrapers.base import ParseError, RawCapture, rows_frame
from scrapers.pagekit import parse_with_strategies

__all__ = ["CountedParser", "CountedStrategy", "Reading"]

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Reading:
    """What one strategy read: the rows it keeps and the rows it skipped, by reason."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)

    def skip(self, reason: str, count: int = 1) -> None:
        self.skipped[reason] += count

    def frame(self) -> pl.DataFrame:
        return rows_frame(self.rows)


CountedStrategy = tuple[str, Callable[[RawCapture, BeautifulSoup], Reading | None]]


@dataclass(frozen=True, slots=True)
class CountedParser:
    """A page source's parse function (callable, with `parse_with_strategy` like pagekit's)."""

    source: str
    strategies: tuple[CountedStrategy, ...]
    accepts: Callable[[RawCapture], None] | None = None

    def __call__(self, raw: RawCapture) -> pl.DataFrame:
        return self.parse_with_strategy(raw)[0]

    def parse_with_strategy(self, raw: RawCapture) -> tuple[pl.DataFrame, str]:
        reading, strategy = self.read(raw)
        if reading.skipped:
            log.info("%s: skipped %s", self.source, dict(reading.skipped))
        return reading.frame(), strategy

    def read(self, raw: RawCapture) -> tuple[Reading, str]:
        """The reading of the first strategy that found rows, and its name."""
        readings: dict[str, Reading] = {}

        def adapt(name: str, strategy: Callable[[RawCapture, BeautifulSoup], Reading | None],
                  ) -> tuple[str, Callable[[RawCapture, BeautifulSoup], pl.DataFrame | None]]:
            def run(raw: RawCapture, soup: BeautifulSoup) -> pl.DataFrame | None:
                reading = strategy(raw, soup)
                if reading is None:
                    return None
                readings[name] = reading
                return reading.frame()
            return name, run

        try:
            _, name = parse_with_strategies(
                self.source, raw, [adapt(n, s) for n, s in self.strategies],
                accepts=self.accepts)
        except ParseError:
            skipped = sum((r.skipped for r in readings.values()), Counter())
            if skipped:  # the layout was recognised, but every row on it was skipped
                raise ParseError(f"{self.source}: no price stored; every row skipped "
                                 f"({_describe(skipped)})") from None
            raise
        return readings[name], name


def _describe(skipped: Counter[str]) -> str:
    """'2 contact sales, 1 not USD' for a log line or an error."""
    return ", ".join(f"{count} {reason}" for reason, count in skipped.most_common())
