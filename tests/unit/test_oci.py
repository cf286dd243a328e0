"""Oracle price list (`oci`): units, commitments, skips, currencies, paging, on own fixtures."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from contract import HttpSettings, ParseError, RawCapture
from scrapers import oci

FETCHED = datetime(2026, 10, 1, tzinfo=UTC)


def item(name: str, value: float, metric: str = "GPU Per Hour", *, currency: str = "USD",
         category: str = "Compute - GPU", part: str = "B1",
         models: tuple[str, ...] = ("PAY_AS_YOU_GO",)) -> dict[str, Any]:
    return {"partNumber": part, "displayName": name, "metricName": metric,
            "serviceCategory": category, "currencyCodeLocalizations": [
                {"currencyCode": currency,
                 "prices": [{"model": m, "value": value} for m in models]}]}


def raw(*items: dict[str, Any], pages: int = 0) -> RawCapture:
    doc: Any = {"lastUpdated": "2026-10-01T00:00:00Z", "items": list(items)}
    if pages:
        doc = [doc] + [{"items": []}] * (pages - 1)
    return RawCapture(source="oci", url=oci.URL, fetched_at=FETCHED, body=json.dumps(doc).encode())


def test_example_rows() -> None:
    frame = oci.SOURCE.parse(oci.SOURCE.example_capture(FETCHED))
    assert frame.height == 8
    assert frame.filter(frame["pricing"] == "reserved")["gpu_count"].to_list() == [4.0, 4.0]


def test_per_gpu_shapes_are_on_demand_per_gpu() -> None:
    parsed = oci.parse(raw(item("OCI - Compute - GPU - B200", 14, part="B7"),
                           item("Compute - GPU - A100 - v2", 4, part="B8")))
    assert [(r["offering"], r["gpu_name"], r["gpu_count"], r["pricing"], r["price_usd_per_hour"])
            for r in parsed.frame.to_dicts()] == [
        ("GPU B200 (B7)", "B200", 1.0, "on_demand", 14.0),
        ("GPU A100 v2 (B8)", "A100 80GB", 1.0, "on_demand", 4.0)]


def test_node_commitments_are_reserved_with_the_term_and_the_shape_gpus() -> None:
    name = "Oracle Cloud VMware Solution - BM.GPU.A10.64 - {} Commit"
    parsed = oci.parse(raw(item(name.format("Monthly"), 16, "Node Per Hour"),
                           item(name.format("3 Year"), 11, "Node Per Hour")))
    assert [(r["offering"], r["gpu_count"], r["pricing"], r["term_months"])
            for r in parsed.frame.to_dicts()] == [
        ("OCVS BM.GPU.A10.64 (1 Month commitment)", 4.0, "reserved", 1.0),
        ("OCVS BM.GPU.A10.64 (3 Years commitment)", 4.0, "reserved", 36.0)]


def test_skips_are_counted_by_reason() -> None:
    parsed = oci.parse(raw(
        item("Compute - GPU Standard - X7", 1.2),  # legacy: no GPU model
        item("OCI - Compute - GPU - H100T", 10.75),  # not a catalog GPU
        item("Oracle Compute Cloud@Customer - Compute - GPU.L40S", 3.5,
             category="Compute Cloud@Customer"),
        item("Roving Edge Device - RED.2 GPU", 100, "Resource Possession Per Day",
             category="Roving Edge Infrastructure"),
        item("BM.GPU.X9.64 - 1 Year Commit", 20, "Node Per Hour"),  # unknown host shape
        item("OCI - Compute - GPU - H200", 9.0, currency="EUR"),  # non-USD: never as USD
        item("OCI - Compute - GPU - L40S", 3.0, models=("PAY_AS_YOU_GO", "PAY_AS_YOU_GO")),
        item("Compute - Standard - E5 - OCPU", 0.03, "OCPU Per Hour", category="Compute"),
        item("OCI - Compute - GPU - MI300X", 6),
    ))
    assert [r["gpu_name"] for r in parsed.frame.to_dicts()] == ["MI300X"]
    assert dict(parsed.skips) == {
        "name gives no GPU model in the catalog (legacy part)": 2,
        "on-premises part (Cloud@Customer, Roving Edge)": 2,
        "node shape with no known GPU count": 1,
        "not USD": 1,
        "no single PAY_AS_YOU_GO price": 1,
    }


def test_no_gpu_price_left_is_a_parse_error_naming_the_skips() -> None:
    with pytest.raises(ParseError, match="not USD"):
        oci.SOURCE.parse(raw(item("OCI - Compute - GPU - H200", 9.0, currency="GBP")))


def test_unknown_shape_is_a_parse_error() -> None:
    body = json.dumps({"error": "upstream unavailable"}).encode()
    with pytest.raises(ParseError, match="items"):
        oci.SOURCE.parse(RawCapture("oci", oci.URL, FETCHED, body))


def test_a_list_of_pages_is_read() -> None:
    assert oci.SOURCE.parse(raw(item("OCI - Compute - GPU - H200", 10), pages=2)).height == 1


def test_fetch_follows_next_links_and_bundles_the_pages() -> None:
    first = {"items": [item("OCI - Compute - GPU - H200", 10)], "hasMore": True,
             "links": [{"rel": "next", "href": "http://127.0.0.1:9/oci/next"}]}
    second = {"items": [item("OCI - Compute - GPU - B200", 14)], "hasMore": False}
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json=second if request.url.path.endswith("next") else first)

    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        capture = oci.fetch(client, HttpSettings(base_urls={"oci": "http://127.0.0.1:9/oci"}))
    assert seen == ["http://127.0.0.1:9/oci/pls/apex/cetools/api/v1/products/?currencyCode=USD",
                    "http://127.0.0.1:9/oci/next"]
    assert oci.SOURCE.parse(capture)["gpu_name"].to_list() == ["H200", "B200"]
