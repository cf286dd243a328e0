"""DataCrunch parser over every capture in ../shared/captures/datacrunch (skips without it).

Checked by hand against the 2025-08-08 Wayback excerpt (cut inside the table: no `<table>`
element): 1B200.30V $3.64/h on demand, $2.68/h dynamic, $0.80/h spot; 2B200.60V $7.27 /
$5.36 / $1.61; 4B200.120V $14.55 / $10.71 / $3.21; 8B200.240V $29.10 / $21.42 / $6.43, per
instance (8x: $29.10 / 8 = $3.6375 per GPU-hour). Dynamic prices are skipped.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scrapers import datacrunch
from tests.conftest import shared_file
from tests.neocloud_pages import capture_files, check_capture, price, read

pytestmark = pytest.mark.conformance
FILE = "datacrunch_wayback-20250808081801_datacrunch.io-products_excerpt.html"


@pytest.mark.parametrize("path", capture_files("datacrunch"), ids=lambda p: p.name)
def test_every_capture_parses_to_valid_known_rows(path: Path) -> None:
    check_capture(datacrunch, path)


def test_2025_wayback_excerpt() -> None:
    path = shared_file("captures", "datacrunch", FILE)
    frame, _, skipped = read(datacrunch, path.read_bytes())
    assert frame.height == 8 and set(frame["gpu_model"]) == {"B200"}
    expected = {"1B200.30V": (1, 3.64, 0.80), "2B200.60V": (2, 7.27, 1.61),
                "4B200.120V": (4, 14.55, 3.21), "8B200.240V": (8, 29.10, 6.43)}
    for offering, (count, on_demand, spot) in expected.items():
        row = price(frame, offering)
        assert (row["gpu_count"], row["price_usd_per_hour"]) == (count, on_demand)
        assert price(frame, offering, "spot")["price_usd_per_hour"] == spot
    assert price(frame, "8B200.240V")["price_usd_per_gpu_hour"] == pytest.approx(3.6375)
    assert skipped["dynamic price (re-priced daily)"] == 4
    assert 2.68 not in frame["price_usd_per_hour"].to_list()
