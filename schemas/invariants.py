"""The suspect-layout guard: a batch whose rows mostly break the page's own invariants.

The plausibility band catches a price in the wrong unit; it does not catch a parser that reads
the wrong cells of a page it half recognises (CoreWeave 2026 read by the 2025 parser: GPU count
200 from "GB200", memory from the count, a spot price stored as on-demand). Such rows are
plausible one by one and wrong together. Every row is checked against invariants any honest
reading of a page keeps:

- `count_from_name`: a GPU count above 16 that is a number written inside the GPU name
  (GB200 -> 200, L40S -> 40, H100 -> 100). Real counts of that size (a TPU pod, a cluster) do
  not repeat the model number.
- `per_gpu_price_mismatch`: the per-GPU price is not the offering price / GPU count.
- `memory_not_the_cards`: the per-GPU memory is less than half or more than twice the
  catalog card's (memory read from another cell).
- `conflicting_duplicate`: the same offering x pricing x region (and count, gpu_only) twice in
  one batch with different prices: one of them is from the wrong cell. Not checked for
  aggregators (OpenComputePrices, SkyPilot, ec2instances): they list one offering per zone or
  per reseller, so their duplicates are real (ocp_massedcompute: 44 of 59 rows).

`suspect_layout` names the broken invariants when more than half of the rows break at least
one; the caller then rejects the batch whole (earlier prices stay current, the raw capture
stays archived for `reparse`). Pure functions on an observation frame.
"""

from __future__ import annotations

import polars as pl

from schemas.gpus import UNKNOWN_GPU, catalog_frame

__all__ = ["INVARIANTS", "SUSPECT_SHARE", "broken_invariants", "suspect_layout"]

SUSPECT_SHARE = 0.5  # more than this share of rows breaking an invariant: the layout is suspect
MAX_PLAIN_COUNT = 16  # no single instance has more GPUs than this (larger counts are pods)
INVARIANTS = ("count_from_name", "per_gpu_price_mismatch", "memory_not_the_cards",
              "conflicting_duplicate")
_DUPLICATE_KEY = ("source", "offering", "pricing", "region", "gpu_count", "gpu_only",
                  "term_months", "effective_from")


def _count_from_name() -> pl.Expr:
    count = pl.col("gpu_count")
    digits = pl.col("gpu_name").fill_null("").str.extract_all(r"\d+")
    as_text = count.cast(pl.Int64, strict=False).cast(pl.String)
    return ((count > MAX_PLAIN_COUNT) & (count == count.floor())
            & digits.list.contains(as_text)).fill_null(False)


def _per_gpu_mismatch() -> pl.Expr:
    expected = pl.col("price_usd_per_hour") / pl.col("gpu_count")
    return ((pl.col("price_usd_per_gpu_hour") - expected).abs()
            > 1e-6 + 1e-4 * expected.abs()).fill_null(False)


def broken_invariants(observations: pl.DataFrame, *,
                      duplicates_conflict: bool = True) -> pl.DataFrame:
    """The observations with one boolean column per invariant (True = broken)."""
    frame = observations
    if "price_usd_per_gpu_hour" not in frame.columns:
        frame = frame.with_columns(
            (pl.col("price_usd_per_hour") / pl.col("gpu_count")).alias("price_usd_per_gpu_hour"))
    memory = catalog_frame().select("gpu_model", pl.col("memory_gb").alias("_card_gb"))
    key = [c for c in _DUPLICATE_KEY if c in frame.columns]
    return (
        frame.with_row_index("_row")
        .join(memory, on="gpu_model", how="left")
        .sort("_row")
        .with_columns(
            _count_from_name().alias("count_from_name"),
            _per_gpu_mismatch().alias("per_gpu_price_mismatch"),
            (
                (pl.col("gpu_model") != UNKNOWN_GPU) & pl.col("gpu_memory_gb").is_not_null()
                & ((pl.col("gpu_memory_gb") < 0.5 * pl.col("_card_gb"))
                   | (pl.col("gpu_memory_gb") > 2 * pl.col("_card_gb")))
            ).fill_null(False).alias("memory_not_the_cards"),
            ((pl.col("price_usd_per_hour").n_unique().over(key) > 1)
             & pl.lit(duplicates_conflict)).fill_null(False).alias("conflicting_duplicate"),
        )
        .drop("_row", "_card_gb")
    )


def suspect_layout(observations: pl.DataFrame, *, duplicates_conflict: bool = True,
                   share: float = SUSPECT_SHARE) -> str | None:
    """Why the batch looks like a misread layout, or None when most rows keep the invariants.

    `duplicates_conflict=False` for aggregators, whose repeated offerings are real.
    """
    if observations.height == 0:
        return None
    flags = broken_invariants(observations, duplicates_conflict=duplicates_conflict
                              ).select(INVARIANTS)
    broken_rows = flags.select(pl.any_horizontal(INVARIANTS).sum()).item()
    if broken_rows <= share * observations.height:
        return None
    counts = {name: flags[name].sum() for name in INVARIANTS if flags[name].sum()}
    detail = ", ".join(f"{name} {n}" for name, n in counts.items())
    return (f"suspect layout: {broken_rows} of {observations.height} rows break the page's "
            f"invariants ({detail}); batch rejected whole")
