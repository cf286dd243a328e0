"""RunPod's public pricing page (no key): https://www.runpod.io/pricing, GPU pod prices.

Layouts it reads, tried in this order (`gpuprices parse` names the one that read the page):

1. `json-ld`, 2026: one schema.org `Product` per GPU whose `Offer`s are named "Secure Cloud" and
   "Community Cloud" (price, priceCurrency, optionally a UnitPriceSpecification with the unit
   and an availability). The cloud is read from the offer's own words (name, description,
   category); an offer naming neither cloud is not a row. No unit stated -> per hour, the unit
   of every pod price on this page.
2. `next-data`, runpod.io/gpu-instance/pricing 2023 (Next.js): `<script id="__NEXT_DATA__">`
   holds the GraphQL `GpuType` records themselves, so they mean what the `runpod` GraphQL
   source reads: securePrice -> on_demand, communityPrice -> community, secureSpotPrice ->
   spot, communitySpotPrice -> community_spot, and the offering is the GPU type id ("NVIDIA
   H100 80GB HBM3"), the same as the API source's, so the two line up in cross-checks. A price
   behind a false secureCloud/communityCloud flag is the API's placeholder, not a row; without
   flags a price of exactly 0.50 (the placeholder value) is left out too.
   one/three/sixMonthPrice are savings-plan prices and not read (as by the API source).
3. `data-attributes`, 2025 (Webflow): each GPU an `<a class="gpu-pricing-row">`, the name in
   `.gpu-pricing-row__model-wrapper`, spec tags `.gpu-pricing-row__tag` ("80GB VRAM",
   "20 vCPUs", "125GB RAM"), and one price element carrying BOTH prices as attributes
   `data-secure-cloud-price` / `data-community-cloud-price` (its text shows whichever toggle
   is active). Hidden rows are not read.

Prices are USD per GPU-hour for a 1-GPU pod, billed per second. Zero, empty or placeholder
prices are never rows; what was seen and not stored is counted by reason
(`SOURCE.parse_report(raw).skips`: placeholders, false cloud flags, offers naming no cloud).
A page none of these read -> ParseError naming the strategies tried.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from contract import GLOBAL_REGION, HttpSettings, Parsed, ParseError, RawCapture, Skips, rows_frame
from contract.prices import clean_text, parse_price
from scrapers._neocloud import is_gpu_name
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request
from scrapers.pagekit import (
    StrategyParser,
    badges_say_unavailable,
    data_attribute_elements,
    find_dicts,
    foreign_currency,
    json_ld_products,
    name_badges,
    next_data,
    offers_of,
)
from scrapers.runpod_graphql import FLAG_OFF_SKIP, PLACEHOLDER_PRICE, PLACEHOLDER_SKIP

if TYPE_CHECKING:  # bs4 is imported where a page is read (start-up: BENCHMARKS §18)
    import httpx
    from bs4 import BeautifulSoup, Tag

__all__ = ["NAME", "SOURCE", "URL", "fetch", "parse"]

NAME = "runpod-page"
BASE = "https://www.runpod.io"
PATH = "/pricing"
URL = BASE + PATH
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")
# GpuType price field -> (pricing, the cloud flag that must not be false)
_GPU_TYPE_PRICES = (
    ("securePrice", "on_demand", "secureCloud"),
    ("secureSpotPrice", "spot", "secureCloud"),
    ("communityPrice", "community", "communityCloud"),
    ("communitySpotPrice", "community_spot", "communityCloud"),
)
# schema.org unitCode (UN/CEFACT) -> period words price_unit knows
_UNIT_CODES = {"HUR": "/ hour", "SEC": "/ second", "MIN": "/ minute", "MON": "/ month",
               "DAY": "/ day", "ANN": "/ year"}


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/html"})


def _number(text: Any) -> float | None:
    match = _NUMBER.search(str(text if text is not None else "").replace(",", ""))
    return float(match.group(1)) if match else None


def _row(offering: str, gpu_name: str, pricing: str, price: float, **extra: Any) -> dict[str, Any]:
    return {"provider": "runpod", "offering": offering, "gpu_name": gpu_name, "gpu_count": 1.0,
            "region": GLOBAL_REGION, "pricing": pricing, "price_usd_per_hour": price,
            "billing_increment_s": 1, **extra}


def _memory_in(text: str) -> float | None:
    match = re.search(r"(\d+(?:\.\d+)?)\s*GB\b(?:\s*(?:of\s*)?(?:VRAM|GPU memory|HBM|GDDR))?",
                      text, re.IGNORECASE)
    return float(match.group(1)) if match and re.search(r"VRAM|memory|HBM|GDDR", text,
                                                        re.IGNORECASE) else None


# --- 2026: JSON-LD Product / Offer ----------------------------------------------------------

def _cloud_of(offer: dict[str, Any]) -> str | None:
    words = " ".join(str(offer.get(k) or "") for k in ("name", "description", "category"))
    secure, community = re.search(r"secure", words, re.I), re.search(r"community", words, re.I)
    if bool(secure) == bool(community):
        return None  # neither cloud named, or both: not one cloud's price
    spot = re.search(r"\bspot\b|interruptible", words, re.I)
    if secure:
        return "spot" if spot else "on_demand"
    return "community_spot" if spot else "community"


def _offer_hourly(offer: dict[str, Any]) -> float | None:
    spec = offer.get("priceSpecification")
    specs = spec if isinstance(spec, list) else [spec] if isinstance(spec, dict) else []
    unit_words = " ".join(
        _UNIT_CODES.get(str(s.get("unitCode") or "").upper(), "") + " "
        + str(s.get("unitText") or "") for s in specs if isinstance(s, dict))
    amount = offer.get("price")
    if amount is None:
        amount = next((s.get("price") for s in specs if isinstance(s, dict)
                       and s.get("price") is not None), None)
    currency = str(offer.get("priceCurrency") or next(
        (s.get("priceCurrency") for s in specs if isinstance(s, dict)), "") or "USD")
    price = parse_price(f"{amount} {currency} {unit_words}", default_period="hour")
    if price is None or price.amount <= 0:
        return None
    if price.currency != "USD":
        raise ParseError(f"runpod-page: JSON-LD offer priced in {price.currency}, not USD")
    return price.hourly()


def _available(offer: dict[str, Any]) -> bool | None:
    availability = str(offer.get("availability") or "")
    if not availability:
        return None
    return not re.search(r"OutOfStock|SoldOut|Discontinued", availability)


def _json_ld(raw: RawCapture, soup: BeautifulSoup) -> Parsed:
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for product in json_ld_products(soup):
        # "B300 GPU on Runpod" (2026) names the GPU B300: marketing words are not the GPU
        name, badges = name_badges(str(product.get("name") or ""))
        if not name:
            continue
        described = " ".join(str(product.get(k) or "") for k in ("description", "name"))
        properties = product.get("additionalProperty")
        if isinstance(properties, list):
            described += " " + " ".join(f"{p.get('name')} {p.get('value')}"
                                        for p in properties if isinstance(p, dict))
        for offer in offers_of(product):
            pricing = _cloud_of(offer)
            hourly = _offer_hourly(offer) if pricing else None
            if pricing is None or hourly is None:
                skips.skip("offer naming neither cloud (or both)" if pricing is None
                           else "no price (zero or empty)")
                continue
            available = _available(offer)
            rows.append(_row(name, name, pricing, round(hourly, 6),
                             gpu_memory_gb=_memory_in(described),
                             available=False if badges_say_unavailable(badges) is False
                             else available))
    return Parsed(rows_frame(rows), skips)


# --- 2023: __NEXT_DATA__ GpuType records ----------------------------------------------------

def _next_data(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    data = next_data(soup)
    if data is None:
        return None
    records = [r for r in find_dicts(data, ("id", "securePrice"))
               if isinstance(r.get("id"), str) and r["id"] not in ("", "unknown")]
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for record in records:
        for field, pricing, flag in _GPU_TYPE_PRICES:
            price = _number(record.get(field))
            if not price or price <= 0:
                continue  # the field of a cloud that does not list the GPU at all
            if record.get(flag) is False:
                skips.skip(FLAG_OFF_SKIP)
                continue
            if flag not in record and price == PLACEHOLDER_PRICE:
                skips.skip(PLACEHOLDER_SKIP)  # without flags it cannot be told from a price
                continue
            rows.append(_row(record["id"], str(record.get("displayName") or record["id"]),
                             pricing, price, gpu_memory_gb=_number(record.get("memoryInGb"))))
    return Parsed(rows_frame(rows), skips)


# --- 2025: Webflow rows with data-*-cloud-price attributes ----------------------------------

def _specs(row: Tag) -> dict[str, float | None]:
    """VRAM, vCPUs and RAM from the row's tags, recognised by their unit words."""
    specs: dict[str, float | None] = {"gpu_memory_gb": None, "vcpus": None, "ram_gb": None}
    for tag in row.select("[class*=gpu-pricing-row__tag]"):
        text = tag.get_text(" ", strip=True)
        upper = text.upper()
        key = ("gpu_memory_gb" if "VRAM" in upper else "vcpus" if "CPU" in upper else
               "ram_gb" if "RAM" in upper else None)
        if key:
            specs[key] = _number(text)
    return specs


