"""Canonical GPU catalog and the name normaliser.

Providers write the same card many ways ("NVIDIA H100 80GB HBM3", "H100 SXM", "H100-SXM",
"A100 SXM4" with 80 GB). `normalise_gpu_name` maps them to one `gpu_model` of
gpu_catalog.csv, using the memory size where the name alone is ambiguous, and returns
`UNKNOWN_GPU` (never raises) for names it cannot place: callers keep those rows and count them.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

CATALOG_PATH = Path(__file__).with_name("gpu_catalog.csv")
UNKNOWN_GPU = "unknown"

# Words that carry no identity: vendor and marketing prefixes.
_NOISE = re.compile(
    r"\b(NVIDIA|GEFORCE|TESLA|AMD|INSTINCT|GENERATION|GRAPHICS|GPU|GPUS|INTEL|HABANA)\b"
)
# Leading \b: "A10G" is a model name, not "10 GB".
_MEMORY = re.compile(r"\b(\d{1,3})\s*G(?:B|IB)?\b")
# MIG slices ("PRO 6000 MIG 24GB", "... MIG 1g.24gb"): everything from "MIG" on names the
# slice, not the card; the card is what the catalog knows (parsers store the fraction).
_MIG = re.compile(r"\bMIG\b")
# SUPER written "S" ("RTX 2080S", "GTX 1660 S", "RTX 4070S Ti"), and "SUPER Ti" -> "Ti SUPER".
_SUPER_AS_S = re.compile(r"\b((?:GTX|RTX)\s?\d{4})\s?S\b")
_SUPER_TI = re.compile(r"\bSUPER TI\b")
_LAPTOP = re.compile(r"\b(?:LAPTOP|MOBILE|NOTEBOOK)\b")
# Words about the box, not the card: a server/workstation edition of the same chip with the
# same specs, a host with more or less system RAM (CoreWeave's "(High Memory)"), and short
# edition suffixes RunPod uses ("RTX PRO 4500 SE", "RTX PRO 6000 WK").
_EDITION = re.compile(
    r"\b(?:SERVER|WORKSTATION)\s+EDITION\b|\b(?:HIGH|STANDARD)\s+MEMORY\b"
    r"|\bNO INTERCONNECT\b|\b(?:SE|WE|WK)$"
)
_VARIANTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # NVLink bridges exist on PCIe cards too, so "NVLINK" says nothing about the form factor.
    ("", re.compile(r"NVLINK")),
    ("NVL", re.compile(r"\bNVL\d*\b")),
    ("SXM", re.compile(r"\b(SXM\d?|HBM\d?E?|OAM)\b")),
    ("PCIe", re.compile(r"\bPCIE\d?\b")),
)


@dataclass(frozen=True, slots=True)
class GpuSpec:
    gpu_model: str
    family: str
    vendor: str
    architecture: str
    memory_gb: float
    variant: str
    gpu_class: str
    bf16_tflops: float | None
    memory_bandwidth_gbps: float | None
    launch_year: int
    family_default: bool


def _key(text: str) -> str:
    """Upper-case alphanumerics only: 'RTX 6000Ada' and 'rtx-6000-ada' meet at 'RTX6000ADA'."""
    return re.sub(r"[^A-Z0-9]", "", text.upper())


def _words(text: str) -> str:
    return re.sub(r"[^A-Z0-9]+", " ", text.upper()).strip()


def _canonical_words(text: str) -> str:
    """Provider shorthands rewritten to the catalog's spelling (upper-case words)."""
    words = _SUPER_AS_S.sub(r"\1 SUPER", _words(text))
    words = _SUPER_TI.sub("TI SUPER", words)
    words = _LAPTOP.sub("LAPTOP", words)
    words = _EDITION.sub(" ", words)
    return re.sub(r"\s+", " ", words).strip()


def mig_parent_name(name: str) -> str | None:
    """The card part of a MIG slice name ("PRO 6000 MIG 24GB" -> "PRO 6000"), else None."""
    words = _words(name)
    match = _MIG.search(words)
    if match is None:
        return None
    return words[: match.start()].strip() or None


@cache
def load_catalog(path: Path = CATALOG_PATH) -> tuple[GpuSpec, ...]:
    with path.open(newline="", encoding="utf-8") as handle:
        return tuple(
            GpuSpec(
                gpu_model=row["gpu_model"],
                family=row["family"],
                vendor=row["vendor"],
                architecture=row["architecture"],
                memory_gb=float(row["memory_gb"]),
                variant=row["variant"],
                gpu_class=row["class"],
                bf16_tflops=float(row["bf16_tflops"]) if row["bf16_tflops"] else None,
                memory_bandwidth_gbps=(
                    float(row["memory_bandwidth_gbps"]) if row["memory_bandwidth_gbps"] else None
                ),
                launch_year=int(row["launch_year"]),
                family_default=row["family_default"] == "true",
            )
            for row in csv.DictReader(handle)
        )


@cache
def _indexes() -> tuple[dict[str, list[GpuSpec]], dict[str, list[GpuSpec]]]:
    by_alias: dict[str, list[GpuSpec]] = {}
    by_family: dict[str, list[GpuSpec]] = {}
    with CATALOG_PATH.open(newline="", encoding="utf-8") as handle:
        aliases = {row["gpu_model"]: row["aliases"].split("|") for row in csv.DictReader(handle)}
    for spec in load_catalog():
        for alias in {spec.gpu_model, *aliases[spec.gpu_model]}:
            bucket = by_alias.setdefault(_key(alias), [])
            if spec not in bucket:
                bucket.append(spec)
        by_family.setdefault(_key(spec.family), []).append(spec)
    return by_alias, by_family


