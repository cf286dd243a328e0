"""Nebius price page (`nebius`): the 2026 per-GPU-hour div tables (the bundled example,
own values), the 2024 whole-instance tables (an HTML table and the Gravity-UI ARIA div table,
own fixtures) and the 2026 page state as escaped JSON (own fixture)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from contract import ParseError
from scrapers import nebius
from tests.neocloud_pages import announced as announced_price
from tests.neocloud_pages import capture, example, fetched_url, price, read

FIXTURES = Path(__file__).parents[1] / "fixtures" / "pages" / "nebius"
INSTANCES_2024 = """<html><body><h2>NVIDIA GPU instances</h2>
<table><thead><tr><th>Configuration</th><th>vCPU</th><th>RAM, GB</th>
<th>On-demand price per hour</th></tr></thead><tbody>
<tr><td>1 × H100 SXM</td><td>20</td><td>160</td><td>$2.95</td></tr>
<tr><td>8 × H100 SXM</td><td>160</td><td>1280</td><td>$23.60</td></tr>
<tr><td>8 × H200 SXM</td><td>128</td><td>1600</td><td>$28.72</td></tr>
<tr><td>8 × L40S PCIe</td><td>128</td><td>768</td><td>€12.40</td></tr>
<tr hidden><td>8 × H200 SXM</td><td>128</td><td>1600</td><td>$0.10</td></tr>
</tbody></table></body></html>"""
ANNOUNCED = date(2030, 7, 1)  # the example's "Effective" column, dated far ahead


def test_example_per_gpu_hour_prices_before_the_announced_date() -> None:
    frame, strategy, skipped = example(nebius)
    assert strategy == "table"
    in_force = frame.filter(frame["effective_from"].is_null())
    assert in_force.height == 5
    h100 = price(in_force, "NVIDIA HGX H100")
    assert (h100["gpu_model"], h100["gpu_count"], h100["price_usd_per_hour"]) == (
        "H100 SXM", 1.0, 2.95)
    assert price(in_force, "NVIDIA L40S with Intel CPU")["gpu_model"] == "L40S"
    assert skipped["contact sales"] == 2  # GB200 NVL72: its on-demand and announced cells


def test_announced_prices_are_stored_with_their_date_beside_the_price_in_force() -> None:
    frame, _, skipped = example(nebius)
    announced = frame.filter(frame["effective_from"].is_not_null())
    assert set(announced["effective_from"]) == {ANNOUNCED}
    assert set(announced["pricing"]) == {"on_demand"}
    # the same offering as the price in force, dated: the warehouse switches on that day
    h100 = announced_price(frame, "NVIDIA HGX H100")
    assert h100["price_usd_per_hour"] == 3.40 and h100["gpu_model"] == "H100 SXM"
    assert frame.filter(frame["offering"] == "NVIDIA HGX H100").height == 2
    assert announced.height == 3  # B200, H200, H100
    assert skipped["announced price unchanged"] == 1  # L40S: the same amount announced


def test_announced_column_is_the_price_once_its_date_has_come() -> None:
    after = datetime(2030, 7, 2, tzinfo=UTC)
    frame, _, skipped = read(nebius, nebius.SOURCE.example.read_bytes(), fetched=after)
    h100 = price(frame, "NVIDIA HGX H100")
    assert (h100["price_usd_per_hour"], h100["effective_from"]) == (3.40, ANNOUNCED)
    assert price(frame, "NVIDIA HGX B200")["price_usd_per_hour"] == 7.90
    assert not frame["offering"].str.contains(r"\(from ").any()
    assert skipped["superseded by an announced price now in force"] == 4


def test_2024_gravity_ui_aria_table_is_priced_per_instance() -> None:
    frame, strategy, skipped = read(nebius, (FIXTURES / "gravity_table_2024.html").read_bytes(),
                                    fetched=datetime(2024, 11, 15, tzinfo=UTC))
    assert strategy == "table"
    eight = price(frame, "8 × H100 SXM")
    assert (eight["gpu_model"], eight["gpu_count"], eight["price_usd_per_hour"],
            eight["gpu_memory_gb"]) == ("H100 SXM", 8.0, 24.40, 80.0)
    assert eight["price_usd_per_gpu_hour"] == pytest.approx(3.05)
    reserve = price(frame, "8 × H100 SXM (reserved, term not stated)", "reserved")
    assert reserve["price_usd_per_hour"] == 16.40 and reserve["term_months"] is None
    assert price(frame, "1 × L40s PCIe")["gpu_model"] == "L40S"
    # The price cards above repeat table prices ($2.05, $0.85): never rows of their own.
    assert frame.height == 6
    # The 8 × H200 row lost a cell: skipped whole, never read with its cells shifted.
    assert skipped == {"row cells do not match the header": 1}


def test_2026_page_state_as_escaped_json() -> None:
    body = (FIXTURES / "embedded_json_2026.html").read_bytes()
    frame, strategy, skipped = read(nebius, body, fetched=datetime(2026, 8, 22, tzinfo=UTC))
    assert strategy == "embedded-json"
    b200 = price(frame.filter(frame["effective_from"].is_null()), "NVIDIA HGX B200")
    assert (b200["gpu_model"], b200["gpu_count"], b200["price_usd_per_hour"]) == (
        "B200", 1.0, 7.10)
    assert price(frame, "NVIDIA HGX B200", "spot")["price_usd_per_hour"] == 3.90
    later = announced_price(frame, "NVIDIA HGX B200")
    assert (later["price_usd_per_hour"], later["effective_from"]) == (8.40, date(2026, 10, 1))
    assert skipped["announced price unchanged"] == 2  # RTX PRO 6000 and L40S: same amount
    assert skipped["spot floor (dynamic price, not today's)"] == 1  # "from $0.70"
    assert not frame["offering"].str.contains("EPYC|Filesystem").any()


def test_2026_page_state_after_the_announced_date() -> None:
    body = (FIXTURES / "embedded_json_2026.html").read_bytes()
    frame, _, _ = read(nebius, body, fetched=datetime(2026, 11, 2, tzinfo=UTC))
    on_demand = {r["offering"]: (r["price_usd_per_hour"], r["effective_from"])
                 for r in frame.filter(frame["pricing"] == "on_demand").iter_rows(named=True)}
    assert on_demand["NVIDIA HGX B200"] == (8.40, date(2026, 10, 1))
    assert on_demand["NVIDIA RTX PRO 6000"] == (1.75, date(2026, 10, 1))


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
    # "Price per hour" in the "CPU-only instances" table is a plain (on-demand) price column,
    # but its rows name CPUs: counted, never stored.
    assert skipped["not a GPU offering"] == 1


def test_an_unknown_layout_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="layout not recognised"):
        nebius.SOURCE.parse(capture(nebius, "<html><div class='price'>$3.85</div></html>"))


def test_fetch_gets_the_prices_page_at_the_overridable_base() -> None:
    assert fetched_url(nebius) == "http://127.0.0.1:9/prices"
