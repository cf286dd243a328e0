"""Lambda: the Cloud API source (`lambda`) and the public pricing page (`lambda-page`).

The fixtures are written by us in the documented formats (SOURCES.md §3, PAGES.md §1): the API
example uses the instance-type names, descriptions and spec fields of the API docs; both
examples carry the same Feb 2026 per-GPU prices (those of the real scraped table in
../shared/captures/lambda-page), so the two sources must agree row for row.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

import httpx
import polars as pl
import pytest

from contract import HttpSettings, ParseError, RawCapture, SourceSkipped
from schemas.observation import to_observations
from scrapers import lambda_api, lambda_page
from tests.recorder import Recorder

FETCHED = datetime(2026, 2, 11, tzinfo=UTC)
KEY = "secret_lambda_key_0123456789"


def raw(source: str, body: bytes | str) -> RawCapture:
    data = body.encode() if isinstance(body, str) else body
    return RawCapture(source=source, url="https://example.test", fetched_at=FETCHED, body=data)


def api_rows() -> pl.DataFrame:
    return lambda_api.SOURCE.parse(lambda_api.SOURCE.example_capture(FETCHED))


def page_rows() -> pl.DataFrame:
    return lambda_page.SOURCE.parse(lambda_page.SOURCE.example_capture(FETCHED))


def instance(name: str, description: str, cents: int, gpus: int,
             regions: list[str]) -> dict[str, object]:
    return {"instance_type": {"name": name, "description": description,
                              "price_cents_per_hour": cents,
                              "specs": {"vcpus": 30, "memory_gib": 200, "gpus": gpus}},
            "regions_with_capacity_available": [{"name": r, "description": r} for r in regions]}


# --- API parser -------------------------------------------------------------------------------

def test_api_example_one_row_per_region_with_capacity() -> None:
    rows = api_rows()
    # 12 instance types; GH200 and A10 have capacity in 2 regions, 4 types in none.
    assert rows.height == 14
    assert rows["offering"].n_unique() == 12
    gh200 = rows.filter(pl.col("offering") == "gpu_1x_gh200")
    assert sorted(gh200["region"]) == ["us-east-1", "us-west-1"]
    assert gh200["available"].to_list() == [True, True]


def test_api_cents_per_instance_hour_become_dollars_for_the_whole_instance() -> None:
    row = api_rows().filter(pl.col("offering") == "gpu_8x_h100_sxm5").row(0, named=True)
    assert row["price_usd_per_hour"] == pytest.approx(23.92)
    assert row["gpu_count"] == 8
    assert row["gpu_name"] == "H100 SXM5"
    assert row["gpu_memory_gb"] == 80
    assert (row["vcpus"], row["ram_gb"]) == (208, 1800)
    assert row["billing_increment_s"] == 60
    assert row["pricing"] == "on_demand"


def test_api_sold_out_type_is_one_global_row_marked_unavailable() -> None:
    b200 = api_rows().filter(pl.col("offering") == "gpu_8x_b200_sxm6")
    assert b200.select("region", "available").rows() == [("global", False)]
    assert b200["price_usd_per_hour"].item() == pytest.approx(39.92)


@pytest.mark.parametrize(("text", "expected"), [
    ("1x A100 (40 GB SXM4)", (1.0, "A100 SXM4", 40.0)),
    ("8x H100 (80 GB SXM5)", (8.0, "H100 SXM5", 80.0)),
    ("1x GH200 (96 GB)", (1.0, "GH200", 96.0)),
    ("A10 (24 GB PCIe)", (None, "A10 PCIe", 24.0)),
    ("CPU only", (None, "CPU only", None)),
])
def test_description_gives_count_name_and_memory(
    text: str, expected: tuple[float | None, str, float | None]
) -> None:
    assert lambda_api.parse_description(text) == expected


def test_api_skips_cpu_only_and_unpriced_types() -> None:
    body = {"data": {
        "cpu_4x_general": instance("cpu_4x_general", "4x vCPU", 20, 0, ["us-east-1"]),
        "gpu_1x_free": instance("gpu_1x_free", "1x A10 (24 GB PCIe)", 0, 1, ["us-east-1"]),
        "gpu_1x_a10": instance("gpu_1x_a10", "1x A10 (24 GB PCIe)", 75, 1, ["us-east-1"]),
    }}
    rows = lambda_api.parse(raw("lambda", json.dumps(body)))
    assert rows["offering"].to_list() == ["gpu_1x_a10"]


@pytest.mark.parametrize("body", [
    '{"data": [{"name": "gpu_1x_a10"}]}',
    '{"instance_types": {}}',
    '{"data": {"gpu_1x_a10": {"price_cents_per_hour": 75}}}',
    '{"error": {"code": "global/invalid-api-key", "message": "API key was invalid"}}',
    "<html>login</html>",
])
def test_api_wrong_shapes_are_parse_errors(body: str) -> None:
    with pytest.raises(ParseError):
        lambda_api.parse(raw("lambda", body))


def test_api_error_message_is_reported() -> None:
    body = '{"error": {"code": "global/invalid-api-key", "message": "API key was invalid"}}'
    with pytest.raises(ParseError, match="API key was invalid"):
        lambda_api.parse(raw("lambda", body))


# --- page parser ------------------------------------------------------------------------------

def test_page_example_prices_per_gpu_times_tab_count() -> None:
    rows = page_rows()
    assert rows.height == 12  # the 1-Click Clusters table and the heading rows are left out
    h100 = rows.filter(pl.col("gpu_name") == "NVIDIA H100 SXM").sort("gpu_count")
    assert h100.select("offering", "gpu_count", "price_usd_per_hour").rows() == [
        ("gpu_4x_h100_sxm5", 4.0, pytest.approx(12.36)),
        ("gpu_8x_h100_sxm5", 8.0, pytest.approx(23.92)),
    ]
    assert set(rows["region"]) == {"global"}
    assert rows["available"].is_null().all()
    assert "4.49" not in {f"{p:.2f}" for p in rows["price_usd_per_hour"]}  # cluster price


def test_page_reads_specs_and_tib_sizes() -> None:
    row = page_rows().filter(pl.col("offering") == "gpu_8x_b200_sxm6").row(0, named=True)
    assert (row["gpu_memory_gb"], row["vcpus"], row["ram_gb"]) == (180, 208, 2900)
    assert lambda_page._gigabytes("1.8 TiB") == pytest.approx(1843.2)


@pytest.mark.parametrize(("gpu", "memory", "count", "name"), [
    ("NVIDIA H100 SXM", 80, 8, "gpu_8x_h100_sxm5"),
    ("NVIDIA A100 SXM", 40, 8, "gpu_8x_a100"),
    ("NVIDIA A100 SXM", 40, 1, "gpu_1x_a100_sxm4"),
    ("NVIDIA A100 SXM", 80, 8, "gpu_8x_a100_80gb_sxm4"),
    ("NVIDIA Quadro RTX 6000", 24, 1, "gpu_1x_rtx6000"),
    ("NVIDIA B300 SXM6", 288, 8, "gpu_8x_b300_sxm6"),  # not in the table: same pattern
])
def test_page_rows_get_the_api_instance_name(gpu: str, memory: int, count: int,
                                             name: str) -> None:
    assert lambda_page.api_instance_name(gpu, memory, count) == name


def _tables_by_tab() -> list[tuple[str, str]]:
    """The example page's on-demand tables as (label, table HTML), to re-embed as JSON."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(lambda_page.SOURCE.example.read_text(), "lxml")
    section = soup.find(id="instances")
    return [(soup.find(id=p["aria-labelledby"]).get_text(strip=True), str(p.find("table")))
            for p in section.find_all(attrs={"role": "tabpanel"})]


