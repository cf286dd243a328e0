"""Which GPU fits a model: VRAM needed by size x method, and the cheapest comparable offer with it.

vram_needed_gb = params (billions) x GB-per-billion (upper end of the rule of thumb) + 2 GB
(CUDA context and small-batch activations). Rules of thumb (per billion parameters):
full fine-tune 16-20 GB, LoRA 2-4 GB, QLoRA 0.5-0.7 GB, fp16 inference 2 GB.
An offer fits when gpu_count x per-GPU memory >= vram_needed_gb (multi-GPU offers shard the
model); its cost is the whole offering's $/hour.
"""

from __future__ import annotations

import re

import polars as pl

from reports.markdown import money, number, table
from warehouse.fx import USD, Unit
from warehouse.semantic import Prices

__all__ = ["GB_PER_BILLION", "MODEL_SIZES_B", "fit_matrix", "fit_section", "fitting_offers",
           "parse_params", "vram_needed_gb"]

# method -> (low, high) GB per billion parameters
GB_PER_BILLION: dict[str, tuple[float, float]] = {
    "full": (16.0, 20.0),
    "lora": (2.0, 4.0),
    "qlora": (0.5, 0.7),
    "inference": (2.0, 2.0),
}
OVERHEAD_GB = 2.0
_COST_ORDER = ("price_usd_per_hour", "gpu_count", "provider", "offering", "region")
MODEL_SIZES_B: tuple[float, ...] = (1.0, 7.0, 13.0, 70.0)
_PARAMS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([bBmM]?)\s*$")


def parse_params(text: str) -> float:
    """'70B' -> 70.0, '1.5b' -> 1.5, '124M' -> 0.124 (billions of parameters)."""
    match = _PARAMS.match(text)
    if not match:
        raise ValueError(f"cannot read a parameter count from {text!r} (try 7B, 1.5B, 124M)")
    value = float(match.group(1))
    return value / 1000 if match.group(2).lower() == "m" else value


def vram_needed_gb(params_b: float, method: str) -> float:
    if method not in GB_PER_BILLION:
        raise ValueError(f"unknown method {method!r}; one of {', '.join(GB_PER_BILLION)}")
    return round(params_b * GB_PER_BILLION[method][1] + OVERHEAD_GB, 2)


def _with_total_vram(prices: Prices) -> pl.DataFrame:
    """The comparable offers whose memory is known, with their total VRAM."""
    return (prices.comparable().filter(pl.col("gpu_memory_gb").is_not_null())
            .with_columns((pl.col("gpu_count") * pl.col("gpu_memory_gb"))
                          .alias("total_vram_gb")))


def fitting_offers(prices: Prices, needed_gb: float) -> pl.DataFrame:
    """Comparable offers with enough total VRAM, cheapest $/hour first."""
    return (
        _with_total_vram(prices)
        .filter(pl.col("total_vram_gb") >= needed_gb)
        .sort(_COST_ORDER)
        .select("provider", "offering", "gpu_model", "gpu_count", "gpu_memory_gb",
                "total_vram_gb", "region", "pricing", "price_usd_per_hour")
    )


def _cheapest_fit(prices: Prices, by_cost: pl.DataFrame, needed_gb: float) -> pl.DataFrame:
    """fitting_offers(prices, needed_gb).head(1), read from `by_cost` (every offer whose memory
    is known, sorted once by _COST_ORDER, ties in their first order): its first fitting row
    is that answer unless the next one ties with it on every key; then the answer is the one
    fitting_offers' own sort picks (not a stable one), so that sort is asked."""
    fits = by_cost.filter(pl.col("total_vram_gb") >= needed_gb).head(2)
    first = fits.select(_COST_ORDER).rows()
    if len(first) == 2 and first[0] == first[1]:
        return fitting_offers(prices, needed_gb).head(1)
    return fits.head(1)


def fit_matrix(prices: Prices, sizes: tuple[float, ...] = MODEL_SIZES_B,
               methods: tuple[str, ...] = tuple(GB_PER_BILLION)) -> pl.DataFrame:
    """One row per size x method: VRAM needed and the cheapest fitting offer (nulls if none)."""
    rows = []
    # once for every size x method
    by_cost = _with_total_vram(prices).sort(_COST_ORDER, maintain_order=True)
    for size in sizes:
        for method in methods:
            needed = vram_needed_gb(size, method)
            best = _cheapest_fit(prices, by_cost, needed).to_dicts()
            offer = best[0] if best else {}
            rows.append({"params_b": size, "method": method, "vram_needed_gb": needed,
                         "provider": offer.get("provider"), "offering": offer.get("offering"),
                         "gpu_model": offer.get("gpu_model"),
                         "gpu_count": offer.get("gpu_count"),
                         "total_vram_gb": offer.get("total_vram_gb"),
                         "price_usd_per_hour": offer.get("price_usd_per_hour")})
    return pl.DataFrame(rows, schema={
        "params_b": pl.Float64, "method": pl.String, "vram_needed_gb": pl.Float64,
        "provider": pl.String, "offering": pl.String, "gpu_model": pl.String,
        "gpu_count": pl.Float64, "total_vram_gb": pl.Float64, "price_usd_per_hour": pl.Float64})


def fit_section(prices: Prices, unit: Unit = USD) -> str:
    rules = ", ".join(f"{m} {lo:g}–{hi:g}" for m, (lo, hi) in GB_PER_BILLION.items())
    parts = ["## 6. Which GPU fits", "",
             f"VRAM needed = params (B) x GB per billion (upper end of: {rules}) + "
             f"{OVERHEAD_GB:g} GB overhead. Cheapest comparable offer whose total VRAM "
             "(GPUs x memory) is enough; cost is the whole offering per hour.", ""]
    frame = fit_matrix(prices)
    parts.append(table(
        ["model", "method", "VRAM needed", "cheapest fit", "GPUs", "total VRAM",
         unit.label("$/hour")],
        [[f"{number(r['params_b'])}B", r["method"], f"{number(r['vram_needed_gb'])} GB",
          f"{r['provider']} {r['offering']}" if r["provider"] else "no offer fits",
          f"{number(r['gpu_count'])}x {r['gpu_model']}" if r["gpu_model"] else "–",
          f"{number(r['total_vram_gb'])} GB" if r["total_vram_gb"] else "–",
          money(r["price_usd_per_hour"], unit=unit)] for r in frame.to_dicts()],
        [False, False, True, False, False, True, True],
    ))
    parts.append("")
    return "\n".join(parts)
