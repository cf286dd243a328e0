"""Hugging Face Jobs API and docs tables: parsers on the bundled examples and inline variants,
fetch against respx, and agreement between the API and the docs on shared flavors.

The API example encodes documented facts (PAGES.md §4, huggingface_hub JobHardware): a JSON list,
unitCostUSD per unitLabel "minute", accelerator quantity/vram as strings, vram the flavor total.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import polars as pl
import pytest
import respx

from contract import HttpSettings, ParseError, RawCapture
from schemas.observation import to_observations, validate
from scrapers.huggingface_docs import SOURCES as DOC_SOURCES
from scrapers.huggingface_docs import flavor_of
from scrapers.huggingface_jobs import SOURCE as JOBS

DOCS, SPACES = DOC_SOURCES


def _raw(body: bytes | str, source: str = "huggingface-jobs") -> RawCapture:
    data = body.encode() if isinstance(body, str) else body
    return RawCapture(source=source, url="https://x", fetched_at=datetime.now(UTC), body=data)


def _by_offering(frame: pl.DataFrame) -> dict[str, dict]:
    return {row["offering"]: row for row in frame.to_dicts()}


def test_jobs_example_per_minute_prices_become_hourly() -> None:
    rows = _by_offering(JOBS.parse(JOBS.example_capture()))
    assert "cpu-basic" not in rows  # CPU-only flavors carry no GPU
    assert rows["t4-small"]["price_usd_per_hour"] == 0.40  # 0.006667 $/min x 60
    assert rows["a100-large"]["price_usd_per_hour"] == 2.50
    assert rows["h200x8"]["gpu_count"] == 8
    assert rows["h200x8"]["gpu_memory_gb"] == 141  # 1128 GB total / 8
    assert rows["l4x4"]["vcpus"] == 48 and rows["l4x4"]["ram_gb"] == 186
    assert {r["billing_increment_s"] for r in rows.values()} == {60}
    assert {r["pricing"] for r in rows.values()} == {"on_demand"}


def test_jobs_rows_validate_and_map_to_catalog_gpus() -> None:
    raw = JOBS.example_capture()
    batch = validate(to_observations(JOBS.parse(raw), raw, "run"))
    assert batch.quarantined.height == 0
    models = dict(zip(batch.good["offering"], batch.good["gpu_model"], strict=True))
    assert models["a100-large"] == "A100 80GB"
    assert models["h200"] == "H200 SXM"
    assert models["rtx-pro-6000"] == "RTX PRO 6000"
    assert models["t4-small"] == "T4"


def test_jobs_unknown_unit_and_micro_fallback() -> None:
    payload = [
        {"name": "l4x1", "accelerator": {"model": "L4", "quantity": "1", "vram": "24 GB"},
         "unitCostMicroUSD": 13333, "unitLabel": "minute"},
        {"name": "weird", "accelerator": {"model": "T4", "quantity": "1", "vram": "16 GB"},
         "unitCostUSD": 1.0, "unitLabel": "fortnight"},
    ]
    rows = _by_offering(JOBS.parse(_raw(json.dumps(payload))))
    assert rows["l4x1"]["price_usd_per_hour"] == pytest.approx(0.8, abs=1e-3)
    assert "weird" not in rows


def test_jobs_wrong_shape_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="list of hardware flavors"):
        JOBS.parse(_raw('"nope"'))
    with pytest.raises(ParseError, match="name/unitLabel"):
        JOBS.parse(_raw('[{"id": 1}]'))


@respx.mock
def test_jobs_fetch_gets_the_public_endpoint() -> None:
    route = respx.get("https://huggingface.co/api/jobs/hardware").mock(
        return_value=httpx.Response(200, json=[]))
    with httpx.Client() as client:
        raw = JOBS.fetch(client, HttpSettings())
    assert route.called and raw.url == "https://huggingface.co/api/jobs/hardware"
    assert route.calls.last.request.headers["accept"] == "application/json"


@respx.mock
def test_docs_fetch_uses_the_markdown_pages_and_base_url_override() -> None:
    jobs = respx.get("http://127.0.0.1:9/docs/hub/en/jobs-pricing.md").mock(
        return_value=httpx.Response(200, text="| a |"))
    spaces = respx.get("https://huggingface.co/docs/hub/en/spaces-gpus.md").mock(
        return_value=httpx.Response(200, text="| a |"))
    settings = HttpSettings(base_urls={"huggingface-docs": "http://127.0.0.1:9"})
    with httpx.Client() as client:
        DOCS.fetch(client, settings)
        SPACES.fetch(client, settings)
    assert jobs.called and spaces.called


@pytest.mark.parametrize(("label", "expected"), [
    ("Nvidia T4 - small", ("t4-small", "T4", 1.0)),
    ("1x Nvidia L4", ("l4x1", "L4", 1.0)),
    ("4x Nvidia L40S", ("l40sx4", "L40S", 4.0)),
    ("2x Nvidia A10G - large", ("a10g-largex2", "A10G", 2.0)),
    ("Nvidia A100 - large", ("a100-large", "A100", 1.0)),
    ("8x Nvidia A100 - large", ("a100x8", "A100", 8.0)),
    ("4x Nvidia A100", ("a100x4", "A100", 4.0)),
    ("Nvidia H200", ("h200", "H200", 1.0)),
    ("2x Nvidia RTX PRO 6000", ("rtx-pro-6000x2", "RTX PRO 6000", 2.0)),
    ("Google TPU v5e - 2x4", ("v5e-2x4", "TPU v5e", 8.0)),
    ("CPU Upgrade", None),
])
def test_docs_labels_become_api_flavor_ids(label: str, expected: tuple | None) -> None:
    assert flavor_of(label) == expected


def test_spaces_example_has_tpus_and_skips_cpu_free_and_removed_rows() -> None:
    rows = _by_offering(SPACES.parse(SPACES.example_capture()))
    assert rows["v5e-2x2"]["gpu_count"] == 4 and rows["v5e-2x2"]["gpu_memory_gb"] == 16
    assert rows["a10g-largex4"]["price_usd_per_hour"] == 5.0
    assert not {"cpu-basic", "cpu-upgrade", "h100x8"} & set(rows)
    raw = SPACES.example_capture()
    batch = validate(to_observations(SPACES.parse(raw), raw, "run"))
    assert batch.quarantined.height == 0
    assert set(batch.good.filter(pl.col("offering").str.starts_with("v5e"))["gpu_model"]) == {
        "TPU v5e"}


def test_docs_older_layout_with_memory_first_and_bare_dollars() -> None:
    page = """# Using GPU Spaces

