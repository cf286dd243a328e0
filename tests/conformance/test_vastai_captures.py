"""Vast.ai parser over every real capture in ../shared/captures/vastai (skips without it).

Checked by hand in vastai_search_offers_raw_2025-01-17.json (the CLI's --raw form, a bare
list): 4 offers, all RTX 4090 on machine 31508 in "Alberta, CA", slices of 1/2/4/6 GPUs with
dph_base 0.40/0.80/1.60/2.40 (+0.0013889 default disk) and min_bid == dph_base; only the
1-GPU slice is rentable.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from contract import RawCapture
from schemas.observation import to_observations, validate
from scrapers.vastai import SOURCE
from tests.conftest import CAPTURES, shared_file

pytestmark = pytest.mark.conformance
FILES = sorted((CAPTURES / "vastai").glob("*.json")) or [CAPTURES / "vastai" / "missing.json"]


def load(path: Path) -> pl.DataFrame:
    raw = RawCapture(source="vastai", url=SOURCE.url, body=path.read_bytes(),
                     fetched_at=datetime(2025, 1, 17, tzinfo=UTC))
    batch = validate(to_observations(SOURCE.parse(raw), raw, "conformance"))
    assert batch.quarantined.height == 0, batch.quarantined["failed_check"].to_list()
    return batch.good


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_capture_parses_to_valid_known_rows(path: Path) -> None:
    frame = load(shared_file("captures", "vastai", path.name))
    assert frame.height > 0
    assert "unknown" not in frame["gpu_model"].to_list()
    assert frame.group_by("offering", "pricing").len()["len"].max() == 1


def test_cli_raw_capture_2025_01_17() -> None:
    frame = load(shared_file("captures", "vastai", "vastai_search_offers_raw_2025-01-17.json"))
    assert frame.height == 8  # 4 offers x (on_demand, interruptible)
    assert set(frame["gpu_model"]) == {"RTX 4090"}
    assert set(frame["region"]) == {"Alberta, CA"}
    assert frame["gpu_memory_gb"].unique().to_list() == [pytest.approx(24564 / 1024)]
    on_demand = frame.filter(pl.col("pricing") == "on_demand").sort("gpu_count")
    assert on_demand["gpu_count"].to_list() == [1, 2, 4, 6]
    assert on_demand["price_usd_per_hour"].to_list() == pytest.approx(
        [0.401389, 0.801389, 1.601389, 2.401389], abs=1e-6)
    assert on_demand["price_usd_per_gpu_hour"].to_list() == pytest.approx(
        [0.401389, 0.400694, 0.400347, 0.400231], abs=1e-6)
    interruptible = frame.filter(pl.col("pricing") == "interruptible").sort("gpu_count")
    # min_bid equals dph_base here, so bid + disk equals dph_total
    assert interruptible["price_usd_per_hour"].to_list() == pytest.approx(
        on_demand["price_usd_per_hour"].to_list())
    available = dict(zip(on_demand["offering"], on_demand["available"], strict=True))
    assert available == {"16014632": True, "16014633": False, "16014638": False,
                         "16014636": False}
