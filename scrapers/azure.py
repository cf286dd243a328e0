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

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import orjson

from contract import (
    FetchError,
    HttpSettings,
    ParseError,
    RawCapture,
    conform,
    empty_parsed,
    now_utc,
)
from scrapers._host_specs import HostSpec, load_host_specs
from scrapers._json import load_json
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request

if TYPE_CHECKING:
    import httpx
    import polars as pl

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
GPU_SERIES = re.compile(r"(?i)^Standard_N[CDV]\d")
HOURS_PER_YEAR = 8760


@cache
def sku_gpus(path: Path = SKU_TABLE_PATH) -> dict[str, HostSpec]:
    """Lower-cased armSkuName -> GPUs and size (the API spells some names with odd case)."""
    return load_host_specs(path, "arm_sku_name", lower_keys=True)


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
    import httpx

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


@cache
def _item_schema() -> dict[str, pl.DataType]:
    import polars as pl

    return {
        "armSkuName": pl.String(), "armRegionName": pl.String(), "location": pl.String(),
        "serviceName": pl.String(), "currencyCode": pl.String(), "type": pl.String(),
        "productName": pl.String(), "meterName": pl.String(), "skuName": pl.String(),
        "reservationTerm": pl.String(), "effectiveStartDate": pl.String(),
        "retailPrice": pl.Float64(), "unitPrice": pl.Float64(), "unitOfMeasure": pl.String(),
    }


@cache
def _sku_frame() -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame([
        {"arm_key": name, "gpu_name": s.gpu_name, "gpu_count": s.gpu_count,
         "gpu_memory_gb": s.gpu_memory_gb, "vcpus": s.vcpus, "ram_gb": s.ram_gb}
        for name, s in sku_gpus().items()
    ])


def _pricing_expr() -> pl.Expr:
    """on_demand / spot / reserved, or null for a meter that is not a Linux list price."""
    import polars as pl

    names = pl.col("meterName").fill_null("") + " " + pl.col("skuName").fill_null("")
    windows = pl.col("productName").fill_null("").str.to_lowercase().str.contains("windows")
    return (
        pl.when(windows | names.str.contains("Low Priority")).then(None)
        .when(pl.col("type") == "Consumption")
        .then(pl.when(names.str.contains(r"\bSpot\b")).then(pl.lit("spot"))
              .otherwise(pl.lit("on_demand")))
        .when(pl.col("type") == "Reservation").then(pl.lit("reserved"))
        .otherwise(None)  # DevTestConsumption and anything new
    )


def _pricing(item: dict[str, Any]) -> str | None:
    """The classification of one item (the same rule as the bulk parser)."""
    import polars as pl

    frame = pl.DataFrame([item], schema=_item_schema(), strict=False)
    result: str | None = frame.select(_pricing_expr())[0, 0]
    return result


def parse(raw: RawCapture) -> pl.DataFrame:
    import polars as pl

    items = list(_items(load_json(raw.body, what="azure")))
    if not items:
        return empty_parsed()
    frame = pl.DataFrame(items, schema=_item_schema(), strict=False)
    hours = (pl.col("reservationTerm").str.extract(r"^\s*(\d+)\s*Years?", 1).cast(pl.Float64)
             * HOURS_PER_YEAR)
    frame = (
        frame.with_columns(
            pl.col("armSkuName").fill_null(""),
            pl.col("armSkuName").fill_null("").str.to_lowercase().alias("arm_key"),
            _pricing_expr().alias("pricing"),
            pl.coalesce("retailPrice", "unitPrice").alias("price"),
        )
        .filter(
            pl.col("serviceName").fill_null("Virtual Machines") == "Virtual Machines",
            pl.col("currencyCode").fill_null("USD") == "USD",
            pl.col("unitOfMeasure").fill_null("1 Hour").str.ends_with("Hour"),
            pl.col("pricing").is_not_null(),
            pl.col("price") > 0,
        )
        .join(_sku_frame(), on="arm_key", how="left")
        # not in the table: kept only when it is an N-series name (then quarantined downstream)
        .filter(pl.col("gpu_name").is_not_null() | pl.col("armSkuName").str.contains(
            GPU_SERIES.pattern))
        .with_columns(
            pl.when(pl.col("pricing") == "reserved").then(pl.col("price") / hours)
            .otherwise(pl.col("price")).alias("price_usd_per_hour"),
            pl.when(pl.col("pricing") == "reserved")
            .then(pl.format("{} ({} reservation)", "armSkuName", "reservationTerm"))
            .otherwise(pl.col("armSkuName")).alias("offering"),
            pl.coalesce("armRegionName", "location", pl.lit("unknown")).alias("region"),
        )
        .filter(pl.col("price_usd_per_hour").is_not_null())  # a reservation without a term
        # one price per offering/region/pricing: the meter that took effect last wins
        .sort("effectiveStartDate", descending=True, nulls_last=True, maintain_order=True)
        .unique(["offering", "region", "pricing"], keep="first", maintain_order=True)
    )
    return conform(frame.with_columns(
        pl.lit("azure").alias("provider"),
        pl.lit(None, pl.Int64).alias("billing_increment_s"),
        pl.lit(None, pl.Boolean).alias("available"),
        pl.lit(False).alias("gpu_only"),
        pl.lit(None, pl.Float64).alias("monthly_fee_usd"),
    ))


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
