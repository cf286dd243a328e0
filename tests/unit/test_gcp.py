"""GCP Cloud Billing Catalog: paging, units + nanos, description classes, key only in a header."""

from __future__ import annotations

import httpx
import orjson
import pytest

from contract import FetchError, HttpSettings, ParseError, RawCapture, SourceSkipped, now_utc
from schemas.observation import to_observations, validate
from scrapers import gcp

EXAMPLE = gcp.SOURCE.example
KEY = "AIza-test-key-123"


def _raw(body: bytes) -> RawCapture:
    return RawCapture(source="gcp", url=gcp.URL, fetched_at=now_utc(), body=body)


def _by_key(frame) -> dict[tuple[str, str, str], float]:
    return {(r["offering"], r["region"], r["pricing"]): r["price_usd_per_hour"]
            for r in frame.iter_rows(named=True)}


def _pages() -> list[dict]:
    return orjson.loads(EXAMPLE.read_bytes())


def test_units_plus_nanos_is_usd_per_gpu_hour() -> None:
    sku = {"pricingInfo": [{"pricingExpression": {"usageUnit": "h", "tieredRates": [
        {"startUsageAmount": 0, "unitPrice": {"currencyCode": "USD", "units": "12",
                                              "nanos": 637550000}}]}}]}
    assert gcp.hourly_usd(sku) == pytest.approx(12.63755)
    sku["pricingInfo"][0]["pricingExpression"]["usageUnit"] = "GiBy.mo"
    assert gcp.hourly_usd(sku) is None  # not an hourly rate


def test_example_rows_by_description_class() -> None:
    frame = gcp.parse(_raw(EXAMPLE.read_bytes()))
    gpu_rows = frame.filter(frame["gpu_only"])
    assert gpu_rows.height == 26 and gpu_rows["offering"].str.starts_with("nvidia-").all()
    prices = _by_key(gpu_rows)
    assert prices[("nvidia-tesla-t4", "us-east4", "on_demand")] == 0.37
    assert prices[("nvidia-tesla-t4", "us-central1", "spot")] == 0.14
    assert prices[("nvidia-tesla-t4 (1 Year commitment)", "us-west1", "reserved")] == 0.22
    assert prices[("nvidia-tesla-t4 (3 Years commitment)", "us-east1", "reserved")] == 0.16
    assert prices[("nvidia-l4", "us-east4", "on_demand")] == pytest.approx(0.55820646)
    # DWS, capacity reservations, licence fees and non-GPU SKUs are not GPU list prices
    assert 0.5600402 not in prices.values() and 0.035 not in prices.values()


def test_gpu_sku_rows_are_one_gpu_and_all_rows_validate() -> None:
    raw = _raw(EXAMPLE.read_bytes())
    frame = gcp.parse(raw)
    assert (frame.filter(frame["gpu_only"])["gpu_count"] == 1).all()
    batch = validate(to_observations(frame, raw, "run"))
    assert batch.quarantined.height == 0
    models = dict(zip(batch.good["offering"], batch.good["gpu_model"], strict=False))
    assert models["nvidia-h100-80gb"] == "H100 SXM"
    assert models["nvidia-tesla-a100"] == "A100 40GB"
    assert models["nvidia-h200-141gb"] == "H200 SXM"


def test_whole_vm_rows_add_cores_ram_and_gpus() -> None:
    frame = gcp.parse(_raw(EXAMPLE.read_bytes()))
    machines = frame.filter(~frame["gpu_only"])
    assert machines.height == 45  # 5 A2 x 3 regions x 2, 4 A3, 8 G2, 3 N1+T4
    prices = _by_key(machines)
    # a2-highgpu-1g: 12 vCPU x 0.031611 + 85 GiB x 0.004237 + 1 x 2.933908 (GCP lists $3.67)
    assert prices[("a2-highgpu-1g", "us-central1", "on_demand")] == pytest.approx(3.673385)
    assert prices[("a2-highgpu-1g", "us-central1", "spot")] == \
        pytest.approx(12 * 0.011871 + 85 * 0.001591 + 1.1)
    assert prices[("a3-highgpu-8g", "us-east4", "on_demand")] == \
        pytest.approx(208 * 0.02353 + 1872 * 0.00315 + 8 * 9.796551)
    assert prices[("g2-standard-24", "us-east4", "on_demand")] == \
        pytest.approx(24 * 0.025599 + 96 * 0.002998 + 2 * 0.55820646)
    assert prices[("n1-standard-8+1xnvidia-tesla-t4", "us-east1", "on_demand")] == \
        pytest.approx(8 * 0.031611 + 30 * 0.004237 + 0.35)
    # no spot G2 cores in the payload, no A100 80GB in the Americas: no such machines
    assert ("g2-standard-4", "us-east4", "spot") not in prices
    assert not any(key[0].startswith("a2-ultragpu") for key in prices)
    a3 = machines.filter(machines["offering"] == "a3-highgpu-8g").row(0, named=True)
    assert (a3["gpu_count"], a3["vcpus"], a3["ram_gb"]) == (8, 208, 1872)


