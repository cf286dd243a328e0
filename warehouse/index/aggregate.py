"""The index's arithmetic: robust aggregates of provider votes and the bootstrap band.

Pure numpy, no I/O. Every aggregate takes the passing providers' prints `p`, vote spreads `sd`
and weights `w` (one row per provider) and returns one number; each is also vectorised over a
batch of resamples (a 2-D array, one resample per row), so the bootstrap costs one call.

- central_third: each provider votes three times, at p - sd, p and p + sd, with its weight;
  the votes are sorted and the weighted mean of the central third of the vote mass (cumulative
  weight between 1/3 and 2/3 of the total, fractional at the edges) is the value.
- median: the plain median of the prints (the old market price's stage two).
- mean: the weighted mean of the prints.
- weighted_median: the print at half the cumulative weight.
- trimmed_mean: the mean of the prints with `trim` of them (by count) cut from each end.

The band resamples the providers with replacement: index j of resample b comes from
splitmix64(seed + counter), a counter-based generator anyone can re-implement, so a published
band is reproducible on any machine and numpy version.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["GOLDEN", "aggregate", "aggregate_batch", "bootstrap_band", "interquantile_mean",
           "series_seed", "splitmix64"]

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def splitmix64(counters: np.ndarray, seed: int) -> np.ndarray:
    """splitmix64 of seed + (counter + 1) x golden ratio, for each counter (uint64, wrapping)."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + (counters.astype(np.uint64) + np.uint64(1)) * GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


def series_seed(seed: int, *parts: object) -> int:
    """A 63-bit seed for one fixing: sha256 of the parameter seed, the day and the series."""
    text = "|".join(str(p) for p in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def interquantile_mean(x: np.ndarray, w: np.ndarray, low: float, high: float) -> np.ndarray:
    """Weighted mean of the mass between the `low` and `high` quantiles of cumulative weight,
    per row of `x` (values) and `w` (weights) of shape (batch, n)."""
    order = np.argsort(x, axis=1, kind="stable")
    xs = np.take_along_axis(x, order, axis=1)
    ws = np.take_along_axis(w, order, axis=1)
    upper = np.cumsum(ws, axis=1)
    lower = upper - ws
    total = upper[:, -1:]
    a, b = total * low, total * high
    if high <= low:  # the median of the mass: a zero-width band, take the vote(s) at it
        inside = (lower <= a) & (upper >= a) & (ws > 0)
        overlap = inside.astype(float)
    else:
        overlap = np.clip(np.minimum(upper, b) - np.maximum(lower, a), 0.0, None)
    return (overlap * xs).sum(axis=1) / overlap.sum(axis=1)


def aggregate_batch(method: str, p: np.ndarray, sd: np.ndarray, w: np.ndarray,
                    trim: float = 0.2) -> np.ndarray:
    """The aggregate of each row (one resample or panel per row; arrays of shape (batch, n))."""
    if method == "central_third":
        x = np.concatenate([p - sd, p, p + sd], axis=1)
        ww = np.concatenate([w, w, w], axis=1)
        return interquantile_mean(x, ww, 1 / 3, 2 / 3)
    if method == "median":
        return np.median(p, axis=1)
    if method == "mean":
        return (p * w).sum(axis=1) / w.sum(axis=1)
    if method == "weighted_median":
        return interquantile_mean(p, w, 0.5, 0.5)
    if method == "trimmed_mean":
        n = p.shape[1]
        cut = int(np.floor(trim * n))
        ordered = np.sort(p, axis=1)
        return ordered[:, cut:n - cut].mean(axis=1)
    raise ValueError(f"unknown aggregate {method!r}")


def aggregate(method: str, p: np.ndarray, sd: np.ndarray, w: np.ndarray,
              trim: float = 0.2) -> float:
    """The aggregate of one panel (1-D arrays, one entry per passing provider)."""
    return float(aggregate_batch(method, p[None, :], sd[None, :], w[None, :], trim)[0])


def bootstrap_band(method: str, p: np.ndarray, sd: np.ndarray, w: np.ndarray, *, seed: int,
                   resamples: int, low: float, high: float,
                   trim: float = 0.2) -> tuple[float, float]:
    """(low, high) quantiles of the aggregate over `resamples` resamples of the providers
    (n draws with replacement each); the value itself for one provider or no resamples."""
    n = len(p)
    if n <= 1 or resamples == 0:
        value = aggregate(method, p, sd, w, trim)
        return value, value
    counters = np.arange(resamples * n, dtype=np.uint64)
    picks = (splitmix64(counters, seed) % np.uint64(n)).astype(np.int64).reshape(resamples, n)
    values = aggregate_batch(method, p[picks], sd[picks], w[picks], trim)
    lo, hi = np.quantile(values, [low, high])
    return float(lo), float(hi)
