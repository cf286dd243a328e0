"""Hugging Face Inference Endpoints pricing (`huggingface-endpoints`): the docs source's
markdown tables on the bundled example and own fixtures of two older layouts; refusals of
the other Hugging Face pages, and theirs of this one."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from contract import HttpSettings, ParseError, RawCapture
from schemas.observation import to_observations, validate
from scrapers import huggingface_endpoints as endpoints
from scrapers.huggingface_docs import SOURCES as DOC_SOURCES

FIXTURES = Path(__file__).parents[1] / "fixtures" / "pages" / "huggingface-endpoints"
FETCHED = datetime(2025, 6, 1, tzinfo=UTC)


def _raw(body: bytes) -> RawCapture:
    return RawCapture(endpoints.NAME, endpoints.URL, FETCHED, body, "text/markdown")


def _good(body: bytes) -> dict[str, dict[str, object]]:
    raw = _raw(body)
    batch = validate(to_observations(endpoints.SOURCE.parse(raw), raw, "test"))
    assert batch.quarantined.height == 0, batch.quarantined.select("offering", "failed_check")
    return {r["offering"]: r for r in batch.good.to_dicts()}


def test_example_gpu_and_accelerator_instances_priced_per_instance() -> None:
    rows = _good(endpoints.SOURCE.example.read_bytes())
    assert len(rows) == 16 and {r["pricing"] for r in rows.values()} == {"inference"}
    h200 = rows["aws nvidia-h200 x8"]
    assert (h200["gpu_model"], h200["gpu_count"], h200["price_usd_per_hour"],
            h200["gpu_memory_gb"]) == ("H200 SXM", 8.0, 40.0, 141.0)
    assert h200["price_usd_per_gpu_hour"] == pytest.approx(5.0)
    # One type and size on two clouds at two prices: two offerings.
    assert rows["aws nvidia-l4 x1"]["price_usd_per_hour"] == 0.8
    assert rows["gcp nvidia-l4 x1"]["price_usd_per_hour"] == 0.7
    inf2 = rows["aws inf2 x12"]
    assert (inf2["gpu_model"], inf2["gpu_count"], inf2["gpu_memory_gb"]) == (
        "Inferentia2", 12.0, 32.0)
    assert not any("intel" in o for o in rows)  # CPU instances carry no GPU
    assert {r["region"] for r in rows.values()} == {"global"}
    assert {r["billing_increment_s"] for r in rows.values()} == {60}


def test_2025_layout_gpu_memory_column_tpu_spelling_and_deprecated_row() -> None:
    rows = _good((FIXTURES / "accelerators_gpu_memory_2025.mdx").read_bytes())
    tpu = rows["gcp tpu 2x2"]
    assert (tpu["gpu_model"], tpu["gpu_count"], tpu["gpu_memory_gb"]) == ("TPU v5e", 4.0, 16.0)
    assert rows["gcp nvidia-h100 x2"]["price_usd_per_gpu_hour"] == pytest.approx(12.0)
    assert rows["aws nvidia-t4 x1"]["available"] is False  # "*(deprecated)*"
    assert rows["aws nvidia-a10g x1"]["available"] is None


def test_2023_layout_without_instance_type_names_the_offering_by_its_chip() -> None:
    parsed = endpoints.SOURCE.parse_report(
        _raw((FIXTURES / "sizes_without_type_2023.mdx").read_bytes()))
    rows = {r["offering"]: r for r in parsed.frame.to_dicts()}
    assert set(rows) == {"aws NVIDIA T4 small", "aws NVIDIA A10G medium", "aws NVIDIA T4 large",
                         "aws NVIDIA A100 xlarge"}
    assert rows["aws NVIDIA T4 large"]["gpu_count"] == 4.0
    assert rows["aws NVIDIA T4 large"]["gpu_memory_gb"] == 14.0  # 56GB over 4 GPUs
    # The last row lost its Architecture cell: skipped whole, never read shifted.
    assert parsed.skips == {"row cells do not match the header": 1}


def test_other_hugging_face_pages_are_refused_both_ways() -> None:
    for source in DOC_SOURCES:
        with pytest.raises(ParseError, match=r"layout changed\?|never names"):
            source.parse(_raw(endpoints.SOURCE.example.read_bytes()))
        with pytest.raises(ParseError, match="no table of instances"):
            endpoints.SOURCE.parse(source.example_capture(FETCHED))


def test_non_usd_or_unreadable_rates_are_never_stored() -> None:
    body = endpoints.SOURCE.example.read_text().replace("| $0.5 ", "| €0.5 ").replace(
        "| $1          |", "| ask us       |")
    parsed = endpoints.SOURCE.parse_report(_raw(body.encode()))
    assert parsed.skips == {"no USD hourly price": 2}
    assert "aws nvidia-t4 x1" not in parsed.frame["offering"].to_list()


def test_fetch_reads_the_raw_docs_source_at_the_overridable_base() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, text="# Pricing")

    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        raw = endpoints.fetch(client, HttpSettings(
            base_urls={endpoints.NAME: "http://127.0.0.1:9"}))
    assert seen == ["http://127.0.0.1:9/huggingface/hf-endpoints-documentation/main/docs/"
                    "source/support/pricing.mdx"]
    assert raw.body == b"# Pricing"
