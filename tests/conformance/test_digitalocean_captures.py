"""DigitalOcean over every capture in ../shared/captures/digitalocean (skips without it).

Checked by hand against the 2025-07-07 page: 9 cards, 2 reserved first (H100x8 $1.99, MI300Xx8
$1.49 /GPU/hour, "contractual commitment of 12 months"), then on demand: H100x8 $2.99, MI300Xx8
$1.99, H100 $6.74 struck and $3.39* (the promotion), MI300X $1.99, RTX 4000 Ada $0.76, RTX
6000 Ada $1.57, L40S $1.57, all /GPU/hour.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from contract import RawCapture
from scrapers.digitalocean import PARSER, SOURCE
from tests.conformance._provider_captures import FETCHED_AT, capture_files, good_rows, one

pytestmark = pytest.mark.conformance
FOLDER = "digitalocean"
FILES = capture_files(FOLDER, "*.html")
JULY_2025 = ("digitalocean_wayback-20250707231929_www.digitalocean.com-pricing-gpu-droplets"
             "_excerpt.html")
EXPECTED_ROWS = {JULY_2025: 9}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_capture_parses_to_valid_known_rows(path: Path) -> None:
    frame = good_rows(SOURCE, FOLDER, path)
    if path.name in EXPECTED_ROWS:
        assert frame.height == EXPECTED_ROWS[path.name]
    assert set(frame["pricing"]) <= {"on_demand", "reserved"}


def test_july_2025_prices_by_hand() -> None:
    path = next(p for p in FILES if p.name == JULY_2025)
    frame = good_rows(SOURCE, FOLDER, path)
    reserved = one(frame, "NVIDIA H100x8 (12-month commitment)", "reserved")
    assert reserved["gpu_count"] == 8 and reserved["price_usd_per_gpu_hour"] == pytest.approx(1.99)
    assert reserved["price_usd_per_hour"] == pytest.approx(15.92)
    promo = one(frame, "NVIDIA H100", "on_demand")  # $6.74 struck through, $3.39 charged
    assert promo["price_usd_per_hour"] == pytest.approx(3.39)
    assert 6.74 not in frame["price_usd_per_gpu_hour"].round(2).to_list()
    mi300 = one(frame, "AMD Instinct MI300Xx8", "on_demand")
    assert mi300["gpu_model"] == "MI300X" and mi300["price_usd_per_hour"] == pytest.approx(15.92)
    assert mi300["gpu_memory_gb"] == pytest.approx(192) and mi300["vcpus"] == 160
    ada = one(frame, "NVIDIA RTX 4000 Ada Generation", "on_demand")
    assert ada["gpu_model"] == "RTX 4000 Ada" and ada["price_usd_per_hour"] == pytest.approx(0.76)
    assert one(frame, "AMD Instinct MI300Xx8 (12-month commitment)", "reserved")[
        "price_usd_per_gpu_hour"] == pytest.approx(1.49)
    assert set(frame["region"]) == {"global"}


def test_july_2025_reads_cards_and_skips_nothing() -> None:
    path = next(p for p in FILES if p.name == JULY_2025)
    parsed = PARSER(RawCapture("digitalocean", SOURCE.url, FETCHED_AT,
                                               path.read_bytes()))
    assert parsed.strategy == "cards" and not parsed.skips
