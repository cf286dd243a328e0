"""CoreWeave pricing page (`coreweave`).

The example page is ours, in the Webflow layout PAGES.md §7 describes from a third-party
scraper's code (rows `div.table-row-v2.w-dyn-item.kubernetes-gpu-pricing`, `h3.table-model-name`,
`div.table-v2-cell` cells: GPU count, VRAM, vCPUs, RAM, local storage, "$price"), with the
instance prices of the real 2026-02-11 scraped table. Prices are per instance-hour.
"""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import polars as pl
import pytest

from schemas.observation import to_observations, validate
from scrapers import coreweave
from scrapers.base import HttpSettings, ParseError, RawCapture

FETCHED = datetime(2026, 2, 11, tzinfo=UTC)


def raw(body: str) -> RawCapture:
    return RawCapture(source="coreweave", url=coreweave.URL, fetched_at=FETCHED,
                      body=body.encode())


def item(name: str, *cells: str, kind: str = "kubernetes-gpu-pricing") -> str:
    inner = "".join(f'<div class="table-v2-cell">{c}</div>' for c in cells)
    return (f'<div class="table-row-v2 w-dyn-item {kind}"><div class="table-grid">'
            f'<h3 class="table-model-name">{name}</h3>{inner}</div></div>')


def test_example_instance_prices_and_specs() -> None:
    rows = coreweave.SOURCE.parse(coreweave.SOURCE.example_capture(FETCHED))
    assert rows.height == 6  # the CPU instance row is not a GPU price
    b200 = rows.filter(pl.col("offering") == "NVIDIA B200").row(0, named=True)
    assert (b200["gpu_count"], b200["gpu_memory_gb"], b200["vcpus"], b200["ram_gb"]) == (
        8, 180, 128, 2048)
    assert b200["price_usd_per_hour"] == 68.80  # the whole 8-GPU instance
    assert set(rows["pricing"]) == {"on_demand"}


def test_blank_gpu_count_uses_the_known_count_or_drops_the_row() -> None:
    page = (item("NVIDIA GB200 NVL72", "", "186", "144", "960", "30.72", "$42.00")
            + item("NVIDIA Mystery", "-", "80", "64", "512", "7.68", "$9.99"))
    rows = coreweave.parse(raw(page))
    assert rows.select("offering", "gpu_count", "price_usd_per_hour").rows() == [
        ("NVIDIA GB200 NVL72", 4.0, 42.0)]


def test_rows_without_a_dollar_price_are_skipped() -> None:
    page = (item("NVIDIA H100", "8", "80", "128", "2048", "61.44", "Contact sales")
            + item("NVIDIA L40", "8", "48", "128", "1024", "7.68", "$10.00"))
    assert coreweave.parse(raw(page))["offering"].to_list() == ["NVIDIA L40"]


def test_page_without_gpu_rows_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="kubernetes-gpu-pricing"):
        coreweave.parse(raw("<html><body><h1>Pricing</h1></body></html>"))


def test_every_example_row_validates_and_maps_to_a_catalog_gpu() -> None:
    capture = coreweave.SOURCE.example_capture(FETCHED)
    batch = validate(to_observations(coreweave.parse(capture), capture, run_id="t"))
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
    assert coreweave.parse(capture).height == 6
