"""CoreWeave pricing page (`coreweave`).

The example page is ours, in the Webflow layout PAGES.md §7 describes (one header grid, rows
`div.table-row-v2`, "Instance Price"), with the instance prices of the real 2026-02-11 scraped
table. The other fixtures are ours too, with invented prices: the 2026 layout (a grid per
region, On-Demand / Spot / Inference columns, the name cell sharing the number cells' class,
mobile copies of each cell inside the row) and the 2023 a la carte layout (GPU component cost
per hour, CPU and RAM billed separately). Prices are per instance-hour except the component.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx
import polars as pl
import pytest

from contract import HttpSettings, ParseError, RawCapture
from schemas.observation import to_observations, validate
from scrapers import coreweave

FETCHED = datetime(2026, 2, 11, tzinfo=UTC)


def raw(body: str) -> RawCapture:
    return RawCapture(source="coreweave", url=coreweave.URL, fetched_at=FETCHED,
                      body=body.encode())


HEADERS_2026 = ("GPU Model", "GPU Count", "VRAM (GB)", "vCPUs", "System RAM (GB)",
                "Local Storage (TB)", "On-Demand Price (Per Hour)", "Spot Price (Per Hour)",
                "Inference Single GPU Price(Per Hour)²")


def item(name: str, *cells: str, kind: str = "kubernetes-gpu-pricing") -> str:
    """A 2026-style row: the name cell shares the number cells' class; mobile copies beside."""
    divs = [f'<div class="table-v2-cell"><div>{c}</div></div>' for c in cells]
    half = len(divs) // 2
    mobile = (f'<div class="table-cell-column table-cell-column-left"><h3 class="table-model-name">'
              f'{name}</h3><span class="spot-price">Spot Price: <span>$999.00</span></span></div>')
    return (f'<div role="listitem" class="table-row-v2 w-dyn-item {kind}"><div class="w-embed">'
            f'<div class="table-grid"><div class="table-v2-cell table-v2-cell--name">'
            f'<h3 class="table-model-name">{name}</h3></div>{"".join(divs[:half])}{mobile}'
            f'{"".join(divs[half:])}</div></div></div>')


def grid(region: str, headers: tuple[str, ...], *rows: str) -> str:
    head = "".join(f'<div class="table-v2-cell"><div class="table-header-text">{h}</div></div>'
                   for h in headers)
    return (f'<h5><strong class="eyebrow">REGION: {region}</strong></h5>'
            f'<div class="table-v2 gpu-pricing"><div class="table-v2-header">'
            f'<div class="table-grid">'
            f'{head}</div></div><div class="table-v2-body w-dyn-list"><div role="list" '
            f'class="w-dyn-items">{"".join(rows)}</div></div></div>')


PAGE_2026 = (
    grid("NORTH AMERICA", HEADERS_2026,
         item("NVIDIA GB200 NVL72", "4^1", "186", "144", "960", "30.72", "$40.00", "N/A",
              "$10.00"),
         item("NVIDIA HGX H100", "8", "80", "128", "2,048", "61.44", "$48.00", "$20.00", "$6.00",
              kind="gpu-pricing-and-kubernetes-gpu-pricing"),
         item("NVIDIA HGX B300", "8", "270", "192", "4,096", "61.44", "Contact sales", "$35.00",
              "Contact sales"),
         item("NVIDIA L40S", "8", "48", "128", "1,024", "7.68", "$17.00", "$8.00", "$2.125"))
    + grid("EUROPE", HEADERS_2026[:-1],
           item("NVIDIA HGX H100", "8", "80", "128", "2,048", "61.44", "$48.00", "$19.00",
                kind="gpu-pricing-and-kubernetes-gpu-pricing"),
           item("NVIDIA L40S", "8", "48", "128", "1,024", "7.68", "$17.00", "N/A")))


