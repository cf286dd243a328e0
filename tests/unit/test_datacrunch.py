"""DataCrunch / Verda pricing page (`datacrunch`): the 2025 per-instance table (the bundled
example, own values), the same table cut without its `<table>` element, the "Dynamic price"
column as pricing `dynamic`, and the 2026 JSON-LD offer catalog (own fixture)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from contract import ParseError
from scrapers import datacrunch
from tests.neocloud_pages import capture, example, fetched_url, price, read

FIXTURES = Path(__file__).parents[1] / "fixtures" / "pages" / "datacrunch"


def test_example_prices_are_per_instance() -> None:
    frame, strategy, _ = example(datacrunch)
    assert strategy == "table"
    assert frame.group_by("pricing").len().sort("pricing").rows() == [
        ("dynamic", 5), ("on_demand", 5), ("spot", 4)]
    eight = price(frame, "8H200.141S.176V")
    assert (eight["gpu_model"], eight["gpu_count"], eight["price_usd_per_hour"]) == (
        "H200 SXM", 8.0, 26.32)
    assert eight["price_usd_per_gpu_hour"] == pytest.approx(3.29)
    assert (eight["vcpus"], eight["ram_gb"], eight["gpu_memory_gb"]) == (176.0, 1450.0, 141.0)
    assert price(frame, "1L40S.20V", "spot")["price_usd_per_hour"] == 0.35


def test_dynamic_prices_are_their_own_pricing_kind() -> None:
    frame, _, skipped = example(datacrunch)
    dynamic = price(frame, "1H200.141S.44V", "dynamic")
    assert dynamic["price_usd_per_hour"] == 2.39  # never the on-demand price of the instance
    assert price(frame, "1H200.141S.44V")["price_usd_per_hour"] == 3.29
    assert skipped["contact sales"] == 1  # the 8x A100 spot cell


def test_2026_json_ld_offer_catalog() -> None:
    body = (FIXTURES / "offer_catalog_2026.html").read_bytes()
    frame, strategy, skipped = read(datacrunch, body, datetime(2026, 8, 22, tzinfo=UTC))
    assert strategy == "json-ld"
    b300 = price(frame, "1x B300 SXM6 268GB on-demand")
    assert (b300["gpu_model"], b300["gpu_count"], b300["gpu_memory_gb"],
            b300["price_usd_per_hour"]) == ("B300", 1.0, 268.0, 7.2)
    assert price(frame, "1x B300 SXM6 268GB spot", "spot")["price_usd_per_hour"] == 3.6
    cluster = price(frame, "16x B300 SXM6 268GB instant cluster")
    assert cluster["gpu_count"] == 16.0 and cluster["price_usd_per_gpu_hour"] == pytest.approx(7.2)
    serverless = price(frame, "2x H100 SXM5 80GB serverless continuous", "serverless")
    assert serverless["price_usd_per_gpu_hour"] == pytest.approx(3.5)
    assert price(frame, "1x B200 CC SXM6 180GB on-demand")["gpu_model"] == "B200"
    assert frame.filter(frame["offering"] == "1x H100 SXM5 80GB on-demand").height == 1
    assert dict(skipped) == {"offer names no 'Nx' instance (CPU, storage)": 3,
                             "serverless spot (no pricing kind for it)": 1,
                             "non-USD price": 1, "offer kind not known": 1}


def test_a_table_cut_from_its_table_element_reads_the_same() -> None:
    body = datacrunch.SOURCE.example.read_text()
    cut = re.sub(r"<table[^>]*>|</table>|<thead>|</thead>|<tbody>|</tbody>", "", body)
    cut = cut.replace("<tr> <th", "<th", 1)
    frame, _, _ = read(datacrunch, cut)
    whole, _, _ = example(datacrunch)
    assert frame.select("offering", "pricing", "price_usd_per_hour").sort(
        "offering", "pricing").equals(whole.select("offering", "pricing", "price_usd_per_hour")
                                      .sort("offering", "pricing"))


def test_eur_prices_are_never_stored_as_usd() -> None:
    body = datacrunch.SOURCE.example.read_text().replace("$", "€")
    with pytest.raises(ParseError):  # nothing left in USD: no rows, a loud failure
        datacrunch.SOURCE.parse(capture(datacrunch, body))
    frame, _, skipped = read(datacrunch, datacrunch.SOURCE.example.read_text().replace(
        "$3.29/h", "€3.29/h"))
    assert skipped["non-USD price"] == 1
    assert "1H200.141S.44V" not in frame.filter(frame["pricing"] == "on_demand")["offering"]


def test_a_price_with_no_unit_or_count_is_not_guessed() -> None:
    body = ("<table><tr><th>Instance name</th><th>On demand price</th></tr>"
            "<tr><td>H100 SXM5 80GB</td><td>$2.19/h</td></tr></table>")
    with pytest.raises(ParseError):
        datacrunch.SOURCE.parse(capture(datacrunch, body))
    skipped = datacrunch.SOURCE.parse_report(capture(datacrunch, body.replace(
        "</table>", "<tr><td>1x H100 SXM5 80GB</td><td>$2.19/h</td></tr></table>"))).skips
    assert skipped["price unit not stated (per GPU or per instance)"] == 1


def test_fetch_gets_the_pricing_page_at_the_overridable_base() -> None:
    assert fetched_url(datacrunch) == "http://127.0.0.1:9/pricing"
    assert datacrunch.SOURCE.archive_urls[0] == "https://datacrunch.io/products"


def test_a_plain_price_column_is_the_on_demand_price() -> None:
    """A price header naming no kind ("Price per hour") is the page's on-demand price; a
    "Starting from" or per-GiB column never is."""
    body = ("<table><tr><th>Instance name</th><th>GPU model</th><th>GPU</th>"
            "<th>Price per hour</th><th>Spot price</th><th>Storage price per GB</th></tr>"
            "<tr><td>4H100.80S.120V</td><td>H100 SXM5 80GB</td><td>4</td><td>$8.76/h</td>"
            "<td>$3.56/h</td><td>$0.05/h</td></tr></table>")
    frame, _, _ = read(datacrunch, body)
    assert {(r["pricing"], r["price_usd_per_hour"]) for r in frame.iter_rows(named=True)} == {
        ("on_demand", 8.76), ("spot", 3.56)}
    assert price(frame, "4H100.80S.120V")["price_usd_per_gpu_hour"] == pytest.approx(2.19)
