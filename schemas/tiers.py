"""VRAM tiers for the rankings, read from tiers.toml (edit that file to change them)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a tier's name as an expression; the tiers themselves need no polars
    import polars as pl

TIERS_PATH = Path(__file__).with_name("tiers.toml")


@dataclass(frozen=True, slots=True)
class Tier:
    name: str
    min_gb: float
    max_gb: float


def load_tiers(path: Path = TIERS_PATH) -> list[Tier]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [Tier(t["name"], float(t["min_gb"]), float(t["max_gb"])) for t in data["tier"]]


def tier_expr(memory_col: str = "gpu_memory_gb", tiers: list[Tier] | None = None) -> pl.Expr:
    """A polars expression naming the tier of each row's per-GPU memory (null when none fits)."""
    import polars as pl

    expr: pl.Expr = pl.lit(None, pl.String)
    for tier in reversed(tiers or load_tiers()):
        expr = (
            pl.when(pl.col(memory_col).is_between(tier.min_gb, tier.max_gb))
            .then(pl.lit(tier.name))
            .otherwise(expr)
        )
    return expr


def tier_sql(memory_col: str = "gpu_memory_gb", tiers: list[Tier] | None = None) -> str:
    """The same mapping as a SQL CASE expression (tier bounds are numbers from our own file)."""
    cases = " ".join(
        f"WHEN {memory_col} BETWEEN {t.min_gb!r} AND {t.max_gb!r} THEN '{t.name}'"
        for t in tiers or load_tiers()
    )
    return f"CASE {cases} END"


def tiers_by_name() -> dict[str, Tier]:
    """The VRAM tiers of tiers.toml, by name (what `cheapest --tier` accepts)."""
    return {t.name: t for t in load_tiers()}
