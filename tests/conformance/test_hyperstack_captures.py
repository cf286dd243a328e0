"""Hyperstack parser over every capture in ../shared/captures/hyperstack (skips without it).

Checked by hand against hyperstack_gpu-pricing_2026_ewyluda-fixture.html: "On-Demand GPU
Pricing" 13 rows (H200 SXM $3.99, H100 SXM $3.20, H100 NVLink $2.60, H100 $2.50, RTX Pro 6000
SE $1.85, A100 SXM $1.60, A100 NVLink $1.40, A100 $1.35, L40 $1.00, A6000 $0.50, A4000 $0.15,
B200 $6.00, B300 $7.40); "Reservation Pricing" 12 "Starting from" rows (H200 SXM $2.79, H100
SXM $2.72 ... B200 $5.10); "Spot VM Pricing" 5 rows (H100 PCIe $2.00, RTX Pro 6000 SE $1.48,
A100 $1.08, L40 $0.80, A6000 $0.40); "billed per minute".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scrapers import hyperstack
from tests.conftest import shared_file
from tests.neocloud_pages import capture_files, check_capture, price, read

pytestmark = pytest.mark.conformance


@pytest.mark.parametrize("path", capture_files("hyperstack"), ids=lambda p: p.name)
def test_every_capture_parses_to_valid_known_rows(path: Path) -> None:
    check_capture(hyperstack, path)


def test_2026_saved_page() -> None:
    path = shared_file("captures", "hyperstack", "hyperstack_gpu-pricing_2026_ewyluda-fixture.html")
    frame, strategy, skipped = read(hyperstack, path.read_bytes())
    assert strategy == "cards"
    assert frame.group_by("pricing").len().sort("pricing").rows() == [
        ("on_demand", 13), ("reserved", 12), ("spot", 5)]
    checks = [("NVIDIA H200 SXM", "on_demand", "H200 SXM", 3.99),
              ("NVIDIA H100 SXM", "on_demand", "H100 SXM", 3.20),
              ("NVIDIA B300", "on_demand", "B300", 7.40),
              ("NVIDIA RTX Pro 6000 SE", "on_demand", "RTX PRO 6000", 1.85),
              ("NVIDIA H100 SXM (reserved, term not stated)", "reserved", "H100 SXM", 2.72),
              ("NVIDIA B200 (reserved, term not stated)", "reserved", "B200", 5.10),
              ("NVIDIA H100 PCIe", "spot", "H100 PCIe", 2.00),
              ("NVIDIA A100", "spot", "A100 80GB", 1.08)]
    for offering, pricing, model, usd in checks:
        row = price(frame, offering, pricing)
        assert (row["gpu_model"], row["price_usd_per_hour"]) == (model, usd)
    assert set(frame["billing_increment_s"]) == {60} and set(frame["gpu_count"]) == {1.0}
    assert skipped["not a GPU offering"] == 6  # the On-Demand CPU card (5), fine-tuning (1)
