"""Voltage Park over every capture in ../shared/captures/voltagepark (skips without it).

Checked by hand against the 2025-07-12 page: "On-Demand, Ethernet" $1.99/hr for "1-1016 HGX
H100 GPUs"; "On-demand, 3200 Gbps Infiniband" $2.49/hr for "8-1016 HGX H100 GPUs"; "Long-Term
Reserve" shows no price (the excerpt ends there). One rate for any count: per GPU-hour.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from contract import RawCapture
from scrapers.voltagepark import PARSER, SOURCE
from tests.conformance._provider_captures import FETCHED_AT, capture_files, good_rows, one

pytestmark = pytest.mark.conformance
FOLDER = "voltagepark"
FILES = capture_files(FOLDER, "*.html")
JULY_2025 = "voltagepark_wayback-20250712040631_www.voltagepark.com-pricing_excerpt.html"
EXPECTED_ROWS = {JULY_2025: 2}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_capture_parses_to_valid_known_rows(path: Path) -> None:
    frame = good_rows(SOURCE, FOLDER, path)
    if path.name in EXPECTED_ROWS:
        assert frame.height == EXPECTED_ROWS[path.name]
    assert set(frame["gpu_count"]) == {1.0}  # stored per GPU


def test_july_2025_prices_by_hand() -> None:
    path = next(p for p in FILES if p.name == JULY_2025)
    frame = good_rows(SOURCE, FOLDER, path)
    ethernet = one(frame, "HGX H100, Ethernet", "on_demand")
    assert ethernet["price_usd_per_hour"] == pytest.approx(1.99)
    assert ethernet["gpu_model"] == "H100 SXM"
    infiniband = one(frame, "HGX H100, 3200 Gbps Infiniband (from 8 GPUs)", "on_demand")
    assert infiniband["price_usd_per_gpu_hour"] == pytest.approx(2.49)
    assert set(frame["region"]) == {"global"}
    parsed = PARSER(RawCapture("voltagepark", SOURCE.url, FETCHED_AT,
                                               path.read_bytes()))
    assert parsed.strategy == "cards" and parsed.skips == {"offer without a price": 1}