def test_2026_regions_on_demand_and_spot_read_by_header() -> None:
    report = coreweave.SOURCE.parse_report(raw(PAGE_2026))
    rows, skipped = report.frame, report.skips
    got = {(r["offering"], r["region"], r["pricing"]): (r["gpu_count"], r["price_usd_per_hour"])
           for r in rows.to_dicts()}
    assert got == {
        ("NVIDIA GB200 NVL72", "north-america", "on_demand"): (4.0, 40.0),
        ("NVIDIA HGX H100", "north-america", "on_demand"): (8.0, 48.0),
        ("NVIDIA HGX H100", "north-america", "spot"): (8.0, 20.0),
        ("NVIDIA HGX B300", "north-america", "spot"): (8.0, 35.0),
        ("NVIDIA L40S", "north-america", "on_demand"): (8.0, 17.0),
        ("NVIDIA L40S", "north-america", "spot"): (8.0, 8.0),
        ("NVIDIA HGX H100", "europe", "on_demand"): (8.0, 48.0),
        ("NVIDIA HGX H100", "europe", "spot"): (8.0, 19.0),
        ("NVIDIA L40S", "europe", "on_demand"): (8.0, 17.0),
        # The inference single-GPU column: one GPU's price, kind `inference` (never on-demand).
        ("NVIDIA GB200 NVL72 (inference, single GPU)", "north-america", "inference"): (1.0, 10.0),
        ("NVIDIA HGX H100 (inference, single GPU)", "north-america", "inference"): (1.0, 6.0),
        ("NVIDIA L40S (inference, single GPU)", "north-america", "inference"): (1.0, 2.125),
    }
    assert skipped[coreweave.INFERENCE_SKIP] == 0
    # GB200 spot, B300 on-demand and inference, EU L40S spot
    assert skipped["no price (contact sales / N/A)"] == 3
    assert 999.0 not in rows["price_usd_per_hour"].to_list()  # mobile copies are not cells
    h100 = rows.filter(pl.col("offering") == "NVIDIA HGX H100").row(0, named=True)
    assert (h100["gpu_memory_gb"], h100["vcpus"], h100["ram_gb"]) == (80, 128, 2048)
    assert coreweave.SOURCE.parse_report(raw(PAGE_2026)).strategy == "table"


def test_gpu_count_never_comes_from_the_model_name() -> None:
    rows = coreweave.SOURCE.parse(raw(PAGE_2026))
    counts = dict(zip(rows["offering"], rows["gpu_count"], strict=False))
    assert counts["NVIDIA GB200 NVL72"] == 4 and counts["NVIDIA L40S"] == 8


def test_a_shifted_cell_is_a_parse_error_not_a_price() -> None:
    # The spot cell holds a vCPU count: the cells moved.
    page = grid("EUROPE", HEADERS_2026[:-1],
                item("NVIDIA L40", "8", "48", "1,024", "7.68", "$10.00", "128", "x"))
    with pytest.raises(ParseError, match="cells"):
        coreweave.SOURCE.parse(raw(page))
    short = grid("EUROPE", HEADERS_2026[:-1], item("NVIDIA L40", "8", "48", "$10.00"))
    with pytest.raises(ParseError, match="layout changed"):
        coreweave.SOURCE.parse(raw(short))


def test_rows_without_a_header_fail_loudly() -> None:
    with pytest.raises(ParseError, match="header"):
        coreweave.SOURCE.parse(raw(item("NVIDIA L40", "8", "48", "128", "1024", "7.68", "$10.00")))


def test_blank_gpu_count_uses_the_known_count_or_drops_the_row() -> None:
    headers = HEADERS_2026[:7]
    page = grid("NORTH AMERICA", headers,
                item("NVIDIA GB200 NVL72", "", "186", "144", "960", "30.72", "$42.00"),
                item("NVIDIA Mystery", "-", "80", "64", "512", "7.68", "$9.99"))
    report = coreweave.SOURCE.parse_report(raw(page))
    rows, skipped = report.frame, report.skips
    assert rows.select("offering", "gpu_count", "price_usd_per_hour").rows() == [
        ("NVIDIA GB200 NVL72", 4.0, 42.0)]
    assert skipped["no GPU count"] == 1


# The 2023 page (coreweave.com/gpu-cloud-pricing) priced the GPU alone, CPU and RAM a la carte.
PAGE_2023 = """<html><body><h2>GPU Compute</h2>
<table><thead><tr><th>GPU Model</th><th>VRAM (GB)</th><th>Max vCPUs per GPU</th>
<th>Max RAM (GB) per GPU</th><th>GPU Component Cost Per Hour</th></tr></thead><tbody>
<tr><td>NVIDIA HGX H100</td><td>80</td><td>48</td><td>256</td><td>$4.50</td></tr>
<tr><td>NVIDIA A100 80GB NVLINK</td><td>80</td><td>30</td><td>240</td><td>$2.10</td></tr>
<tr><td>NVIDIA RTX A5000</td><td>24</td><td>36</td><td>128</td><td>$0.75</td></tr>
<tr><td>NVIDIA H100 PCIe</td><td>80</td><td>48</td><td>256</td><td>Contact sales</td></tr>
</tbody></table>
<h2>CPU Compute</h2><table><thead><tr><th>CPU Type</th><th>Cost per vCPU per hour</th></tr>
</thead><tbody><tr><td>AMD Epyc Milan</td><td>$0.01</td></tr></tbody></table>
<h2>System RAM</h2><table><thead><tr><th>Resource</th><th>Cost per GB per hour</th></tr>
</thead><tbody><tr><td>RAM</td><td>$0.005</td></tr></tbody></table>
</body></html>"""


