"""Scaleway GPU instances, priced in euros, per zone, from Scaleway's public Instance API.

`GET https://api.scaleway.com/instance/v1/zones/{zone}/products/servers?per_page=100&page=N`
answers `{"servers": {"<commercial type>": {...}}}` (no key needed): per type `ncpus`, `ram`
(bytes), `gpu` (count), `gpu_info` {gpu_manufacturer, gpu_name, gpu_memory (bytes)},
`mig_profile`, `hourly_price` (EUR per hour for the whole instance, before VAT),
`monthly_price` (hourly x 730, not a separate offer), `end_of_service`. The list is paged
(~140 types per zone: page 1 holds 100, page 2 the rest, page 3 is empty). The sibling
`.../products/servers/availability` answers `{"servers": {"<type>": {"availability":
"available" | "scarce" | "shortage"}}}` in the same pages. Formats as in captures other
projects saved of these endpoints (2026-08 and 2026-10).

fetch reads both lists for every zone in ZONES and bundles them as one document:
`{"zones": {"<zone>": {"products": [page, ...], "availability": [page, ...]}}}`.

parse: one row per GPU type per zone, region = the zone ("fr-par-2"), on demand, the price in
EUR (`currency`, `price_native_per_hour`; the USD price is filled downstream from the ECB rate
of the day). `available`: true when the zone says available or scarce, false on shortage,
null when the zone does not say; "scarce" is stock_level low (contract.STOCK_LEVELS).
Skipped and counted: MIG slices (a fraction of a GPU), types at end of service, types with
no hourly price. Types without a GPU are not read.
A reshaped answer (servers not a mapping, a price that is not a number, a type on two pages)
is a ParseError.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from contract import (
    FetchError,
    HttpSettings,
    Parsed,
    ParseError,
    RawCapture,
    Skips,
    now_utc,
    rows_frame,
)
from scrapers._json import as_float, load_json
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request

if TYPE_CHECKING:
    import httpx

__all__ = ["SOURCE", "ZONES", "fetch", "parse"]

NAME = "scaleway"
BASE = "https://api.scaleway.com"
PRODUCTS = "/instance/v1/zones/{zone}/products/servers"
AVAILABILITY = PRODUCTS + "/availability"
ZONES = ("fr-par-1", "fr-par-2", "fr-par-3", "nl-ams-1", "nl-ams-2", "nl-ams-3",
         "pl-waw-1", "pl-waw-2", "pl-waw-3")
PER_PAGE = 100
MAX_PAGES = 10
CURRENCY = "EUR"
GIB = 1024 ** 3
_IN_STOCK = {"available": True, "scarce": True, "shortage": False}
_LEVEL = {"scarce": "low"}  # Scaleway's word -> contract.STOCK_LEVELS ("available" says none)


def _pages(client: httpx.Client, settings: HttpSettings, url: str) -> list[Any]:
    """Every page of one paged list: until a page holds fewer than PER_PAGE types."""
    pages: list[Any] = []
    for page in range(1, MAX_PAGES + 1):
        raw = request(client, settings, NAME, "GET", url,
                      params={"per_page": PER_PAGE, "page": page},
                      headers={"Accept": "application/json"})
        answer = load_json(raw.body, what=NAME)
        pages.append(answer)
        servers = answer.get("servers") if isinstance(answer, dict) else None
        if not isinstance(servers, dict):
            raise ParseError(f"{NAME}: {url} page {page}: expected {{'servers': {{...}}}}")
        if len(servers) < PER_PAGE:
            return pages
    raise FetchError(NAME, url, f"more than {MAX_PAGES} pages of {PER_PAGE}")


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    base = settings.base_url(NAME, BASE)
    zones = {zone: {"products": _pages(client, settings, base + PRODUCTS.format(zone=zone)),
                    "availability": _pages(client, settings,
                                           base + AVAILABILITY.format(zone=zone))}
             for zone in ZONES}
    return RawCapture(source=NAME, url=_display_url(base), fetched_at=now_utc(),
                      body=orjson.dumps({"zones": zones}), content_type="application/json")


def _display_url(base: str) -> str:
    return f"{base}{PRODUCTS.format(zone=ZONES[0])}#zones={','.join(ZONES)}"


def _servers(pages: Any, zone: str, what: str) -> dict[str, Any]:
    """One zone's pages merged into {type: entry}; ParseError on a reshaped page."""
    if not isinstance(pages, list):
        raise ParseError(f"{NAME}: {zone} {what}: expected a list of pages")
    merged: dict[str, Any] = {}
    for number, page in enumerate(pages, start=1):
        servers = page.get("servers") if isinstance(page, dict) else None
        if not isinstance(servers, dict):
            raise ParseError(f"{NAME}: {zone} {what} page {number}: 'servers' is not a mapping")
        for name, entry in servers.items():
            if name in merged:
                raise ParseError(f"{NAME}: {zone} {what}: {name} on two pages")
            merged[name] = entry
    return merged


