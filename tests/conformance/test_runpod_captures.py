"""RunPod parsers against the real captures in ../shared/captures/runpod-graphql and runpod-page.

runpod_gpuTypes_2025-06-21T2318Z.json: 39 real gpuTypes (the bare list, as the job stored it).
Counted by hand from the file: 23 types offer secure on-demand (secureCloud true, price > 0),
19 of them a secure spot price; 32 community types (communityCloud true, price > 0), 29 of them
a community spot price -> 103 rows. The `unknown` type and every placeholder price behind a
false cloud flag (communityPrice 0.5 for MI300X/B200/RTX 2000 Ada/RTX PRO 6000, securePrice
0.5 for RTX 4070 Ti ...) give no row. The capture has no lowestPrice, so no multi-GPU rows.

scraped_runpod_io_pricing_table_2026-02-11.csv is a third-party scraper's output table for
runpod.io/pricing (not the page, and secure/community not labelled; its scraper reads the
secure attribute first). It is not a source format: its 18 rows are rendered back into the
page's Webflow layout as secure prices and parsed, to run RunPod's real names and prices
through the page parser.

docs_serverless-gpu-pricing-table_2026-06-08.mdx is the real docs snippet (one price column).
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime

import polars as pl
import pytest

from contract import ParseError, RawCapture
from schemas.observation import to_observations, validate
from scrapers import runpod_graphql, runpod_page, runpod_serverless
from tests.conftest import shared_file


def _observations(module, *parts: str, body: bytes | None = None) -> pl.DataFrame:  # type: ignore[no-untyped-def]
    data = body if body is not None else shared_file(*parts).read_bytes()
    raw = RawCapture(source=module.NAME, url=module.URL,
                     fetched_at=datetime(2026, 1, 1, tzinfo=UTC), body=data)
    return to_observations(module.SOURCE.parse(raw), raw, run_id="conformance")


@pytest.fixture(scope="module")
def graphql() -> pl.DataFrame:
    return _observations(runpod_graphql, "captures", "runpod-graphql",
                         "runpod_gpuTypes_2025-06-21T2318Z.json")


def _price(obs: pl.DataFrame, offering: str, pricing: str) -> float | None:
    hit = obs.filter((pl.col("offering") == offering) & (pl.col("pricing") == pricing))
    return hit["price_usd_per_hour"].item() if hit.height else None


def test_graphql_capture_row_counts(graphql: pl.DataFrame) -> None:
    assert graphql.height == 103
    assert dict(graphql.group_by("pricing").len().iter_rows()) == {
        "on_demand": 23, "spot": 19, "community": 32, "community_spot": 29}
    assert graphql["offering"].n_unique() == 38  # 39 types minus "unknown"
    assert (graphql["gpu_count"] == 1).all()


def test_graphql_capture_prices_checked_by_hand(graphql: pl.DataFrame) -> None:
    assert _price(graphql, "NVIDIA A100 80GB PCIe", "on_demand") == 1.64
    assert _price(graphql, "NVIDIA A100 80GB PCIe", "community") == 1.19
    assert _price(graphql, "NVIDIA A100 80GB PCIe", "spot") == 0.82
    assert _price(graphql, "NVIDIA A100 80GB PCIe", "community_spot") == 0.6
    assert _price(graphql, "NVIDIA H100 80GB HBM3", "on_demand") == 2.99
    assert _price(graphql, "NVIDIA B200", "on_demand") == 6.39
    assert _price(graphql, "NVIDIA B200", "community") is None  # 0.5 placeholder
    assert _price(graphql, "AMD Instinct MI300X OAM", "community") is None  # 0.5 placeholder
    assert _price(graphql, "NVIDIA GeForce RTX 4070 Ti", "on_demand") is None  # 0.5, no secure
    assert _price(graphql, "NVIDIA GeForce RTX 3070", "community_spot") == 0.07
    assert _price(graphql, "NVIDIA GeForce RTX 5090", "spot") is None  # null spot price
    assert _price(graphql, "Tesla V100-SXM2-32GB", "community") == 0.33


def test_graphql_capture_gpus_map_to_the_catalog_and_validate(graphql: pl.DataFrame) -> None:
    models = dict(zip(graphql["offering"], graphql["gpu_model"], strict=True))
    assert "unknown" not in models.values()
    assert models["NVIDIA H100 80GB HBM3"] == "H100 SXM"
    assert models["NVIDIA H100 PCIe"] == "H100 PCIe"
    assert models["NVIDIA H100 NVL"] == "H100 NVL"
    assert models["NVIDIA A100-SXM4-80GB"] == "A100 80GB"
    assert models["NVIDIA H200"] == "H200 SXM"
    assert models["Tesla V100-SXM2-32GB"] == "V100 32GB"
    assert models["Tesla V100-FHHL-16GB"] == "V100 16GB"
    assert models["AMD Instinct MI300X OAM"] == "MI300X"
    assert models["NVIDIA RTX PRO 6000 Blackwell Workstation Edition"] == "RTX PRO 6000"
    assert models["NVIDIA RTX 4000 Ada Generation"] == "RTX 4000 Ada"
    batch = validate(graphql)
    assert batch.quarantined.height == 0, batch.quarantined.select("offering", "failed_check")


def _page_from_scraped_table() -> tuple[list[dict[str, str]], bytes]:
    path = shared_file("captures", "runpod-page", "scraped_runpod_io_pricing_table_2026-02-11.csv")
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    html = "".join(
        f'<a class="gpu-pricing-row"><div class="gpu-pricing-row__model-wrapper">{r["product"]}'
        f'</div><div class="gpu-pricing-row__tag">{r["vram_gb"]}GB VRAM</div>'
        f'<div class="gpu-pricing-row__tag">{r["vcpus"]} vCPUs</div>'
        f'<div class="gpu-pricing-row__tag">{r["system_ram_gb"]}GB RAM</div>'
        f'<div class="cc-gpu-price" data-secure-cloud-price="{r["price_per_hour_usd"]}" '
        f'data-community-cloud-price="">${r["price_per_hour_usd"]}</div></a>'
        for r in rows)
    return rows, html.encode()


def test_page_scraped_table_names_and_prices_through_the_page_parser() -> None:
    rows, html = _page_from_scraped_table()
    obs = _observations(runpod_page, body=html)
    assert len(rows) == obs.height == 18
    assert set(obs["pricing"]) == {"on_demand"}
    prices = dict(zip(obs["offering"], obs["price_usd_per_hour"], strict=True))
    assert prices["H200"] == 3.59
    assert prices["B200"] == 4.99
    assert prices["H100 SXM"] == 2.69
    assert prices["H100 PCIe"] == 2.39
    assert prices["A100 SXM"] == 1.49
    assert prices["L40S"] == 0.86
    assert prices["RTX A5000"] == 0.27
    models = dict(zip(obs["offering"], obs["gpu_model"], strict=True))
    assert models == {
        "H200": "H200 SXM", "B200": "B200", "RTX Pro 6000": "RTX PRO 6000",
        "H100 NVL": "H100 NVL", "H100 PCIe": "H100 PCIe", "H100 SXM": "H100 SXM",
        "A100 PCIe": "A100 80GB", "A100 SXM": "A100 80GB", "L40S": "L40S",
        "RTX 6000 Ada": "RTX 6000 Ada", "A40": "A40", "L40": "L40", "RTX A6000": "RTX A6000",
        "RTX 5090": "RTX 5090", "L4": "L4", "RTX 3090": "RTX 3090", "RTX 4090": "RTX 4090",
        "RTX A5000": "RTX A5000"}
    h200 = obs.filter(pl.col("offering") == "H200").row(0, named=True)
    assert (h200["gpu_memory_gb"], h200["vcpus"], h200["ram_gb"]) == (141, 24, 276)
    assert validate(obs).quarantined.height == 0


def test_the_scraped_table_itself_is_refused_with_a_clear_reason() -> None:
    with pytest.raises(ParseError, match="third-party scraper's CSV"):
        _observations(runpod_page, "captures", "runpod-page",
                      "scraped_runpod_io_pricing_table_2026-02-11.csv")


def test_serverless_capture_rows_and_prices() -> None:
    obs = _observations(runpod_serverless, "captures", "runpod-page",
                        "docs_serverless-gpu-pricing-table_2026-06-08.mdx")
    # 10 classes, 17 GPUs, one (flex) price column.
    assert obs.height == 17
    assert obs["offering"].n_unique() == 10
    assert set(obs["pricing"]) == {"serverless"}
    per_hour = dict(zip(obs["offering"], obs["price_usd_per_hour"], strict=True))
    assert per_hour["serverless A100 (flex)"] == pytest.approx(0.00076 * 3600)
    assert per_hour["serverless H100 PRO (flex)"] == pytest.approx(0.00116 * 3600)
    assert per_hour["serverless B200 (flex)"] == pytest.approx(0.00240 * 3600)
    assert per_hour["serverless 6000s PRO (flex)"] == pytest.approx(0.00111 * 3600)
    models = dict(zip(obs["gpu_name"], obs["gpu_model"], strict=True))
    assert models["RTX PRO 6000"] == "RTX PRO 6000"
    assert "unknown" not in obs["gpu_model"].to_list()
    assert validate(obs).quarantined.height == 0


# --- the real 2023 page: __NEXT_DATA__ GpuType records ----------------------------------------

NEXT_DATA_2023 = ("runpod-page_wayback-20230929070808_runpod.io-gpu-instance-pricing_"
                  "next-data-excerpt.html")


@pytest.fixture(scope="module")
def next_data_page() -> tuple[pl.DataFrame, str, bytes]:
    body = shared_file("captures", "runpod-page", NEXT_DATA_2023).read_bytes()
    raw = RawCapture(source="runpod-page", url=runpod_page.URL, body=body,
                     fetched_at=datetime(2023, 9, 29, 7, 8, tzinfo=UTC))
    report = runpod_page.SOURCE.parse_report(raw)
    frame, strategy = report.frame, report.strategy
    return to_observations(frame, raw, run_id="conformance"), strategy, body


def test_next_data_2023_rows_per_cloud(next_data_page) -> None:  # type: ignore[no-untyped-def]
    """Counted by hand from the 25 GpuType records: 14 secure on-demand (secureCloud true, price
    > 0), 4 secure spot (L40, RTX A6000, RTX 4090, RTX A4500), 22 community (all but A100 SXM
    80GB, L40 and L4, whose communityCloud is false), 19 community spot (22 minus RTX 4000 Ada,
    RTX 4080, RTX 3070 with a null spot price) -> 59 rows."""
    obs, strategy, _ = next_data_page
    assert strategy == "next-data"
    assert obs.height == 59 and obs["offering"].n_unique() == 25
    assert dict(obs.group_by("pricing").len().iter_rows()) == {
        "on_demand": 14, "spot": 4, "community": 22, "community_spot": 19}
    assert (obs["gpu_count"] == 1).all()


def test_next_data_2023_prices_checked_by_hand(next_data_page) -> None:  # type: ignore[no-untyped-def]
    obs, _, _ = next_data_page
    assert _price(obs, "NVIDIA A100 80GB PCIe", "on_demand") == 1.99
    assert _price(obs, "NVIDIA A100 80GB PCIe", "community") == 1.69
    assert _price(obs, "NVIDIA A100 80GB PCIe", "community_spot") == 0.89
    assert _price(obs, "NVIDIA H100 80GB HBM3", "on_demand") == 4.49
    assert _price(obs, "NVIDIA H100 PCIe", "community") == 3.99
    assert _price(obs, "NVIDIA RTX A6000", "spot") == 0.49
    assert _price(obs, "NVIDIA GeForce RTX 3070", "community") == 0.2
    # communityCloud false: its 1.69 / 0.89 are not offers; the L40's 0.5 is the placeholder.
    assert _price(obs, "NVIDIA A100-SXM4-80GB", "community") is None
    assert _price(obs, "NVIDIA A100-SXM4-80GB", "community_spot") is None
    assert _price(obs, "NVIDIA L40", "community") is None
    # secureCloud false with securePrice 0.5 (RTX 4070 Ti) or 1.09 (A100 40GB): no secure row.
    assert _price(obs, "NVIDIA GeForce RTX 4070 Ti", "on_demand") is None
    assert _price(obs, "NVIDIA A100-PCIE-40GB", "on_demand") is None
    models = dict(zip(obs["offering"], obs["gpu_model"], strict=False))
    assert models["NVIDIA H100 80GB HBM3"] == "H100 SXM"
    assert models["NVIDIA A100-PCIE-40GB"] == "A100 40GB"
    assert models["Tesla V100-FHHL-16GB"] == "V100 16GB"
    assert "unknown" not in models.values()
    assert validate(obs).quarantined.height == 0


def test_next_data_2023_lines_up_with_the_graphql_source(next_data_page) -> None:  # type: ignore[no-untyped-def]
    """The page embeds the API's own records: the GraphQL parser must read them to the same
    offerings, pricing kinds and prices, so runpod vs runpod-page disagreements are real."""
    import json
    import re

    obs, _, body = next_data_page
    script = re.search(rb'<script id="__NEXT_DATA__"[^>]*>(.*?)</script>', body, re.S)
    assert script is not None
    records = json.loads(script.group(1))["props"]["pageProps"]["data"]
    api = _observations(runpod_graphql, body=json.dumps(records).encode())
    key = ["offering", "pricing", "price_usd_per_hour"]
    assert sorted(api.select(key).rows()) == sorted(obs.select(key).rows())
