"""Crusoe parser over every capture in ../shared/captures/crusoe (skips without it).

Checked by hand against crusoe_pricing_2026_ewyluda-fixture.html ("GPU instances pricing"
list): H200 141GB HGX $4.29/GPU-hr, H100 80GB HGX $3.90/GPU-hr, A100 80GB SXM $2.30/GPU-hr,
A100 80GB PCIe $2.00/GPU-hr, L40S 48GB $1.50/GPU-hr, MI300X 192GB $3.45/GPU-hr on demand;
GB200, B200 and MI355X on-demand and every "Current spot" cell read "Contact sales" (3 + 9).
The Self-Serve Deployments list (H100 $5.50, H200 $6.00, B200 $9.65, MI355x $7.40 per hour)
prices inference endpoints, not instances.
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
    }
    assert set(frame["pricing"]) == {"on_demand"} and set(frame["gpu_count"]) == {1.0}
    assert skipped["contact sales"] == 12
    assert not {5.50, 6.00, 9.65, 7.40} & set(frame["price_usd_per_hour"])
