"""Nebius parser over every capture in ../shared/captures/nebius (skips without it).

Checked by hand against nebius_prices_2026_ewyluda-fixture.html ("NVIDIA GPU Instances",
"On-demand, GPU-hour"): HGX B300 $7.85, HGX B200 $7.15, HGX H200 $4.50, HGX H100 $3.85,
RTX PRO 6000 $1.80, L40S with Intel CPU from $1.55, L40S with AMD CPU from $1.82; GB300 and
GB200 NVL72 "Contact us". The "GPU-hour (Effective October 1, 2026)" column ($9.50, $8.50,
$5.40, $4.50, $1.80, $1.55, $1.82) is announced, not in force before that date.
"Preemptible": B300/B200 from $0.99, H200/H100/RTX PRO 6000 from $0.79 (footnote *: dynamic,
floors) and L40S from $0.74** / $0.90** (footnote **: flat rate).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from scrapers import nebius
from tests.conftest import shared_file
from tests.neocloud_pages import capture_files, check_capture, read

pytestmark = pytest.mark.conformance
FILE = "nebius_prices_2026_ewyluda-fixture.html"
BEFORE = datetime(2026, 6, 1, tzinfo=UTC)  # the copy predates 2026-10-01 (REAL_PAGES.md)


@pytest.mark.parametrize("path", capture_files("nebius"), ids=lambda p: p.name)
def test_every_capture_parses_to_valid_known_rows(path: Path) -> None:
    check_capture(nebius, path, BEFORE)


def test_2026_page_before_the_announced_date() -> None:
    path = shared_file("captures", "nebius", FILE)
    frame, _, skipped = read(nebius, path.read_bytes(), BEFORE)
    got = {(r["offering"], r["pricing"]): (r["gpu_model"], r["price_usd_per_hour"])
           for r in frame.iter_rows(named=True)}
    assert got == {
        ("NVIDIA HGX B300", "on_demand"): ("B300", 7.85),
        ("NVIDIA HGX B200", "on_demand"): ("B200", 7.15),
        ("NVIDIA HGX H200", "on_demand"): ("H200 SXM", 4.50),
        ("NVIDIA HGX H100", "on_demand"): ("H100 SXM", 3.85),
        ("NVIDIA RTX PRO 6000", "on_demand"): ("RTX PRO 6000", 1.80),
        ("NVIDIA L40S with Intel CPU", "on_demand"): ("L40S", 1.55),
        ("NVIDIA L40S with AMD CPU", "on_demand"): ("L40S", 1.82),
        ("NVIDIA L40S with Intel CPU", "spot"): ("L40S", 0.74),
        ("NVIDIA L40S with AMD CPU", "spot"): ("L40S", 0.90),
    }
    assert set(frame["gpu_count"]) == {1.0}  # per GPU-hour: a 1-GPU offering
    assert skipped["contact sales"] == 2
    assert skipped["announced future price"] == 7
    assert skipped["spot floor (dynamic price, not today's)"] == 5


def test_2026_page_after_the_announced_date_reads_the_new_column() -> None:
    path = shared_file("captures", "nebius", FILE)
    frame, _, _ = read(nebius, path.read_bytes(), datetime(2026, 10, 1, tzinfo=UTC))
    on_demand = {r["offering"]: r["price_usd_per_hour"]
                 for r in frame.filter(frame["pricing"] == "on_demand").iter_rows(named=True)}
    assert on_demand["NVIDIA HGX B300"] == 9.50 and on_demand["NVIDIA HGX H100"] == 4.50
    assert on_demand["NVIDIA HGX H200"] == 5.40