def test_2023_a_la_carte_gpu_component_prices_are_gpu_only_per_gpu() -> None:
    report = coreweave.SOURCE.parse_report(raw(PAGE_2023))
    rows, skipped = report.frame, report.skips
    assert rows.select("offering", "gpu_count", "price_usd_per_hour", "gpu_only").rows() == [
        ("NVIDIA HGX H100 (GPU component)", 1.0, 4.50, True),
        ("NVIDIA A100 80GB NVLINK (GPU component)", 1.0, 2.10, True),
        ("NVIDIA RTX A5000 (GPU component)", 1.0, 0.75, True)]
    assert skipped["no price (contact sales / N/A)"] == 1  # CPU and RAM tables are not rows
    obs = to_observations(rows, raw(PAGE_2023), "t")
    assert obs["gpu_model"].to_list() == ["H100 SXM", "A100 80GB", "RTX A5000"]
    assert validate(obs).quarantined.height == 0


def test_page_without_gpu_rows_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="layout not recognised"):
        coreweave.SOURCE.parse(raw("<html><body><h1>Pricing</h1></body></html>"))


def test_every_example_row_validates_and_maps_to_a_catalog_gpu() -> None:
    capture = coreweave.SOURCE.example_capture(FETCHED)
    batch = validate(to_observations(coreweave.SOURCE.parse(capture), capture, run_id="t"))
    assert batch.quarantined.height == 0, batch.quarantined.select("offering", "failed_check")
    models = dict(zip(batch.good["offering"], batch.good["gpu_model"], strict=True))
    assert models["NVIDIA HGX H200"] == "H200 SXM"
    assert models["NVIDIA A100"] == "A100 80GB"
    assert "unknown" not in models.values()
    per_gpu = dict(zip(batch.good["offering"], batch.good["price_usd_per_gpu_hour"], strict=True))
    assert per_gpu["NVIDIA B200"] == pytest.approx(8.60)


def test_fetch_is_a_plain_get_of_the_pricing_page() -> None:
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, content=coreweave.SOURCE.example.read_bytes())

    settings = HttpSettings(base_urls={"coreweave": "http://127.0.0.1:8080"})
    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        capture = coreweave.fetch(client, settings)
    assert [(r.method, str(r.url)) for r in sent] == [("GET", "http://127.0.0.1:8080/pricing")]
    assert coreweave.SOURCE.parse(capture).height == 6


GRID_2023 = Path(__file__).resolve().parents[1] / "fixtures" / "pages" / "coreweave" / \
    "gpu_cloud_pricing_2023.html"


def test_2023_webflow_grid_gpu_component_prices_by_shape() -> None:
    capture = raw(GRID_2023.read_text())
    report = coreweave.SOURCE.parse_report(capture)
    assert report.strategy == "grid"
    assert report.frame.select("offering", "gpu_count", "price_usd_per_hour", "gpu_only",
                               "gpu_memory_gb", "region").rows() == [
        ("NVIDIA HGX H100 (GPU component)", 1.0, 4.50, True, 80.0, "global"),  # + "Reserve Now"
        ("A100 80GB NVLINK (GPU component)", 1.0, 2.10, True, 80.0, "global"),
        ("A40 (GPU component)", 1.0, 1.20, True, 48.0, "global"),
        ("Quadro RTX 4000 (GPU component)", 1.0, 0.25, True, 8.0, "global")]
    obs = to_observations(report.frame, capture, "t")
    assert obs["gpu_model"].to_list() == ["H100 SXM", "A100 80GB", "A40", "Quadro RTX 4000"]
    assert validate(obs).quarantined.height == 0  # the CPU grid is no GPU row


def test_2023_grid_whose_header_was_cut_reads_the_model_from_the_first_column() -> None:
    page = GRID_2023.read_text()
    cut = page[page.index("<div>GPU Component<br/>"):]  # an excerpt starting at the last header
    rows = coreweave.SOURCE.parse(raw(cut))
    assert rows.select("offering", "price_usd_per_hour").rows()[:2] == [
        ("NVIDIA HGX H100 (GPU component)", 4.50), ("A100 80GB NVLINK (GPU component)", 2.10)]
    assert rows["gpu_memory_gb"].null_count() == rows.height  # the VRAM header was cut away
