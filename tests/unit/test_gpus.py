"""The GPU name normaliser: provider spellings -> canonical catalog models.

The last test is a conformance check: every GPU name that a registered parser reads from the
real captures in ../shared must map to a catalog model; it lists the names that do not.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from contract import RawCapture
from schemas.gpus import UNKNOWN_GPU, catalog_frame, load_catalog, normalise_gpu_name
from schemas.observation import to_observations
from scrapers.base import Source
from scrapers.registry import all_sources
from tests.conftest import CAPTURES, HISTORY


@pytest.mark.parametrize(("name", "memory_gb", "expected"), [
    ("NVIDIA H100 80GB HBM3", None, "H100 SXM"),
    ("H100 SXM", None, "H100 SXM"),
    ("H100-SXM", None, "H100 SXM"),
    ("H100 NVL", None, "H100 NVL"),
    ("H100 PCIe", None, "H100 PCIe"),
    ("A100 SXM4", 80, "A100 80GB"),
    ("A100 SXM4", 40, "A100 40GB"),
    ("A100 SXM4", None, "A100 40GB"),  # no memory: the family default
    ("A100-80GB", None, "A100 80GB"),
    ("A100", 81920 / 1024, "A100 80GB"),
    ("Tesla T4", None, "T4"),
    ("T4g", None, "T4"),
    ("RTX 4090", 24564 / 1024, "RTX 4090"),
    ("RTX4090", None, "RTX 4090"),
    ("RTX 6000Ada", None, "RTX 6000 Ada"),
    ("RTX6000-Ada", None, "RTX 6000 Ada"),
    ("Q RTX 6000", None, "Quadro RTX 6000"),
    ("RTX6000", 24, "Quadro RTX 6000"),
    ("GTX 1080 Ti", None, "GTX 1080 Ti"),
    ("Tesla V100", 16, "V100 16GB"),
    ("V100", 32, "V100 32GB"),
    ("V100-32GB", None, "V100 32GB"),
    ("A10G", None, "A10G"),
    ("Nvidia A10G", None, "A10G"),  # "10G" inside a model name is not a memory size
    ("A10", None, "A10"),
    ("Nvidia A100, 80 GB", 80, "A100 80GB"),
    ("A6000", None, "RTX A6000"),
    ("RTXA4500", None, "RTX A4500"),
    ("RTX4000-Ada", None, "RTX 4000 Ada"),
    ("Radeon MI25", None, "Radeon MI25"),
    ("Gaudi HL-205", None, "Gaudi"),
    ("MI300X", None, "MI300X"),
    ("H200", None, "H200 SXM"),
    ("GH200", None, "GH200"),
    ("B200", None, "B200"),
    ("L40S", None, "L40S"),
    # SUPER written "S" or "SUPER", and "S Ti" for the Ti SUPER (Vast.ai spellings)
    ("RTX 2060S", None, "RTX 2060 SUPER"),
    ("RTX 2070S", None, "RTX 2070 SUPER"),
    ("RTX 2080S", None, "RTX 2080 SUPER"),
    ("RTX 4070S", None, "RTX 4070 SUPER"),
    ("RTX 4070S Ti", None, "RTX 4070 Ti SUPER"),
    ("GTX 1660 S", None, "GTX 1660 SUPER"),
    ("RTX 2080 SUPER", None, "RTX 2080 SUPER"),
    ("RTX 4070 Ti", None, "RTX 4070 Ti"),
    # laptop parts are their own (smaller) cards
    ("RTX 3060 laptop", None, "RTX 3060 Laptop"),
    ("RTX 4090 Mobile", 16, "RTX 4090 Laptop"),
    # converged accelerators and older workstation / Tesla cards
    ("A100X", None, "A100X"),
    ("Quadro K2200", None, "Quadro K2200"),
    ("Quadro M6000", None, "Quadro M6000"),
    ("Quadro P2000", None, "Quadro P2000"),
    ("Tesla K40m", None, "K40"),
    ("Tesla M40", 24, "M40 24GB"),
    ("MI250X", None, "MI250X"),
    ("MI250", None, "MI250"),
    # RTX PRO: editions of the same card, and the Max-Q part
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition (High Memory)", 96, "RTX PRO 6000"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition (Standard Memory)", 96, "RTX PRO 6000"),
    ("RTX PRO 6000 WK", None, "RTX PRO 6000"),
    ("RTX PRO 6000 MaxQ", 96, "RTX PRO 6000 Max-Q"),
    ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", None, "RTX PRO 6000 Max-Q"),
    ("RTX PRO 4500 SE", 32, "RTX PRO 4500"),
    ("RTX PRO 5000", 48, "RTX PRO 5000"),
    ("RTX PRO 5000", 72, "RTX PRO 5000 72GB"),
    ("RTX PRO 4000", None, "RTX PRO 4000"),
    ("RTX 4000 Ada SFF", 20, "RTX 4000 SFF Ada"),
    # MIG slices resolve to their card (parsers store the fraction)
    ("PRO 6000 MIG 24GB", 96, "RTX PRO 6000"),
    ("PRO 6000 MIG 48GB", 48, "RTX PRO 6000"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 1g.24gb", 24, "RTX PRO 6000"),
    ("A100 MIG 1g.10gb", 80, "A100 80GB"),
    # names the neocloud pages use
    ("NVIDIA GB200 NVL72", None, "GB200"),
    ("NVIDIA HGX B300", None, "B300"),
    ("MI325X", None, "MI325X"),
    ("MI355X", None, "MI355X"),
    ("H200 NVL", None, "H200 NVL"),
    ("L40", None, "L40"),
    ("A16", None, "A16"),
])
def test_known_spellings(name: str, memory_gb: float | None, expected: str) -> None:
    assert normalise_gpu_name(name, memory_gb) == expected


def test_form_factor_hint_from_the_instance_name() -> None:
    assert normalise_gpu_name("H100", 80, hint="gpu_8x_h100_sxm5") == "H100 SXM"
    assert normalise_gpu_name("H100", 80, hint="gpu_1x_h100_pcie") == "H100 PCIe"


@pytest.mark.parametrize("name", ["Banana 9000", "", None, "   ", "GPU (unspecified)",
                                  "RTX 2080 laptop",  # no such catalog part: not the desktop card
                                  "MIG 1g.10gb"])  # a slice naming no card
def test_unknown_names_are_kept_as_unknown(name: str | None) -> None:
    assert normalise_gpu_name(name) == UNKNOWN_GPU


def test_catalog_models_are_unique_and_complete() -> None:
    frame = catalog_frame()
    assert frame["gpu_model"].n_unique() == frame.height
    assert {"H100 SXM", "H200 SXM", "B200", "GH200", "MI300X", "L40S", "A100 80GB",
            "RTX 4090", "T4"} <= set(frame["gpu_model"])
    # Every model normalises to itself.
    assert [s.gpu_model for s in load_catalog()
            if normalise_gpu_name(s.gpu_model, s.memory_gb) != s.gpu_model] == []


# ---- conformance over ../shared -------------------------------------------------------------

# Names that are not GPUs at all (allowed to stay 'unknown'): placeholders and AWS FPGAs
# ("Virtex UltraScale (VU9P)" in SkyPilot-derived rows).
NOT_GPUS = {"GPU (unspecified)"}
NOT_GPU_PATTERN = re.compile(r"fpga|virtex|xilinx|\bvu\d+p\b", re.IGNORECASE)
WHEN = datetime(2025, 1, 1, tzinfo=UTC)


def _candidates(directory: str, sources: dict[str, Source]) -> list[Source]:
    """Registered sources that may read files of a captures/<directory> (by name/provider)."""
    stem = directory.split("-")[0]
    return [s for s in sources.values() if stem in (s.name.split("-")[0], s.provider)]


def _shared_files() -> list[tuple[str, Path]]:
    files = [(p.parent.name, p) for p in sorted(CAPTURES.glob("*/*")) if p.is_file()]
    files += [("skypilot", p) for p in sorted(HISTORY.glob("skypilot/*/*_vms.csv"))]
    return files


@pytest.mark.conformance
def test_every_gpu_name_in_the_shared_captures_is_known() -> None:
    if not CAPTURES.exists() and not HISTORY.exists():
        pytest.skip(f"{CAPTURES.parent} not present (conformance needs ../shared)")
    sources = all_sources()
    names: dict[str, set[str]] = {}
    parsed_files = 0
    for directory, path in _shared_files():
        for source in _candidates(directory, sources):
            raw = RawCapture(source=source.name, url=source.url, fetched_at=WHEN,
                             body=path.read_bytes())
            try:
                observations = to_observations(source.parse(raw), raw, "conformance")
            except Exception:  # not this source's format (ingest treats it the same way)
                continue
            parsed_files += 1
            unknown = observations.filter(
                (pl.col("gpu_model") == UNKNOWN_GPU) & pl.col("gpu_name").is_not_null())
            for name in unknown["gpu_name"].unique():
                names.setdefault(name, set()).add(f"{directory}/{path.name} ({source.name})")
    assert parsed_files >= 3  # at least vastai, modal and the skypilot history
    unexpected = {n: sorted(where) for n, where in names.items()
                  if n not in NOT_GPUS and not NOT_GPU_PATTERN.search(n)}
    assert unexpected == {}, "GPU names with no catalog model:\n" + "\n".join(
        f"  {n!r}: {', '.join(w)}" for n, w in sorted(unexpected.items()))
