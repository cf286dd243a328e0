"""Cluster cost: N GPUs for D days at each provider, in its largest nodes.

nodes = ceil(N / GPUs per node of the provider's largest comparable offering)
hourly = nodes x the node's $/hour;  total = hourly x 24 x D
Reserved / committed prices, where stored (pricing 'reserved'), are quoted beside, with the
term read from the offering name ("1 Year reservation", "3 Years commitment"). The market
price (reports/market.py) x N x 24 x D is the yardstick. List prices: whether a provider has
N GPUs free at once is not known here.
"""

from __future__ import annotations

import re

import polars as pl

__all__ = ["cluster_quotes", "reserved_term"]

_TERM = re.compile(r"(\d+)\s*(year|yr|month)s?\b[^)]*?(reservation|reserved|commitment|commit)?",
                   re.IGNORECASE)


def reserved_term(offering: str) -> str:
    """The commitment term named in an offering, e.g. '3 years', or 'term not stated'."""
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


def cluster_quotes(offers: pl.DataFrame, market: pl.DataFrame, *, gpus: int,
                   days: int) -> pl.DataFrame:
    """One row per provider. `offers`: market_offers rows of the chosen GPU models;
    `market`: market_values rows (segment 'all' is used)."""
    whole = (pl.col("gpu_count") >= 1) & ~pl.col("gpu_only")
    steady = offers.filter(pl.col("excluded").is_null())
    largest = (
        _nodes(steady, gpus, days)
        .sort("gpu_count", "hourly_usd", descending=[True, False])
        .group_by("provider", maintain_order=True).first()
    )
    reserved = (
        _nodes(offers.filter(whole & (pl.col("pricing") == "reserved")
                             & pl.col("excluded").is_in(["other_pricing"])), gpus, days)
        .with_columns(pl.col("offering").map_elements(reserved_term, return_dtype=pl.String)
                      .alias("term"))
        .sort("hourly_usd").group_by("provider", maintain_order=True).first()
        .select("provider", pl.col("offering").alias("reserved_offering"),
                pl.col("term").alias("reserved_term"),
                pl.col("hourly_usd").alias("reserved_hourly_usd"),
                pl.col("total_usd").alias("reserved_total_usd"))
    )
    yardstick = market.filter(pl.col("segment") == "all").select(
        "gpu_model", pl.col("usd_per_gpu_hour").alias("market_usd_per_gpu_hour"),
        pl.col("withheld_reason").alias("market_withheld"))
    return (
        largest.join(reserved, on="provider", how="full", coalesce=True)
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
        .sort(pl.col("total_usd").is_null(), "total_usd", "provider")
    )