def test_a_single_region_sku_beats_a_multi_region_one() -> None:
    pages = _pages()
    skus = {s["description"]: s for page in pages for s in page["skus"]}
    americas = skus["Nvidia Tesla T4 GPU running in Americas"]
    virginia = skus["Nvidia Tesla T4 GPU running in Virginia"]
    wide = dict(americas, serviceRegions=["us-central1", "us-east4"])
    for order in ([wide, virginia], [virginia, wide]):
        prices = _by_key(gcp.parse(_raw(orjson.dumps(order))))
        assert prices[("nvidia-tesla-t4", "us-east4", "on_demand")] == 0.37


def test_capture_without_service_regions_uses_the_place_name() -> None:
    sku = dict(_pages()[0]["skus"][1])
    del sku["serviceRegions"], sku["category"]
    frame = gcp.parse(_raw(orjson.dumps([sku])))
    assert frame["region"].to_list() == ["virginia"]


def test_page_list_of_pages_and_bare_skus_parse_alike() -> None:
    pages = _pages()
    skus = [s for page in pages for s in page["skus"]]
    expected = _by_key(gcp.parse(_raw(EXAMPLE.read_bytes())))
    assert _by_key(gcp.parse(_raw(orjson.dumps(skus)))) == expected
    assert _by_key(gcp.parse(_raw(orjson.dumps({"skus": skus})))) == expected


def test_legacy_calculator_json_is_a_parse_error() -> None:
    legacy = {"comment": "x", "version": "v1.10", "gcp_price_list": {"CP-X": {"us": 0.1}}}
    with pytest.raises(ParseError, match="calculator"):
        gcp.parse(_raw(orjson.dumps(legacy)))


def test_fetch_without_key_is_skipped() -> None:
    with httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(500))) as client, \
            pytest.raises(SourceSkipped, match="GCP_API_KEY"):
        gcp.fetch(client, HttpSettings())


def test_fetch_pages_with_the_key_only_in_a_header() -> None:
    pages = _pages()
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        token = request.url.params.get("pageToken")
        return httpx.Response(200, content=orjson.dumps(pages[1] if token else pages[0]))

    settings = HttpSettings(base_urls={"gcp": "http://127.0.0.1:8766"},
                            secrets={"GCP_API_KEY": KEY})
    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        raw = gcp.fetch(client, settings)
    assert [r.url.path for r in seen] == [gcp.PATH, gcp.PATH]
    assert "pageToken" not in seen[0].url.params
    assert seen[1].url.params["pageToken"] == pages[0]["nextPageToken"]
    assert all(r.headers["X-Goog-Api-Key"] == KEY for r in seen)
    assert all(KEY not in str(r.url) and "key" not in r.url.params for r in seen)
    assert KEY not in raw.url and KEY.encode() not in raw.body
    assert raw.url == "http://127.0.0.1:8766" + gcp.PATH
    assert _by_key(gcp.parse(raw)) == _by_key(gcp.parse(_raw(EXAMPLE.read_bytes())))


def test_fetch_errors_never_show_the_key() -> None:
    settings = HttpSettings(secrets={"GCP_API_KEY": KEY})
    transport = httpx.MockTransport(lambda r: httpx.Response(403, text=f"bad key {KEY}"))
    with httpx.Client(transport=transport) as client, pytest.raises(FetchError) as caught:
        gcp.fetch(client, settings)
    assert KEY not in str(caught.value)
