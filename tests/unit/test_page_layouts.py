"""Every layout of the lambda-page, runpod-page and paperspace sources, on pages written for
these tests (tests/fixtures/pages and inline; values made up), and each failure they must catch."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from contract import ParseError, RawCapture
from schemas.observation import to_observations
from scrapers import lambda_page, paperspace, runpod_graphql, runpod_page

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "pages"


def raw(source: str, body: str | bytes) -> RawCapture:
    return RawCapture(source=source, url="https://example.test/pricing",
                      fetched_at=datetime(2026, 1, 1, tzinfo=UTC),
                      body=body.encode() if isinstance(body, str) else body)


def fixture(source: str, name: str) -> RawCapture:
    return raw(source, (FIXTURES / name).read_bytes())


def by_key(frame: pl.DataFrame) -> dict[tuple[str, str], float]:
    return {(r["offering"], r["pricing"]): r["price_usd_per_hour"]
            for r in frame.iter_rows(named=True)}


# --- lambda-page ----------------------------------------------------------------------------

def test_lambda_2023_instances_are_priced_per_instance_from_the_words() -> None:
    report = lambda_page.SOURCE.parse_report(
        fixture("lambda-page", "lambda_hubspot_per_instance.html"))
    frame, strategy = report.frame, report.strategy
    assert strategy == "table/rows"
    prices = by_key(frame)
    # "$21.00 / hr" with no "/ GPU" and a "PRICE/HR" header: the whole 8-GPU instance.
    assert prices[("gpu_8x_h100_sxm5", "on_demand")] == 21.0
    assert prices[("gpu_8x_a100_80gb_sxm4", "on_demand")] == 13.0
    assert prices[("gpu_1x_a100_sxm4", "on_demand")] == 1.2
    assert prices[("gpu_4x_a6000", "on_demand")] == 3.4
    assert ("gpu_1x_rtx6000", "on_demand") not in prices  # SOLD OUT is no price
    h100 = frame.filter(pl.col("offering") == "gpu_8x_h100_sxm5").row(0, named=True)
    assert (h100["gpu_count"], h100["gpu_memory_gb"], h100["vcpus"], h100["ram_gb"]) == (
        8, 80, 200, 1800)


def test_lambda_2023_reserved_cluster_prices_keep_their_term() -> None:
    frame = lambda_page.SOURCE.parse(fixture("lambda-page", "lambda_hubspot_per_instance.html"))
    reserved = frame.filter(pl.col("pricing") == "reserved")
    assert by_key(reserved) == {("reserved_3y_h100_sxm5", "reserved"): 1.95,
                                ("reserved_1y_h100_sxm5", "reserved"): 2.25}
    assert set(reserved["gpu_count"]) == {1.0}  # one H100's price, not a cluster's
    assert frame.height == 7


def test_lambda_2024_per_gpu_rows_multiply_by_the_count() -> None:
    page = ("<table><tr><td><strong>On-demand 4x NVIDIA H100 SXM</strong></td><td>80 GB</td>"
            "<td>104</td><td>900 GiB</td><td>11 TiB SSD</td><td>$3.00 / GPU / hr</td></tr>"
            "<tr><td><strong>Reserved 8x NVIDIA H100 SXM</strong></td><td>80 GB</td><td>208</td>"
            "<td>1800 GiB</td><td>22 TiB SSD</td><td><a>CONTACT SALES</a></td></tr></table>")
    frame = lambda_page.SOURCE.parse(raw("lambda-page", page))
    assert by_key(frame) == {("gpu_4x_h100_sxm5", "on_demand"): 12.0}


def test_lambda_reserved_price_without_a_term_is_not_a_row() -> None:
    page = ("<table><tr><td>On-demand 1x NVIDIA A10</td><td>24 GB</td><td>$0.70 / GPU / hr</td>"
            "</tr><tr><td>Reserved 8x NVIDIA H100 SXM</td><td>80 GB</td>"
            "<td>$2.00 / GPU / hr</td></tr></table>")
    assert by_key(lambda_page.SOURCE.parse(raw("lambda-page", page))) == {
        ("gpu_1x_a10", "on_demand"): 0.7}


def test_lambda_price_without_a_period_anywhere_is_a_parse_error() -> None:
    page = "<table><tr><td>1x NVIDIA A10</td><td>24 GB</td><td>$0.70</td></tr></table>"
    with pytest.raises(ParseError, match="names no period"):
        lambda_page.SOURCE.parse(raw("lambda-page", page))


def test_lambda_same_instance_with_two_prices_is_a_parse_error() -> None:
    page = ("<table><tr><td>1x NVIDIA A10</td><td>24 GB</td><td>$0.70 / hr</td></tr>"
            "<tr><td>1x NVIDIA A10</td><td>24 GB</td><td>$0.90 / hr</td></tr></table>")
    with pytest.raises(ParseError, match="priced twice"):
        lambda_page.SOURCE.parse(raw("lambda-page", page))


def test_lambda_instance_rows_without_any_price_cell_are_a_parse_error() -> None:
    page = "<table><tr><td>1x NVIDIA A10</td><td>24 GB</td><td>30</td></tr></table>"
    with pytest.raises(ParseError, match="no price read"):
        lambda_page.SOURCE.parse(raw("lambda-page", page))


def test_lambda_tabbed_tables_still_win_over_rows() -> None:
    report = lambda_page.SOURCE.parse_report(
        lambda_page.SOURCE.example_capture())
    frame, strategy = report.frame, report.strategy
    assert strategy == "table/tabs" and frame.height == 12


def per_gpu(frame: pl.DataFrame) -> dict[tuple[str, str], tuple[float, float]]:
    """(offering, pricing) -> (GPU count, price per GPU-hour)."""
    return {(r["offering"], r["pricing"]): (r["gpu_count"],
                                            round(r["price_usd_per_hour"] / r["gpu_count"], 4))
            for r in frame.iter_rows(named=True)}


def test_lambda_2023_hubspot_layout_by_header_badges_and_vram() -> None:
    report = lambda_page.SOURCE.parse_report(
        fixture("lambda-page", "lambda-page/hubspot_2023.html"))
    frame = report.frame
    assert report.strategy == "table/rows" and not report.skips
    got = per_gpu(frame)
    # "$20.80 / hr" with no "/ GPU" anywhere: the whole 8-GPU instance
    assert got[("gpu_8x_h100_sxm5", "on_demand")] == (8.0, 2.60)
    # two rows named "8x NVIDIA A100": the VRAM cell tells the 40 GB from the 80 GB one
    assert got[("gpu_8x_a100", "on_demand")] == (8.0, 1.20)
    assert got[("gpu_8x_a100_80gb_sxm4", "on_demand")] == (8.0, 1.60)
    names = dict(zip(frame["offering"], frame["gpu_name"], strict=True))
    assert names["gpu_1x_h100_pcie"] == "NVIDIA H100 PCIe"  # the "New" badge is not the GPU
    # the reserved-cluster table: per H100 per hour, for the instance type, with its term
    reserved = frame.filter(pl.col("pricing") == "reserved")
    assert per_gpu(reserved) == {("gpu_8x_h100_sxm5_reserved_3y", "reserved"): (8.0, 1.90),
                                 ("gpu_8x_h100_sxm5_reserved_3mo", "reserved"): (8.0, 4.80)}
    assert sorted(reserved["term_months"].to_list()) == [3.0, 36.0]
    assert set(reserved["gpu_name"]) == {"H100 SXM"}  # the GPU column, not "NVIDIA H100"
    assert frame.height == 11


def test_lambda_2024_excerpt_per_gpu_rows_and_contact_sales() -> None:
    report = lambda_page.SOURCE.parse_report(
        fixture("lambda-page", "lambda-page/hubspot_2024.html"))
    assert report.strategy == "table/rows"
    assert per_gpu(report.frame) == {
        ("gpu_8x_h100_sxm5", "on_demand"): (8.0, 3.00),
        ("gpu_1x_h100_pcie", "on_demand"): (1.0, 2.50),
        ("gpu_8x_a100_80gb_sxm4", "on_demand"): (8.0, 1.80),
        ("gpu_8x_a100", "on_demand"): (8.0, 1.30), ("gpu_1x_a10", "on_demand"): (1.0, 0.80)}
    assert dict(report.skips) == {"contact sales": 1}


def test_lambda_2026_tabs_skip_cluster_tabs_and_read_html_or_json_alike() -> None:
    body = (FIXTURES / "lambda-page" / "tabs_2026-08.html").read_text()
    report = lambda_page.SOURCE.parse_report(raw("lambda-page", body))
    assert report.strategy == "table/tabs"
    expected = {("gpu_8x_b200_sxm6", "on_demand"): (8.0, 6.60),
                ("gpu_8x_h100_sxm5", "on_demand"): (8.0, 3.90),
                ("gpu_1x_gh200", "on_demand"): (1.0, 2.20),
                ("gpu_1x_h100_pcie", "on_demand"): (1.0, 3.20),
                ("gpu_1x_a6000", "on_demand"): (1.0, 1.00)}
    assert per_gpu(report.frame) == expected  # the hidden 1x panel is a tab, not a hidden row
    # the island's JSON alone (the server-rendered panels removed) gives the same rows
    json_only = re.sub(r'<div class="_tabPanels_hdiy5_50">.*?</div></div></div>', "", body,
                       flags=re.S)
    assert 'role="tabpanel" id="tabpanel-i' not in json_only
    assert per_gpu(lambda_page.SOURCE.parse(raw("lambda-page", json_only))) == expected


def test_lambda_json_ld_fallback_reads_offers_per_gpu_or_per_instance() -> None:
    report = lambda_page.SOURCE.parse_report(
        fixture("lambda-page", "lambda-page/json_ld_2026.html"))
    assert report.strategy == "json-ld"
    assert per_gpu(report.frame) == {("gpu_8x_h100_sxm5", "on_demand"): (8.0, 3.00),
                                     ("gpu_1x_gh200", "on_demand"): (1.0, 1.50),
                                     ("gpu_1x_a10", "on_demand"): (1.0, 0.80)}
    assert dict(report.skips) == {"contact sales": 1}


def _example_text() -> str:
    return lambda_page.SOURCE.example.read_text()


@pytest.mark.parametrize(("first", "second"), [
    ("22 TiB SSD", "$2.99"),  # STORAGE <-> PRICE: "22" must never become $22/GPU-h
    ("80 GB", "$2.99"),  # VRAM <-> PRICE
    ("208", "$2.99"),  # vCPUs <-> PRICE
])
def test_lambda_two_swapped_cells_are_a_parse_error_not_a_price(first: str, second: str) -> None:
    page = _example_text()
    row = page[page.index("NVIDIA H100 SXM</th>"):]
    row = row[:row.index("</tr>")]
    swapped = row.replace(f">{first}<", ">\0<").replace(f">{second}<", f">{first}<") \
        .replace(">\0<", f">{second}<")
    assert swapped != row
    with pytest.raises(ParseError, match="cells swapped"):
        lambda_page.SOURCE.parse(raw("lambda-page", page.replace(row, swapped, 1)))


def test_lambda_2023_swapped_price_and_vram_cells_are_a_parse_error() -> None:
    page = (FIXTURES / "lambda-page" / "hubspot_2023.html").read_text()
    page = page.replace("<td>80 GB</td><td>26</td><td>200 GiB</td><td>1 TiB</td>"
                        "<td>$2.00 / hr</td>",
                        "<td>$2.00 / hr</td><td>26</td><td>200 GiB</td><td>1 TiB</td>"
                        "<td>80 GB</td>")
    with pytest.raises(ParseError, match="cells swapped"):
        lambda_page.SOURCE.parse(raw("lambda-page", page))


@pytest.mark.parametrize("sign", ["€", "£", "C$", "CHF ", "¥"])
def test_lambda_prices_in_another_currency_are_never_stored_as_usd(sign: str) -> None:
    page = _example_text().replace(">$", f">{sign}")
    with pytest.raises(ParseError, match="non-USD price"):
        lambda_page.SOURCE.parse(raw("lambda-page", page))


# --- runpod-page ----------------------------------------------------------------------------

def test_runpod_json_ld_offers_by_cloud() -> None:
    report = runpod_page.SOURCE.parse_report(
        fixture("runpod-page", "runpod_json_ld.html"))
    frame, strategy = report.frame, report.strategy
    assert strategy == "json-ld"
    # The RTX 4090's secure offer is $0.00: a placeholder, never a row.
    assert by_key(frame) == {("H100 SXM", "on_demand"): 2.7, ("H100 SXM", "community"): 2.1,
                             ("RTX 4090", "community"): 0.35}
    h100 = {r["pricing"]: r for r in frame.filter(pl.col("offering") == "H100 SXM")
            .iter_rows(named=True)}
    assert h100["on_demand"]["available"] is True and h100["community"]["available"] is False
    assert h100["on_demand"]["gpu_memory_gb"] == 80


def _product(offers: list[dict[str, object]]) -> str:
    data = {"@context": "https://schema.org", "@type": "Product", "name": "L4", "offers": offers}
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


def test_runpod_json_ld_offer_naming_no_cloud_is_not_a_row_and_per_second_converts() -> None:
    page = _product([
        {"@type": "Offer", "name": "Starting at", "price": "0.30", "priceCurrency": "USD"},
        {"@type": "Offer", "name": "Community Cloud", "price": "0.0001", "priceCurrency": "USD",
         "priceSpecification": {"unitCode": "SEC"}}])
    assert by_key(runpod_page.SOURCE.parse(raw("runpod-page", page))) == {
        ("L4", "community"): pytest.approx(0.36)}


def test_runpod_json_ld_in_another_currency_is_a_parse_error() -> None:
    page = _product([{"@type": "Offer", "name": "Secure Cloud", "price": "0.40",
                      "priceCurrency": "EUR"}])
    with pytest.raises(ParseError, match="EUR"):
        runpod_page.SOURCE.parse(raw("runpod-page", page))


GPU_TYPES = [
    {"__typename": "GpuType", "id": "NVIDIA L40", "displayName": "L40", "memoryInGb": 48,
     "secureCloud": True, "communityCloud": False, "securePrice": 1.2, "communityPrice": 0.5,
     "secureSpotPrice": 0.7, "communitySpotPrice": None},
    {"__typename": "GpuType", "id": "NVIDIA GeForce RTX 3080", "displayName": "RTX 3080",
     "memoryInGb": 10, "secureCloud": False, "communityCloud": True, "securePrice": 0,
     "communityPrice": 0.25, "secureSpotPrice": None, "communitySpotPrice": 0.15},
    {"__typename": "GpuType", "id": "unknown", "displayName": "unknown", "securePrice": 9},
]


def _next_page(records: list[dict[str, object]]) -> str:
    data = {"props": {"pageProps": {"data": records}}, "page": "/gpu-instance/pricing"}
    return f'<script id="__NEXT_DATA__" type="application/json">{json.dumps(data)}</script>'


def test_runpod_next_data_records_mean_what_the_graphql_api_means() -> None:
    report = runpod_page.SOURCE.parse_report(
        raw("runpod-page", _next_page(GPU_TYPES)))
    frame, strategy = report.frame, report.strategy
    assert strategy == "next-data"
    expected = {("NVIDIA L40", "on_demand"): 1.2, ("NVIDIA L40", "spot"): 0.7,
                ("NVIDIA GeForce RTX 3080", "community"): 0.25,
                ("NVIDIA GeForce RTX 3080", "community_spot"): 0.15}
    assert by_key(frame) == expected  # the 0.5 behind communityCloud=false is no row
    # The GraphQL source reads the same records to the same offerings, pricings and prices.
    api = runpod_graphql.SOURCE.parse(raw("runpod", json.dumps(GPU_TYPES)))
    assert by_key(api) == expected


def test_runpod_next_data_without_flags_drops_the_placeholder_price() -> None:
    records = [{"id": "NVIDIA A40", "displayName": "A40", "securePrice": 0.5,
                "communityPrice": 0.45}]
    assert by_key(runpod_page.SOURCE.parse(raw("runpod-page", _next_page(records)))) == {
        ("NVIDIA A40", "community"): 0.45}


def test_runpod_webflow_hidden_rows_are_not_read() -> None:
    row = ('<a class="gpu-pricing-row"{hidden}><div class="gpu-pricing-row__model-wrapper">{name}'
           '</div><div class="cc-gpu-price" data-secure-cloud-price="${price}" '
           'data-community-cloud-price="0">${price}</div></a>')
    page = (row.format(hidden="", name="L4", price="0.40")
            + row.format(hidden=' style="display:none"', name="B200", price="0.01"))
    report = runpod_page.SOURCE.parse_report(raw("runpod-page", page))
    frame, strategy = report.frame, report.strategy
    assert strategy == "data-attributes"
    assert by_key(frame) == {("L4", "on_demand"): 0.4}


def test_runpod_2026_json_ld_graph_names_the_gpu_without_marketing_words() -> None:
    body = (FIXTURES / "runpod-page" / "json_ld_graph_2026.html").read_bytes()
    capture = raw("runpod-page", body)
    report = runpod_page.SOURCE.parse_report(capture)
    assert report.strategy == "json-ld"
    assert by_key(report.frame) == {
        ("B300", "community"): 6.90, ("B300", "on_demand"): 7.30,
        ("RTX Pro 6000", "community"): 1.60, ("RTX Pro 6000", "on_demand"): 1.90,
        ("H100 NVL", "community"): 2.50, ("H100 NVL", "on_demand"): 3.10,
        ("RTX 6000 Ada", "community"): 0.70, ("RTX 6000 Ada", "on_demand"): 0.75}
    # "B300 GPU on Runpod" is a B300: every row names a catalog GPU
    models = to_observations(report.frame, capture, "t")["gpu_model"].to_list()
    assert "unknown" not in models and {"B300", "H100 NVL", "RTX 6000 Ada"} <= set(models)


def test_runpod_2025_webflow_excerpt_reads_the_cut_first_row_by_its_name() -> None:
    report = runpod_page.SOURCE.parse_report(
        fixture("runpod-page", "runpod-page/webflow_rows_cut_2025.html"))
    assert report.strategy == "data-attributes"
    assert by_key(report.frame) == {
        ("H200", "on_demand"): 3.70, ("H200", "community"): 3.50,
        ("B200", "on_demand"): 5.90, ("B200", "community"): 5.80,
        ("H100 PCIe", "on_demand"): 2.30,
        ("A40", "on_demand"): 0.40, ("A40", "community"): 0.35}
    assert dict(report.skips) == {"no price in that cloud (empty or zero)": 1}
    b200 = report.frame.filter(pl.col("offering") == "B200").row(0, named=True)
    assert (b200["gpu_memory_gb"], b200["vcpus"], b200["ram_gb"]) == (180, 28, 283)


# --- paperspace -----------------------------------------------------------------------------

def test_paperspace_cards_with_footnotes_and_hidden_blocks() -> None:
    report = paperspace.SOURCE.parse_report(
        fixture("paperspace", "paperspace_cards.html"))
    frame, strategy = report.frame, report.strategy
    assert strategy == "cards"
    # 2.50* and 1.20** are 3-year prices; the H100 footnote gives its on-demand price; the
    # hidden $9.99 remnant and the hidden duplicate P4000 ($0.49) are never rows.
    assert by_key(frame) == {("H100_reserved_3y", "reserved"): 2.5, ("H100", "on_demand"): 5.5,
                             ("A100-80G_reserved_3y", "reserved"): 1.2,
                             ("P4000", "on_demand"): 0.55}
    h100 = frame.filter(pl.col("offering") == "H100").row(0, named=True)
    assert (h100["gpu_name"], h100["vcpus"], h100["ram_gb"]) == ("NVIDIA HGX H100", 16, 250)
    a100 = frame.filter(pl.col("offering") == "A100-80G_reserved_3y").row(0, named=True)
    assert a100["gpu_memory_gb"] == 80  # from the machine name "A100-80G"


def test_paperspace_marked_price_without_a_footnote_is_never_on_demand() -> None:
    page = ('<div><h1 class="instance-names">A6000</h1><div><span>$</span>'
            '<h1 class="instance-price-2">1.00*</h1><span>/ hour</span></div></div>'
            '<div><h1 class="instance-names">A4000</h1><div><span>$</span>'
            '<h1 class="instance-price-2">0.70</h1><span>/ hour</span></div></div>')
    assert by_key(paperspace.SOURCE.parse(raw("paperspace", page))) == {("A4000", "on_demand"): 0.7}


def test_paperspace_card_with_two_visible_prices_is_a_parse_error() -> None:
    page = ('<div><h1 class="instance-names">A6000</h1>'
            '<div>$<h1 class="instance-price-2">1.00</h1>/ hour</div>'
            '<div>$<h1 class="instance-price-2">1.50</h1>/ hour</div></div>')
    with pytest.raises(ParseError, match="2 prices"):
        paperspace.SOURCE.parse(raw("paperspace", page))


def test_parse_command_says_which_strategy_read_the_page() -> None:
    from typer.testing import CliRunner

    from gpuprices.cli import app

    result = CliRunner().invoke(app, ["parse", "lambda-page",
                                      str(FIXTURES / "lambda_hubspot_per_instance.html"),
                                      "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert "read by strategy: table/rows (7 rows)" in result.output


# --- hostile edits of the bundled examples: another currency is never stored as dollars ------

@pytest.mark.parametrize("sign", ["€", "£", "C$", "CHF ", "EUR "])
@pytest.mark.parametrize("module", [runpod_page, paperspace], ids=["runpod-page", "paperspace"])
def test_example_in_another_currency_stores_no_dollar_price(module: object, sign: str) -> None:
    source = module.SOURCE  # type: ignore[attr-defined]
    body = source.example.read_text().replace("$", sign)
    with pytest.raises(ParseError, match=r"non-USD price|no price stored"):
        source.parse(raw(source.name, body))


@pytest.mark.parametrize("sign", ["€", "£", "C$", "CHF "])
def test_runpod_serverless_table_in_another_currency_is_a_parse_error(sign: str) -> None:
    from scrapers import runpod_serverless

    body = runpod_serverless.SOURCE.example.read_text().replace("$", sign)
    with pytest.raises(ParseError, match="not US dollars"):
        runpod_serverless.SOURCE.parse(raw("runpod-serverless", body))