def catalog_frame() -> pl.DataFrame:
    """The catalog as a frame (for the warehouse's gpu_catalog table and the reports)."""
    import polars as pl

    return pl.DataFrame(
        [
            {
                "gpu_model": s.gpu_model,
                "family": s.family,
                "vendor": s.vendor,
                "architecture": s.architecture,
                "memory_gb": s.memory_gb,
                "variant": s.variant,
                "gpu_class": s.gpu_class,
                "bf16_tflops": s.bf16_tflops,
                "memory_bandwidth_gbps": s.memory_bandwidth_gbps,
                "launch_year": s.launch_year,
            }
            for s in load_catalog()
        ]
    )


def spec_of(gpu_model: str) -> GpuSpec | None:
    return next((s for s in load_catalog() if s.gpu_model == gpu_model), None)


def _pick(
    candidates: list[GpuSpec], memory_gb: float | None, variant: str | None
) -> GpuSpec | None:
    if not candidates:
        return None
    if memory_gb and memory_gb > 0:
        # Providers report usable memory (a 4090 as 24564 MB, an H100 NVL as 94 GB): nearest wins,
        # but only within 20 % so that a wrong family is not forced onto a card.
        nearest = min(abs(c.memory_gb - memory_gb) for c in candidates)
        if nearest <= 0.2 * memory_gb:
            candidates = [c for c in candidates if abs(c.memory_gb - memory_gb) == nearest]
    if variant:
        same_variant = [c for c in candidates if variant.upper() in c.variant.upper()]
        candidates = same_variant or candidates
    if len(candidates) == 1:
        return candidates[0]
    defaults = [c for c in candidates if c.family_default]
    return defaults[0] if len(defaults) == 1 else None


def _variant_of(text: str) -> str | None:
    for variant, pattern in _VARIANTS:
        if variant and pattern.search(text):
            return variant
    return None


@cache
def normalise_gpu_name(
    name: str | None, memory_gb: float | None = None, hint: str | None = None
) -> str:
    """Canonical gpu_model for a provider's GPU name, or UNKNOWN_GPU.

    `memory_gb` (per GPU) settles names that differ only by memory ("A100" 40 vs 80 GB);
    `hint` is other provider text (an instance name like gpu_8x_h100_sxm5) searched only
    for a form factor (SXM / PCIe / NVL) when the name itself has none.

    >>> normalise_gpu_name("NVIDIA H100 80GB HBM3")
    'H100 SXM'
    >>> normalise_gpu_name("A100 SXM4", memory_gb=80)
    'A100 80GB'
    >>> normalise_gpu_name("Q RTX 6000")
    'Quadro RTX 6000'
    >>> normalise_gpu_name("RTX 4070S Ti")
    'RTX 4070 Ti SUPER'
    >>> normalise_gpu_name("PRO 6000 MIG 24GB", memory_gb=96)
    'RTX PRO 6000'
    """
    if not name or not name.strip():
        return UNKNOWN_GPU
    if _MIG.search(_words(name)):
        # A slice resolves to its card; the slice's own memory says nothing about the card.
        parent = mig_parent_name(name)
        return normalise_gpu_name(parent, memory_gb, hint) if parent else UNKNOWN_GPU
    by_alias, by_family = _indexes()
    words = _canonical_words(name)
    if not words:
        return UNKNOWN_GPU
    exact = by_alias.get(_key(words)) or by_alias.get(_key(_NOISE.sub(" ", words)))
    memory_in_name = _MEMORY.search(words)
    memory = float(memory_in_name.group(1)) if memory_in_name else memory_gb
    variant = _variant_of(words) or (_variant_of(_words(hint)) if hint else None)
    stripped = _NOISE.sub(" ", words)
    stripped = _MEMORY.sub(" ", stripped)
    for _, pattern in _VARIANTS:
        stripped = pattern.sub(" ", stripped)
    family_key = _key(stripped)
    candidates = list(by_alias.get(family_key, []))
    for spec in list(candidates) + list(by_family.get(family_key, [])):
        candidates += [s for s in by_family.get(_key(spec.family), []) if s not in candidates]
    if exact:
        # An alias wins unless the reported memory contradicts it AND fits another member of
        # the family ("V100" with 32 GB is the 32 GB card; "RTX 4000 Ada" with 16 GB stays Ada).
        def fits(spec: GpuSpec) -> bool:
            return bool(memory) and abs(spec.memory_gb - memory) <= 0.2 * memory  # type: ignore[operator]

        if not memory or any(fits(c) for c in exact) or not any(fits(c) for c in candidates):
            picked = _pick(exact, memory if any(fits(c) for c in exact) else None, variant)
            if picked:
                return picked.gpu_model
    picked = _pick(candidates, memory, variant)
    return picked.gpu_model if picked else UNKNOWN_GPU


def gpu_memory_of(gpu_model: str) -> float | None:
    spec = spec_of(gpu_model)
    return spec.memory_gb if spec else None
