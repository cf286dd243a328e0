"""Fluidstack parser over every capture in ../shared/captures/fluidstack (skips without it).

Checked by hand against the 2025-01-09 Wayback excerpt (pricing_table): H200 on-demand "n/a",
1 Year $2.45; H100 PCIe $2.89 / $2.05; A100 80GB PCIe $1.80 / $1.20; A100 40GB PCIe $1.65 /
$1.05; L40 $1.25 / $0.99 (per GPU-hour: the columns are "per GPU").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scrapers import fluidstack
from tests.conftest import shared_file
from tests.neocloud_pages import capture_files, check_capture, read

pytestmark = pytest.mark.conformance
FILE = "fluidstack_wayback-20250109013724_www.fluidstack.io-pricing_excerpt.html"


@pytest.mark.parametrize("path", capture_files("fluidstack"), ids=lambda p: p.name)
def test_every_capture_parses_to_valid_known_rows(path: Path) -> None:
    check_capture(fluidstack, path)


def test_2025_wayback_excerpt() -> None:
    path = shared_file("captures", "fluidstack", FILE)
    frame, _, skipped = read(fluidstack, path.read_bytes())
    got = {(r["offering"], r["pricing"]): (r["gpu_model"], r["price_usd_per_hour"])
           for r in frame.iter_rows(named=True)}
    assert got == {
        ("Nvidia H200 (1 Year commitment)", "reserved"): ("H200 SXM", 2.45),
        ("Nvidia H100 PCIe", "on_demand"): ("H100 PCIe", 2.89),
        ("Nvidia H100 PCIe (1 Year commitment)", "reserved"): ("H100 PCIe", 2.05),
        ("Nvidia A100 80GB PCIe", "on_demand"): ("A100 80GB", 1.80),
        ("Nvidia A100 80GB PCIe (1 Year commitment)", "reserved"): ("A100 80GB", 1.20),
        ("Nvidia A100 40GB PCIe", "on_demand"): ("A100 40GB", 1.65),
        ("Nvidia A100 40GB PCIe (1 Year commitment)", "reserved"): ("A100 40GB", 1.05),
        ("Nvidia L40", "on_demand"): ("L40", 1.25),
        ("Nvidia L40 (1 Year commitment)", "reserved"): ("L40", 0.99),
    }
    assert dict(skipped) == {"no price (n/a)": 1}
    assert not frame["gpu_only"].any()
