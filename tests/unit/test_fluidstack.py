"""Fluidstack pricing page (`fluidstack`): the 2025 pricing_table (the bundled example, own
values) and the 2023 GPU-component prices with vCPU and RAM billed apart (own fixture)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract import ParseError
from scrapers import fluidstack
from tests.neocloud_pages import capture, example, fetched_url, price, read

COMPONENTS_2023 = """<html><body><h2>GPU pricing</h2>
<p>Pay for the GPU, then add vCPUs and RAM: vCPU and RAM are billed separately.</p>
<table><thead><tr><th>Component</th><th>On-demand (per hour)</th>
<th>6-month commitment (per hour)</th></tr></thead><tbody>
<tr><td>NVIDIA A100 80GB PCIe</td><td>$1.49</td><td>$1.19</td></tr>
<tr><td>NVIDIA RTX A6000</td><td>$0.70</td><td>n/a</td></tr>
<tr><td>vCPU</td><td>$0.009</td><td>$0.007</td></tr>
<tr><td>RAM (per GB)</td><td>$0.004</td><td>$0.003</td></tr>
</tbody></table></body></html>"""


def test_example_on_demand_and_one_year_per_gpu() -> None:
    frame, strategy, skipped = example(fluidstack)
    assert strategy == "table" and frame.height == 7
    h100 = price(frame, "Nvidia H100 SXM")
    assert (h100["gpu_model"], h100["price_usd_per_hour"], h100["gpu_count"]) == (
        "H100 SXM", 2.69, 1.0)
    assert price(frame, "Nvidia H200 (1 Year commitment)", "reserved")["price_usd_per_hour"] \
        == 2.39
    assert "Nvidia H200" not in frame["offering"].to_list()  # its on-demand cell is "n/a"
    assert dict(skipped) == {"no price (n/a)": 1}
    assert not frame["gpu_only"].any()
    # "Max vCPUs per GPU" is a cap, not the offering's size.
    assert frame["vcpus"].null_count() == frame.height


def test_2023_component_prices_are_gpu_only_and_host_rows_skipped() -> None:
    frame, _, skipped = read(fluidstack, COMPONENTS_2023)
    got = {(r["offering"], r["pricing"]): r["price_usd_per_hour"]
           for r in frame.iter_rows(named=True)}
    assert got == {("NVIDIA A100 80GB PCIe", "on_demand"): 1.49,
                   ("NVIDIA A100 80GB PCIe (6 Months commitment)", "reserved"): 1.19,
                   ("NVIDIA RTX A6000", "on_demand"): 0.70}
    assert frame["gpu_only"].all()
    assert skipped["not a GPU offering"] == 2 and skipped["no price (n/a)"] == 1


def test_component_prices_stated_per_vcpu_also_mark_gpu_only() -> None:
    body = COMPONENTS_2023.replace("vCPU and RAM are billed separately.",
                                   "Host: $0.009 / vCPU / hr.")
    frame, _, _ = read(fluidstack, body)
    assert frame["gpu_only"].all()


def test_non_usd_prices_are_never_stored() -> None:
    body = fluidstack.SOURCE.example.read_bytes().replace(b"$2.69", "€2.69".encode())
    frame, _, skipped = read(fluidstack, body)
    assert "Nvidia H100 SXM" not in frame["offering"].to_list()
    assert skipped["non-USD price"] == 1


def test_an_unknown_layout_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        fluidstack.SOURCE.parse(capture(fluidstack, "<html><table><tr><th>Model</th>"
                                                    "<th>VRAM</th></tr><tr><td>H100</td>"
                                                    "<td>80</td></tr></table></html>"))


def test_fetch_gets_the_pricing_page_at_the_overridable_base() -> None:
    assert fetched_url(fluidstack) == "http://127.0.0.1:9/pricing"


GRID_2023 = Path(__file__).resolve().parents[1] / "fixtures" / "pages" / "fluidstack" / \
    "pricing_grid_2023.html"


def test_2023_div_grid_cut_in_its_header_reads_gpu_component_prices() -> None:
    frame, strategy, skipped = read(fluidstack, GRID_2023.read_bytes())
    assert strategy == "grid"
    got = {(r["offering"], r["pricing"]): (r["gpu_model"], r["price_usd_per_hour"],
                                           r["term_months"])
           for r in frame.iter_rows(named=True)}
    assert got == {
        ("NVIDIA HGX H100", "on_demand"): ("H100 SXM", 4.50, None),
        ("NVIDIA HGX H100 (6 Months commitment)", "reserved"): ("H100 SXM", 2.80, 6.0),
        ("A100 80GB PCIe", "on_demand"): ("A100 80GB", 2.10, None),
        ("A100 80GB PCIe (6 Months commitment)", "reserved"): ("A100 80GB", 1.40, 6.0),
        ("A100 40GB NVLINK", "on_demand"): ("A100 40GB", 1.30, None)}
    # "Max vCPUs per GPU ($0.01/hr)": the host is billed apart, the price is the GPU's alone
    assert frame["gpu_only"].all()
    assert dict(skipped) == {"no price (n/a)": 1}  # the cut-off A6000 row is no row
    assert frame["gpu_memory_gb"].to_list()[:2] == [80.0, 80.0]
