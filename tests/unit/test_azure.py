"""Azure Retail Prices: NextPageLink paging, meter classification, reservations, SKU table."""

from __future__ import annotations

import httpx
import orjson
import pytest

from contract import FetchError, HttpSettings, ParseError, RawCapture, now_utc
from schemas.observation import to_observations, validate
from scrapers import azure

EXAMPLE = azure.SOURCE.example


def _raw(body: bytes) -> RawCapture:
    return RawCapture(source="azure", url=azure.URL, fetched_at=now_utc(), body=body)


def _by_key(frame) -> dict[tuple[str, str, str], float]:
    return {(r["offering"], r["region"], r["pricing"]): r["price_usd_per_hour"]
            for r in frame.iter_rows(named=True)}


def _pages() -> list[dict]:
    return orjson.loads(EXAMPLE.read_bytes())


def test_example_rows_and_meter_classification() -> None:
    prices = _by_key(azure.parse(_raw(EXAMPLE.read_bytes())))
    assert len(prices) == 12
    assert prices[("Standard_NC24ads_A100_v4", "eastus", "on_demand")] == 3.673  # not Windows
    assert prices[("Standard_NC24ads_A100_v4", "eastus", "spot")] == 0.7346
    assert ("Standard_D2s_v3", "eastus", "on_demand") not in prices  # not a GPU VM
    # Low Priority, Windows and DevTestConsumption never appear under any pricing
    assert 2.64 not in prices.values() and 3.857 not in prices.values()


def test_reservations_are_hourly_equivalents_of_the_term_total() -> None:
    prices = _by_key(azure.parse(_raw(EXAMPLE.read_bytes())))
    one_year = prices[("Standard_NC24ads_A100_v4 (1 Year reservation)", "eastus", "reserved")]
    three_years = prices[("Standard_NC24ads_A100_v4 (3 Years reservation)", "eastus", "reserved")]
    assert one_year == pytest.approx(19309.0 / 8760)
    assert three_years == pytest.approx(33288.0 / (3 * 8760))
    assert 19309.0 not in prices.values()  # the term total is never an hourly price


def test_the_newest_meter_wins_when_a_price_changed() -> None:
    prices = _by_key(azure.parse(_raw(EXAMPLE.read_bytes())))
    assert prices[("Standard_ND96isr_H100_v5", "eastus", "on_demand")] == 88.49


def test_fractional_slices_and_catalog_models() -> None:
    raw = _raw(EXAMPLE.read_bytes())
    batch = validate(to_observations(azure.parse(raw), raw, "run"))
    assert batch.quarantined.height == 0
    good = {r["offering"]: r for r in batch.good.iter_rows(named=True)}
    slice_ = good["Standard_NV6ads_A10_v5"]
    assert slice_["gpu_count"] == pytest.approx(1 / 6) and slice_["gpu_model"] == "A10"
    assert slice_["price_usd_per_gpu_hour"] == pytest.approx(0.454 * 6, rel=1e-6)
    assert good["Standard_NC40ads_H100_v5"]["gpu_model"] == "H100 NVL"
    assert good["Standard_ND96isr_H100_v5"]["gpu_model"] == "H100 SXM"
    assert good["Standard_ND96amsr_A100_v4"]["gpu_model"] == "A100 80GB"


def test_one_page_a_list_of_pages_and_bare_items_parse_alike() -> None:
    pages = _pages()
    items = [item for page in pages for item in page["Items"]]
    expected = _by_key(azure.parse(_raw(EXAMPLE.read_bytes())))
    assert _by_key(azure.parse(_raw(orjson.dumps(items)))) == expected
    single = {**pages[0], "Items": items, "NextPageLink": None}
    assert _by_key(azure.parse(_raw(orjson.dumps(single)))) == expected


def test_an_unmapped_gpu_series_sku_is_quarantined_not_dropped() -> None:
    item = dict(_pages()[0]["Items"][0], armSkuName="Standard_NC8ads_B300_v9",
                meterName="NC8ads B300 v9", skuName="NC8ads B300 v9")
    raw = _raw(azure.page_json([item], None))
    frame = azure.parse(raw)
    assert frame.height == 1 and frame["gpu_count"][0] is None
    batch = validate(to_observations(frame, raw, "run"))
    assert batch.good.height == 0 and "gpu_count" in batch.quarantined["failed_check"][0]


def test_wrong_shapes_are_parse_errors() -> None:
    with pytest.raises(ParseError):
        azure.parse(_raw(b'{"error": {"code": "BadRequest"}}'))
    with pytest.raises(ParseError):
        azure.parse(_raw(b'[1, 2]'))


def _paging_server(seen: list[httpx.Request]) -> httpx.MockTransport:
    pages = _pages()
    real_next = ("https://prices.azure.com:443/api/retail/prices?"
                 "$filter=serviceName%20eq%20%27Virtual%20Machines%27&$skip=100")

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if "$skip" in request.url.params:
            return httpx.Response(200, content=azure.page_json(pages[1]["Items"], None))
        return httpx.Response(200, content=azure.page_json(pages[0]["Items"], real_next))

    return httpx.MockTransport(handler)


def test_fetch_follows_next_page_link_through_the_override() -> None:
    seen: list[httpx.Request] = []
    settings = HttpSettings(base_urls={"azure": "http://127.0.0.1:8765"})
    with httpx.Client(transport=_paging_server(seen)) as client:
        raw = azure.fetch(client, settings)
    assert len(seen) == 2 and all(r.method == "GET" for r in seen)
    assert seen[0].url.host == seen[1].url.host == "127.0.0.1"
    assert seen[0].url.path == "/api/retail/prices"
    assert seen[0].url.params["$filter"] == azure.GPU_FILTER
    assert seen[1].url.params["$skip"] == "100"  # the NextPageLink query, kept as-is
    pages = orjson.loads(raw.body)
    assert isinstance(pages, list) and len(pages) == 2
    assert _by_key(azure.parse(raw)) == _by_key(azure.parse(_raw(EXAMPLE.read_bytes())))


def test_fetch_without_override_follows_the_real_link() -> None:
    seen: list[httpx.Request] = []
    with httpx.Client(transport=_paging_server(seen)) as client:
        azure.fetch(client, HttpSettings())
    assert [r.url.host for r in seen] == ["prices.azure.com", "prices.azure.com"]


def test_runaway_paging_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(azure, "MAX_PAGES", 3)
    loop = "https://prices.azure.com/api/retail/prices?$skip=100"
    page = azure.page_json([], loop)
    transport = httpx.MockTransport(lambda _: httpx.Response(200, content=page))
    with httpx.Client(transport=transport) as client, pytest.raises(FetchError, match="pages"):
        azure.fetch(client, HttpSettings())
