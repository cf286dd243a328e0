"""Crusoe pricing page (`crusoe`): the 2026 Webflow list (the bundled example, own values) and
the 2025 HTML table with On-Demand / Spot / 6-month / 1-year / 3-year columns (own fixture)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract import ParseError
from scrapers import crusoe
from tests.neocloud_pages import capture, example, fetched_url, price, read

TABLE_2025 = """<html><body><h2>On-demand, spot and reserved GPU pricing</h2>
<table class="pricing-table"><thead><tr><th>GPU</th><th>On-Demand</th><th>Spot</th>
<th>6-month</th><th>1-year</th><th>3-year</th></tr></thead><tbody>
<tr><td>NVIDIA H100 80GB HGX</td><td>$3.80/GPU-hr</td><td>$1.80/GPU-hr</td>
<td>$2.80/GPU-hr</td><td>$2.60/GPU-hr</td><td>$2.20/GPU-hr</td></tr>
<tr><td>NVIDIA A100 40GB PCIe</td><td>$1.40/GPU-hr</td><td>$0.90/GPU-hr</td>
<td>Contact sales</td><td>$1.10/GPU-hr</td><td>$0.95/GPU-hr</td></tr>
<tr style="display:none"><td>NVIDIA H200 141GB HGX</td><td>$0.01/GPU-hr</td><td></td>
<td></td><td></td><td></td></tr>
<tr><td>AMD MI300X 192GB</td><td>€3.10/GPU-hr</td><td>Contact sales</td><td>Contact sales</td>
<td>Contact sales</td><td>Contact sales</td></tr>
</tbody></table></body></html>"""


def test_example_reads_the_gpu_instance_list_only() -> None:
    frame, strategy, skipped = example(crusoe)
    assert strategy == "cards"
    assert frame.height == 9
    assert set(frame["pricing"]) == {"on_demand", "spot"}
    h100 = price(frame, "NVIDIA H100 80GB HGX")
    assert (h100["gpu_model"], h100["price_usd_per_hour"], h100["gpu_count"]) == (
        "H100 SXM", 3.79, 1.0)
    assert price(frame, "NVIDIA H100 80GB HGX", "spot")["price_usd_per_hour"] == 1.70
    assert price(frame, "AMD MI300X 192GB")["gpu_memory_gb"] == 192.0
    # The Self-Serve Deployments list ($5.60 for an H100 endpoint) is another product.
    assert 5.60 not in frame["price_usd_per_hour"].to_list()
    assert skipped["contact sales"] == 5


def test_hidden_template_item_is_never_stored() -> None:
    frame, _, skipped = example(crusoe)
    assert "NVIDIA A40 48GB PCIe" not in frame["offering"].to_list()
    assert 0.01 not in frame["price_usd_per_hour"].to_list()
    assert skipped["hidden row"] == 1


def test_2025_table_keeps_each_commitment_term_in_the_offering() -> None:
    frame, strategy, skipped = read(crusoe, TABLE_2025)
    assert strategy == "table"
    got = {(r["offering"], r["pricing"]): r["price_usd_per_hour"]
           for r in frame.iter_rows(named=True)}
    assert got == {
        ("NVIDIA H100 80GB HGX", "on_demand"): 3.80,
        ("NVIDIA H100 80GB HGX", "spot"): 1.80,
        ("NVIDIA H100 80GB HGX (6 Months commitment)", "reserved"): 2.80,
        ("NVIDIA H100 80GB HGX (1 Year commitment)", "reserved"): 2.60,
        ("NVIDIA H100 80GB HGX (3 Years commitment)", "reserved"): 2.20,
        ("NVIDIA A100 40GB PCIe", "on_demand"): 1.40,
        ("NVIDIA A100 40GB PCIe", "spot"): 0.90,
        ("NVIDIA A100 40GB PCIe (1 Year commitment)", "reserved"): 1.10,
        ("NVIDIA A100 40GB PCIe (3 Years commitment)", "reserved"): 0.95,
    }
    assert dict(skipped) == {"contact sales": 5, "non-USD price": 1}
    models = dict(zip(frame["offering"], frame["gpu_model"], strict=True))
    assert models["NVIDIA A100 40GB PCIe"] == "A100 40GB"


def test_a_page_without_prices_is_a_parse_error_naming_the_strategies() -> None:
    with pytest.raises(ParseError, match="json-ld, table, cards"):
        crusoe.SOURCE.parse(capture(crusoe, "<html><body><h1>Pricing</h1>"
                                            "<p>Contact sales</p></body></html>"))


def test_only_contact_sales_everywhere_is_a_parse_error() -> None:
    body = TABLE_2025.replace("$", "Contact sales ").replace("€", "Contact sales ")
    with pytest.raises(ParseError):
        crusoe.SOURCE.parse(capture(crusoe, body))


def test_fetch_gets_the_cloud_pricing_page_at_the_overridable_base() -> None:
    assert fetched_url(crusoe) == "http://127.0.0.1:9/cloud/pricing"
    assert crusoe.URL == "https://www.crusoe.ai/cloud/pricing"


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pages" / "crusoe"


def test_2025_05_table_hidden_on_mobile_is_read_and_tags_tell_a100s_apart() -> None:
    frame, strategy, skipped = read(crusoe, (FIXTURES / "table_2025-05.html").read_bytes())
    assert strategy == "table"  # "hidden lg:grid" is shown on a desktop screen
    got = {(r["offering"], r["pricing"]): (r["gpu_model"], r["price_usd_per_hour"],
                                           r["term_months"])
           for r in frame.iter_rows(named=True)}
    # "$ 4.00 /hr" split over spans; a row is one GPU model, priced per GPU
    assert got[("NVIDIA H100 80GB SXM", "on_demand")] == ("H100 SXM", 4.00, None)
    assert got[("NVIDIA H100 80GB SXM (3 Years commitment)", "reserved")] == (
        "H100 SXM", 2.60, 36.0)
    # three A100 rows: memory and form-factor tags tell them apart
    assert {o: got[(o, "on_demand")][1] for o in ("NVIDIA A100 80GB SXM",
                                                  "NVIDIA A100 80GB PCIe",
                                                  "NVIDIA A100 40GB PCIe")} == {
        "NVIDIA A100 80GB SXM": 2.00, "NVIDIA A100 80GB PCIe": 1.70,
        "NVIDIA A100 40GB PCIe": 1.50}
    assert got[("AMD MI300X 192GB OAM", "spot")] == ("MI300X", 1.00, None)
    assert got[("NVIDIA A100 40GB PCIe (6 Months commitment)", "reserved")][2] == 6.0
    assert set(frame["gpu_count"]) == {1.0} and frame.height == 21
    assert dict(skipped) == {"contact sales": 4}


def test_self_serve_endpoints_are_inference_not_instances() -> None:
    page = """<h3 class="pricing-col-heading">Self-Serve Deployments pricing</h3>
<p class="pricing-col-description">Spin up dedicated endpoints for open models.</p>
<div class="pricing-gap"><div class="pricing-table-heading">
<div class="pricing-heading">GPU type</div><div class="pricing-heading">Price per hour</div></div>
<div class="w-dyn-list"><div class="w-dyn-items">
<div class="w-dyn-item"><h4 class="pricing-item-heading">NVIDIA H100</h4>
<div class="pricing-tag">80GB</div><div class="pricing-tag">HGX</div>
<div class="pricing-rich"><p>$5.00</p></div></div></div></div></div>"""
    frame, strategy, _ = read(crusoe, page)
    assert strategy == "cards"
    (row,) = frame.to_dicts()
    assert (row["offering"], row["pricing"], row["gpu_count"], row["price_usd_per_hour"]) == (
        "NVIDIA H100 80GB HGX (inference)", "inference", 1.0, 5.00)