| **Hardware** | **GPU Memory** | **CPU** | **Memory** | **Disk** | **Hourly Price** |
|---|---|---|---|---|---|
| CPU XL | - | 16 vCPU | 124 GB | | coming soon |
| Nvidia A10G - small | 24GB | 4 vCPU | 15 GB | 110 GB | $1 |
| Nvidia A100 - large | 40GB | 12 vCPU | 142 GB | 1000 GB | $4 |
| 8x Nvidia H100 | 80GB | 192 vCPU | 2 TB | 3000 GB | coming soon |
"""
    raw = _raw(page, "huggingface-spaces")
    rows = _by_offering(SPACES.parse(raw))
    assert set(rows) == {"a10g-small", "a100-large"}
    assert rows["a100-large"]["price_usd_per_hour"] == 4.0
    models = validate(to_observations(SPACES.parse(raw), raw, "r")).good["gpu_model"].to_list()
    assert "A100 40GB" in models


def test_docs_without_price_table_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="Hourly Price"):
        DOCS.parse(_raw("# Jobs pricing\n\nNo tables any more.", "huggingface-docs"))


def test_each_docs_source_refuses_the_other_products_page() -> None:
    """One source of a provider reads a capture: Jobs refuses the Spaces page and back."""
    with pytest.raises(ParseError, match="never names jobs"):
        DOCS.parse(SPACES.example_capture())
    with pytest.raises(ParseError, match="never names spaces"):
        SPACES.parse(DOCS.example_capture())


def test_api_and_docs_agree_on_shared_flavors() -> None:
    api = JOBS.parse(JOBS.example_capture())
    docs = DOCS.parse(DOCS.example_capture())
    joined = api.join(docs, on="offering", suffix="_docs")
    assert joined.height >= 8  # t4-small, l4x4, a100-large, a100x8, h200, h200x8 ...
    for row in joined.to_dicts():
        assert row["price_usd_per_hour"] == pytest.approx(row["price_usd_per_hour_docs"]), row
        assert row["gpu_count"] == row["gpu_count_docs"]
        assert row["gpu_memory_gb"] == row["gpu_memory_gb_docs"]
