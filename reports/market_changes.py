"""Honest market moves: a price change is measured only over providers present in both periods.

A provider that appears or leaves changes the cross-provider median without any price moving;
those are coverage changes, reported apart. A provider whose prices are carried forward (its
source failed; `carried_days` > 0, at most market.toml's window) keeps its last seen price, so
its part of the move is what it really was when last seen, never a drop made by the outage;
it is named in `carried`. Past the window it has no price and counts as having left.
"""

from __future__ import annotations

import polars as pl

from reports.markdown import money, pct, table

__all__ = ["coverage_changes", "market_moves_markdown", "market_section", "matched_moves"]

_KEY = ["gpu_model", "provider"]


def _overall(providers: pl.DataFrame) -> pl.DataFrame:
    return providers.select(*_KEY, "segment", "usd_per_gpu_hour", "carried_days")


def matched_moves(old: pl.DataFrame, new: pl.DataFrame) -> pl.DataFrame:
    """Per GPU model: the median over matched providers, old -> new, and the change in %.

    `old`, `new`: per-provider medians (reports.market.market_values()[0], or rows of
    market_provider_price) of two days. Matched = quoted on both days (carried forward or not).
    `median_provider_pct` is the median of each matched provider's own change.
    """
    both = _overall(old).join(_overall(new), on=_KEY, how="inner", suffix="_new")
    carried = (both.filter((pl.col("carried_days") > 0) | (pl.col("carried_days_new") > 0))
               .group_by("gpu_model").agg(pl.col("provider").sort().alias("carried")))
    moves = (
        both.with_columns(((pl.col("usd_per_gpu_hour_new") / pl.col("usd_per_gpu_hour") - 1)
                            * 100).alias("provider_pct"))
        .group_by("gpu_model")
        .agg(pl.len().alias("matched"),
             pl.col("usd_per_gpu_hour").median().alias("old_usd"),
             pl.col("usd_per_gpu_hour_new").median().alias("new_usd"),
             pl.col("provider_pct").median().round(2).alias("median_provider_pct"),
             (pl.col("provider_pct") < 0).sum().alias("providers_down"),
             (pl.col("provider_pct") > 0).sum().alias("providers_up"))
        .with_columns(((pl.col("new_usd") / pl.col("old_usd") - 1) * 100).round(2)
                      .alias("pct_change"))
    )
    return (moves.join(carried, on="gpu_model", how="left")
            .with_columns(pl.col("carried").fill_null([]))
            .select("gpu_model", "matched", "old_usd", "new_usd", "pct_change",
                    "median_provider_pct", "providers_down", "providers_up", "carried")
            .sort("pct_change", "gpu_model"))


def coverage_changes(old: pl.DataFrame, new: pl.DataFrame) -> pl.DataFrame:
    """Providers that started or stopped quoting a GPU model between the two days."""
    joined = _overall(new).join(_overall(old), on=_KEY, how="anti").with_columns(
        pl.lit("joined").alias("change"))
    left = _overall(old).join(_overall(new), on=_KEY, how="anti").with_columns(
        pl.lit("left").alias("change"))
    return pl.concat([joined, left]).select(
        "gpu_model", "provider", "segment", "change", "usd_per_gpu_hour"
    ).sort("gpu_model", "change", "provider")


def market_moves_markdown(old: pl.DataFrame, new: pl.DataFrame, *, since_label: str,
                          limit: int = 15) -> list[str]:
    """The week-over-week report lines: matched moves, then coverage changes."""
    moves = matched_moves(old, new)
    moved = moves.filter(pl.col("pct_change") != 0)
    parts = [f"### Market price moves since {since_label} (matched providers)", "",
             "Median $/GPU-hour over the providers that quote the GPU on both days (the "
             "market rule of reports/market.toml, segment all); a provider carried forward "
             "from its last seen prices (its source failed) is named. "
             f"{moves.height - moved.height} models did not move.", ""]
    parts.append(table(
        ["GPU", "matched providers", "old", "new", "change", "median provider change",
         "down / up", "carried forward"],
        [[r["gpu_model"], r["matched"], money(r["old_usd"]), money(r["new_usd"]),
          pct(r["pct_change"]), pct(r["median_provider_pct"]),
          f"{r['providers_down']} / {r['providers_up']}", ", ".join(r["carried"]) or "–"]
         for r in moved.head(limit).to_dicts()],
        [False, True, True, True, True, True, True, False]) if moved.height else "None.")
    coverage = coverage_changes(old, new)
    parts += ["", "### Coverage changes (not price moves)", ""]
    parts.append(table(
        ["GPU", "provider", "segment", "change", "$/GPU-h"],
        [[r["gpu_model"], r["provider"], r["segment"], r["change"],
          money(r["usd_per_gpu_hour"])] for r in coverage.head(limit).to_dicts()],
        [False, False, False, False, True]) if coverage.height else "None.")
    if coverage.height > limit:
        parts.append(f"\n({coverage.height - limit} more.)")
    parts.append("")
    return parts



def market_section(market: pl.DataFrame) -> str:
    """The report's market price table: one row per GPU model quoted by any provider."""
    overall = market.filter(pl.col("segment") == "all")
    segments = (market.filter((pl.col("segment") != "all")
                              & pl.col("usd_per_gpu_hour").is_not_null())
                .sort("segment")
                .group_by("gpu_model", maintain_order=True)
                .agg(pl.format("{} {}", pl.col("segment"),
                               pl.col("usd_per_gpu_hour").round(2)).str.join(", ")
                     .alias("segments")))
    rows = overall.join(segments, on="gpu_model", how="left").sort(
        pl.col("usd_per_gpu_hour").is_null(), pl.col("providers"), "gpu_model",
        descending=[False, True, False])
    parts = ["## 9. Market price per GPU", "",
             "Median over providers of each provider's median $/GPU-hour (available, whole "
             "offerings, pay-as-you-go, prices at most 3 days old, outliers left out; "
             "reports/market.toml). Withheld values say why. `gpuprices explain market GPU` "
             "shows how any of them was made.", ""]
    if rows.height == 0:
        return "\n".join([*parts, "No comparable offers.", ""])
    parts.append(table(
        ["GPU", "market", "min", "p25-p75", "providers", "offers", "segment medians",
         "withheld because"],
        [[r["gpu_model"], money(r["usd_per_gpu_hour"]), money(r["min_usd"]),
          f"{money(r['p25_usd'])}-{money(r['p75_usd'])}", r["providers"], r["offers"],
          r["segments"] or "–", r["withheld_reason"] or ""] for r in rows.to_dicts()],
        [False, True, True, True, True, True, False, False]))
    parts.append("")
    return "\n".join(parts)
