"""DataCrunch (renamed Verda in 2025) GPU instance prices from its public pricing page (no key):
https://verda.com/pricing (before the rename https://datacrunch.io/products).

Layouts known (../shared/captures/REAL_PAGES.md):
- 2025-08 (datacrunch.io/products, Wayback): one HTML `<table>` (styled-components class
  names, so read by header text only): Instance name / GPU model / GPU (the count) / CPU / RAM
  / VRAM (the instance's total) / P2P / On demand price / Dynamic price / Spot price, cells like
  "$3.64/h". Prices are **per instance** ("1B200.30V" $3.64/h, "8B200.240V" $29.10/h): the
  count column gives gpu_count, per-GPU = price / count. A page excerpt cut inside the table
  (no `<table>` element left) is read the same way.
- 2026-08 (verda.com/pricing, live): the page's JSON-LD `@graph` holds an OfferCatalog and ~160
  top-level `Offer`s named "<N>x <GPU> <memory> <kind>" ("1x B300 SXM6 268GB on-demand",
  "16x B200 SXM6 180GB instant cluster", "2x H100 SXM5 80GB serverless continuous"), each with
  a price in USD per hour (priceSpecification unitText "hour") for the whole N-GPU unit, and a
  description naming the product ("Hourly spot instance price"). Read first (strategy
  "json-ld"): the count, kind and memory come from the name.
Decisions:
- The "Dynamic price" column is stored as pricing `dynamic`: the footnote says
  dynamically-priced instances are re-priced daily even after deployment, unlike on-demand
  prices, which are fixed once deployed: never filed as on_demand.
- Offer kinds: "on-demand" -> on_demand; "spot" -> spot; "instant cluster" (a whole cluster
  of N GPUs, 8 to 144, billed by the hour) -> on_demand under its own offering name;
  "serverless continuous" -> serverless; "serverless spot" (interruptible serverless
  containers) is skipped, counted: the pricing kinds have no word for it, and filing it as
  `serverless` would undercut the continuous price it is not. A kind phrase not in this list
  is skipped and counted, never guessed; so are offers with no GPU in the name (CPU
  instances: " on-demand"), storage (priced per GiB-month) and any non-USD or non-hourly
  price. An offer repeated verbatim (two 1x H100 hardware variants, same name and price) is
  stored once. "CC" (confidential computing: "B300 CC SXM6 268GB") is its own offering of
  the same GPU.
- Spot prices are stored as `spot`; "Contact sales" or "-" cells are skipped, counted; a
  price in EUR (the company is in Finland; the page has a EUR toggle) is never stored as USD.
Not on the page: regions (Verda runs in Finland and Iceland; the prices are not split by
location), availability, billing increment. Verda's public API
(`GET https://api.verda.com/v1/instance-types`, prices and spot prices) needs OAuth2 client
credentials; the page stays the keyless default.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from contract import HttpSettings, Parsed, RawCapture, Skips
from contract.prices import clean_text
from scrapers._neocloud import (
    Layout,
    is_gpu_name,
    json_ld_reader,
    loose_table,
    page_rows,
    read_price_table,
)
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request
from scrapers.pagekit import StrategyParser, json_ld_objects, read_tables

if TYPE_CHECKING:
    import httpx
    from bs4 import BeautifulSoup

__all__ = ["NAME", "SOURCE", "URL", "fetch", "parse"]

NAME = "datacrunch"
BASE = "https://verda.com"
PATH = "/pricing"
URL = BASE + PATH
HISTORY_URLS = ("https://datacrunch.io/products", URL)
LAYOUT = Layout(provider=NAME, dynamic=True, plain_price="on_demand")

# "<N>x <GPU and memory> <kind>": the kind phrases of the 2026 offer catalog, longest first.
_KINDS: tuple[tuple[str, str | None], ...] = (
    ("serverless continuous", "serverless"),
    ("serverless spot", None),  # no pricing kind for interruptible serverless: skipped
    ("instant cluster", "on_demand"),
    ("on-demand", "on_demand"),
    ("on demand", "on_demand"),
    ("dynamic", "dynamic"),
    ("spot", "spot"),
)
_COUNTED = re.compile(r"^(?P<count>\d{1,3})\s*x\s+(?P<rest>.+)$", re.I)
_KIND = re.compile(r"^(?P<gpu>.+?)\s+(?P<kind>" + "|".join(re.escape(k) for k, _ in _KINDS)
                   + r")$", re.I)
_MEMORY = re.compile(r"\b(\d{1,3})\s*GB\b", re.I)


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/html"})


def _types(item: dict[str, Any]) -> set[str]:
    kind = item.get("@type")
    return {str(k) for k in kind} if isinstance(kind, list) else {str(kind)}


def _offers(soup: BeautifulSoup) -> list[dict[str, Any]]:
    """Every JSON-LD Offer: top-level graph nodes and those listed inside a catalog."""
    found: list[dict[str, Any]] = []
    stack: list[Any] = list(json_ld_objects(soup))
    while stack:
        item = stack.pop(0)
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            if "Offer" in _types(item):
                found.append(item)
            else:
                stack.extend(v for k, v in item.items() if k in ("itemListElement", "item",
                                                                 "offers", "hasOfferCatalog"))
    return found


def _offer_row(offer: dict[str, Any], skips: Skips) -> dict[str, Any] | None:
    name = clean_text(str(offer.get("name") or ""))
    counted = _COUNTED.match(name)
    if counted is None:  # " on-demand" (an unnamed CPU instance), "NVMe storage"
        skips.skip("offer names no 'Nx' instance (CPU, storage)")
        return None
    match = _KIND.match(counted.group("rest"))
    if match is None:
        skips.skip("offer kind not known")
        return None
    gpu = match.group("gpu")
    if not is_gpu_name(gpu):
        skips.skip("not a GPU offering")
        return None
    kind = next(p for k, p in _KINDS if k == match.group("kind").lower())
    if kind is None:
        skips.skip("serverless spot (no pricing kind for it)")
        return None
    spec = offer.get("priceSpecification")
    spec = spec[0] if isinstance(spec, list) and spec else spec
    spec = spec if isinstance(spec, dict) else {}
    currency = {str(c) for c in (offer.get("priceCurrency"), spec.get("priceCurrency")) if c}
    if currency != {"USD"}:
        skips.skip("non-USD price" if currency else "no currency")
        return None
    amounts = {a for a in (_amount(offer.get("price")), _amount(spec.get("price")))
               if a is not None}
    unit = f"{spec.get('unitText') or ''} {spec.get('unitCode') or ''}"
    if len(amounts) != 1 or not re.search(r"\bhour\b|\bHUR\b|\bhr\b", unit, re.I):
        skips.skip("no single hourly price")
        return None
    amount = amounts.pop()
    if amount <= 0:
        skips.skip("no price (zero)")
        return None
    memory = _MEMORY.search(gpu)
    return {"provider": NAME, "offering": name, "gpu_name": gpu,
            "gpu_count": float(counted.group("count")),
            "gpu_memory_gb": float(memory.group(1)) if memory else None,
            "region": LAYOUT.region, "pricing": kind, "price_usd_per_hour": amount}


def _amount(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and re.fullmatch(r"\d+(?:\.\d+)?", value.strip()):
        return float(value)
    return None


def _offer_catalog(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    offers = _offers(soup)
    if not offers:
        return None
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for offer in offers:
        row = _offer_row(offer, skips)
        if row:
            rows.append(row)
    return page_rows(rows, skips)


def _tables(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    tables = read_tables(soup)
    loose = loose_table(soup)
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for table in [*tables, *([loose] if loose is not None else [])]:
        rows += read_price_table(table, LAYOUT, skips, section=table.caption,
                                 fetched_at=raw.fetched_at)
    return page_rows(rows, skips)


_PRODUCTS = json_ld_reader(LAYOUT)


def _json_ld(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    """The offer catalog (2026), else schema.org Products with offers."""
    catalog = _offer_catalog(raw, soup)
    if catalog is not None and catalog.frame.height:
        return catalog
    products = _PRODUCTS(raw, soup)
    return products if products is not None else catalog


parse = StrategyParser(NAME, (
    ("json-ld", _json_ld),
    ("table", _tables),
))

SOURCE = SourceDef(
    name=NAME,
    provider=NAME,
    kind="page",
    url=URL,
    example=EXAMPLES_DIR / NAME / "products_2025-08-08.html",
    example_as_of="2025-08-08",
    fetch_fn=fetch,
    parse_fn=parse,
    history_urls=HISTORY_URLS,
)
