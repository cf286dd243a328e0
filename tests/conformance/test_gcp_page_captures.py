"""gcp-page over every capture in ../shared/captures/gcp-page (skips without it).

Checked by hand against the 2026 page (two tables, 28 machine types): a3-highgpu-8g on demand
$88.490000119 for 8 H100s; g4-standard-6 rents 1/8 of an RTX PRO 6000 at $0.64688; the typo
cells "$2 .0000" (a2-highgpu-1g, DWS Flex-start) and "$9 .0000" (g4-standard-192) are $2 and
$9; the g2-standard-24 spot cell holds "g2-standard-24-spot", not a price; a4-highgpu-8g has no
on-demand price (N/A) but a spot price of $39.6336.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from contract import RawCapture
from scrapers.gcp_page import PARSER, SOURCE
from tests.conformance._provider_captures import FETCHED_AT, capture_files, good_rows, one

pytestmark = pytest.mark.conformance
FOLDER = "gcp-page"
FILES = capture_files(FOLDER, "*.html")
PAGE_2026 = "gcp_gpus-pricing_2026_ewyluda-fixture.html"
EXPECTED = {PAGE_2026: {"on_demand": 27, "flex": 19, "spot": 27, "reserved": 84}}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_capture_parses_to_valid_known_rows(path: Path) -> None:
    frame = good_rows(SOURCE, FOLDER, path)
    if path.name in EXPECTED:
        counts = dict(frame.group_by("pricing").len().iter_rows())
        assert counts == EXPECTED[path.name]
    assert set(frame["provider"]) == {"gcp"}


def test_2026_prices_by_hand() -> None:
    path = next(p for p in FILES if p.name == PAGE_2026)
    frame = good_rows(SOURCE, FOLDER, path)
    a3 = one(frame, "a3-highgpu-8g", "on_demand")
    assert a3["gpu_model"] == "H100 SXM" and a3["gpu_count"] == 8
    assert a3["price_usd_per_gpu_hour"] == pytest.approx(88.490000119 / 8)
    g4 = one(frame, "g4-standard-6", "on_demand")
    assert g4["gpu_count"] == 0.125 and g4["gpu_model"] == "RTX PRO 6000"
    assert g4["price_usd_per_gpu_hour"] == pytest.approx(0.64688 * 8)
    assert one(frame, "a2-highgpu-1g (DWS Flex-start)", "flex")["price_usd_per_hour"] == 2.0
    assert one(frame, "g4-standard-192 (DWS Flex-start)", "flex")[
        "price_usd_per_hour"] == 9.0
    assert frame.filter((frame["offering"] == "g2-standard-24")
                        & (frame["pricing"] == "spot")).height == 0
    assert frame.filter((frame["offering"] == "a4-highgpu-8g")
                        & (frame["pricing"] == "on_demand")).height == 0
    assert one(frame, "a4-highgpu-8g", "spot")["price_usd_per_hour"] == pytest.approx(39.6336)
    ultra = one(frame, "a2-ultragpu-1g (3 Years commitment)", "reserved")
    assert ultra["gpu_model"] == "A100 80GB" and ultra["price_usd_per_hour"] == pytest.approx(
        3.499997559)
    assert ultra["term_months"] == 36
    flexible = one(frame, "g2-standard-4 (1 Year flexible commitment)", "reserved")
    assert flexible["price_usd_per_hour"] == pytest.approx(0.558397485)
    assert set(frame["region"]) == {"global"}  # the saved page selects no region
    parsed = PARSER(RawCapture("gcp-page", SOURCE.url, FETCHED_AT,
                                               path.read_bytes()))
    assert parsed.strategy == "table"
    assert parsed.skips["cell holds no price (e.g. a machine name)"] == 1
