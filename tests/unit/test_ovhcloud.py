"""OVHcloud Public Cloud GPUs (`ovhcloud`): the order catalog's hourly and monthly prices in
euros (10^-8 units), regions from the addons' configurations, skips, and reshaped catalogs
failing loudly; on own fixtures in the catalog's format."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import respx

from contract import HttpSettings, ParseError, RawCapture
from scrapers import ovhcloud

FETCHED = datetime(2026, 8, 22, tzinfo=UTC)


def addon(plan_code: str, price: Any, *, model: str = "H100", number: Any = 1,
          memory: int = 80, regions: list[str] | None = None, tags: tuple[str, ...] = ("active",),
          capacities: tuple[str, ...] = ("consumption",), product: str = "publiccloud-instance",
          pricings: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "planCode": plan_code, "invoiceName": plan_code.split(".")[0], "product": product,
        "pricingType": "consumption",
        "pricings": pricings if pricings is not None else [
            {"capacities": list(capacities), "interval": 1, "intervalUnit": "hour",
             "mode": "consumption", "price": price, "tax": 0, "formattedPrice": ""}],
        "blobs": {"commercial": {"brick": "gpu"}, "tags": list(tags), "technical": {
            "cpu": {"cores": 30}, "memory": {"size": 380}, "os": {"family": "linux"},
            "gpu": {"model": model, "number": number, "memory": {"size": memory}}}},
        "configurations": ([{"name": "region", "isCustom": False, "isMandatory": False,
                             "values": regions}] if regions is not None else []),
    }


def raw(*addons: dict[str, Any], currency: str = "EUR") -> RawCapture:
    document = {"catalogId": 1, "locale": {"currencyCode": currency, "subsidiary": "FR",
                                           "taxRate": 20},
                "plans": [], "addons": list(addons)}
    return RawCapture("ovhcloud", ovhcloud.URL, FETCHED, json.dumps(document).encode())


def test_example_rows() -> None:
    parsed = ovhcloud.SOURCE.parse_report(ovhcloud.SOURCE.example_capture(FETCHED))
    frame = parsed.frame
    assert frame.height == 20
    assert set(frame["currency"]) == {"EUR"} and set(frame["provider"]) == {"ovh"}
    assert dict(parsed.skips) == {"coming soon (not orderable yet)": 1,
                                  "Windows flavour (licence in the price)": 1}
    h200 = frame.filter(frame["offering"] == "h200-1920").row(0, named=True)
    assert (h200["gpu_count"], h200["gpu_memory_gb"], h200["region"],
            h200["price_native_per_hour"]) == (8.0, 141.0, "GRA11", 42.0)


def test_hourly_is_on_demand_monthly_is_a_one_month_term_per_region() -> None:
    parsed = ovhcloud.parse(raw(
        addon("h100-380.consumption", 280000000),  # no region: takes the monthly's
        addon("h100-380.monthly.postpaid", 194000000000, capacities=("renew",),
              regions=["GRA11", "BHS5"]),
    ))
    assert [(r["offering"], r["region"], r["pricing"], r["term_months"],
             r["price_native_per_hour"]) for r in parsed.frame.to_dicts()] == [
        ("h100-380", "BHS5", "on_demand", None, 2.8),
        ("h100-380", "GRA11", "on_demand", None, 2.8),
        ("h100-380", "BHS5", "reserved", 1.0, round(1940 / 730, 6)),
        ("h100-380", "GRA11", "reserved", 1.0, round(1940 / 730, 6))]


def test_a_flavour_naming_no_region_is_global_and_a_variant_keeps_its_own() -> None:
    parsed = ovhcloud.parse(raw(
        addon("l4-90.consumption", 75000000, model="L4", memory=24),
        addon("l4-90.consumption.3AZ", 90000000, model="L4", memory=24,
              regions=["EU-WEST-PAR"]),
        addon("l4-90.consumption.LZ", 99000000, model="L4", memory=24),
    ))
    assert [(r["offering"], r["region"], r["price_native_per_hour"])
            for r in parsed.frame.to_dicts()] == [
        ("l4-90", "global", 0.75), ("l4-90 (3AZ)", "EU-WEST-PAR", 0.9)]
    assert dict(parsed.skips) == {"regional variant naming no region": 1}


def test_a_usd_catalog_is_stored_as_usd() -> None:
    row = ovhcloud.parse(raw(addon("l40s-90.consumption", 180000000, model="L40S", memory=48),
                             currency="USD")).frame.row(0, named=True)
    assert (row["price_usd_per_hour"], row["currency"], row["price_native_per_hour"]) == (
        1.8, None, None)


def test_what_is_not_priced_hourly_for_a_whole_gpu_is_counted() -> None:
    parsed = ovhcloud.parse(raw(
        addon("win-l4-90.consumption", 87000000, model="L4"),
        addon("a10-45.consumption", 76000000, model="A10", tags=("active", "coming_soon")),
        addon("x1-45.consumption", 1000000, number=0.5),
        addon("h100-380.hourly.prepaid", 280000000),
        addon("h100-760.consumption", None, number=2, pricings=[
            {"capacities": ["consumption"], "price": 560000000},
            {"capacities": ["consumption"], "price": 500000000}]),
        addon("h100-1520.consumption", 0, number=4),
        addon("h100-380.consumption", 280000000),
        addon("b3-8.consumption", 8880000) | {"blobs": {"technical": {"cpu": {"cores": 2}}}},
        addon("ai-deploy-l4.consumption", 1000, product="ai-deploy"),
    ))
    assert parsed.frame["offering"].to_list() == ["h100-380"]
    assert dict(parsed.skips) == {
        "Windows flavour (licence in the price)": 1, "coming soon (not orderable yet)": 1,
        "fractional GPU count": 1, "billing mode not hourly or monthly": 1,
        "no single recurring price": 2}


@pytest.mark.parametrize(("document", "message"), [
    ({"plans": []}, "order catalog"),
    ({"locale": {}, "addons": []}, "names no currency"),
    ({"locale": {"currencyCode": "EUR"},
      "addons": [addon("h100-380.consumption", "2.80")]}, "not a number"),
    ({"locale": {"currencyCode": "EUR"}, "addons": []}, "no GPU instance price"),
])
def test_a_reshaped_catalog_is_a_parse_error(document: dict[str, Any], message: str) -> None:
    with pytest.raises(ParseError, match=message):
        ovhcloud.parse(RawCapture("ovhcloud", ovhcloud.URL, FETCHED,
                                  json.dumps(document).encode()))


@respx.mock
def test_fetch_asks_the_french_subsidiarys_catalog() -> None:
    route = respx.get("https://eu.api.ovh.com/v1/order/catalog/public/cloud",
                      params={"ovhSubsidiary": "FR"}).mock(
        return_value=httpx.Response(200, content=ovhcloud.SOURCE.example.read_bytes()))
    with httpx.Client() as client:
        capture = ovhcloud.fetch(client, HttpSettings())
    assert route.called and capture.url == ovhcloud.URL
    assert ovhcloud.parse(capture).frame.height == 20
