"""Nebius price page (`nebius`): the 2026 per-GPU-hour div tables (the bundled example, own
values) and the 2024 whole-instance table ("8 × H200 SXM", own fixture)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from scrapers import nebius
from scrapers.base import ParseError
from tests.neocloud_pages import capture, example, fetched_url, price, read

INSTANCES_2024 = """<html><body><h2>NVIDIA GPU instances</h2>
<table><thead><tr><th>Configuration</th><th>vCPU</th><th>RAM, GB</th>
<th>On-demand price per hour</th></tr></thead><tbody>
<tr><td>1 × H100 SXM</td><td>20</td><td>160</td><td>$2.95</td></tr>
<tr><td>8 × H100 SXM</td><td>160</td><td>1280</td><td>$23.60</td></tr>
<tr><td>8 × H200 SXM</td><td>128</td><td>1600</td><td>$28.72</td></tr>
<tr><td>8 × L40S PCIe</td><td>128</td><td>768</td><td>€12.40</td></tr>
<tr hidden><td>8 × H200 SXM</td><td>128</td><td>1600</td><td>$0.10</td></tr>
</tbody></table></body></html>"""


def test_example_per_gpu_hour_prices_before_the_announced_date() -> None:
    frame, strategy, skipped = example(nebius)
    assert strategy == "table" and frame.height == 5
    h100 = price(frame, "NVIDIA HGX H100")
    assert (h100["gpu_model"], h100["gpu_count"], h100["price_usd_per_hour"]) == (
        "H100 SXM", 1.0, 2.95)
    assert price(frame, "NVIDIA L40S with Intel CPU")["gpu_model"] == "L40S"
    assert skipped["announced future price"] == 4  # B200, H200, H100, L40S: not today's
    assert skipped["contact sales"] == 1  # GB200 NVL72 (both cells: one on-demand counted)


def test_announced_column_is_the_price_once_its_date_has_come() -> None:
    after = datetime(2030, 7, 2, tzinfo=UTC)
    frame, _, skipped = read(nebius, nebius.SOURCE.example.read_bytes(), fetched=after)
    assert price(frame, "NVIDIA HGX H100")["price_usd_per_hour"] == 3.40
    assert price(frame, "NVIDIA HGX B200")["price_usd_per_hour"] == 7.90
    assert skipped["superseded by an announced price now in force"] == 4
    assert "announced future price" not in skipped


def test_dynamic_spot_floors_are_skipped_but_flat_rate_preemptible_is_kept() -> None:
    frame, _, skipped = example(nebius)
    spot = frame.filter(frame["pricing"] == "spot")
    assert spot["offering"].to_list() == ["NVIDIA L40S with Intel CPU"]  # footnote **: flat
    assert spot["price_usd_per_hour"].to_list() == [0.69]
    assert skipped["spot floor (dynamic price, not today's)"] == 2  # B200, H100 "from $x"*


def test_2024_whole_instances_are_priced_per_instance() -> None:
    frame, _, skipped = read(nebius, INSTANCES_2024)
    eight = price(frame, "8 × H100 SXM")
    assert eight["gpu_count"] == 8.0 and eight["price_usd_per_hour"] == 23.60
    assert eight["price_usd_per_gpu_hour"] == pytest.approx(2.95)
    assert price(frame, "1 × H100 SXM")["price_usd_per_hour"] == 2.95
    h200 = price(frame, "8 × H200 SXM")
    assert (h200["gpu_model"], h200["price_usd_per_hour"]) == ("H200 SXM", 28.72)
    assert frame.height == 3  # the hidden duplicate row and the EUR row are not stored
    assert skipped["non-USD price"] == 1


def test_cpu_only_and_storage_tables_are_not_gpu_offers() -> None:
    frame, _, skipped = example(nebius)
    assert not any("Ice Lake" in o for o in frame["offering"])
    # "Price per hour" in a "CPU-only instances" table names no pricing: not a price column.
    assert "not a GPU offering" not in skipped


def test_an_unknown_layout_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="layout not recognised"):
        nebius.SOURCE.parse(capture(nebius, "<html><div class='price'>$3.85</div></html>"))


def test_fetch_gets_the_prices_page_at_the_overridable_base() -> None:
    assert fetched_url(nebius) == "http://127.0.0.1:9/prices"
