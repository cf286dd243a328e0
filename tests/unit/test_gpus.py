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

from schemas.gpus import UNKNOWN_GPU, catalog_frame, load_catalog, normalise_gpu_name
from schemas.observation import to_observations
from scrapers.base import RawCapture, Source
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
])
def test_known_spellings(name: str, memory_gb: float | None, expected: str) -> None:
    assert normalise_gpu_name(name, memory_gb) == expected


def test_form_factor_hint_from_the_instance_name() -> None:
    assert normalise_gpu_name("H100", 80, hint="gpu_8x_h100_sxm5") == "H100 SXM"
    assert normalise_gpu_name("H100", 80, hint="gpu_1x_h100_pcie") == "H100 PCIe"


@pytest.mark.parametrize("name", ["Banana 9000", "", None, "   ", "GPU (unspecified)"])
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
