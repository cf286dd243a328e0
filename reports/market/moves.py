"""Honest market moves: a price change is measured only over providers present on both days.

A provider that appears or leaves changes the cross-provider median without any price moving;
those are coverage changes, reported apart. A provider whose prices are carried forward (its
source failed, but was seen within the freshness limit) keeps its last seen price, so its part
of the move is what it really was when last seen, never a drop made by the outage; it is named
in `carried`. A move over fewer matched providers than market.toml's min_providers is withheld.
The numbers are warehouse.semantic_market's (`market_moves`, `coverage_changes`), read from the
stored per-provider medians: the board, `market-moves` and the report show the same move.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

import duckdb
import polars as pl

from reports.markdown import money, pct, table
from warehouse.fx import USD, Unit
from warehouse.place import EVERYWHERE, Place
from warehouse.semantic_market import coverage_changes, market_moves

__all__ = ["PERIOD_DAYS", "Moves", "market_moves_markdown", "moves_between", "week_moves"]

PERIOD_DAYS = {"week": 7, "month": 30}


@dataclass(frozen=True, slots=True)
class Moves:
    old_day: date
    new_day: date
    moves: pl.DataFrame     # per GPU model: matched, old_ and new_usd_per_gpu_hour, pct_change
    coverage: pl.DataFrame  # providers that joined or left

    def published(self) -> pl.DataFrame:
        return self.moves.filter(pl.col("withheld_reason").is_null())


def moves_between(con: duckdb.DuckDBPyConnection, old_day: date, new_day: date, *,
                  gpu_models: list[str] | None = None, place: Place = EVERYWHERE,
                  now: datetime | None = None) -> Moves:
    """The moves between two days, of the market everywhere or in `place`."""
    return Moves(old_day, new_day,
                 market_moves(con, old_day, new_day, gpu_models=gpu_models, place=place,
                              now=now),
                 coverage_changes(con, old_day, new_day, gpu_models=gpu_models, place=place,
                                  now=now))


def week_moves(con: duckdb.DuckDBPyConnection, day: date, *, period: str = "week",
               gpu_models: list[str] | None = None, place: Place = EVERYWHERE,
               now: datetime | None = None) -> Moves:
    """The moves of the `period` ending on `day` (week: 7 days, month: 30)."""
    return moves_between(con, day - timedelta(days=PERIOD_DAYS[period]), day,
                         gpu_models=gpu_models, place=place, now=now)


def market_moves_markdown(moves: Moves, *, limit: int = 15, unit: Unit = USD) -> list[str]:
    """The week-over-week report lines: matched moves (drops first), then coverage changes;
    amounts in `unit` (the rate of the later day, as `market-moves --currency`)."""
    published = moves.published()
    moved = published.filter(pl.col("pct_change") != 0)
    withheld = moves.moves.filter(pl.col("withheld_reason").is_not_null())
    parts = [f"### Market price moves since {moves.old_day} (matched providers)", "",
             unit.label("Median $/GPU-hour") + " over the providers that quote the GPU on "
             "both days (the market rule of warehouse/market.toml, segment all); a provider "
             "carried forward from its last seen prices (its source failed) is named. "
             f"{published.height - moved.height} models did not move.", ""]
    parts.append(table(
        ["GPU", "matched providers", "old", "new", "change", "median provider change",
         "down / up", "carried forward"],
        [[r["gpu_model"], r["matched"], money(r["old_usd_per_gpu_hour"], unit=unit),
          money(r["new_usd_per_gpu_hour"], unit=unit),
          pct(r["pct_change"]), pct(r["median_provider_pct"]),
          f"{r['providers_down']} / {r['providers_up']}", ", ".join(r["carried"]) or "–"]
         for r in moved.head(limit).to_dicts()],
        [False, True, True, True, True, True, True, False]) if moved.height else "None.")
    if withheld.height:
        names = ", ".join(f"{r['gpu_model']} ({r['matched']})" for r in withheld.to_dicts())
        parts += ["", f"Not enough matched providers for a move (matched providers in "
                  f"brackets): {names}."]
    coverage = moves.coverage
    parts += ["", "### Coverage changes (not price moves)", ""]
    parts.append(table(
        ["GPU", "provider", "segment", "change", unit.label("$/GPU-h")],
        [[r["gpu_model"], r["provider"], r["segment"], r["change"],
          money(r["median_usd_per_gpu_hour"], unit=unit)] for r in coverage.head(limit).to_dicts()],
        [False, False, False, False, True]) if coverage.height else "None.")
    if coverage.height > limit:
        parts.append(f"\n({coverage.height - limit} more.)")
    parts.append("")
    return parts
