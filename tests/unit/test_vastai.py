"""Vast.ai parser on the bundled example and small inline variants, and fetch over respx."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import orjson
import polars as pl
import pytest
import respx

from contract import HttpSettings, ParseError, RawCapture
from schemas.observation import to_observations, validate
from scrapers.vastai import SOURCE, URL, fetch, parse

WHEN = datetime(2025, 6, 12, 3, 0, tzinfo=UTC)


def capture(body: bytes) -> RawCapture:
    return RawCapture(source="vastai", url=URL, fetched_at=WHEN, body=body)


def offer(offer_id: int, **fields: object) -> dict[str, object]:
    base: dict[str, object] = {
        "id": offer_id, "gpu_name": "RTX 4090", "num_gpus": 1, "gpu_ram": 24564,
        "dph_base": 0.40, "dph_total": 0.4015, "min_bid": 0.25, "geolocation": "Quebec, CA",
        "rentable": True, "rented": False, "cpu_cores_effective": 16.0, "cpu_ram": 64000,
    }
    return {**base, **fields}


@pytest.fixture(scope="module")
def example() -> pl.DataFrame:
    return SOURCE.parse(SOURCE.example_capture(WHEN))


def test_example_keeps_each_offer_once(example: pl.DataFrame) -> None:
    payload = json.loads(SOURCE.example.read_bytes())
    ids = [o["id"] for o in payload["offers"]]
    assert len(ids) == 11 and len(set(ids)) == 10  # the example repeats offer 9100001
    on_demand = example.filter(pl.col("pricing") == "on_demand")
    assert on_demand.height == 10
    assert on_demand["offering"].n_unique() == 10
    # One offer (9100009) has min_bid 0: no interruptible row for it.
    assert example.filter(pl.col("pricing") == "interruptible").height == 9
    assert set(example["provider"]) == {"vastai"}


def test_example_prices_memory_and_availability(example: pl.DataFrame) -> None:
    first = example.filter(pl.col("offering") == "9100001")
    by_pricing = {r["pricing"]: r for r in first.iter_rows(named=True)}
    assert by_pricing["on_demand"]["price_usd_per_hour"] == pytest.approx(0.4015)
    # interruptible = min_bid (0.25) + the default disk (dph_total - dph_base = 0.0015)
    assert by_pricing["interruptible"]["price_usd_per_hour"] == pytest.approx(0.2515)
    assert by_pricing["on_demand"]["gpu_memory_gb"] == pytest.approx(24564 / 1024)
    assert by_pricing["on_demand"]["region"] == "Quebec, CA"
    assert by_pricing["on_demand"]["available"] is True
    eight = example.filter((pl.col("offering") == "9100005") & (pl.col("pricing") == "on_demand"))
    assert eight["gpu_count"][0] == 8 and eight["price_usd_per_hour"][0] == pytest.approx(10.4015)
    not_rentable = example.filter(pl.col("offering") == "9100002")["available"].unique().to_list()
    rented = example.filter(pl.col("offering") == "9100006")["available"].unique().to_list()
    assert not_rentable == [False] and rented == [False]
    # geolocation null -> region "unknown", never null
    assert example.filter(pl.col("offering") == "9100007")["region"][0] == "unknown"


def test_example_validates_and_maps_every_gpu(example: pl.DataFrame) -> None:
    raw = SOURCE.example_capture(WHEN)
    batch = validate(to_observations(example, raw, "t"))
    assert batch.quarantined.height == 0
    others = batch.good.filter(pl.col("gpu_name") != "A100 SXM4")
    models = dict(zip(others["gpu_name"], others["gpu_model"], strict=True))
    assert models == {
        "RTX 4090": "RTX 4090", "RTX 3090": "RTX 3090",
        "H100 SXM": "H100 SXM", "Tesla V100": "V100 16GB", "Tesla T4": "T4",
        "RTX 6000Ada": "RTX 6000 Ada", "RTX 5090": "RTX 5090",
    }
    a100 = batch.good.filter(pl.col("gpu_name") == "A100 SXM4")
    assert dict(zip(a100["gpu_memory_gb"], a100["gpu_model"], strict=True)) == {
        40.0: "A100 40GB", 80.0: "A100 80GB"}


def test_bare_list_and_wrapped_offers_parse_the_same() -> None:
    offers = [offer(1), offer(2, num_gpus=2, dph_base=0.8, dph_total=0.8015, min_bid=None)]
    wrapped = parse(capture(orjson.dumps({"offers": offers})))
    bare = parse(capture(orjson.dumps(offers)))
    assert wrapped.equals(bare)
    assert wrapped.height == 3  # 2 on-demand + 1 interruptible (offer 2 has no min_bid)


def test_trailing_cli_text_after_the_json_is_ignored() -> None:
    body = orjson.dumps([offer(1)]) + b"\nfound 1 offers\n"
    assert parse(capture(body)).height == 2


def test_duplicate_offer_ids_are_kept_once() -> None:
    frame = parse(capture(orjson.dumps([offer(7), offer(7, dph_total=9.0), offer(8)])))
    on_demand = frame.filter(pl.col("pricing") == "on_demand")
    assert sorted(on_demand["offering"]) == ["7", "8"]
    assert on_demand.filter(pl.col("offering") == "7")["price_usd_per_hour"][0] == 0.4015


@pytest.mark.parametrize("body", [
    b"<html><body>Service Unavailable</body></html>",
    b'{"error": "rate limited"}',
    b"",
])
def test_wrong_payloads_raise_parse_error(body: bytes) -> None:
    with pytest.raises(ParseError):
        parse(capture(body))


@respx.mock
def test_fetch_posts_the_query_and_keeps_the_key_out_of_the_capture() -> None:
    route = respx.post("https://console.vast.ai/api/v0/bundles/").mock(
        return_value=httpx.Response(200, json={"offers": [offer(1)]}))
    settings = HttpSettings(secrets={"VAST_API_KEY": "sekret-123"})
    with httpx.Client() as client:
        raw = fetch(client, settings)
    request = route.calls.last.request
    assert request.method == "POST"
    assert json.loads(request.content)["limit"] == 3000
    assert request.headers["authorization"] == "Bearer sekret-123"
    assert "sekret" not in raw.url and b"sekret" not in raw.body
    assert parse(raw).height == 2


@respx.mock
def test_fetch_uses_the_base_url_override() -> None:
    route = respx.post("http://127.0.0.1:9/api/v0/bundles/").mock(
        return_value=httpx.Response(200, json=[]))
    with httpx.Client() as client:
        raw = fetch(client, HttpSettings(base_urls={"vastai": "http://127.0.0.1:9/"}))
    assert route.called and raw.url == "http://127.0.0.1:9/api/v0/bundles/"
    assert "authorization" not in route.calls.last.request.headers