def _attribute_pricing(attribute: str) -> str | None:
    cloud = "secure" if "secure" in attribute else "community" if "community" in attribute else None
    if cloud is None:
        return None
    spot = "spot" in attribute
    return {("secure", False): "on_demand", ("secure", True): "spot",
            ("community", False): "community", ("community", True): "community_spot"}[
        (cloud, spot)]


def _name_before(element: Tag) -> tuple[str, Tag | None]:
    """The GPU name written before a price element whose row was cut away (the first row of
    a page excerpt): the nearest preceding text that names a GPU, if no other price element
    lies between them."""
    for previous in element.find_all_previous(True):
        if any(a.endswith("-cloud-price") for a in previous.attrs):
            return "", None
        text = clean_text(previous.get_text(" ", strip=True))
        if previous.find(True) is None and len(text) <= 40 and is_gpu_name(text):
            return text, previous
    return "", None


def _data_attributes(raw: RawCapture, soup: BeautifulSoup) -> Parsed:
    from bs4 import Tag

    rows: list[dict[str, Any]] = []
    skips = Skips()
    seen: set[tuple[str, str]] = set()
    for element in data_attribute_elements(soup, "secure-", "community-"):
        row = element.find_parent(class_=re.compile(r"^gpu-pricing-row$"))
        if row is None and "gpu-pricing-row" in (element.get("class") or []):
            row = element
        name_el = row.select_one("[class*=gpu-pricing-row__model]") if row else None
        if row is None or name_el is None:
            # a row whose opening was cut away: its name is the GPU name just before it
            name, holder = _name_before(element)
            if not name or holder is None:
                continue
            name_el, row = holder, holder
        name = clean_text(name_el.get_text(" ", strip=True))
        # the amounts are bare numbers in attributes; the sign shown beside them is the page's
        shown = element.parent.get_text(" ", strip=True) if isinstance(element.parent, Tag) \
            else ""
        if foreign_currency(shown):
            skips.skip("non-USD price")
            continue
        for attribute, value in element.attrs.items():
            pricing = _attribute_pricing(attribute) if attribute.endswith("-price") else None
            price = parse_price(str(value), default_currency="USD", default_period="hour")
            if not name or pricing is None:
                continue
            if price is not None and (price.currency != "USD" or foreign_currency(str(value))):
                skips.skip("non-USD price")
                continue
            if price is None or price.amount <= 0:
                skips.skip("no price in that cloud (empty or zero)")
                continue
            if (name, pricing) in seen:
                continue
            seen.add((name, pricing))
            rows.append(_row(name, name, pricing, round(price.hourly(), 6), **_specs(row)))
    return Parsed(rows_frame(rows), skips)


def _not_a_scraped_table(raw: RawCapture) -> None:
    if raw.body.lstrip().startswith(b"provider,product,"):
        raise ParseError("runpod-page: this is a third-party scraper's CSV table, not the "
                         "page; it is reference data for the conformance tests")


parse = StrategyParser(
    source=NAME,
    strategies=(("json-ld", _json_ld), ("next-data", _next_data),
                ("data-attributes", _data_attributes)),
    accepts=_not_a_scraped_table,
)

SOURCE = SourceDef(
    name=NAME,
    provider="runpod",
    kind="page",
    url=URL,
    example=EXAMPLES_DIR / "runpod-page" / "pricing_2026-02-11.html",
    example_as_of="2026-02-11",
    history_urls=("https://www.runpod.io/gpu-instance/pricing", URL),
    fetch_fn=fetch,
    parse_fn=parse,
)
