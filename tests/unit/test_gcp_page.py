"""Google Cloud pricing page (`gcp-page`): header-read tables on own fixtures."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from contract import HttpSettings, ParseError, RawCapture
from scrapers import gcp_page

FETCHED = datetime(2026, 3, 1, tzinfo=UTC)
HEADERS = ("Machine type", "GPU", "Components", "Price (USD)", "DWS Flex-start price (USD)",
           "Current Spot pricing (USD)", "Compute Resource CUDs - 1 Year (USD)",
           "Compute Flexible CUD - 3 Year (USD)")


def table(*rows: tuple[str, ...], headers: tuple[str, ...] = HEADERS) -> str:
    head = "".join(f"<th><div><p>{h}</p></div></th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def read(body: str) -> tuple[list[dict[str, object]], dict[str, int]]:
    parsed = gcp_page.PARSER(
        RawCapture("gcp-page", gcp_page.URL, FETCHED, f"<html><body>{body}</body></html>".encode()))
    return parsed.frame.to_dicts(), dict(parsed.skips)


def by_offering(rows: list[dict[str, object]]) -> dict[tuple[object, object], object]:
    return {(r["offering"], r["pricing"]): r["price_usd_per_hour"] for r in rows}


def test_example_rows() -> None:
    frame = gcp_page.SOURCE.parse(gcp_page.SOURCE.example_capture(FETCHED))
    assert frame.height == 33 and set(frame["provider"]) == {"gcp"}


def test_every_column_kind_and_machine_prices() -> None:
    rows, skipped = read(table(
        ("<b>A3 High</b>", "", "", "", "", "", "", ""),
        ("a3-highgpu-8g", "Nvidia H100", "<p>GPUs: 8</p><p>vCPUs: 208</p><p>Memory: 1,872GB</p>",
         "$88.00 / 1 hour", "$38.00 / 1 hour", "$52.00 / 1 hour", "$61.00 / 1 hour",
         "$40.00 / 1 hour")))
    assert not skipped
    assert by_offering(rows) == {
        ("a3-highgpu-8g", "on_demand"): 88.0,
        ("a3-highgpu-8g (DWS Flex-start)", "flex"): 38.0,
        ("a3-highgpu-8g", "spot"): 52.0,
        ("a3-highgpu-8g (1 Year commitment)", "reserved"): 61.0,
        ("a3-highgpu-8g (3 Years flexible commitment)", "reserved"): 40.0}
    terms = {r["offering"]: r["term_months"] for r in rows if r["pricing"] == "reserved"}
    assert terms == {"a3-highgpu-8g (1 Year commitment)": 12.0,
                     "a3-highgpu-8g (3 Years flexible commitment)": 36.0}
    first = rows[0]
    # gcp.py's name for the A3's GPU, so that both GCP sources meet on one model
    assert (first["gpu_name"], first["gpu_count"], first["vcpus"], first["ram_gb"]) == (
        "NVIDIA H100 80GB SXM", 8.0, 208.0, 1872.0)


def test_fraction_of_a_gpu_typo_cell_and_machine_name_in_a_price_cell() -> None:
    rows, skipped = read(table(
        ("g4-standard-6", "NVIDIA RTX PRO 6000", "GPUs: 1/8 vCPUs: 6", "$0.65 / 1 hour",
         "$2 .0000/ 1 hour", "g4-standard-6-spot", "N/A", "-")))
    assert {(r["offering"], r["gpu_count"]) for r in rows} == {
        ("g4-standard-6", 0.125), ("g4-standard-6 (DWS Flex-start)", 0.125)}
    assert by_offering(rows)[("g4-standard-6 (DWS Flex-start)", "flex")] == 2.0
    assert skipped == {"cell holds no price (e.g. a machine name)": 1,
                       "not offered (N/A or -)": 2}


def test_a_deleted_price_cell_never_shifts_the_row() -> None:
    """The issue's case: one price cell of a row deleted; the Flex-start price must not become
    the on-demand price, nor the spot price the Flex-start one."""
    whole = ("a3-ultragpu-8g", "Nvidia H200", "GPUs: 8", "$84.81 / 1 hour", "$42.40 / 1 hour",
             "$50.87 / 1 hour", "$58.47 / 1 hour", "$37.21 / 1 hour")
    cut = whole[:3] + whole[4:]
    rows, skipped = read(table(whole, ("a3-highgpu-8g", *cut[1:])))
    assert {r["offering"] for r in rows} == {
        "a3-ultragpu-8g", "a3-ultragpu-8g (DWS Flex-start)", "a3-ultragpu-8g (1 Year commitment)",
        "a3-ultragpu-8g (3 Years flexible commitment)"}
    assert by_offering(rows)[("a3-ultragpu-8g", "on_demand")] == 84.81
    assert skipped == {"row cells do not match the header": 1}


def test_non_usd_prices_are_never_stored_as_usd() -> None:
    headers = ("Machine type", "GPU", "Components", "Price (EUR)")
    rows, skipped = read(table(("g2-standard-4", "NVIDIA L4", "GPUs: 1", "€0.70 / 1 hour"),
                               ("g2-standard-8", "NVIDIA L4", "GPUs: 1", "0.80 EUR / 1 hour"),
                               headers=headers)
                         + table(("g2-standard-12", "NVIDIA L4", "GPUs: 1", "$1.00 / 1 hour"),
                                 headers=(*headers[:3], "Price (USD)")))
    assert [r["offering"] for r in rows] == ["g2-standard-12"]
    assert skipped["not USD"] == 2


def test_hidden_rows_are_never_read() -> None:
    body = table(("g2-standard-4", "NVIDIA L4", "GPUs: 1", "$0.70 / 1 hour", "", "", "", ""),
                 ("g2-standard-8", "NVIDIA L4", "GPUs: 1", "$0.85 / 1 hour", "", "", "", ""))
    body = body.replace("<tr><td>g2-standard-4", '<tr style="display:none"><td>g2-standard-4')
    rows, _ = read(body)
    assert [r["offering"] for r in rows] == ["g2-standard-8"]


def test_region_only_when_the_page_selects_one() -> None:
    row = ("g2-standard-4", "NVIDIA L4", "GPUs: 1", "$0.70 / 1 hour", "", "", "", "")
    plain, _ = read(table(row))
    picked, _ = read('<select><option>us-east4</option><option selected>Iowa (us-central1)'
                     '</option></select>' + table(row))
    assert plain[0]["region"] == "global" and picked[0]["region"] == "us-central1"


def test_a_table_without_machine_types_is_an_unknown_layout() -> None:
    with pytest.raises(ParseError, match="layout not recognised"):
        gcp_page.SOURCE.parse(RawCapture("gcp-page", gcp_page.URL, FETCHED, (
            b"<table><tr><th>Model</th><th>Price</th></tr><tr><td>H100</td><td>$3</td></tr>"
            b"</table>")))


def test_fetch_uses_the_overridable_base() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, text="<html></html>")

    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        gcp_page.fetch(client, HttpSettings(base_urls={"gcp-page": "http://127.0.0.1:9/g"}))
    assert seen == ["http://127.0.0.1:9/g/products/compute/pricing/accelerator-optimized"]
