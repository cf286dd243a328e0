"""Hyperstack GPU pricing page (`hyperstack`): the 2025-2026 HubSpot cards (the bundled
example, own values; a 2025-style excerpt cut inside its first card, own fixture) and the 2024
sortable table (own fixtures)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract import ParseError
from scrapers import hyperstack
from tests.neocloud_pages import capture, example, fetched_url, price, read

FIXTURES = Path(__file__).parents[1] / "fixtures" / "pages" / "hyperstack"
SORTABLE_2024 = """<html><body><h2>GPU pricing</h2><p>Billed by the minute.</p>
<table class="sortable"><thead><tr><th>GPU Model</th><th>VRAM (GB)</th>
<th>Max pCPUs per GPU</th><th>Max RAM (GB) per GPU</th><th>On-Demand Price per Hour</th>
<th>Reserved Price per Hour</th></tr></thead><tbody>
<tr><td>NVIDIA H100 SXM</td><td>80</td><td>24</td><td>240</td><td>$2.25</td><td>$1.90</td></tr>
<tr><td>NVIDIA A100</td><td>80</td><td>28</td><td>120</td><td>$1.35</td><td>$0.95</td></tr>
<tr><td>NVIDIA RTX A6000</td><td>48</td><td>28</td><td>58</td><td>£0.40</td><td>Contact us</td></tr>
<tr class="hidden"><td>NVIDIA L40</td><td>48</td><td>28</td><td>120</td><td>$0.01</td><td></td></tr>
</tbody></table></body></html>"""


def test_example_cards_on_demand_reservation_and_spot() -> None:
    frame, strategy, skipped = example(hyperstack)
    assert strategy == "cards"
    counts = frame.group_by("pricing").len().sort("pricing").rows()
    assert counts == [("on_demand", 8), ("reserved", 3), ("spot", 3)]
    h200 = price(frame, "NVIDIA H200 SXM")
    assert (h200["gpu_model"], h200["price_usd_per_hour"], h200["gpu_count"]) == (
        "H200 SXM", 3.79, 1.0)
    reserved = price(frame, "NVIDIA H100 SXM (reserved, term not stated)", "reserved")
    assert reserved["price_usd_per_hour"] == 2.40
    assert price(frame, "NVIDIA A6000", "spot")["price_usd_per_hour"] == 0.38
    assert skipped["contact sales"] == 1  # the L40 reservation


def test_billing_increment_is_read_from_the_page() -> None:
    frame, _, _ = example(hyperstack)
    assert set(frame["billing_increment_s"]) == {60}
    body = hyperstack.SOURCE.example.read_bytes().replace(b"billed per minute", b"simple")
    frame, _, _ = read(hyperstack, body)
    assert frame["billing_increment_s"].null_count() == frame.height


def test_page_short_forms_resolve_to_the_right_card() -> None:
    frame, _, _ = example(hyperstack)
    models = dict(zip(frame["offering"], frame["gpu_model"], strict=True))
    assert models["NVIDIA RTX Pro 6000 SE"] == "RTX PRO 6000"
    assert models["NVIDIA H100 NVLink"] == "H100 PCIe"
    assert models["NVIDIA H100 SXM"] == "H100 SXM"
    # Spot and reservation cards state no memory: the on-demand card's 80 GB holds for A100.
    assert price(frame, "NVIDIA A100", "spot")["gpu_model"] == "A100 80GB"


def test_hidden_template_row_and_cpu_card_are_not_stored() -> None:
    frame, _, skipped = example(hyperstack)
    assert "NVIDIA GPU TEMPLATE" not in frame["offering"].to_list()
    assert not any(o.startswith("n1-cpu") for o in frame["offering"])
    assert skipped["hidden row"] == 1 and skipped["not a GPU offering"] == 1


def test_2024_sortable_table() -> None:
    frame, strategy, skipped = read(hyperstack, SORTABLE_2024)
    assert strategy == "table"
    got = {(r["offering"], r["pricing"]): r["price_usd_per_hour"]
           for r in frame.iter_rows(named=True)}
    assert got == {("NVIDIA H100 SXM", "on_demand"): 2.25,
                   ("NVIDIA H100 SXM (reserved, term not stated)", "reserved"): 1.90,
                   ("NVIDIA A100", "on_demand"): 1.35,
                   ("NVIDIA A100 (reserved, term not stated)", "reserved"): 0.95}
    assert dict(skipped) == {"non-USD price": 1, "contact sales": 1}
    assert set(frame["billing_increment_s"]) == {60}


def test_2024_plain_price_column_is_the_on_demand_price() -> None:
    """The real 2024 headers: "Pricing Per Hour" names no kind; it is the main, on-demand
    price, read beside the "Reservation Pricing" floors (the issue's missing column)."""
    frame, strategy, skipped = read(hyperstack,
                                    (FIXTURES / "sortable_table_2024.html").read_bytes())
    assert strategy == "table"
    on_demand = {r["offering"]: r["price_usd_per_hour"]
                 for r in frame.filter(frame["pricing"] == "on_demand").iter_rows(named=True)}
    assert on_demand == {"NVIDIA RTX A4000": 0.31, "NVIDIA RTX A6000/A40": 0.97,
                         "NVIDIA A100 PCIe 80GB": 2.15, "NVIDIA H100 PCIe NVLink 80GB": 3.49,
                         "NVIDIA H100 SXM 80GB": 3.79}
    floor = price(frame, "NVIDIA A100 PCIe 80GB (reserved, term not stated)", "reserved")
    assert floor["price_usd_per_hour"] == 1.29
    models = dict(zip(frame["offering"], frame["gpu_model"], strict=True))
    assert models["NVIDIA RTX A6000/A40"] == "RTX A6000"  # one offer, either card: the catalog
    assert models["NVIDIA H100 PCIe NVLink 80GB"] == "H100 PCIe"
    # The L40 row lost a cell: skipped whole, its reservation price never read as on-demand.
    assert "NVIDIA L40" not in on_demand
    assert skipped == {"contact sales": 1, "row cells do not match the header": 1}


def test_2025_cards_cut_inside_the_first_card() -> None:
    frame, strategy, _ = read(hyperstack, (FIXTURES / "cards_cut_2025.html").read_bytes())
    assert strategy == "cards"
    assert frame.group_by("pricing").len().sort("pricing").rows() == [
        ("on_demand", 4), ("reserved", 2), ("spot", 2)]
    assert price(frame, "NVIDIA H200 SXM")["price_usd_per_hour"] == 3.45
    assert price(frame, "NVIDIA H100 NVLink")["gpu_model"] == "H100 PCIe"
    assert price(frame, "NVIDIA A100 (reserved, term not stated)", "reserved")[
        "price_usd_per_hour"] == 0.93
    assert price(frame, "NVIDIA A6000", "spot")["price_usd_per_hour"] == 0.39


def test_a_starting_from_column_without_a_title_is_never_on_demand() -> None:
    body = (FIXTURES / "cards_cut_2025.html").read_text().replace(
        "<h3><span>Reservation</span> Pricing</h3>", "")
    frame, _, _ = read(hyperstack, body)
    assert frame.filter(frame["price_usd_per_hour"] == 0.93).height == 0
    assert price(frame, "NVIDIA A100")["price_usd_per_hour"] == 1.33


def test_an_unknown_layout_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="layout not recognised"):
        hyperstack.SOURCE.parse(capture(hyperstack, "<html><p>NVIDIA H100 $2.50</p></html>"))


def test_fetch_gets_the_gpu_pricing_page_at_the_overridable_base() -> None:
    assert fetched_url(hyperstack) == "http://127.0.0.1:9/gpu-pricing"
