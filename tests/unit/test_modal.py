"""Modal pricing page parser on the bundled example and inline variants; fetch over respx."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import polars as pl
import pytest
import respx

from contract import HttpSettings, ParseError, RawCapture
from schemas.observation import to_observations, validate
from scrapers.modal import SOURCE, URL, fetch

WHEN = datetime(2025, 6, 12, 3, 0, tzinfo=UTC)


def page(*line_items: str) -> RawCapture:
    body = ("<html><body><p>GPU Tasks</p><div class='space-y-2'>" + "".join(line_items)
            + "</div></body></html>").encode()
    return RawCapture(source="modal", url=URL, fetched_at=WHEN, body=body)


def item(name: str, price: str, unit: str = "/ sec") -> str:
    return (f'<div class="line-item svelte-x1"><p class="text-light-green/60">{name}</p> '
            f'<p class="price svelte-x1">{price} <span>{unit}</span></p></div>')


@pytest.fixture(scope="module")
def example() -> pl.DataFrame:
    return SOURCE.parse(SOURCE.example_capture(WHEN))


def test_example_has_one_serverless_row_per_gpu(example: pl.DataFrame) -> None:
    assert example["offering"].to_list() == [
        "Nvidia B200", "Nvidia H200", "Nvidia H100", "Nvidia A100, 80 GB",
        "Nvidia A100, 40 GB", "Nvidia L40S", "Nvidia A10G", "Nvidia L4", "Nvidia T4"]
    assert set(example["pricing"]) == {"serverless"}
    assert set(example["region"]) == {"global"}
    assert set(example["billing_increment_s"]) == {1}
    assert set(example["gpu_count"]) == {1.0}
    assert set(example["provider"]) == {"modal"}


def test_per_second_prices_become_per_hour(example: pl.DataFrame) -> None:
    prices = dict(zip(example["offering"], example["price_usd_per_hour"], strict=True))
    assert prices["Nvidia H100"] == pytest.approx(0.001097 * 3600)  # 3.9492
    assert prices["Nvidia T4"] == pytest.approx(0.5904)
    assert prices["Nvidia A100, 80 GB"] == pytest.approx(2.4984)


def test_cpu_and_memory_line_items_are_not_gpus(example: pl.DataFrame) -> None:
    assert not example.filter(pl.col("offering").str.contains("(?i)core|memory")).height


def test_example_validates_with_canonical_names(example: pl.DataFrame) -> None:
    batch = validate(to_observations(example, SOURCE.example_capture(WHEN), "t"))
    assert batch.quarantined.height == 0
    models = dict(zip(batch.good["offering"], batch.good["gpu_model"], strict=True))
    assert models == {
        "Nvidia B200": "B200", "Nvidia H200": "H200 SXM", "Nvidia H100": "H100 PCIe",
        "Nvidia A100, 80 GB": "A100 80GB", "Nvidia A100, 40 GB": "A100 40GB",
        "Nvidia L40S": "L40S", "Nvidia A10G": "A10G", "Nvidia L4": "L4", "Nvidia T4": "T4",
    }


def test_memory_in_the_name_is_per_gpu_memory() -> None:
    frame = SOURCE.parse(page(item("Nvidia A100, 80 GB", "$0.000694"),
                              item("Nvidia L4", "$0.000222")))
    assert frame["gpu_memory_gb"].to_list() == [80.0, None]


def test_per_hour_toggle_text_is_read_as_hourly_and_duplicates_dropped() -> None:
    frame = SOURCE.parse(page(item("Nvidia H100", "$3.95", "/ h"), item("Nvidia H100", "$0.001097"),
                       item("Nvidia T4", "$0.59", "/ hour")))
    assert dict(zip(frame["offering"], frame["price_usd_per_hour"], strict=True)) == {
        "Nvidia H100": 3.95, "Nvidia T4": 0.59}


def test_page_without_line_items_is_a_layout_change() -> None:
    raw = RawCapture(source="modal", url=URL, fetched_at=WHEN,
                     body=b"<html><body><h1>Pricing</h1><table></table></body></html>")
    with pytest.raises(ParseError, match="tried cards"):
        SOURCE.parse(raw)


def test_line_items_without_gpu_prices_are_a_layout_change() -> None:
    with pytest.raises(ParseError, match="no per-GPU price"):
        SOURCE.parse(page(item("Physical core", "$0.0000131", "/ core / sec"),
                   item("Nvidia H100", "Contact us", "")))


@respx.mock
def test_fetch_gets_the_pricing_page() -> None:
    route = respx.get("https://modal.com/pricing").mock(return_value=httpx.Response(
        200, content=SOURCE.example.read_bytes(), headers={"content-type": "text/html"}))
    with httpx.Client() as client:
        raw = fetch(client, HttpSettings())
    assert route.called and route.calls.last.request.method == "GET"
    assert raw.url == "https://modal.com/pricing" and raw.content_type == "text/html"
    assert SOURCE.parse(raw).height == 9
