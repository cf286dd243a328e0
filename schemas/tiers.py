"""VRAM tiers for the rankings, read from tiers.toml (edit that file to change them)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

TIERS_PATH = Path(__file__).with_name("tiers.toml")


@dataclass(frozen=True, slots=True)
class Tier:
    name: str
    min_gb: float
    max_gb: float


def load_tiers(path: Path = TIERS_PATH) -> list[Tier]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [Tier(t["name"], float(t["min_gb"]), float(t["max_gb"])) for t in data["tier"]]


def tier_sql(memory_col: str = "gpu_memory_gb", tiers: list[Tier] | None = None) -> str:
    """The tier of each row's per-GPU memory as a SQL CASE expression, the first tier that
    holds it (NULL when none does; tier bounds are numbers from our own file)."""
    cases = " ".join(
        f"WHEN {memory_col} BETWEEN {t.min_gb!r} AND {t.max_gb!r} THEN '{t.name}'"
        for t in tiers or load_tiers()
    )
    return f"CASE {cases} END"


def tiers_by_name() -> dict[str, Tier]:
    """The VRAM tiers of tiers.toml, by name (what `cheapest --tier` accepts)."""
    return {t.name: t for t in load_tiers()}
