"""Azure GPU VM prices from the public Retail Prices API (no key).

Facts (../shared/captures/SOURCES.md §4, MORE_SOURCES.md and the real items there):
- `GET https://prices.azure.com/api/retail/prices?$filter=...` (OData, single-quoted strings,
  case-sensitive values). Each page is `{BillingCurrency, CustomerEntityId, CustomerEntityType,
  Items: [...], NextPageLink, Count}`; `NextPageLink` is the full URL of the next page, null on
  the last one.
- `retailPrice` is USD per VM-hour (`unitOfMeasure` "1 Hour") for `type` "Consumption". The same
  SKU appears as Linux and Windows meters (Windows in `productName`), as "Spot" and "Low Priority"
  meters (suffix of `meterName`/`skuName`), as "DevTestConsumption" and as "Reservation".
- **Reservation items quote the whole term's total** (509408.0 for a 1-year ND96isr_H200_v5)
  while the unit still says "1 Hour": they are stored as `reserved` at total / hours in the term,
  with the term in the offering ("Standard_NC48ads_A100_v4 (1 Year reservation)").
- GPU model and count are not in the API: `azure_gpu_skus.csv` maps armSkuName to them
  (fractional counts for NVadsA10 v5 / NVv4 slices; gpu_memory_gb is the whole card's).
Kept: Linux Consumption (on_demand), Linux Spot (spot), Linux Reservation (reserved).
Skipped: Windows, Low Priority (retiring), DevTestConsumption, non-USD, non-VM services.
An N-series SKU missing from the table is still emitted, without GPU count, so that validation
quarantines it (visible, instead of silently dropped) until the table learns it.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import orjson
import polars as pl

from scrapers._json import as_float, load_json
from scrapers.base import (
    EXAMPLES_DIR,
    FetchError,
    HttpSettings,
    ParseError,
    RawCapture,
    SourceDef,
    now_utc,
    rows_frame,
)
from scrapers.http import request

ROOT = "https://prices.azure.com"
PATH = "/api/retail/prices"
URL = ROOT + PATH
# Every meter of the GPU VM series (NC, ND, NV): on-demand, spot, reservations; the parser
# drops Windows / Low Priority / DevTest. Kept broad on purpose so a new size still shows up.
GPU_FILTER = (
    "serviceName eq 'Virtual Machines' and ("
    "contains(armSkuName, 'Standard_NC') or contains(armSkuName, 'Standard_ND') or "
    "contains(armSkuName, 'Standard_NV'))"
)
MAX_PAGES = 500
SKU_TABLE_PATH = Path(__file__).with_name("azure_gpu_skus.csv")
GPU_SERIES = re.compile(r"^Standard_N[CDV]\d", re.IGNORECASE)
HOURS_PER_YEAR = 8760


@dataclass(frozen=True, slots=True)
class SkuGpus:
    gpu_name: str
    gpu_count: float
    gpu_memory_gb: float
    vcpus: float
    ram_gb: float


@cache
def sku_gpus(path: Path = SKU_TABLE_PATH) -> dict[str, SkuGpus]:
    """Lower-cased armSkuName -> GPUs and size (the API spells some names with odd case)."""
    with path.open(newline="", encoding="utf-8") as handle:
        return {
            row["arm_sku_name"].lower(): SkuGpus(
                gpu_name=row["gpu_name"], gpu_count=float(row["gpu_count"]),
                gpu_memory_gb=float(row["gpu_memory_gb"]), vcpus=float(row["vcpus"]),
                ram_gb=float(row["ram_gb"]),
            )
            for row in csv.DictReader(handle)
        }


def _next_url(link: str, settings: HttpSettings) -> str:
    """Follow NextPageLink, but through the configured base (a proxy or a local test server)."""
    base = settings.base_urls.get("azure")
    if not base:
        return link
    target, override = urlsplit(link), urlsplit(base)
    # Keep the base's own path prefix, as the first request does (base + PATH).
    path = override.path.rstrip("/") + target.path
    return urlunsplit((override.scheme, override.netloc, path, target.query, ""))


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    """All pages of the GPU filter, stored as a JSON list of the page bodies, byte for byte."""
    first = settings.base_url("azure", ROOT) + PATH
    pages: list[bytes] = []
    url: str | None = first
    params: dict[str, str] | None = {"$filter": GPU_FILTER}
    while url:
        if len(pages) >= MAX_PAGES:
            raise FetchError("azure", first, f"more than {MAX_PAGES} pages; stopped (runaway "
                             "paging or a filter that no longer narrows the meters)")
        raw = request(client, settings, "azure", "GET", url, params=params,
                      headers={"Accept": "application/json"})
        params = None  # NextPageLink already carries the filter and $skip
        page = load_json(raw.body, what="azure")
        if not isinstance(page, dict) or "Items" not in page:
            raise FetchError("azure", raw.url, "page without Items (not a Retail Prices page)")
        pages.append(raw.body)
        link = page.get("NextPageLink")
        url = _next_url(link, settings) if isinstance(link, str) and link else None
    body = b"[" + b",".join(pages) + b"]"
    shown = str(httpx.URL(first, params={"$filter": GPU_FILTER}))
    return RawCapture(source="azure", url=shown, fetched_at=now_utc(), body=body,
                      content_type="application/json")


def _items(payload: Any) -> Iterator[dict[str, Any]]:
    """Items of one page, of a list of pages, or of a bare list of items (as the captures hold)."""
    if isinstance(payload, dict):
        if not isinstance(payload.get("Items"), list):
            raise ParseError("azure: expected a Retail Prices page with Items")
        yield from (item for item in payload["Items"] if isinstance(item, dict))
        return
    if not isinstance(payload, list):
        raise ParseError("azure: expected a page, a list of pages or a list of items")
    for entry in payload:
        if isinstance(entry, dict) and isinstance(entry.get("Items"), list):
            yield from (item for item in entry["Items"] if isinstance(item, dict))
        elif isinstance(entry, dict) and ("armSkuName" in entry or "retailPrice" in entry):
            yield entry
        elif entry is not None:
            raise ParseError("azure: list entries are neither pages nor price items")


def _term_hours(term: Any) -> float | None:
    match = re.match(r"\s*(\d+)\s*Years?", str(term or ""), re.IGNORECASE)
    return int(match.group(1)) * HOURS_PER_YEAR if match else None


def _pricing(item: dict[str, Any]) -> str | None:
    """on_demand / spot / reserved, or None for a meter that is not a Linux list price."""
    kind = item.get("type")
    names = f"{item.get('meterName') or ''} {item.get('skuName') or ''}"
    if "windows" in str(item.get("productName") or "").lower() or "Low Priority" in names:
        return None
    if kind == "Consumption":
        return "spot" if re.search(r"\bSpot\b", names) else "on_demand"
    if kind == "Reservation":
        return "reserved"
    return None  # DevTestConsumption and anything new


def parse(raw: RawCapture) -> pl.DataFrame:
    payload = load_json(raw.body, what="azure")
    table = sku_gpus()
    best: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
    for item in _items(payload):
        arm = str(item.get("armSkuName") or "")
        if item.get("serviceName", "Virtual Machines") != "Virtual Machines":
            continue
        specs = table.get(arm.lower())
        if specs is None and not GPU_SERIES.match(arm):
            continue  # not a GPU VM
        if item.get("currencyCode", "USD") != "USD":
            continue
        pricing = _pricing(item)
        price = as_float(item.get("retailPrice", item.get("unitPrice")))
        if pricing is None or not price or price <= 0:
            continue
        offering = arm
        if pricing == "reserved":
            hours = _term_hours(item.get("reservationTerm"))
            if not hours:
                continue
            price = price / hours  # the item quotes the whole term
            offering = f"{arm} ({item.get('reservationTerm')} reservation)"
        region = str(item.get("armRegionName") or item.get("location") or "unknown")
        row = {
            "provider": "azure", "offering": offering,
            "gpu_name": specs.gpu_name if specs else None,
            "gpu_count": specs.gpu_count if specs else None,
            "gpu_memory_gb": specs.gpu_memory_gb if specs else None,
            "vcpus": specs.vcpus if specs else None, "ram_gb": specs.ram_gb if specs else None,
            "region": region, "pricing": pricing, "price_usd_per_hour": price,
            "billing_increment_s": None, "available": None, "gpu_only": False,
            "monthly_fee_usd": None,
        }
        # One price per offering/region/pricing: the meter that took effect last wins.
        key = (offering, region, pricing)
        start = str(item.get("effectiveStartDate") or "")
        if key not in best or start > best[key][0]:
            best[key] = (start, row)
    return rows_frame([row for _, row in best.values()])


def page_json(items: list[dict[str, Any]], next_link: str | None) -> bytes:
    """One Retail Prices page around `items` (used by tests and by the example writer)."""
    return orjson.dumps({"BillingCurrency": "USD", "CustomerEntityId": "Default",
                         "CustomerEntityType": "Retail", "Items": items,
                         "NextPageLink": next_link, "Count": len(items)})


SOURCE = SourceDef(
    name="azure",
    provider="azure",
    kind="api",
    url=URL,
    example=EXAMPLES_DIR / "azure" / "retail_prices_gpu_2025-06-16.json",
    example_as_of="2025-06-16",
    fetch_fn=fetch,
    parse_fn=parse,
)
