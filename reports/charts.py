"""Charts (PNG, drawn by reports.linechart): the cheapest comparable $/GPU-hour per day
for key GPUs.

H100 is charted per family (the cheapest of SXM, PCIe and NVL that day: users compare "an
H100"); the other series are single catalog models.
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from contract.files import write_bytes_atomic
from reports.linechart import Line, draw_png
from schemas.names import resolve_gpu

if TYPE_CHECKING:  # polars where a series is made: `history` prints its sparkline without it
    import polars as pl

# label -> GPU names (models or families) whose cheapest price that day is the series' point
CHART_SERIES: dict[str, tuple[str, ...]] = {
    "H100 (any variant)": ("H100",),
    "A100 80GB": ("A100 80GB",),
    "RTX 4090": ("RTX 4090",),
    "L4": ("L4",),
}


def series_models() -> dict[str, list[str]]:
    return {label: [m for name in names for m in resolve_gpu(name)]
            for label, names in CHART_SERIES.items()}


def chart_series(history: pl.DataFrame) -> pl.DataFrame:
    """(series, day, usd_per_gpu_hour) from cheapest_history rows."""
    import polars as pl

    frames = [
        history.filter(pl.col("gpu_model").is_in(models))
        .group_by("day").agg(pl.col("price_usd_per_gpu_hour").min().alias("usd_per_gpu_hour"))
        .with_columns(pl.lit(label).alias("series"))
        for label, models in series_models().items()
    ]
    if not frames:
        return pl.DataFrame(schema={"series": pl.String, "day": pl.Date,
                                    "usd_per_gpu_hour": pl.Float64})
    return pl.concat(frames).select("series", "day", "usd_per_gpu_hour").sort("series", "day")


def plot_daily(series: pl.DataFrame, path: Path, *, title: str,
               since: date | None = None, until: date | None = None,
               ylabel: str = "$ / GPU-hour") -> Path | None:
    """Write one line per series to `path` (a PNG: reports.linechart); None (and no file) when
    there is nothing to plot. The x axis spans the data's days (within `since`..`until` when
    given) with a day of margin on each side; the series keep their order of appearance."""
    if series.height == 0:
        return None
    days = series["day"]
    left = max(days.min(), since) if since else days.min()  # type: ignore[type-var]
    right = min(days.max(), until) if until else days.max()  # type: ignore[type-var]
    lines = [Line(str(label), list(zip(points["day"].to_list(),
                                       points["usd_per_gpu_hour"].to_list(), strict=True)))
             for (label,), points in series.group_by("series", maintain_order=True)]
    png = draw_png(lines, title=title, ylabel=ylabel,
                   first=left - timedelta(days=1), last=right + timedelta(days=1))  # type: ignore[operator]
    write_bytes_atomic(path, png)  # a full disk leaves the previous chart whole
    return path


SPARKS = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float]) -> str:
    """A terminal sparkline: one block per value, scaled between the min and the max."""
    if not values:
        return ""
    low, high = min(values), max(values)
    span = high - low
    return "".join(SPARKS[0 if span == 0 else round((v - low) / span * (len(SPARKS) - 1))]
                   for v in values)
