"""Voltage Park price API (`voltagepark-api`): the bundled example (own values in the API's
format), paging, refusal of partial lists and of the pricing page, fields it does not know."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from contract import HttpSettings, ParseError, RawCapture
from schemas.observation import to_observations, validate
from scrapers import voltagepark, voltagepark_api

FETCHED = datetime(2026, 8, 22, tzinfo=UTC)


def location(uid: str, ethernet: Any = "1.99", infiniband: Any = "2.49", free: int = 0,
             **extra: Any) -> dict[str, Any]:
    return {"id": uid, "gpu_count_ethernet": free, "gpu_price_ethernet": ethernet,
            "gpu_count_infiniband": 0, "gpu_price_infiniband": infiniband,
            "specs_per_node": {"gpu_model": "h100-sxm5-80gb", "gpu_count": 8,
                               "cpu_count": 104, "ram_gb": 1024}, **extra}


def page(*locations: dict[str, Any], has_next: bool = False, total: int | None = None
         ) -> dict[str, Any]:
    return {"results": list(locations), "has_previous": False, "has_next": has_next,
            "total_result_count": len(locations) if total is None else total}


def raw(payload: Any) -> RawCapture:
    return RawCapture(voltagepark_api.NAME, voltagepark_api.URL, FETCHED,
                      json.dumps(payload).encode(), "application/json")


def test_example_rows_are_whole_nodes_per_fabric() -> None:
    capture = voltagepark_api.SOURCE.example_capture(FETCHED)
    batch = validate(to_observations(voltagepark_api.SOURCE.parse(capture), capture, "t"))
    assert batch.quarantined.height == 0
    rows = {r["offering"]: r for r in batch.good.to_dicts()}
    assert len(rows) == 4
    ib = rows["h100-sxm5-80gb x8 bare metal, InfiniBand @ b7f3e9c2"]
    assert (ib["gpu_model"], ib["gpu_count"], ib["gpu_memory_gb"]) == ("H100 SXM", 8.0, 80.0)
    assert ib["price_usd_per_hour"] == pytest.approx(8 * 2.39)
    assert ib["price_usd_per_gpu_hour"] == pytest.approx(2.39)
    assert (ib["gpus_available"], ib["available"]) == (24.0, True)
    sold_out = rows["h100-sxm5-80gb x8 bare metal, InfiniBand @ 5e0c2a71"]
    assert (sold_out["gpus_available"], sold_out["available"]) == (0.0, False)
    assert {r["pricing"] for r in rows.values()} == {"on_demand"}
    assert {r["provider"] for r in rows.values()} == {"voltagepark"}


def test_partial_lists_are_refused() -> None:
    with pytest.raises(ParseError, match="has_next"):
        voltagepark_api.parse(raw(page(location("a"), has_next=True)))
    with pytest.raises(ParseError, match="total_result_count"):
        voltagepark_api.parse(raw(page(location("a"), total=3)))
    whole = voltagepark_api.parse(raw([page(location("a"), has_next=True, total=2),
                                       page(location("b"), total=2)]))
    assert whole.frame.height == 4


def test_unknown_empty_or_unreadable_prices_are_skipped_and_counted() -> None:
    parsed = voltagepark_api.parse(raw(page(
        location("a", infiniband=None, gpu_price_spot="0.99"),
        location("b", ethernet="1,99", infiniband="0"))))
    assert parsed.frame["offering"].to_list() == ["h100-sxm5-80gb x8 bare metal, Ethernet @ a"]
    assert parsed.skips == {"no price (empty, zero or unreadable)": 3,
                            "price field not known (gpu_price_spot)": 1}


def test_the_pricing_page_and_the_api_refuse_each_others_captures() -> None:
    with pytest.raises(ParseError):
        voltagepark_api.SOURCE.parse(voltagepark.SOURCE.example_capture(FETCHED))
    with pytest.raises(ParseError):
        voltagepark.SOURCE.parse(voltagepark_api.SOURCE.example_capture(FETCHED))
    with pytest.raises(ParseError, match="expected the locations list"):
        voltagepark_api.parse(raw({"items": []}))


def test_fetch_follows_pages_by_offset_until_has_next_is_false() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        offset = int(request.url.params["offset"])
        body = page(location(f"loc{offset}"), has_next=offset == 0, total=2)
        return httpx.Response(200, json=body)

    settings = HttpSettings(base_urls={voltagepark_api.NAME: "http://127.0.0.1:9"})
    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        capture = voltagepark_api.fetch(client, settings)
    assert seen == ["http://127.0.0.1:9/api/v1/bare-metal/locations?limit=15&offset=0",
                    "http://127.0.0.1:9/api/v1/bare-metal/locations?limit=15&offset=1"]
    parsed = voltagepark_api.parse(capture)
    assert parsed.frame.height == 4 and capture.content_type == "application/json"
