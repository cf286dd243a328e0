"""Vast.ai marketplace offers: POST https://console.vast.ai/api/v0/bundles/ (no key needed).

Facts (../shared/captures/SOURCES.md §1): the API wraps offers as {"offers": [...]}, the CLI's
`--raw` output is the bare list; `dph_total` is USD/hour for the whole offer including the
default disk, `min_bid` the interruptible floor for the whole offer, `gpu_ram` MB per GPU,
`cpu_ram` MB for this offer's share. One machine shows up as several GPU-count slices, each
with its own offer id: every id is kept once.
"""

from __future__ import annotations

from typing import Any

import httpx
import polars as pl

from scrapers._json import as_float, load_json
from scrapers.base import (
    EXAMPLES_DIR,
    HttpSettings,
    ParseError,
    RawCapture,
    SourceDef,
    rows_frame,
)
from scrapers.http import request

URL = "https://console.vast.ai/api/v0/bundles/"
# Everything rentable or rented, largest first; 3000 is the page gpuhunt uses for "all".
QUERY: dict[str, Any] = {
    "num_gpus": {"gte": 1},
    "rentable": {"eq": True},
    "order": [["score", "desc"]],
    "type": "on-demand",
    "limit": 3000,
}


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    headers = {"Accept": "application/json"}
    key = settings.secret("VAST_API_KEY")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    url = settings.base_url("vastai", "https://console.vast.ai") + "/api/v0/bundles/"
    return request(client, settings, "vastai", "POST", url, headers=headers, json=QUERY)


def _offers(payload: Any) -> list[dict[str, Any]]:
    if isinstance(payload, dict):
        payload = payload.get("offers")
    if not isinstance(payload, list):
        raise ParseError("vastai: expected a list of offers or {'offers': [...]}")
    return [offer for offer in payload if isinstance(offer, dict)]


def parse(raw: RawCapture) -> pl.DataFrame:
    offers = _offers(load_json(raw.body, what="vastai"))
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for offer in offers:
        offer_id = offer.get("id", offer.get("ask_contract_id"))
        if offer_id is None or str(offer_id) in seen:
            continue
        seen.add(str(offer_id))
        count = as_float(offer.get("num_gpus"))
        total = as_float(offer.get("dph_total"))
        base = as_float(offer.get("dph_base"))
        ram_mb = as_float(offer.get("gpu_ram"))
        cpu_ram_mb = as_float(offer.get("cpu_ram"))
        common = {
            "provider": "vastai",
            "offering": str(offer_id),
            "gpu_name": offer.get("gpu_name") if isinstance(offer.get("gpu_name"), str) else None,
            "gpu_count": count,
            "gpu_memory_gb": ram_mb / 1024 if ram_mb else None,
            "vcpus": as_float(offer.get("cpu_cores_effective")),
            "ram_gb": cpu_ram_mb / 1024 if cpu_ram_mb else None,
            "region": offer.get("geolocation") or "unknown",
            "billing_increment_s": 1,
            "available": bool(offer.get("rentable")) and not bool(offer.get("rented")),
        }
        rows.append({**common, "pricing": "on_demand", "price_usd_per_hour": total})
        min_bid = as_float(offer.get("min_bid"))
        if min_bid and min_bid > 0:
            disk = (total - base) if total is not None and base is not None else 0.0
            rows.append({**common, "pricing": "interruptible",
                         "price_usd_per_hour": min_bid + max(disk, 0.0)})
    return rows_frame(rows)


SOURCE = SourceDef(
    name="vastai",
    provider="vastai",
    kind="api",
    url=URL,
    example=EXAMPLES_DIR / "vastai" / "bundles_2025-06-12.json",
    example_as_of="2025-06-12",
    fetch_fn=fetch,
    parse_fn=parse,
    secret_names=("VAST_API_KEY",),
)
