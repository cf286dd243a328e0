"""Cluster cost: N GPUs for D days at each provider, in its largest nodes.

nodes = ceil(N / GPUs per node of the provider's largest comparable offering)
hourly = nodes x the node's $/hour;  total = hourly x 24 x D
Reserved / committed prices of the same GPU model at the same provider, where stored
(comparable offers of pricing 'reserved'), are quoted beside, with their term (term_months,
else read from the offering name: "1 Year reservation", "3 Years commitment"). The market
price x N x 24 x D is the yardstick. List prices: whether a provider has N GPUs free at once
is not known here.
"""

from __future__ import annotations

import re

import polars as pl

from warehouse.semantic import ALL, Prices

__all__ = ["cluster_quotes", "reserved_term"]

_TERM = re.compile(r"(\d+)[\s-]*(year|yr|month)s?\b[^)]*?(reservation|reserved|commitment|commit)?",
                   re.IGNORECASE)


def reserved_term(offering: str, term_months: float | None = None) -> str:
    """The commitment term, e.g. '3 years', from term_months or the offering's name."""
    if term_months:
        count, unit = ((int(term_months // 12), "year") if term_months % 12 == 0
                       else (int(term_months), "month"))
        return f"{count} {unit}{'s' if count != 1 else ''}"
    match = _TERM.search(offering)
    if not match:
        return "term not stated"
    unit = "year" if match.group(2).lower() in ("year", "yr") else "month"
    count = int(match.group(1))
    return f"{count} {unit}{'s' if count != 1 else ''}"


def _nodes(frame: pl.DataFrame, gpus: int, days: int) -> pl.DataFrame:
    nodes = (pl.lit(gpus) / pl.col("gpu_count")).ceil().cast(pl.Int64)
    return frame.with_columns(nodes.alias("nodes")).with_columns(
        (pl.col("nodes") * pl.col("gpu_count")).cast(pl.Int64).alias("gpus_billed"),
        (pl.col("nodes") * pl.col("price_usd_per_hour")).alias("hourly_usd"),
    ).with_columns((pl.col("hourly_usd") * 24 * days).alias("total_usd"))


def cluster_quotes(prices: Prices, market: pl.DataFrame, gpu_models: list[str], *, gpus: int,
                   days: int) -> pl.DataFrame:
    """One row per provider: its largest comparable node of `gpu_models` (cheapest per hour
    among equal sizes), the reserved price of the same model beside it, and the market
    yardstick (`market`: market values of the day, segment 'all' is used)."""
    steady = prices.comparable().filter(pl.col("gpu_model").is_in(gpu_models))
    largest = (
        _nodes(steady, gpus, days)
        .sort("gpu_count", "hourly_usd", "gpu_model", "offering", descending=[True, False,
                                                                               False, False])
        .group_by("provider", maintain_order=True).first()
    )
    reserved = prices.comparable(("reserved",)).filter(pl.col("gpu_model").is_in(gpu_models))
    reserved = (
        _nodes(reserved, gpus, days)
        .with_columns(pl.struct("offering", "term_months").map_elements(
            lambda r: reserved_term(r["offering"], r["term_months"]), return_dtype=pl.String)
            .alias("term"))
        .sort("hourly_usd", "offering").group_by("provider", "gpu_model", maintain_order=True)
        .first()
        .select("provider", "gpu_model", pl.col("offering").alias("reserved_offering"),
                pl.col("term").alias("reserved_term"),
                pl.col("hourly_usd").alias("reserved_hourly_usd"),
                pl.col("total_usd").alias("reserved_total_usd"))
    )
    yardstick = market.filter(pl.col("segment") == ALL).select(
        "gpu_model", "market_usd_per_gpu_hour",
        pl.col("withheld_reason").alias("market_withheld"))
    return (
        largest.join(reserved, on=["provider", "gpu_model"], how="left")
        .join(yardstick, on="gpu_model", how="left")
        .with_columns((pl.col("market_usd_per_gpu_hour") * gpus * 24 * days)
                      .alias("market_total_usd"))
        .with_columns(((pl.col("total_usd") / pl.col("market_total_usd") - 1) * 100).round(1)
                      .alias("vs_market_pct"))
        .select("provider", "segment", "gpu_model", "offering",
                pl.col("gpu_count").alias("node_gpus"), "nodes", "gpus_billed",
                pl.col("price_usd_per_hour").alias("node_usd_per_hour"), "hourly_usd",
                "total_usd", "market_total_usd", "vs_market_pct", "reserved_offering",
                "reserved_term", "reserved_hourly_usd", "reserved_total_usd",
                "carried_days", "market_withheld")
        .sort("total_usd", "provider")
    )
