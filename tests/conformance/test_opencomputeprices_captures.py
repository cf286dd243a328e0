"""The OpenComputePrices parser on every real per-collector CSV in
../shared/captures/opencomputeprices/: rows kept per file, providers, hand-checked prices,
and the GPU names the catalog cannot place."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from contract import RawCapture
from schemas.observation import to_observations, validate
from schemas.screens import ScreenContext
from scrapers.opencomputeprices import SOURCE
from tests.conftest import CAPTURES, shared_file

pytestmark = pytest.mark.conformance

# file -> rows parsed (after: latest snapshot only, USD/hour, known pricing, gpu_count > 0).
EXPECTED_ROWS = {
    "ocp_aethir.csv": 1, "ocp_akash.csv": 55, "ocp_coreweave.csv": 4, "ocp_crusoe.csv": 8,
    "ocp_cudo.csv": 9, "ocp_denvr.csv": 6, "ocp_e2e.csv": 7, "ocp_getdeploying.csv": 401,
    "ocp_gmicloud.csv": 5, "ocp_jarvislabs.csv": 12, "ocp_latitude.csv": 5,
    "ocp_lightningai.csv": 0,  # gpu_name is "1" in every row: the collector lost the names
    "ocp_linode.csv": 13, "ocp_massedcompute.csv": 59,  # 4 rows without a GPU name
    "ocp_novita.csv": 0,  # per-token inference prices, not GPU-hours
    "ocp_oracle.csv": 0,  # gpu_count 0 in every row (price-list items)
    "ocp_paperspace.csv": 1, "ocp_skypilot_subset_2026-03-21.csv": 6914,
    "ocp_tensordock.csv": 36,  # newest of three snapshots
    "ocp_thundercompute.csv": 4, "ocp_voltagepark.csv": 1, "ocp_vultr.csv": 58,
}


def _observations(name: str) -> tuple[pl.DataFrame, RawCapture]:
    path = shared_file("captures", "opencomputeprices", name)
    raw = RawCapture(source="opencomputeprices", url=SOURCE.url, fetched_at=datetime.now(UTC),
                     body=path.read_bytes())
    return to_observations(SOURCE.parse(raw), raw, "run"), raw


def test_every_capture_file_is_covered() -> None:
    folder = shared_file("captures", "opencomputeprices")
    assert {p.name for p in Path(folder).glob("ocp_*.csv")} == set(EXPECTED_ROWS)


@pytest.mark.parametrize("name", sorted(EXPECTED_ROWS))
def test_rows_parsed_per_file(name: str) -> None:
    obs, _ = _observations(name)
    assert obs.height == EXPECTED_ROWS[name]


def test_hand_checked_prices() -> None:
    vultr, _ = _observations("ocp_vultr.csv")
    a100 = vultr.filter(offering="vcg-a100-12c-120g-80vram").row(0, named=True)
    assert (a100["gpu_model"], a100["gpu_count"], a100["price_usd_per_hour"]) == (
        "A100 80GB", 1.0, 2.397)
    eighth = vultr.filter(offering="vcg-a100-96c-960g-640vram").row(0, named=True)
    assert eighth["gpu_count"] == 8.0
    linode, _ = _observations("ocp_linode.csv")
    assert set(linode.filter(pl.col("offering").str.starts_with("g1-"))["gpu_model"]) == {
        "Quadro RTX 6000"}
    assert set(linode.filter(pl.col("offering").str.starts_with("g2-"))["gpu_model"]) == {
        "RTX 4000 Ada"}
    tensordock, _ = _observations("ocp_tensordock.csv")
    cheapest = tensordock.group_by("gpu_model").agg(pl.col("price_usd_per_gpu_hour").min())
    assert dict(cheapest.iter_rows())["RTX 4090"] == 0.31
    sky, _ = _observations("ocp_skypilot_subset_2026-03-21.csv")
    assert sky.filter(provider="lambda").height == 306
    assert sky.filter(provider="runpod").height == 2392
    lam = sky.filter(provider="lambda", offering="gpu_1x_h100_pcie", pricing="on_demand")
    assert set(lam["price_usd_per_hour"]) == {2.49}


def test_providers_of_the_getdeploying_aggregate() -> None:
    obs, _ = _observations("ocp_getdeploying.csv")
    providers = set(obs["provider"])
    assert {"lambda", "gcp", "oracle", "runpod", "vastai", "thundercompute"} <= providers
    assert not any(p.endswith("sponsored") or "_" in p for p in providers)
    assert dict(obs.group_by("pricing").len().iter_rows()) == {
        "on_demand": 366, "reserved": 16, "spot": 19}


def test_quarantine_and_unknown_gpus_across_all_files() -> None:
    shared_file("captures", "opencomputeprices")
    quarantined: dict[str, int] = {}
    unknown: set[str] = set()
    for name in EXPECTED_ROWS:
        obs, _ = _observations(name)
        batch = validate(obs, ScreenContext(aggregator=True))  # its repeats are real
        if batch.quarantined.height:
            quarantined[name] = batch.quarantined.height
        unknown |= set(batch.quarantined.filter(gpu_model="unknown")["gpu_name"])
        assert batch.good.filter(gpu_model="unknown").height == 0  # never stored as a price
    # Aethir's T4 at $19/h and CoreWeave's 8-GPU nodes listed as gpu_count 1 (L40 $10, L40S
    # $18, A100 $21.60) fail the price band; getdeploying's MI355X lists 2300 GB; AWS FPGAs
    # (F1/F2 instances, 127 rows) are not GPUs: unknown, quarantined. AWS g4dn.16xlarge (one T4
    # on a 64-vCPU host, $6.09-6.70/h in ap-east-1/ap-southeast-1) is real and passes.
    assert quarantined == {"ocp_aethir.csv": 1, "ocp_coreweave.csv": 3,
                           "ocp_getdeploying.csv": 1,
                           "ocp_skypilot_subset_2026-03-21.csv": 127}
    assert unknown == {"Virtex UltraScale (VU9P)", "Virtex UltraScale+ (VU47P)"}
    assert CAPTURES.exists()
