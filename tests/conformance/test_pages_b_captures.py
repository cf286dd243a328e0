"""Every shared file of runpod-graphql, huggingface and vastai: row counts and prices checked by
hand against the file (per hour and per GPU-hour), GPU models, counts and pricing kinds.
CoreWeave's files are checked in test_coreweave_captures.py. Skips cleanly without ../shared.

Hand checks (file -> what was read in the file itself):
- runpod-graphql 2026 subset: 48 types; 6 with securePrice 0 (not offered), 12 prices of
  exactly 0.50 (placeholders), the "unknown" type -> 47 x 2 - 6 - 12 = 76 rows.
  A100 PCIe secure 1.59 / community 1.19; H200 NVL secure 3.79 (community 0.50 dropped);
  MIG 1g.24gb secure 0.59 = a quarter of a 96 GB PRO 6000 (2.36 per GPU-hour).
- runpod-graphql 2025-06-21: 103 rows (flags present: every 0.50 sits on a false flag).
- huggingface spaces 2023-03-01: 5 GPU flavors, no GPU Memory column (t4-small 0.60,
  a10g-large 3.15, a100-large 4.13); 2025-12-16: 14 (h100 4.50 and h100x8 36.00 marked
  deprecated -> available False); 2026-07-21: 14 (struck-through H100 skipped); jobs
  2026-06-04: 22 (h200x2 10.00, rtx-pro-6000 2.75); jobs 2026-08-21: 22.
- vastai 2025-01-17: 4 offers x (on_demand, interruptible) = 8 rows; the 1-GPU slice
  dph_total 0.401389, the 6-GPU slice 2.401389 (0.400231 per GPU-hour).
"""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from contract import RawCapture
from schemas.observation import to_observations, validate_guarded
from scrapers import huggingface_docs, runpod_graphql
from scrapers.registry import all_sources
from tests.conftest import shared_file

pytestmark = pytest.mark.conformance
SOURCES = all_sources()


def _observations(source: str, *path: str) -> pl.DataFrame:
    body = shared_file("captures", *path).read_bytes()
    raw = RawCapture(source=source, url=SOURCES[source].url,
                     fetched_at=datetime(2026, 1, 1, tzinfo=UTC), body=body)
    obs = to_observations(SOURCES[source].parse(raw), raw, "conformance")
    batch = validate_guarded(obs, aggregator=SOURCES[source].aggregator)
    assert batch.suspect is None
    assert batch.quarantined.height == 0, batch.quarantined["failed_check"].to_list()
    assert "unknown" not in batch.good["gpu_model"].to_list()
    return batch.good


def _row(frame: pl.DataFrame, offering: str, pricing: str = "on_demand") -> dict[str, object]:
    return frame.filter((pl.col("offering") == offering) & (pl.col("pricing") == pricing)
                        ).row(0, named=True)


SUBSET = ("runpod-graphql", "runpod-graphql_gpuTypes_field-subset_ewyluda-fixture_2026.json")


