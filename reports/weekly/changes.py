"""Week over week: the market's matched moves (reports.market.moves, the same move the board
and `market-moves` show), coverage changes apart, and offerings that came and went."""

from __future__ import annotations

import polars as pl

from reports.markdown import money, table
from reports.market.moves import Moves, market_moves_markdown
from warehouse.fx import USD, Unit
from warehouse.semantic import Prices

__all__ = ["OFFER_KEY", "changes_section", "offering_diff"]

OFFER_KEY = ("provider", "offering", "region", "pricing")


def offering_diff(old: Prices, new: Prices) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(new offerings, vanished offerings) among the comparable offers, by provider x offering
    x region x pricing."""
    shown = [*OFFER_KEY, "gpu_model", "price_usd_per_gpu_hour"]
    before, after = old.comparable(), new.comparable()
    appeared = after.join(before, on=list(OFFER_KEY), how="anti").select(shown)
    vanished = before.join(after, on=list(OFFER_KEY), how="anti").select(shown)
    return appeared.sort(*OFFER_KEY), vanished.sort(*OFFER_KEY)


def _offer_rows(frame: pl.DataFrame, limit: int, unit: Unit) -> list[list[object]]:
    return [[r["provider"], r["offering"], r["region"], r["pricing"], r["gpu_model"],
             money(r["price_usd_per_gpu_hour"], unit=unit)] for r in frame.head(limit).to_dicts()]


def changes_section(old: Prices, new: Prices, moves: Moves, *, week_ago_label: str,
                    chart_files: list[str], limit: int = 10, units: tuple[Unit, Unit] = (USD, USD)
                    ) -> str:
    """`old`, `new`: the prices a week apart; `moves`: the market's moves between their days;
    `units`: the money of the old day and of the new (a vanished offering is priced at the
    rate of the day it was last quoted, a new one and the market's moves at the new day's)."""
    old_unit, unit = units
    parts = ["## 4. Week over week", ""]
    if old.offers().height == 0:
        parts += [f"No prices stored as of {week_ago_label}: week-over-week changes need at "
                  "least a week of history.", ""]
    else:
        parts += market_moves_markdown(moves, unit=unit)
        appeared, vanished = offering_diff(old, new)
        headers = ["provider", "offering", "region", "pricing", "GPU", unit.label("$/GPU-h")]
        for title, frame, shown in (("New offerings", appeared, unit),
                                    ("Vanished offerings", vanished, old_unit)):
            more = f" (first {limit} of {frame.height})" if frame.height > limit else ""
            parts += [f"### {title}{more}", ""]
            parts.append(table(headers, _offer_rows(frame, limit, shown),
                               [False] * 5 + [True]) if frame.height else "None.")
            if frame.height and shown.usd_per_unit is None:
                parts.append(f"\nPrices held out: {shown.note}.")
            parts.append("")
    if chart_files:
        parts += ["### Cheapest comparable offer per day", ""]
        parts += [f"![{name}]({name})" for name in chart_files]
        parts.append("")
    return "\n".join(parts)
