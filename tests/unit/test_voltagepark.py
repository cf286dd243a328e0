"""Voltage Park pricing page (`voltagepark`): Webflow offer cards on own fixtures."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from contract import HttpSettings, ParseError, RawCapture
from scrapers import voltagepark

FETCHED = datetime(2025, 7, 12, tzinfo=UTC)


def raw(body: str) -> RawCapture:
    return RawCapture(source="voltagepark", url=voltagepark.URL, fetched_at=FETCHED,
                      body=body.encode())


def offer(title: str, price: str, *features: str, hidden: bool = False) -> str:
    extra = " w-condition-invisible" if hidden else ""
    items = "".join(f'<div class="pricing11_feature"><div class="text-m">{f}</div></div>'
                    for f in features)
    return (f'<div class="pricing11_plan{extra}"><div class="text-eyebrow text-style-allcaps">'
            f'{title}</div><div class="heading-style-h3">{price}</div>{items}</div>')


def read(*offers: str) -> tuple[list[dict[str, object]], dict[str, int]]:
    parsed = voltagepark.PARSER(raw("<html><body>" + "".join(offers) + "</body></html>"))
    return parsed.frame.to_dicts(), dict(parsed.skips)


def test_example_rows() -> None:
    frame = voltagepark.SOURCE.parse(voltagepark.SOURCE.example_capture(FETCHED))
    assert frame.height == 2 and set(frame["gpu_count"]) == {1.0}


def test_one_rate_for_a_gpu_range_is_stored_per_gpu_per_fabric() -> None:
    rows, skipped = read(offer("On-Demand, Ethernet", "$2.10/hr", "1-512 HGX H200 GPUs"),
                         offer("On-demand, 3200 Gbps Infiniband", "$2.60/hr",
                               "16-512 HGX H200 GPUs for training."))
    assert not skipped
    assert [(r["offering"], r["gpu_name"], r["gpu_count"], r["price_usd_per_hour"])
            for r in rows] == [
        ("HGX H200, Ethernet", "HGX H200", 1.0, 2.10),
        ("HGX H200, 3200 Gbps Infiniband (from 16 GPUs)", "HGX H200", 1.0, 2.60)]
    assert {r["pricing"] for r in rows} == {"on_demand"}


def test_price_split_from_its_unit_still_reads() -> None:
    rows, _ = read(offer("On-Demand, Ethernet", "<span>$1.99</span><span>/hr</span>",
                         "1-8 HGX H100 GPUs"))
    assert rows[0]["price_usd_per_hour"] == 1.99


def test_reserve_with_a_price_keeps_its_term() -> None:
    rows, _ = read(offer("Long-Term Reserve", "$1.60/hr", "64-1016 HGX H100 GPUs",
                         "12 month minimum term."))
    assert rows[0]["pricing"] == "reserved"
    assert rows[0]["offering"] == "HGX H100 (from 64 GPUs) (12-month commitment)"


def test_contact_sales_hidden_and_non_usd_offers_are_skipped_and_counted() -> None:
    rows, skipped = read(
        offer("Long-Term Reserve", "Contact sales", "Custom clusters"),
        offer("On-Demand, Ethernet", "$0.99/hr", "1-8 HGX H100 GPUs", hidden=True),
        offer("On-Demand, Ethernet", "€1.80/hr", "1-8 HGX H100 GPUs"),
        offer("On-Demand, Ethernet", "$1.99/hr", "1-8 HGX H100 GPUs"),
    )
    assert [r["price_usd_per_hour"] for r in rows] == [1.99]
    assert skipped == {"contact sales": 1, "hidden offer": 1, "not USD": 1}


def test_an_offer_without_a_gpu_range_is_not_guessed() -> None:
    with pytest.raises(ParseError, match=r"every row skipped .*no GPU range"):
        voltagepark.SOURCE.parse(raw(offer("On-Demand, Ethernet", "$15.92/hr", "A node.")))


def test_unknown_layout_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="layout not recognised"):
        voltagepark.SOURCE.parse(raw("<html><h6>On-Demand</h6><p>$1.99/hr</p></html>"))


def test_fetch_uses_the_overridable_base() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, text="<html></html>")

    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        voltagepark.fetch(client, HttpSettings(base_urls={"voltagepark": "http://127.0.0.1:9/vp"}))
    assert seen == ["http://127.0.0.1:9/vp/pricing"]