def test_runpod_graphql_2026_subset() -> None:
    obs = _observations("runpod", *SUBSET)
    assert obs.height == 76
    assert obs.group_by("pricing").len().sort("pricing").rows() == [
        ("community", 41), ("on_demand", 35)]
    assert 0.5 not in obs["price_usd_per_hour"].to_list()
    assert _row(obs, "NVIDIA A100 80GB PCIe")["price_usd_per_hour"] == 1.59
    assert _row(obs, "NVIDIA A100 80GB PCIe", "community")["price_usd_per_hour"] == 1.19
    h200_nvl = obs.filter(pl.col("offering") == "NVIDIA H200 NVL")
    assert h200_nvl.select("pricing", "price_usd_per_hour", "gpu_model").rows() == [
        ("on_demand", 3.79, "H200 NVL")]
    mig = _row(obs, "NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 1g.24gb")
    assert (mig["gpu_count"], mig["gpu_memory_gb"], mig["gpu_model"]) == (0.25, 96, "RTX PRO 6000")
    assert mig["price_usd_per_gpu_hour"] == pytest.approx(2.36)
    assert not obs.filter(pl.col("offering").str.contains(" MIG "))["gpu_count"].ge(1).any()
    maxq = _row(obs, "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "community")
    assert (maxq["gpu_model"], maxq["price_usd_per_hour"]) == ("RTX PRO 6000 Max-Q", 1.64)


def test_runpod_graphql_2026_subset_counts_what_it_drops() -> None:
    path = shared_file("captures", *SUBSET)
    raw = RawCapture("runpod", runpod_graphql.URL, datetime(2026, 1, 1, tzinfo=UTC),
                     path.read_bytes())
    parsed = runpod_graphql.parse(raw)
    skipped = parsed.skips
    assert skipped == {"placeholder price 0.50 (no cloud flags)": 12}


def test_runpod_graphql_2025_capture_with_flags() -> None:
    obs = _observations("runpod", "runpod-graphql", "runpod_gpuTypes_2025-06-21T2318Z.json")
    assert obs.height == 103


@pytest.mark.parametrize(("name", "source", "rows", "checks"), [
    ("spaces-gpus_2023-03-01_hub-docs-3d33d834.md", "huggingface-spaces", 5,
     {"t4-small": 0.60, "a10g-large": 3.15, "a100-large": 4.13}),
    ("spaces-gpus_2025-12-16_hub-docs-47bdf77a.md", "huggingface-spaces", 14,
     {"h100": 4.50, "h100x8": 36.00, "l40sx8": 23.50}),
    ("spaces-gpus_2026-07-21.md", "huggingface-spaces", 14,
     {"t4-small": 0.40, "a10g-largex4": 5.00, "a100-large": 2.50}),
    ("jobs-pricing_2026-06-04_hub-docs-3145653.md", "huggingface-docs", 22,
     {"h200x2": 10.00, "rtx-pro-6000": 2.75, "l4x4": 3.80}),
    ("jobs-pricing_2026-08-21.md", "huggingface-docs", 22,
     {"h200": 5.00, "h200x8": 40.00, "a100x4": 10.00}),
])
def test_huggingface_docs_captures(name: str, source: str, rows: int,
                                   checks: dict[str, float]) -> None:
    obs = _observations(source, "huggingface", name)
    assert obs.height == rows
    prices = dict(zip(obs["offering"], obs["price_usd_per_hour"], strict=True))
    assert {k: prices[k] for k in checks} == checks
    assert not obs["offering"].str.contains("deprecated|soon").any()


def test_huggingface_deprecated_rows_keep_their_gpu_and_are_unavailable() -> None:
    obs = _observations("huggingface-spaces", "huggingface",
                        "spaces-gpus_2025-12-16_hub-docs-47bdf77a.md")
    h100 = obs.filter(pl.col("offering").str.starts_with("h100"))
    assert h100.select("offering", "gpu_model", "gpu_count", "available").sort("offering").rows(
    ) == [("h100", "H100 PCIe", 1.0, False), ("h100x8", "H100 PCIe", 8.0, False)]
    assert _row(obs, "h100x8")["price_usd_per_gpu_hour"] == pytest.approx(4.50)
    assert obs.filter(~pl.col("offering").str.starts_with("h100"))["available"].is_null().all()


def test_huggingface_table_without_gpu_memory_column() -> None:
    path = shared_file("captures", "huggingface", "spaces-gpus_2023-03-01_hub-docs-3d33d834.md")
    raw = RawCapture("huggingface-spaces", "u", datetime(2023, 3, 1, tzinfo=UTC),
                     path.read_bytes())
    parsed = huggingface_docs.parse(raw)
    frame, skipped = parsed.frame, parsed.skips
    assert frame["gpu_memory_gb"].is_null().all() and frame.height == 5
    assert skipped == {"not a GPU flavor (CPU)": 2}


def test_vastai_capture() -> None:
    obs = _observations("vastai", "vastai", "vastai_search_offers_raw_2025-01-17.json")
    assert obs.height == 8
    assert obs.group_by("pricing").len().sort("pricing").rows() == [
        ("interruptible", 4), ("on_demand", 4)]
    one = _row(obs, "16014632")
    assert (one["gpu_count"], one["gpu_model"]) == (1.0, "RTX 4090")
    assert one["price_usd_per_hour"] == pytest.approx(0.401389, abs=1e-6)
    six = _row(obs, "16014636")
    assert six["gpu_count"] == 6.0
    assert six["price_usd_per_hour"] == pytest.approx(2.401389, abs=1e-6)
    assert six["price_usd_per_gpu_hour"] == pytest.approx(0.400231, abs=1e-6)