def _escaped(html: str) -> str:
    # The page escapes <, > and / like this inside its JSON strings.
    return (json.dumps(html)[1:-1].replace("<", "\\u003C").replace(">", "\\u003E")
            .replace("/", "\\u002F"))


def test_page_json_embedded_tabs_give_the_same_rows() -> None:
    tabs = ",".join(f'{{"contentHtml":"{_escaped(html)}","label":"{label}"}}'
                    for label, html in _tables_by_tab())
    page = f'<html><body><div id="pricing"></div><script>window.__TABS__=[{tabs}]</script>'
    rows = lambda_page.SOURCE.parse(raw("lambda-page", page))
    assert rows.sort("offering").equals(page_rows().sort("offering"))


def test_page_json_inside_a_js_string_gives_the_same_rows() -> None:
    tabs = ",".join(f'{{"contentHtml":"{_escaped(html)}","label":"{label}"}}'
                    for label, html in _tables_by_tab())
    # Next.js streams the props as a JS string literal: one more level of escaping.
    page = f"<script>self.__next_f.push([1,{json.dumps('7:[' + tabs + ']')}])</script>"
    assert '\\"contentHtml\\"' in page
    rows = lambda_page.SOURCE.parse(raw("lambda-page", page))
    assert rows.sort("offering").equals(page_rows().sort("offering"))


