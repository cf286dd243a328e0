"""Scaleway GPU instances (`scaleway`): euro prices per zone, stock per zone, skips, paging,
and reshaped answers failing loudly; on own fixtures in the Instance API's format."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import respx

from contract import HttpSettings, ParseError, RawCapture
from scrapers import scaleway

FETCHED = datetime(2026, 10, 1, tzinfo=UTC)
GIB = 1024 ** 3


def gpu_type(count: int, name: str, price: Any, memory_gib: int = 80, **extra: Any
             ) -> dict[str, Any]:
    return {"alt_names": [], "arch": "x86_64", "ncpus": 24 * count, "ram": 240 * count * GIB,
            "gpu": count, "gpu_info": {"gpu_manufacturer": "NVIDIA", "gpu_name": name,
                                       "gpu_memory": memory_gib * GIB},
            "mig_profile": None, "monthly_price": None, "hourly_price": price,
            "end_of_service": False, **extra}


def raw(zones: dict[str, Any]) -> RawCapture:
    return RawCapture("scaleway", "https://api.scaleway.com/", FETCHED,
                      json.dumps({"zones": zones}).encode())


def zone(servers: dict[str, Any], stock: dict[str, str] | None = None) -> dict[str, Any]:
    pages = [{"servers": {n: {"availability": s} for n, s in (stock or {}).items()}}]
    return {"products": [{"servers": servers}], "availability": pages}


def test_example_rows() -> None:
    parsed = scaleway.SOURCE.parse_report(scaleway.SOURCE.example_capture(FETCHED))
    frame = parsed.frame
    assert frame.height == 9 and not parsed.skips
    assert set(frame["region"]) == {"fr-par-2", "nl-ams-1"}
    assert set(frame["currency"]) == {"EUR"} and frame["price_usd_per_hour"].null_count() == 9
    h100 = frame.filter(frame["offering"] == "H100-SXM-8-80G").row(0, named=True)
    assert (h100["gpu_name"], h100["gpu_count"], h100["gpu_memory_gb"], h100["vcpus"],
            h100["ram_gb"], h100["price_native_per_hour"], h100["pricing"]) == (
        "H100-SXM", 8.0, 80.0, 128.0, 960.0, 25.3308, "on_demand")


def test_one_row_per_zone_with_the_zones_stock() -> None:
    servers = {"L4-1-24G": gpu_type(1, "L4", 0.7875, 24),
               "H100-1-80G": gpu_type(1, "H100-PCIe", 2.8665),
               "GP1-S": {"ncpus": 8, "ram": 32 * GIB, "gpu": 0, "hourly_price": 0.1}}
    parsed = scaleway.parse(raw({
        "fr-par-2": zone(servers, {"L4-1-24G": "shortage", "H100-1-80G": "scarce"}),
        "pl-waw-2": zone({"H100-1-80G": gpu_type(1, "H100-PCIe", 2.9)},
                         {"H100-1-80G": "available"}),
        "nl-ams-1": zone({"L4-1-24G": gpu_type(1, "L4", 0.7875, 24)}),
    }))
    assert [(r["region"], r["offering"], r["available"], r["price_native_per_hour"])
            for r in parsed.frame.to_dicts()] == [
        ("fr-par-2", "H100-1-80G", True, 2.8665),
        ("fr-par-2", "L4-1-24G", False, 0.7875),
        ("nl-ams-1", "L4-1-24G", None, 0.7875),  # the zone does not say
        ("pl-waw-2", "H100-1-80G", True, 2.9)]
    # "scarce" is in stock but low; "available" and "shortage" say no level
    assert parsed.frame["stock_level"].to_list() == ["low", None, None, None]


def test_slices_retired_and_unpriced_types_are_counted() -> None:
    parsed = scaleway.parse(raw({"fr-par-2": zone({
        "H100-1-M": gpu_type(1, "H100-PCIe", 0.9, mig_profile="nvidia-mig-1g-10gb"),
        "GPU-3070-S": gpu_type(1, "RTX 3070", 0.98, 8, end_of_service=True),
        "L40S-8-48G": gpu_type(8, "L40S", None, 48),
        "L40S-4-48G": gpu_type(4, "L40S", 0, 48),
        "L40S-1-48G": gpu_type(1, "L40S", 1.4, 48),
    })}))
    assert parsed.frame["offering"].to_list() == ["L40S-1-48G"]
    assert dict(parsed.skips) == {"MIG slice (a fraction of a GPU)": 1, "end of service": 1,
                                  "no hourly price": 2}


@pytest.mark.parametrize(("zones", "message"), [
    ({}, "expected"),
    ({"fr-par-2": {"products": [{"servers": [gpu_type(1, "L4", 1)]}]}}, "not a mapping"),
    ({"fr-par-2": zone({"X": gpu_type(1, "L4", {"currency": "EUR", "units": 1})})},
     "hourly_price"),
    ({"fr-par-2": zone({"X": gpu_type(1, "L4", 1) | {"gpu": "2"}})}, "gpu count"),
    ({"fr-par-2": {"products": [{"servers": {"X": gpu_type(1, "L4", 1)}}] * 2}}, "two pages"),
    ({"fr-par-2": zone({"GP1-S": {"gpu": 0, "hourly_price": 0.1}})}, "no GPU type"),
])
def test_a_reshaped_answer_is_a_parse_error(zones: dict[str, Any], message: str) -> None:
    with pytest.raises(ParseError, match=message):
        scaleway.parse(raw(zones))


@respx.mock
def test_fetch_reads_every_page_of_both_lists_in_every_zone() -> None:
    full = {f"T{i}": {"gpu": 0} for i in range(scaleway.PER_PAGE)}
    calls: list[tuple[str, str]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        zone_name = request.url.path.split("/")[4]
        page = request.url.params["page"]
        calls.append((request.url.path.rsplit("/", 1)[-1], page))
        if request.url.path.endswith("/availability"):
            return httpx.Response(200, json={"servers": {"L4-1-24G": {"availability":
                                                                      "available"}}})
        servers = full if page == "1" else {"L4-1-24G": gpu_type(1, "L4", 0.7875, 24)}
        return httpx.Response(200, json={"servers": servers if zone_name == "fr-par-2" else {}})

    respx.get(url__startswith="https://api.scaleway.com/instance/v1/zones/").mock(
        side_effect=answer)
    with httpx.Client() as client:
        capture = scaleway.fetch(client, HttpSettings())
    frame = scaleway.parse(capture).frame
    assert frame.select("region", "offering", "available").rows() == [
        ("fr-par-2", "L4-1-24G", True)]
    assert calls.count(("servers", "2")) == 1  # only fr-par-2 had a full first page
    assert len(calls) == 2 * len(scaleway.ZONES) + 1
