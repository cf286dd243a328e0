"""RunPod GraphQL without the cloud flags: the $0.50 placeholder and MIG slices.

Fixtures are ours, in the 2026 field-subset shape (id, displayName, memoryInGb, securePrice,
communityPrice only), with invented prices.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import polars as pl
import pytest

from contract import RawCapture
from schemas.observation import to_observations, validate
from scrapers import runpod_graphql


def _raw(types: list[dict[str, object]]) -> RawCapture:
    body = json.dumps({"data": {"gpuTypes": types}}).encode()
    return RawCapture(source="runpod", url=runpod_graphql.URL,
                      fetched_at=datetime(2026, 3, 1, tzinfo=UTC), body=body)


def _type(gpu_id: str, name: str, memory: float, secure: float, community: float,
          **extra: object) -> dict[str, object]:
    return {"id": gpu_id, "displayName": name, "memoryInGb": memory,
            "securePrice": secure, "communityPrice": community, **extra}


CARD = "NVIDIA RTX PRO 6000 Blackwell Server Edition"
SUBSET = [
    _type("NVIDIA L40S", "L40S", 48, 0.97, 0.5),  # community 0.50: placeholder
    _type("NVIDIA GeForce RTX 4080", "RTX 4080", 16, 0.5, 0.31),  # secure 0.50: placeholder
    _type("NVIDIA A40", "A40", 48, 0.44, 0.0),  # 0: not offered
    _type(CARD, "RTX PRO 6000", 96, 1.96, 1.72),
    _type(f"{CARD} MIG 1g.24gb", "PRO 6000 MIG 24GB", 24, 0.61, 0.5),
    _type(f"{CARD} MIG 2g.48gb", "PRO 6000 MIG 48GB", 48, 1.11, 1.02),
    _type("NVIDIA H100 80GB HBM3 MIG 3g.40gb", "H100 MIG 40GB", 40, 1.5, 0.0),  # card absent
]


def _prices(frame: pl.DataFrame) -> dict[tuple[str, str], float]:
    return {(o, p): v for o, p, v in frame.select(
        "offering", "pricing", "price_usd_per_hour").iter_rows()}


def test_a_placeholder_price_is_never_a_row_and_is_counted() -> None:
    parsed = runpod_graphql.parse(_raw(SUBSET))
    frame, skipped = parsed.frame, parsed.skips
    prices = _prices(frame)
    assert ("NVIDIA L40S", "community") not in prices
    assert ("NVIDIA GeForce RTX 4080", "on_demand") not in prices
    assert prices[("NVIDIA L40S", "on_demand")] == 0.97
    assert prices[("NVIDIA GeForce RTX 4080", "community")] == 0.31
    assert ("NVIDIA A40", "community") not in prices
    assert skipped["placeholder price 0.50 (no cloud flags)"] == 3  # L40S, 4080, MIG 24GB
    assert 0.5 not in frame["price_usd_per_hour"].to_list()


def test_with_the_cloud_flags_a_half_dollar_price_is_real() -> None:
    flagged = [_type("NVIDIA L4", "L4", 24, 0.5, 0.39, secureCloud=True, communityCloud=True)]
    parsed = runpod_graphql.parse(_raw(flagged))
    frame, skipped = parsed.frame, parsed.skips
    assert _prices(frame)[("NVIDIA L4", "on_demand")] == 0.5
    assert not skipped


def test_mig_slices_are_fractions_of_their_card() -> None:
    parsed = runpod_graphql.parse(_raw(SUBSET))
    frame, skipped = parsed.frame, parsed.skips
    slices = frame.filter(pl.col("offering").str.contains(" MIG "))
    by_offer = {(o, p): (c, m) for o, p, c, m in slices.select(
        "offering", "pricing", "gpu_count", "gpu_memory_gb").iter_rows()}
    assert by_offer[(f"{CARD} MIG 1g.24gb", "on_demand")] == (0.25, 96.0)
    assert by_offer[(f"{CARD} MIG 2g.48gb", "community")] == (0.5, 96.0)
    assert not (slices["gpu_count"] >= 1).any()  # never a whole GPU
    # The H100 slice's card is not in the payload: skipped with a reason, not guessed.
    assert skipped["MIG slice whose card (or memory) is not in the payload"] == 1
    assert not frame["offering"].str.contains("H100").any()
    raw = _raw(SUBSET)
    obs = to_observations(frame, raw, "t")
    mig = obs.filter(pl.col("offering") == f"{CARD} MIG 1g.24gb")
    assert mig["gpu_model"].to_list() == ["RTX PRO 6000"]
    assert mig["price_usd_per_gpu_hour"].item() == pytest.approx(0.61 / 0.25)
    assert validate(obs).quarantined.height == 0