def test_page_without_count_tabs_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="tabs"):
        lambda_page.SOURCE.parse(raw("lambda-page", "<html><body><table></table></body></html>"))


def test_page_tab_with_only_heading_rows_is_a_parse_error() -> None:
    # A page whose tabs hold no price is not "no prices today": it is a layout we misread.
    page = ('<div role="tablist"><button role="tab" id="t1">1x</button></div>'
            '<div role="tabpanel" aria-labelledby="t1"><table><tr><th>On-Demand</th></tr>'
            '<tr><th>Reserved</th><td data-label="PRICE/GPU/HR"></td></tr></table></div>')
    with pytest.raises(ParseError, match="table/tabs, table/rows"):
        lambda_page.SOURCE.parse(raw("lambda-page", page))


# --- both sources -----------------------------------------------------------------------------

COMPARED = ["offering", "gpu_count", "gpu_memory_gb", "vcpus", "ram_gb", "pricing",
            "price_usd_per_hour", "billing_increment_s", "gpu_model"]


def _comparable(source: str, rows: pl.DataFrame) -> pl.DataFrame:
    obs = to_observations(rows, raw(source, b"x"), run_id="t")
    return obs.select(COMPARED).unique().sort("offering")


def test_api_and_page_agree_row_for_row_on_the_same_prices() -> None:
    # Region and availability exist only in the API; everything else must match.
    api = _comparable("lambda", api_rows())
    page = _comparable("lambda-page", page_rows())
    assert api.height == page.height == 12
    assert api.equals(page), api.join(page, on="offering", how="full", suffix="_page")


# --- fetch ------------------------------------------------------------------------------------

def test_api_fetch_sends_the_key_only_in_the_authorization_header(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    recorder = Recorder(lambda_api.SOURCE.example.read_bytes())
    settings = HttpSettings(secrets={"LAMBDA_API_KEY": KEY})
    with httpx.Client(transport=httpx.MockTransport(recorder)) as client:
        capture = lambda_api.fetch(client, settings)
    [sent] = recorder.requests
    assert sent.method == "GET"
    assert str(sent.url) == "https://cloud.lambda.ai/api/v1/instance-types"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in str(sent.url)
    assert capture.url == "https://cloud.lambda.ai/api/v1/instance-types"
    assert KEY.encode() not in capture.body
    assert KEY not in caplog.text
    assert lambda_api.parse(capture).height == 14


def test_api_fetch_without_a_key_is_skipped_and_names_the_fallback() -> None:
    recorder = Recorder(b"{}")
    with httpx.Client(transport=httpx.MockTransport(recorder)) as client, \
            pytest.raises(SourceSkipped, match="lambda-page"):
        lambda_api.fetch(client, HttpSettings())
    assert recorder.requests == []


def test_api_fetch_honours_a_base_url_override() -> None:
    recorder = Recorder(b'{"data": {}}')
    settings = HttpSettings(base_urls={"lambda": "http://127.0.0.1:9/"},
                            secrets={"LAMBDA_API_KEY": KEY})
    with httpx.Client(transport=httpx.MockTransport(recorder)) as client:
        capture = lambda_api.fetch(client, settings)
    assert str(recorder.requests[0].url) == "http://127.0.0.1:9/api/v1/instance-types"
    assert capture.url == "http://127.0.0.1:9/api/v1/instance-types"


def test_page_fetch_is_a_plain_get_without_credentials() -> None:
    recorder = Recorder(lambda_page.SOURCE.example.read_bytes())
    settings = HttpSettings(secrets={"LAMBDA_API_KEY": KEY})
    with httpx.Client(transport=httpx.MockTransport(recorder)) as client:
        capture = lambda_page.fetch(client, settings)
    [sent] = recorder.requests
    assert (sent.method, str(sent.url)) == ("GET", "https://lambda.ai/pricing")
    assert "authorization" not in sent.headers
    assert lambda_page.SOURCE.parse(capture).height == 12
