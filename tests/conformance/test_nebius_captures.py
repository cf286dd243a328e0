"""Nebius parser over every capture in ../shared/captures/nebius (skips without it).

Checked by hand against the files themselves:
- nebius_prices_2026_ewyluda-fixture.html ("NVIDIA GPU Instances", "On-demand, GPU-hour"):
  HGX B300 $7.85, HGX B200 $7.15, HGX H200 $4.50, HGX H100 $3.85, RTX PRO 6000 $1.80, L40S
  with Intel CPU from $1.55, L40S with AMD CPU from $1.82; GB300 and GB200 NVL72 "Contact
  us". The "GPU-hour (Effective October 1, 2026)" column ($9.50, $8.50, $5.40, $4.50, $1.80,
  $1.55, $1.82) is announced: stored with effective_from 2026-10-01 where it differs from
  today's price. "Preemptible": B300/B200 from $0.99, H200/H100/RTX PRO 6000 from $0.79
  (footnote *: dynamic, floors) and L40S from $0.74** / $0.90** (footnote **: flat rate).
- nebius_wayback-20241115043809 (Gravity-UI ARIA div table, per instance): 1 × H200 SXM $3.50
  / reserve $2.30, 8 × H200 SXM $28.00 / $18.40, 1 × H100 SXM $2.95 / $2.00, 8 × H100 SXM
  $23.60 / $16.00, 1 × L40s PCIe $1.55 / $0.80; three price cards above repeat prices.
- nebius_live-2026-08 (escaped JSON): HGX B300 $4.30 preemptible / $7.85 on demand, B200
  $3.95 / $7.15, H200 $2.45 / $4.50, H100 $2.15 / $3.85, RTX PRO 6000 $0.95 / $1.80, L40S from.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from scrapers import nebius
from tests.conftest import shared_file
from tests.neocloud_pages import capture_files, check_capture, price, read

pytestmark = pytest.mark.conformance
FILE = "nebius_prices_2026_ewyluda-fixture.html"
BEFORE = datetime(2026, 6, 1, tzinfo=UTC)  # the copy predates 2026-10-01 (REAL_PAGES.md)
EFFECTIVE = date(2026, 10, 1)


@pytest.mark.parametrize("path", capture_files("nebius"), ids=lambda p: p.name)
def test_every_capture_parses_to_valid_known_rows(path: Path) -> None:
    check_capture(nebius, path, BEFORE)


def test_2026_page_before_the_announced_date() -> None:
    path = shared_file("captures", "nebius", FILE)
    frame, _, skipped = read(nebius, path.read_bytes(), BEFORE)
    got = {(r["offering"], r["pricing"]): (r["gpu_model"], r["price_usd_per_hour"])
           for r in frame.filter(frame["effective_from"].is_null()).iter_rows(named=True)}
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
    announced = {r["offering"]: r["price_usd_per_hour"] for r in frame.filter(
        frame["effective_from"] == EFFECTIVE).iter_rows(named=True)}
    assert announced == {"NVIDIA HGX B300": 9.50,
                         "NVIDIA HGX B200": 8.50,
                         "NVIDIA HGX H200": 5.40,
                         "NVIDIA HGX H100": 4.50}  # same offering, dated
    assert set(frame["gpu_count"]) == {1.0}  # per GPU-hour: a 1-GPU offering
    assert skipped["announced price unchanged"] == 3  # RTX PRO 6000 and both L40S
    assert skipped["spot floor (dynamic price, not today's)"] == 5


def test_2026_page_after_the_announced_date_reads_the_new_column() -> None:
    path = shared_file("captures", "nebius", FILE)
    frame, _, _ = read(nebius, path.read_bytes(), datetime(2026, 10, 1, tzinfo=UTC))
    on_demand = {r["offering"]: r["price_usd_per_hour"]
                 for r in frame.filter(frame["pricing"] == "on_demand").iter_rows(named=True)}
    assert on_demand["NVIDIA HGX B300"] == 9.50 and on_demand["NVIDIA HGX H100"] == 4.50
    assert on_demand["NVIDIA HGX H200"] == 5.40
    assert not any("(from " in o for o in on_demand)


def test_2024_wayback_whole_instances() -> None:
    name = "nebius_wayback-20241115043809_nebius.com-prices_excerpt.html"
    frame, strategy, _ = read(nebius, shared_file("captures", "nebius", name).read_bytes(),
                              datetime(2024, 11, 15, tzinfo=UTC))
    assert strategy == "table" and frame.height == 10
    eight = price(frame, "8 × H200 SXM")
    assert (eight["gpu_count"], eight["price_usd_per_hour"], eight["gpu_memory_gb"]) == (
        8.0, 28.00, 141.0)
    assert price(frame, "8 × H100 SXM (reserved, term not stated)", "reserved")[
        "price_usd_per_hour"] == 16.00


def test_2026_live_escaped_json() -> None:
    name = "nebius_live-2026-08_nebius.com-prices_getcomputable-fixture.html"
    frame, strategy, skipped = read(nebius, shared_file("captures", "nebius", name).read_bytes(),
                                    datetime(2026, 8, 22, tzinfo=UTC))
    assert strategy == "embedded-json"
    assert price(frame, "NVIDIA HGX B300", "spot")["price_usd_per_hour"] == 4.30
    assert price(frame, "NVIDIA HGX H100")["price_usd_per_hour"] == 3.85
    assert skipped["contact sales"] == 2  # GB300 and GB200 NVL72
