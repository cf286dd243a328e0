"""OCI over every price list in ../shared/captures/oci (skips without it).

Checked by hand against the 2026-10-01 list (26 GPU items): H100 (B98415) $10 per GPU-hour,
MI355X $8.6, A100 - v2 (the 80 GB shape) $4, GB300 $18; OCVS BM.GPU.A10.64 (4 A10s) $16 / $13 /
$11 per node-hour on monthly / 1-year / 3-year commitments. Skipped: 6 parts whose name gives
no catalog GPU (X7 x2, V2, E3, E4, H100T) and 5 on-premises parts (Cloud@Customer x4, Roving
Edge).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from contract import RawCapture
from scrapers.oci import SOURCE, parse
from tests.conformance._provider_captures import FETCHED_AT, capture_files, good_rows, one

pytestmark = pytest.mark.conformance
FOLDER = "oci"
FILES = capture_files(FOLDER, "*.json")
OCT_2026 = "oci_price-list-api_2026_ewyluda-fixture.json"
EXPECTED_ROWS = {OCT_2026: 15}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_list_parses_to_valid_known_rows(path: Path) -> None:
    frame = good_rows(SOURCE, FOLDER, path)
    if path.name in EXPECTED_ROWS:
        assert frame.height == EXPECTED_ROWS[path.name]


def test_october_2026_prices_by_hand() -> None:
    path = next(p for p in FILES if p.name == OCT_2026)
    frame = good_rows(SOURCE, FOLDER, path)
    assert one(frame, "GPU H100 (B98415)", "on_demand")["price_usd_per_hour"] == 10.0
    assert one(frame, "GPU MI355X (B111758)", "on_demand")["gpu_model"] == "MI355X"
    a100 = one(frame, "GPU A100 v2 (B95907)", "on_demand")
    assert a100["gpu_model"] == "A100 80GB" and a100["price_usd_per_hour"] == 4.0
    assert one(frame, "GPU GB300 (B112140)", "on_demand")["price_usd_per_gpu_hour"] == 18.0
    yearly = one(frame, "OCVS BM.GPU.A10.64 (1 Year commitment)", "reserved")
    assert yearly["gpu_count"] == 4 and yearly["price_usd_per_hour"] == 13.0
    assert yearly["price_usd_per_gpu_hour"] == pytest.approx(3.25)
    assert one(frame, "OCVS BM.GPU.A10.64 (1 Month commitment)", "reserved")[
        "price_usd_per_hour"] == 16.0
    assert frame.filter(frame["pricing"] == "reserved").height == 3
    parsed = parse(RawCapture("oci", SOURCE.url, FETCHED_AT, path.read_bytes()))
    assert parsed.skips == {"name gives no GPU model in the catalog (legacy part)": 6,
                               "on-premises part (Cloud@Customer, Roving Edge)": 5}
