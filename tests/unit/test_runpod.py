"""RunPod: GraphQL gpuTypes (`runpod`), the pricing page (`runpod-page`) and the serverless
per-second docs table (`runpod-serverless`).

Fixtures are ours, in the documented formats: the GraphQL example is a {"data": {"gpuTypes":
[...]}} response with the fields of SOURCES.md §2 / MORE_SOURCES.md and the quirks of the real
capture (price 0 = not offered, placeholder 0.5 community prices where communityCloud is
false, an "unknown" type), plus `lowestPrice` objects per GPU count as our query asks for
them; the page example follows PAGES.md §2 (Webflow rows, both prices as data attributes;
secure prices from the 2026-02-11 scraped table, community prices from the 2025-06 capture);
the serverless example is the 2025 two-column (flex/active) docs table.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

import httpx
import polars as pl
import pytest

from contract import HttpSettings, ParseError, RawCapture
from scrapers import runpod_graphql, runpod_page, runpod_serverless
from tests.recorder import Recorder

FETCHED = datetime(2025, 6, 21, tzinfo=UTC)
KEY = "rpa_SECRETKEY0123456789"


def raw(source: str, body: bytes | str) -> RawCapture:
    data = body.encode() if isinstance(body, str) else body
    return RawCapture(source=source, url="https://example.test", fetched_at=FETCHED, body=data)


def example(source) -> pl.DataFrame:  # type: ignore[no-untyped-def]
    return source.parse(source.example_capture(FETCHED))


def gpu_type(**fields: object) -> dict[str, object]:
    base: dict[str, object] = {"id": "NVIDIA L4", "displayName": "L4", "memoryInGb": 24,
                               "maxGpuCount": 8, "secureCloud": True, "communityCloud": True,
                               "securePrice": 0.43, "communityPrice": 0.39,
                               "secureSpotPrice": 0.22, "communitySpotPrice": 0.2}
    return {**base, **fields}


def price(rows: pl.DataFrame, offering: str, pricing: str) -> float:
    return rows.filter((pl.col("offering") == offering) & (pl.col("pricing") == pricing))[
        "price_usd_per_hour"].item()


# --- GraphQL parser ---------------------------------------------------------------------------

def test_graphql_example_rows_per_cloud_and_pricing() -> None:
    rows = example(runpod_graphql.SOURCE)
    assert rows.height == 26
    assert rows.group_by("pricing").len().sort("pricing").rows() == [
        ("community", 6), ("community_spot", 6), ("on_demand", 8), ("spot", 6)]
    assert price(rows, "NVIDIA H100 80GB HBM3", "on_demand") == 2.99
    assert price(rows, "NVIDIA H100 80GB HBM3", "community") == 2.69
    assert price(rows, "NVIDIA H100 80GB HBM3", "spot") == 1.75
    assert price(rows, "NVIDIA H100 80GB HBM3", "community_spot") == 1.5
    assert set(rows["region"]) == {"global"}
    assert set(rows["billing_increment_s"]) == {1}


def test_graphql_placeholder_and_zero_prices_are_not_rows() -> None:
    rows = example(runpod_graphql.SOURCE)
    # B200 and MI300X: communityCloud false, communityPrice a 0.5 placeholder.
    assert rows.filter(pl.col("offering").str.contains("B200|MI300X")
                       & pl.col("pricing").str.starts_with("community")).height == 0
    # RTX 3080: securePrice 0 and secureCloud false -> community rows only.
    assert sorted(rows.filter(pl.col("offering") == "NVIDIA GeForce RTX 3080")["pricing"]) == [
        "community", "community_spot"]
    # V100 32GB: securePrice 0.49 but secureCloud false -> not a secure row.
    assert "on_demand" not in rows.filter(
        pl.col("offering") == "Tesla V100-SXM2-32GB")["pricing"].to_list()
    assert "unknown" not in rows["offering"].to_list()


def test_graphql_multi_gpu_rows_only_where_the_per_gpu_price_differs() -> None:
    rows = example(runpod_graphql.SOURCE)
    multi = rows.filter(pl.col("gpu_count") > 1).sort("offering", "pricing")
    # H100: 8 GPUs at 2.79/1.65 instead of 2.99/1.75; B200: 8 at 5.99 instead of 6.39.
    # A100 and RTX 4090 quote the same per-GPU price at every count: no extra rows.
    assert multi.select("offering", "pricing", "gpu_count", "price_usd_per_hour").rows() == [
        ("8x NVIDIA B200", "on_demand", 8.0, pytest.approx(47.92)),
        ("8x NVIDIA H100 80GB HBM3", "on_demand", 8.0, pytest.approx(22.32)),
        ("8x NVIDIA H100 80GB HBM3", "spot", 8.0, pytest.approx(13.2)),
    ]
    assert multi["available"].to_list() == [True, True, True]


def test_graphql_stock_status_sets_availability_of_secure_rows() -> None:
    rows = example(runpod_graphql.SOURCE)
    b200 = rows.filter(pl.col("offering") == "NVIDIA B200")
    assert b200["available"].to_list() == [False]  # stockStatus null for 1 GPU
    h100 = rows.filter(pl.col("offering") == "NVIDIA H100 80GB HBM3").sort("pricing")
    assert dict(zip(h100["pricing"], h100["available"], strict=True)) == {
        "community": None, "community_spot": None, "on_demand": True, "spot": True}
    assert h100.filter(pl.col("pricing") == "on_demand").select("vcpus", "ram_gb").row(0) == (
        20, 125)


def test_graphql_stock_status_is_kept_as_the_stock_level() -> None:
    quote = {"uninterruptablePrice": 2.99, "minimumBidPrice": 1.75, "minVcpu": 20,
             "minMemory": 125}
    types = [gpu_type(id=f"NVIDIA L4 {status}", lowestPrice={**quote, "stockStatus": status})
             for status in ("High", "Medium", "Low", None, "Plenty")]
    rows = runpod_graphql.SOURCE.parse(raw("runpod", json.dumps(types))).filter(
        pl.col("pricing") == "on_demand").sort("offering")
    # an unknown word says in stock but no level; null says none in stock
    assert rows.select("offering", "available", "stock_level").rows() == [
        ("NVIDIA L4 High", True, "high"), ("NVIDIA L4 Low", True, "low"),
        ("NVIDIA L4 Medium", True, "medium"), ("NVIDIA L4 None", False, None),
        ("NVIDIA L4 Plenty", True, None)]


def test_graphql_accepts_the_bare_gpu_types_list_like_the_capture() -> None:
    envelope = json.loads(runpod_graphql.SOURCE.example.read_bytes())
    bare = json.dumps(envelope["data"]["gpuTypes"])
    assert runpod_graphql.SOURCE.parse(raw("runpod", bare)).equals(example(runpod_graphql.SOURCE))


def test_graphql_without_lowest_price_leaves_availability_unknown() -> None:
    rows = runpod_graphql.SOURCE.parse(raw("runpod", json.dumps([gpu_type()])))
    assert rows.height == 4
    assert rows["available"].is_null().all()
    assert (rows["gpu_count"] == 1).all()


def test_graphql_missing_cloud_flags_let_the_price_decide() -> None:
    entry = gpu_type(communityPrice=None, communitySpotPrice=0)
    del entry["secureCloud"], entry["communityCloud"]
    rows = runpod_graphql.SOURCE.parse(raw("runpod", json.dumps([entry])))
    assert sorted(rows["pricing"]) == ["on_demand", "spot"]


def test_graphql_multi_gpu_counts_above_max_are_ignored() -> None:
    entry = gpu_type(maxGpuCount=2, lowestPrice_4={"uninterruptablePrice": 0.40,
                                                    "stockStatus": "Low"})
    rows = runpod_graphql.SOURCE.parse(raw("runpod", json.dumps([entry])))
    assert (rows["gpu_count"] == 1).all()


def test_graphql_errors_are_parse_errors_with_the_message() -> None:
    body = {"errors": [{"message": "Cannot query field \"securePrice\" on type \"GpuType\"."}],
            "data": None}
    with pytest.raises(ParseError, match="Cannot query field"):
        runpod_graphql.SOURCE.parse(raw("runpod", json.dumps(body)))


@pytest.mark.parametrize("body", ['{"data": {"pods": []}}', '[{"name": "x"}]', "<html>"])
def test_graphql_wrong_shapes_are_parse_errors(body: str) -> None:
    with pytest.raises(ParseError):
        runpod_graphql.SOURCE.parse(raw("runpod", body))


# --- page parser ------------------------------------------------------------------------------

def test_page_example_secure_and_community_prices_from_the_attributes() -> None:
    rows = example(runpod_page.SOURCE)
    assert rows.height == 17
    assert price(rows, "H100 SXM", "on_demand") == 2.69
    assert price(rows, "H100 PCIe", "community") == 1.99
    # H200 and B200 have an empty community attribute; RTX 3080 an empty secure one.
    assert rows.filter(pl.col("offering") == "H200")["pricing"].to_list() == ["on_demand"]
    assert rows.filter(pl.col("offering") == "RTX 3080")["pricing"].to_list() == ["community"]
    h200 = rows.filter(pl.col("offering") == "H200").row(0, named=True)
    assert (h200["gpu_memory_gb"], h200["vcpus"], h200["ram_gb"]) == (141, 24, 276)


def test_page_without_pricing_rows_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="tried json-ld, next-data, data-attributes"):
        runpod_page.SOURCE.parse(raw("runpod-page", "<html><body><h1>Pricing</h1></body></html>"))


def test_page_price_attribute_as_a_plain_number() -> None:
    # Whether the attributes carry "$" is not documented: the example has "$2.69", this "0.39".
    page = ('<a class="gpu-pricing-row"><div class="gpu-pricing-row__model-wrapper">L4</div>'
            '<div class="cc-gpu-price" data-secure-cloud-price="0.39" '
            'data-community-cloud-price="0">$0.39</div></a>')
    rows = runpod_page.SOURCE.parse(raw("runpod-page", page))
    assert rows.select("pricing", "price_usd_per_hour").rows() == [("on_demand", 0.39)]


# --- serverless parser ------------------------------------------------------------------------

def test_serverless_example_flex_and_active_per_gpu_in_each_class() -> None:
    rows = example(runpod_serverless.SOURCE)
    # 9 classes holding 16 GPUs, each with a flex and an active rate.
    assert rows.height == 32
    assert set(rows["pricing"]) == {"serverless"}
    a100 = rows.filter(pl.col("gpu_name") == "A100").sort("offering")
    assert a100.select("offering", "price_usd_per_hour").rows() == [
        ("serverless A100 (active)", pytest.approx(0.00060 * 3600)),
        ("serverless A100 (flex)", pytest.approx(0.00076 * 3600)),
    ]
    l4_class = rows.filter(pl.col("offering") == "serverless L4, A5000, 3090 (flex)")
    assert l4_class["gpu_name"].to_list() == ["L4", "RTX A5000", "RTX 3090"]
    assert set(rows["billing_increment_s"]) == {1}


def test_serverless_single_price_column_is_flex() -> None:
    table = ("| GPU type(s) | Memory | Cost per second | Description |\n"
             "| --- | --- | --- | --- |\n| B200 | 180 GB | $0.00240 | Big. |\n")
    rows = runpod_serverless.parse(raw("runpod-serverless", table))
    assert rows.select("offering", "price_usd_per_hour").rows() == [
        ("serverless B200 (flex)", pytest.approx(8.64))]


def test_serverless_rendered_html_table_parses_like_the_markdown() -> None:
    html = ("<table><thead><tr><th>GPU type(s)</th><th>Memory</th><th>Flex cost per second</th>"
            "<th>Active cost per second</th></tr></thead><tbody><tr><td>A6000, A40</td>"
            "<td>48 GB</td><td>$0.00034</td><td>$0.00024</td></tr></tbody></table>")
    rows = runpod_serverless.parse(raw("runpod-serverless", html))
    assert rows.height == 4
    assert sorted(set(rows["price_usd_per_hour"])) == [pytest.approx(0.864), pytest.approx(1.224)]


def test_serverless_pro_tier_and_short_names_map_to_cards() -> None:
    assert runpod_serverless._gpu("6000s PRO", 96) == ("RTX PRO 6000", 96)
    assert runpod_serverless._gpu("6000 Ada PRO", 48) == ("RTX 6000 Ada", 48)
    assert runpod_serverless._gpu(" A4500", 16) == ("RTX A4500", 20)
    assert runpod_serverless._gpu("H100 PRO", 80) == ("H100", 80)


def test_serverless_without_a_price_table_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="GPU type"):
        runpod_serverless.parse(raw("runpod-serverless", "# Pricing\n\nSee the website.\n"))


# --- fetch ------------------------------------------------------------------------------------

def test_graphql_fetch_posts_the_query_with_the_key_only_in_the_header(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    recorder = Recorder(runpod_graphql.SOURCE.example.read_bytes())
    settings = HttpSettings(secrets={"RUNPOD_API_KEY": KEY})
    with httpx.Client(transport=httpx.MockTransport(recorder)) as client:
        capture = runpod_graphql.fetch(client, settings)
    [sent] = recorder.requests
    assert (sent.method, str(sent.url)) == ("POST", "https://api.runpod.io/graphql")
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    body = json.loads(sent.content)
    assert body["variables"] == {}
    for field in ("securePrice", "communityPrice", "secureSpotPrice", "communitySpotPrice",
                  "lowestPrice_8: lowestPrice(input: {gpuCount: 8, secureCloud: true})"):
        assert field in body["query"]
    assert KEY not in sent.content.decode()
    assert KEY not in capture.url and KEY.encode() not in capture.body
    assert KEY not in caplog.text
    assert capture.url == "https://api.runpod.io/graphql"
    assert runpod_graphql.SOURCE.parse(capture).height == 26


def test_graphql_fetch_works_without_a_key() -> None:
    recorder = Recorder(b'{"data": {"gpuTypes": []}}')
    with httpx.Client(transport=httpx.MockTransport(recorder)) as client:
        runpod_graphql.fetch(client, HttpSettings())
    assert "authorization" not in recorder.requests[0].headers


def test_graphql_fetch_honours_a_base_url_override() -> None:
    recorder = Recorder(b'{"data": {"gpuTypes": []}}')
    settings = HttpSettings(base_urls={"runpod": "http://127.0.0.1:8123"})
    with httpx.Client(transport=httpx.MockTransport(recorder)) as client:
        runpod_graphql.fetch(client, settings)
    assert str(recorder.requests[0].url) == "http://127.0.0.1:8123/graphql"


@pytest.mark.parametrize(("module", "url"), [
    (runpod_page, "https://www.runpod.io/pricing"),
    (runpod_serverless, "https://raw.githubusercontent.com/runpod/docs/main/snippets/"
                        "serverless-gpu-pricing-table.mdx"),
])
def test_page_fetches_are_plain_gets_without_credentials(module, url: str) -> None:  # type: ignore[no-untyped-def]
    recorder = Recorder(module.SOURCE.example.read_bytes())
    settings = HttpSettings(secrets={"RUNPOD_API_KEY": KEY})
    with httpx.Client(transport=httpx.MockTransport(recorder)) as client:
        capture = module.fetch(client, settings)
    [sent] = recorder.requests
    assert (sent.method, str(sent.url)) == ("GET", url)
    assert "authorization" not in sent.headers
    assert module.SOURCE.parse(capture).height > 0
