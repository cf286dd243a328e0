"""Crusoe parser over every capture in ../shared/captures/crusoe (skips without it).

Checked by hand against crusoe_pricing_2026_ewyluda-fixture.html ("GPU instances pricing"
list): H200 141GB HGX $4.29/GPU-hr, H100 80GB HGX $3.90/GPU-hr, A100 80GB SXM $2.30/GPU-hr,
A100 80GB PCIe $2.00/GPU-hr, L40S 48GB $1.50/GPU-hr, MI300X 192GB $3.45/GPU-hr on demand;
GB200, B200 and MI355X on-demand and every "Current spot" cell read "Contact sales" (3 + 9).
The Self-Serve Deployments list (H100 $5.50, H200 $6.00, B200 $9.65, MI355x $7.40 per hour)
prices dedicated inference endpoints, not instances: pricing `inference`.
The 2025-05-21 Wayback excerpt (one `hidden lg:grid` table, shown on desktop): H200 141GB SXM
$4.29 on demand and $3.43 / $3.22 / $2.79 for 6-month / 1-year / 3-year terms; spot only for
MI300X ($0.95) and L40S ($0.50).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scrapers import crusoe
from tests.conftest import shared_file
from tests.neocloud_pages import capture_files, check_capture, read

pytestmark = pytest.mark.conformance


@pytest.mark.parametrize("path", capture_files("crusoe"), ids=lambda p: p.name)
def test_every_capture_parses_to_valid_known_rows(path: Path) -> None:
    check_capture(crusoe, path)


def test_2026_saved_page() -> None:
    path = shared_file("captures", "crusoe", "crusoe_pricing_2026_ewyluda-fixture.html")
    frame, strategy, skipped = read(crusoe, path.read_bytes())
    assert strategy == "cards"
    got = {r["offering"]: (r["gpu_model"], r["price_usd_per_hour"])
           for r in frame.iter_rows(named=True)}
    assert got == {
        "NVIDIA H200 141GB HGX": ("H200 SXM", 4.29),
        "NVIDIA H100 80GB HGX": ("H100 SXM", 3.90),
        "NVIDIA A100 80GB SXM": ("A100 80GB", 2.30),
        "NVIDIA A100 80GB PCIe": ("A100 80GB", 2.00),
        "NVIDIA L40S 48GB": ("L40S", 1.50),
        "AMD MI300X 192GB": ("MI300X", 3.45),
        "NVIDIA H100 80GB HGX (inference)": ("H100 SXM", 5.50),
        "NVIDIA H200 141GB HGX (inference)": ("H200 SXM", 6.00),
        "NVIDIA B200 180GB HGX (inference)": ("B200", 9.65),
        "AMD MI355x 288GB (inference)": ("MI355X", 7.40),
    }
    assert set(frame["gpu_count"]) == {1.0}
    kinds = dict(zip(frame["offering"], frame["pricing"], strict=True))
    assert {o for o, k in kinds.items() if k == "inference"} == {o for o in got
                                                                  if "(inference)" in o}
    assert {k for o, k in kinds.items() if "(inference)" not in o} == {"on_demand"}
    assert skipped["contact sales"] == 12


def test_2025_wayback_table_shown_on_desktop() -> None:
    path = shared_file("captures", "crusoe",
                       "crusoe_wayback-20250521220413_crusoe.ai-cloud-pricing_excerpt.html")
    frame, strategy, _ = read(crusoe, path.read_bytes())
    assert strategy == "table"
    got = {(r["offering"], r["pricing"]): (r["price_usd_per_hour"], r["term_months"])
           for r in frame.iter_rows(named=True) if r["offering"].startswith("NVIDIA H200")}
    assert got == {("NVIDIA H200 141GB SXM", "on_demand"): (4.29, None),
                   ("NVIDIA H200 141GB SXM (6 Months commitment)", "reserved"): (3.43, 6.0),
                   ("NVIDIA H200 141GB SXM (1 Year commitment)", "reserved"): (3.22, 12.0),
                   ("NVIDIA H200 141GB SXM (3 Years commitment)", "reserved"): (2.79, 36.0)}
    spot = frame.filter(frame["pricing"] == "spot")
    assert dict(zip(spot["gpu_model"], spot["price_usd_per_hour"], strict=True)) == {
        "MI300X": 0.95, "L40S": 0.50}
