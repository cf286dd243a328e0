"""Voltage Park bare-metal prices from its public price API (no key), Voltage Park's primary
source (its page, `voltagepark`, is the fallback: source_rank puts an API above a page).

`GET https://cloud-api.voltagepark.com/api/v1/bare-metal/locations?limit=15&offset=0` answers
(format of the 2026-08-22 copy in ../shared/captures/voltagepark):

    {"results": [{"id": "<location uuid>",
                  "gpu_price_ethernet": "1.99", "gpu_count_ethernet": 0,
                  "gpu_price_infiniband": "2.49", "gpu_count_infiniband": 0,
                  "specs_per_node": {"gpu_model": "h100-sxm5-80gb", "gpu_count": 8,
                                     "cpu_model": "...", "cpu_count": 104, "ram_gb": 1024,
                                     "storage_gb": 18000}, ...}],
     "total_result_count": 1, "has_previous": false, "has_next": false}

Paging: `limit` (at most 15) and `offset`; fetch follows `has_next` (at most MAX_PAGES pages)
and stores the pages as one JSON list, which parse reads too. A page that says more follow,
captured alone, or a list whose rows do not add up to `total_result_count`, is refused
(ParseError): a partial list must not pass for the whole (the volume gate would see a drop).

Facts and decisions:
- `gpu_price_<fabric>` is a price per GPU-hour as a decimal string, USD (the API names no
  currency; Voltage Park's own pages print the Ethernet figure as "$1.99/GPU/hour"). Bare
  metal is rented in whole nodes (the deploy call takes GPU counts in multiples of 8), so a
  row is one node: gpu_count = specs_per_node.gpu_count, price_usd_per_hour = per-GPU x count.
  One row per location x fabric (Ethernet, InfiniBand), both on demand (long-term reserve is
  contact-only and never in this list), the fabric in the offering.
- `gpu_count_<fabric>` is the number of GPUs free to rent now: gpus_available, and
  available = (gpus_available > 0). It never gates the price (it sat at 0 while prices stood).
- A price field this parser does not know (`gpu_price_<other>`: a new tier) is skipped and
  counted, never guessed; so are empty, zero or unreadable prices and rows without a node
  GPU count.
- The location is an opaque UUID (a name, city or region is used when the API gives one):
  region "global", the location's short id in the offering so two locations never merge.
Not in the API: billing increment, regions by name.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from contract import (
    GLOBAL_REGION,
    FetchError,
    HttpSettings,
    Parsed,
    ParseError,
    RawCapture,
    Skips,
    now_utc,
    rows_frame,
)
from scrapers._json import load_json
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request

if TYPE_CHECKING:
    import httpx

__all__ = ["NAME", "SOURCE", "URL", "fetch", "parse"]

NAME = "voltagepark-api"
BASE = "https://cloud-api.voltagepark.com"
PATH = "/api/v1/bare-metal/locations"
URL = BASE + PATH
PAGE_SIZE = 15  # the API's maximum `limit`
MAX_PAGES = 50
_FABRICS = {"ethernet": "Ethernet", "infiniband": "InfiniBand"}
_PRICE_FIELD = re.compile(r"^gpu_price_(\w+)$")
_MEMORY = re.compile(r"(\d{2,3})\s*gb\b", re.I)


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    pages: list[bytes] = []
    offset = 0
    while True:
        raw = request(client, settings, NAME, "GET", url,
                      params={"limit": PAGE_SIZE, "offset": offset},
                      headers={"Accept": "application/json"})
        pages.append(raw.body)
        page = load_json(raw.body, what=NAME)
        results = page.get("results") if isinstance(page, dict) else None
        if not isinstance(page, dict) or page.get("has_next") is not True:
            break
        if not isinstance(results, list) or not results or len(pages) >= MAX_PAGES:
            raise FetchError(NAME, url, "has_next with an empty page, or too many pages")
        offset += len(results)
    if len(pages) == 1:
        return raw
    return RawCapture(source=NAME, url=raw.url, fetched_at=now_utc(),
                      body=b"[" + b",".join(pages) + b"]", content_type="application/json")


def _pages(payload: Any) -> list[dict[str, Any]]:
    pages = payload if isinstance(payload, list) else [payload]
    if not pages or not all(isinstance(p, dict) and isinstance(p.get("results"), list)
                            for p in pages):
        raise ParseError(f"{NAME}: expected the locations list {{results: [...]}} "
                         "(or a list of its pages)")
    if pages[-1].get("has_next") is True:
        raise ParseError(f"{NAME}: the last page says more locations follow (has_next): "
                         "a partial list is not stored")
    total = pages[-1].get("total_result_count")
    rows = sum(len(p["results"]) for p in pages)
    if isinstance(total, int) and not isinstance(total, bool) and total != rows:
        raise ParseError(f"{NAME}: {rows} locations in the capture but total_result_count "
                         f"says {total}: a partial list is not stored")
    return pages


def _per_gpu(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    try:
        price = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return price if price.is_finite() and price > 0 else None


def _count(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        and value >= 0 else None


def _place(location: dict[str, Any]) -> str:
    """A name for the location: its name, city or region when given, else its short id."""
    for key in ("name", "city", "region"):
        if isinstance(location.get(key), str) and location[key].strip():
            return location[key].strip()
    return str(location.get("id") or "unknown location")[:8]


def _location_rows(location: dict[str, Any], skips: Skips) -> list[dict[str, Any]]:
    specs = location.get("specs_per_node")
    specs = specs if isinstance(specs, dict) else {}
    model = str(specs.get("gpu_model") or "").strip()
    node_gpus = _count(specs.get("gpu_count"))
    prices = {m.group(1): v for k, v in location.items() if (m := _PRICE_FIELD.match(k))}
    if not model or not node_gpus:
        skips.skip("location without a node GPU model or count", len(prices) or 1)
        return []
    memory = _MEMORY.search(model)
    rows = []
    for fabric, value in prices.items():
        if fabric not in _FABRICS:
            skips.skip(f"price field not known (gpu_price_{fabric})")
            continue
        per_gpu = _per_gpu(value)
        if per_gpu is None:
            skips.skip("no price (empty, zero or unreadable)")
            continue
        free = _count(location.get(f"gpu_count_{fabric}"))
        rows.append({
            "provider": "voltagepark",
            "offering": f"{model} x{node_gpus:g} bare metal, {_FABRICS[fabric]} "
                        f"@ {_place(location)}",
            "gpu_name": model,
            "gpu_count": node_gpus,
            "gpu_memory_gb": float(memory.group(1)) if memory else None,
            "vcpus": _count(specs.get("cpu_count")),
            "ram_gb": _count(specs.get("ram_gb")),
            "region": GLOBAL_REGION,
            "pricing": "on_demand",
            "price_usd_per_hour": float(per_gpu * Decimal(str(node_gpus))),
            "available": None if free is None else free > 0,
            "gpus_available": free,
        })
    return rows


def parse(raw: RawCapture) -> Parsed:
    """Rows and skip counts of the locations list; ParseError when no price is left."""
    payload = load_json(raw.body, what=NAME)
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for page in _pages(payload):
        for location in page["results"]:
            if isinstance(location, dict):
                rows += _location_rows(location, skips)
            else:
                skips.skip("location is not an object")
    if not rows:
        raise ParseError(f"{NAME}: no price in the locations list "
                         f"({skips.describe() or 'no locations'})")
    return Parsed(rows_frame(rows), skips)


SOURCE = SourceDef(
    name=NAME,
    provider="voltagepark",
    kind="api",
    url=URL,
    example=EXAMPLES_DIR / NAME / "bare-metal-locations_2026-08-22.json",
    example_as_of="2026-08-22",
    fetch_fn=fetch,
    parse_fn=parse,
)