def _stock(entry: Any) -> tuple[bool | None, str | None]:
    """(available, stock_level) as the zone's availability list says."""
    state = entry.get("availability") if isinstance(entry, dict) else None
    if not isinstance(state, str):
        return None, None
    return _IN_STOCK.get(state), _LEVEL.get(state)


def _row(zone: str, name: str, entry: dict[str, Any], stock: tuple[bool | None, str | None],
         skips: Skips) -> dict[str, Any] | None:
    count = entry.get("gpu")
    if count is None or count == 0:
        return None  # a CPU type
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ParseError(f"{NAME}: {zone} {name}: gpu count {count!r} is not a whole number")
    if entry.get("mig_profile"):
        skips.skip("MIG slice (a fraction of a GPU)")
        return None
    if entry.get("end_of_service") is True:
        skips.skip("end of service")
        return None
    price = entry.get("hourly_price")
    if price is not None and as_float(price) is None:
        raise ParseError(f"{NAME}: {zone} {name}: hourly_price {price!r} is not a number")
    if price is None or as_float(price) is None or float(price) <= 0:
        skips.skip("no hourly price")
        return None
    info = entry.get("gpu_info") if isinstance(entry.get("gpu_info"), dict) else {}
    gpu_name = str(info.get("gpu_name") or "").strip()
    if not gpu_name:
        skips.skip("no GPU name")
        return None
    memory = as_float(info.get("gpu_memory"))
    ram = as_float(entry.get("ram"))
    return {
        "provider": "scaleway", "offering": name, "gpu_name": gpu_name,
        "gpu_count": float(count),
        "gpu_memory_gb": round(memory / GIB, 1) if memory else None,
        "vcpus": as_float(entry.get("ncpus")),
        "ram_gb": round(ram / GIB, 1) if ram else None,
        "region": zone, "pricing": "on_demand", "available": stock[0], "stock_level": stock[1],
        "currency": CURRENCY, "price_native_per_hour": float(price),
    }


def parse(raw: RawCapture) -> Parsed:
    """GPU rows of every zone in the bundle; ParseError when none is left."""
    document = load_json(raw.body, what=NAME)
    zones = document.get("zones") if isinstance(document, dict) else None
    if not isinstance(zones, dict) or not zones:
        raise ParseError(f"{NAME}: expected {{'zones': {{zone: {{products, availability}}}}}}")
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for zone, lists in sorted(zones.items()):
        if not isinstance(lists, dict):
            raise ParseError(f"{NAME}: {zone}: expected {{products, availability}}")
        products = _servers(lists.get("products"), zone, "products")
        stock = _servers(lists.get("availability") or [], zone, "availability")
        for name, entry in sorted(products.items()):
            if not isinstance(entry, dict):
                raise ParseError(f"{NAME}: {zone} {name}: expected an object")
            row = _row(zone, name, entry, _stock(stock.get(name)), skips)
            if row:
                rows.append(row)
    if not rows:
        raise ParseError(f"{NAME}: no GPU type with a price ({skips.describe() or 'none listed'})")
    return Parsed(rows_frame(rows), skips)


SOURCE = SourceDef(
    name=NAME,
    provider="scaleway",
    kind="api",
    url=_display_url(BASE),
    example=EXAMPLES_DIR / NAME / "products_servers_2026-10-01.json",
    example_as_of="2026-10-01",
    fetch_fn=fetch,
    parse_fn=parse,
)
