"""Week over week: how each GPU model's cheapest price moved, and offerings that came and went."""

from __future__ import annotations

import polars as pl

from reports.markdown import money, pct, table
from reports.market_changes import market_moves_markdown
from reports.offers import STEADY_PRICING, comparable_offers

OFFER_KEY = ("provider", "offering", "region", "pricing")


def cheapest_per_model(prices: pl.DataFrame,
                       pricing: tuple[str, ...] = ("on_demand",)) -> pl.DataFrame:
    return (
        comparable_offers(prices, pricing)
        .sort("price_usd_per_gpu_hour", "provider", "offering")
        .group_by("gpu_model", maintain_order=True)
        .agg(pl.col("price_usd_per_gpu_hour").first().alias("usd_per_gpu_hour"),
             pl.col("provider").first(), pl.col("stale").first())
    )


def model_moves(old: pl.DataFrame, new: pl.DataFrame,
                pricing: tuple[str, ...] = ("on_demand",)) -> pl.DataFrame:
    """Per GPU model present in both weeks: cheapest old -> new and the change in %.

    Sorted biggest drop first; models whose cheapest price did not move are left out.
    """
    before = cheapest_per_model(old, pricing).rename(
        {"usd_per_gpu_hour": "old_usd", "provider": "old_provider", "stale": "old_stale"})
    after = cheapest_per_model(new, pricing).rename(
        {"usd_per_gpu_hour": "new_usd", "provider": "new_provider", "stale": "new_stale"})
    return (
        before.join(after, on="gpu_model", how="inner")
        .with_columns(((pl.col("new_usd") - pl.col("old_usd")) / pl.col("old_usd") * 100)
                      .round(2).alias("pct_change"))
        .filter(pl.col("new_usd") != pl.col("old_usd"))
        .sort("pct_change", "gpu_model")
    )


def offering_diff(old: pl.DataFrame, new: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(new offerings, vanished offerings) by provider x offering x region x pricing."""
    shown = [*OFFER_KEY, "gpu_model", "price_usd_per_gpu_hour", "stale"]
    appeared = new.join(old, on=list(OFFER_KEY), how="anti").select(shown)
    vanished = old.join(new, on=list(OFFER_KEY), how="anti").select(shown)
    return appeared.sort(*OFFER_KEY), vanished.sort(*OFFER_KEY)


def _offer_rows(frame: pl.DataFrame, limit: int) -> list[list[object]]:
    return [[r["provider"], r["offering"], r["region"], r["pricing"], r["gpu_model"],
             money(r["price_usd_per_gpu_hour"], r["stale"])] for r in frame.head(limit).to_dicts()]


def changes_section(old: pl.DataFrame, new: pl.DataFrame, *, week_ago_label: str,
                    chart_files: list[str], limit: int = 10,
                    market: tuple[pl.DataFrame, pl.DataFrame] | None = None) -> str:
    """`market`: per-provider market medians (week ago, now) for the matched moves."""
    parts = ["## 4. Week over week", ""]
    if market is not None and old.height:
        parts += market_moves_markdown(*market, since_label=week_ago_label)
    if old.height == 0:
        parts += [f"No prices stored as of {week_ago_label}: week-over-week changes need at "
                  "least a week of history.", ""]
    else:
        moves = model_moves(old, new)
        drops = moves.filter(pl.col("pct_change") < 0).head(limit)
        rises = moves.filter(pl.col("pct_change") > 0).sort("pct_change", descending=True)
        headers = ["GPU", "old", "new", "change", "cheapest now at"]
        for title, frame in (("Biggest drops", drops), ("Biggest rises", rises.head(limit))):
            parts += [f"### {title} (cheapest on-demand $/GPU-hour vs {week_ago_label})", ""]
            parts.append(table(headers, [
                [r["gpu_model"], money(r["old_usd"], r["old_stale"]),
                 money(r["new_usd"], r["new_stale"]), pct(r["pct_change"]), r["new_provider"]]
                for r in frame.to_dicts()], [False, True, True, True, False])
                if frame.height else "None.")
            parts.append("")
        appeared, vanished = offering_diff(comparable_offers(old, STEADY_PRICING),
                                           comparable_offers(new, STEADY_PRICING))
        headers = ["provider", "offering", "region", "pricing", "GPU", "$/GPU-h"]
        for title, frame in (("New offerings", appeared), ("Vanished offerings", vanished)):
            more = f" (first {limit} of {frame.height})" if frame.height > limit else ""
            parts += [f"### {title}{more}", ""]
            parts.append(table(headers, _offer_rows(frame, limit),
                               [False] * 5 + [True]) if frame.height else "None.")
            parts.append("")
    if chart_files:
        parts += ["### Cheapest on-demand price per day", ""]
        parts += [f"![{name}]({name})" for name in chart_files]
        parts.append("")
    return "\n".join(parts)
