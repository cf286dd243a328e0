"""DataCrunch parser over every capture in ../shared/captures/datacrunch (skips without it).

Checked by hand against the 2025-08-08 Wayback excerpt (cut inside the table: no `<table>`
element): 1B200.30V $3.64/h on demand, $2.68/h dynamic, $0.80/h spot; 2B200.60V $7.27 /
$5.36 / $1.61; 4B200.120V $14.55 / $10.71 / $3.21; 8B200.240V $29.10 / $21.42 / $6.43, per
instance (8x: $29.10 / 8 = $3.6375 per GPU-hour). Dynamic prices are pricing `dynamic`.
The 2026-08 live JSON-LD: 163 offers; 32 instance offers (2 repeated verbatim), 56 instant
clusters, 48 serverless (24 continuous, 24 spot), 18 unnamed CPU offers, 6 unnamed
serverless offers, 3 storage offers.
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
    assert frame.height == 12 and set(frame["gpu_model"]) == {"B200"}
    expected = {"1B200.30V": (1, 3.64, 0.80), "2B200.60V": (2, 7.27, 1.61),
                "4B200.120V": (4, 14.55, 3.21), "8B200.240V": (8, 29.10, 6.43)}
    for offering, (count, on_demand, spot) in expected.items():
        row = price(frame, offering)
        assert (row["gpu_count"], row["price_usd_per_hour"]) == (count, on_demand)
        assert price(frame, offering, "spot")["price_usd_per_hour"] == spot
    assert price(frame, "8B200.240V")["price_usd_per_gpu_hour"] == pytest.approx(3.6375)
    assert not skipped
    assert price(frame, "1B200.30V", "dynamic")["price_usd_per_hour"] == 2.68
    assert price(frame, "8B200.240V", "dynamic")["price_usd_per_hour"] == 21.42


def test_2026_live_offer_catalog() -> None:
    name = "datacrunch_live-2026-08_verda.com-pricing_getcomputable-fixture.html"
    frame, strategy, skipped = read(datacrunch,
                                    shared_file("captures", "datacrunch", name).read_bytes())
    assert strategy == "json-ld"
    assert frame.group_by("pricing").len().sort("pricing").rows() == [
        ("on_demand", 71), ("serverless", 24), ("spot", 15)]
    assert price(frame, "1x GB300 SXM6 288GB on-demand")["price_usd_per_hour"] == 8.62
    assert price(frame, "1x B300 CC SXM6 268GB spot", "spot")["gpu_model"] == "B300"
    assert price(frame, "144x B300 SXM6 268GB instant cluster")["price_usd_per_hour"] == 1080
    assert dict(skipped) == {"offer names no 'Nx' instance (CPU, storage)": 27,
                             "serverless spot (no pricing kind for it)": 24}
