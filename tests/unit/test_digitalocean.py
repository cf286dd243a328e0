"""DigitalOcean GPU Droplet page (`digitalocean`): cards on own fixtures, each failure path."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from contract import HttpSettings, ParseError, RawCapture
from schemas.observation import to_observations, validate
from scrapers import digitalocean

FETCHED = datetime(2025, 7, 7, tzinfo=UTC)


def raw(body: str) -> RawCapture:
    return RawCapture(source="digitalocean", url=digitalocean.URL, fetched_at=FETCHED,
                      body=body.encode())


def card(name: str, prices: str, label: str, specs: dict[str, str] | None = None,
         style: str = "", note: str = "") -> str:
    items = "".join(f'<li><span class="T Miafh">{k}</span><span class="T jfx">{v}</span></li>'
                    for k, v in (specs or {}).items())
    return (f'<div class="CardPricingstyles__StyledCardPricingCard-sc-9-1 abc"{style}>'
            f'<h3 class="T b">{name}</h3>'
            f'<div class="CardPricingstyles__StyledPriceContainer-sc-9-3 gk">{prices}'
            f'<p class="T l">{label}</p></div><ul>{items}</ul><p>{note}</p></div>')


def price(amount: str, unit: str = "/GPU/hour", struck: str = "") -> str:
    wrapper = f' class="page__StyledStrikeThrough-sc-1 {struck}"' if struck is not None else ""
    return f'<span{wrapper}><span class="T i">{amount}</span><span class="T d">{unit}</span></span>'


def page(*cards: str) -> str:
    return "<html><body>" + "".join(cards) + "</body></html>"


def read(body: str) -> tuple[list[dict[str, object]], dict[str, int]]:
    parsed = digitalocean.PARSER(raw(body))
    return parsed.frame.to_dicts(), dict(parsed.skips)


def test_example_rows() -> None:
    frame = digitalocean.SOURCE.parse(digitalocean.SOURCE.example_capture(FETCHED))
    assert frame.height == 5
    assert set(frame["pricing"]) == {"on_demand", "reserved"}


def test_per_gpu_price_times_gpus_and_specs_per_gpu() -> None:
    rows, skipped = read(page(card("NVIDIA H200x8", price("$3.10"), "On-Demand Price",
                                   {"GPUs per Droplet": "8", "GPU Memory": "1,128 GB",
                                    "Droplet vCPUs": "192", "Droplet Memory": "1,920 GiB"})))
    assert not skipped
    (row,) = rows
    assert row["price_usd_per_hour"] == pytest.approx(24.8)
    assert (row["gpu_count"], row["gpu_memory_gb"], row["vcpus"], row["ram_gb"]) == (
        8, 141, 192, 1920)
    assert row["gpu_name"] == "NVIDIA H200" and row["offering"] == "NVIDIA H200x8"


def test_promotion_beats_the_struck_list_price() -> None:
    prices = price("$6.00", struck="dvynub") + price("$3.00", "/GPU/hour*", struck=None)
    rows, _ = read(page(card("NVIDIA H100", prices, "On-Demand Price")))
    assert [r["price_usd_per_hour"] for r in rows] == [3.0]


def test_a_del_element_is_struck_through_too() -> None:
    prices = "<del><span>$9.00</span><span>/GPU/hour</span></del>" + price("$4.00", struck=None)
    rows, _ = read(page(card("NVIDIA H100", prices, "On-Demand Price")))
    assert [r["price_usd_per_hour"] for r in rows] == [4.0]


def test_reserved_keeps_its_term_from_the_card_text() -> None:
    note = "if you reserve via a contractual commitment of 24 months"
    rows, _ = read(page(card("AMD Instinct™ MI325Xx8", price("$1.50", struck=None),
                             "Reserved Price", note=note)))
    (row,) = rows
    assert row["pricing"] == "reserved" and row["gpu_count"] == 8
    assert row["offering"] == "AMD Instinct MI325Xx8 (24-month commitment)"
    assert row["price_usd_per_hour"] == pytest.approx(12.0)


def test_contact_sales_hidden_and_non_usd_cards_are_skipped_and_counted() -> None:
    body = page(
        card("NVIDIA B300x8", '<a href="/sales">Contact sales</a>', "Reserved Price"),
        card("NVIDIA H100x8", price("$1.00"), "On-Demand Price", style=' style="display:none"'),
        card("NVIDIA L40S", price("€1.40"), "On-Demand Price"),
        card("NVIDIA L40S", price("$1.57"), "On-Demand Price"),
    )
    rows, skipped = read(body)
    assert [r["price_usd_per_hour"] for r in rows] == [1.57]
    assert skipped == {"contact sales": 1, "hidden card": 1, "non-USD price": 1}


def test_a_monthly_price_is_not_turned_into_an_hourly_one() -> None:
    rows, skipped = read(page(card("NVIDIA L40S", price("$1,100", "/mo"), "On-Demand Price"),
                              card("NVIDIA A16", price("$0.50", "/hour"), "On-Demand Price")))
    assert len(rows) == 1 and skipped == {"price per month, not per hour": 1}
    assert rows[0]["price_usd_per_hour"] == 0.5  # "/hour" without "/GPU": the Droplet's price


def test_a_page_of_only_contact_sales_fails_and_says_so() -> None:
    with pytest.raises(ParseError, match=r"every row skipped .*contact sales"):
        digitalocean.SOURCE.parse(raw(page(card("NVIDIA B300", "Contact sales",
                                                "Reserved Price"))))


def test_unknown_layout_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="layout not recognised"):
        digitalocean.SOURCE.parse(raw("<html><body><div class='price'>$2.99/GPU/hr</div>"
                                      "</body></html>"))


def test_table_layout_is_read_by_header() -> None:
    body = ("<table><tr><th>GPU Droplet</th><th>GPUs</th><th>On-demand price per GPU</th></tr>"
            "<tr><td>NVIDIA H100x8</td><td>8</td><td>$2.99/hr</td></tr></table>")
    report = digitalocean.SOURCE.parse_report(raw(body))
    frame, strategy = report.frame, report.strategy
    assert strategy == "table"
    assert frame["price_usd_per_hour"].to_list() == [pytest.approx(23.92)]


def test_fetch_gets_the_page_from_the_overridable_base() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, text="<html></html>")

    settings = HttpSettings(base_urls={"digitalocean": "http://127.0.0.1:9/do"})
    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        capture = digitalocean.fetch(client, settings)
    assert seen == ["http://127.0.0.1:9/do/pricing/gpu-droplets"]
    assert capture.source == "digitalocean"


# --- 2026: "GPU | Price" tables under On-Demand / Spot / Contract headings ------------------

DOCS_2026 = Path(__file__).resolve().parents[1] / "fixtures" / "pages" / "digitalocean" / \
    "docs_droplet_pricing_2026.html"


def test_2026_tables_count_in_name_prices_the_whole_droplet() -> None:
    parsed = digitalocean.PARSER(raw(DOCS_2026.read_text()))
    got = {(r["offering"], r["pricing"]): (r["gpu_name"], r["gpu_count"], r["price_usd_per_hour"])
           for r in parsed.frame.to_dicts()}
    # "NVIDIA H100 (8x)" $35.20 per hour: 8 GPUs, the whole Droplet (4.40 per GPU), not 8 x 35.20
    assert got[("NVIDIA H100 (8x)", "on_demand")] == ("NVIDIA H100", 8.0, 35.20)
    assert got[("NVIDIA H100", "on_demand")] == ("NVIDIA H100", 1.0, 4.40)
    assert got[("AMD MI300X (8x)", "on_demand")] == ("AMD MI300X", 8.0, 20.0)
    # the section heading names the kind; the cooling is not part of the GPU
    assert got[("NVIDIA B300, liquid-cooled (8x)", "spot")] == ("NVIDIA B300", 8.0, 88.0)
    assert got[("NVIDIA B300, air-cooled", "spot")] == ("NVIDIA B300", 1.0, 11.0)
    assert got[("AMD MI350X (8x)", "spot")][1:] == (8.0, 30.0)
    # DigitalOcean's short names for its Ada cards
    assert got[("NVIDIA RTX 6000", "on_demand")][0] == "NVIDIA RTX 6000 Ada Generation"
    assert len(got) == 10 and dict(parsed.skips) == {"contact sales": 1}


def test_2026_tables_per_gpu_price_and_catalog_models() -> None:
    capture = raw(DOCS_2026.read_text())
    obs = to_observations(digitalocean.PARSER(capture).frame, capture, "t")
    per_gpu = {(o, p): (m, round(g, 4)) for o, p, m, g in obs.select(
        "offering", "pricing", "gpu_model", "price_usd_per_gpu_hour").iter_rows()}
    assert per_gpu[("NVIDIA H100 (8x)", "on_demand")][1] == 4.40  # 35.20 / 8
    assert per_gpu[("NVIDIA RTX 4000", "on_demand")] == ("RTX 4000 Ada", 0.70)
    assert per_gpu[("AMD MI350X (8x)", "spot")] == ("MI350X", 3.75)
    assert validate(obs).quarantined.height == 0


def test_a_price_table_naming_no_kind_is_not_read_as_on_demand() -> None:
    page_text = ("<h2>GPU Droplet Pricing</h2><table><thead><tr><th>GPU</th><th>Price</th></tr>"
                 "</thead><tbody><tr><td>NVIDIA H100</td><td>$4.40 per hour</td></tr></tbody>"
                 "</table>")
    with pytest.raises(ParseError, match="neither on-demand, spot nor reserved"):
        digitalocean.PARSER(raw(page_text))
