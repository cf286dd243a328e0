"""Google Cloud GPU prices from the Cloud Billing Catalog API (needs GCP_API_KEY).

Facts (../shared/captures/SOURCES.md §6, MORE_SOURCES.md and the 1,632 real GPU SKUs there):
- `GET https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus` (Compute Engine),
  paged with `pageSize` / `pageToken`, each page `{"skus": [...], "nextPageToken": "..."}` (empty
  on the last page). The key is sent in the `X-Goog-Api-Key` header, which Google APIs accept in
  place of `?key=`, so no URL (requested, stored or shown) ever carries it.
- A GPU SKU prices one GPU: `pricingInfo[0].pricingExpression.tieredRates[].unitPrice` is
  `{currencyCode, units (string), nanos (int)}` per `usageUnit` "h"; `baseUnit` "s" (per-second
  billing). The VM around the GPU (N1 cores and RAM, or the A2/A3/G2 machine's cores and RAM)
  is billed separately, so every row here is `gpu_only=True` and `gpu_count=1`.
- The kind of price is only in the description: "Nvidia L4 GPU running in Virginia"
  (on-demand), "... GPU attached to Spot Preemptible VMs running in ..." (spot), "Commitment v1:
  ... GPU running in ... for 1 Year" (reserved, hourly rate, term in the offering). Skipped:
  "Reserved ... GPU in ..." (capacity reservations, mostly $0), "DWS Defined Duration" (Dynamic
  Workload Scheduler) and "Licensing Fee ... (GPU cost)" (OS licences).
- Region: the live API lists `serviceRegions` (region codes): one row per listed region, a
  single-region SKU winning over a multi-region one. The shared capture dropped that field, so
  there the region is the description's place name, lower-cased ("virginia", "americas").

Not done: whole-VM rows for A2/A3/G2 (their price is GPU + per-vCPU + per-GB-RAM SKUs of the
machine series); the aggregator covers whole machines. The legacy pricing-calculator JSON
(../shared/captures/gcp/) has no GPUs and is rejected with a ParseError.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import polars as pl

from scrapers._json import load_json
from scrapers.base import (
    EXAMPLES_DIR,
    FetchError,
    HttpSettings,
    ParseError,
    RawCapture,
    SourceDef,
    SourceSkipped,
    now_utc,
    rows_frame,
)
from scrapers.http import request

ROOT = "https://cloudbilling.googleapis.com"
COMPUTE_SERVICE = "6F81-5844-456A"
PATH = f"/v1/services/{COMPUTE_SERVICE}/skus"
URL = ROOT + PATH
PAGE_SIZE = 5000
MAX_PAGES = 100

# GCP's GPU phrase -> (accelerator type as in `gcloud --accelerator=type=...`, GPU name for the
# catalog, memory GB). A3 machines carry H100/H200 SXM modules, A2 carries A100 SXM4 40/80 GB.
ACCELERATORS: dict[str, tuple[str, str, float]] = {
    "Nvidia Tesla K80": ("nvidia-tesla-k80", "NVIDIA Tesla K80", 12),
    "Nvidia Tesla P4": ("nvidia-tesla-p4", "NVIDIA Tesla P4", 8),
    "Nvidia Tesla P100": ("nvidia-tesla-p100", "NVIDIA Tesla P100", 16),
    "Nvidia Tesla V100": ("nvidia-tesla-v100", "NVIDIA Tesla V100", 16),
    "Nvidia Tesla T4": ("nvidia-tesla-t4", "NVIDIA T4", 16),
    "Nvidia L4": ("nvidia-l4", "NVIDIA L4", 24),
    "Nvidia Tesla A100": ("nvidia-tesla-a100", "NVIDIA A100 40GB", 40),
    "Nvidia Tesla A100 80GB": ("nvidia-a100-80gb", "NVIDIA A100 80GB", 80),
    "Nvidia H100 80GB": ("nvidia-h100-80gb", "NVIDIA H100 80GB SXM", 80),
    "Nvidia H100 80GB Mega": ("nvidia-h100-mega-80gb", "NVIDIA H100 80GB SXM", 80),
    "Nvidia H100 Mega 80GB": ("nvidia-h100-mega-80gb", "NVIDIA H100 80GB SXM", 80),
    # Seen once in the capture; the accelerator id is our slug (GCP's own id not verified).
    "Nvidia H100 80GB Plus": ("nvidia-h100-80gb-plus", "NVIDIA H100 80GB SXM", 80),
    "H200 141GB": ("nvidia-h200-141gb", "NVIDIA H200 141GB SXM", 141),
    "Nvidia B200": ("nvidia-b200", "NVIDIA B200", 180),
}

_DESCRIPTION = re.compile(
    r"^(?P<commit>Commitment v1: )?(?P<preemptible>Preemptible )?(?P<gpu>.+?) GPU"
    r"(?: attached to (?P<attached>.+?) VMs)? running in (?P<place>.+?)"
    r"(?: for (?P<years>\d+) Years?)?$"
)


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    """Every page of Compute Engine SKUs, stored as a JSON list of the page bodies."""
    key = settings.secret("GCP_API_KEY")
    if not key:
        raise SourceSkipped("GCP_API_KEY not set; the skypilot aggregator covers gcp")
    url = settings.base_url("gcp", ROOT) + PATH
    headers = {"X-Goog-Api-Key": key, "Accept": "application/json"}
    pages: list[bytes] = []
    token = ""
    while True:
        if len(pages) >= MAX_PAGES:
            raise FetchError("gcp", url, f"more than {MAX_PAGES} pages; stopped")
        params = {"pageSize": str(PAGE_SIZE), "currencyCode": "USD"}
        if token:
            params["pageToken"] = token
        raw = request(client, settings, "gcp", "GET", url, headers=headers, params=params,
                      display_url=url)
        page = load_json(raw.body, what="gcp")
        if not isinstance(page, dict) or not isinstance(page.get("skus", []), list):
            raise FetchError("gcp", url, "page without a skus list (not a Billing Catalog page)")
        pages.append(raw.body)
        token = str(page.get("nextPageToken") or "")
        if not token:
            break
    return RawCapture(source="gcp", url=url, fetched_at=now_utc(),
                      body=b"[" + b",".join(pages) + b"]", content_type="application/json")


def _skus(payload: Any) -> Iterator[dict[str, Any]]:
    """SKUs of one page, of a list of pages, or of a bare list of SKUs (as the capture holds)."""
    if isinstance(payload, dict):
        if not isinstance(payload.get("skus"), list):
            raise ParseError("gcp: expected a Billing Catalog page with skus "
                             "(the legacy pricing-calculator JSON is not supported)")
        payload = [payload]
    if not isinstance(payload, list):
        raise ParseError("gcp: expected a page, a list of pages or a list of SKUs")
    for entry in payload:
        if isinstance(entry, dict) and isinstance(entry.get("skus"), list):
            yield from (sku for sku in entry["skus"] if isinstance(sku, dict))
        elif isinstance(entry, dict) and "description" in entry and "pricingInfo" in entry:
            yield entry
        elif entry is not None:
            raise ParseError("gcp: list entries are neither pages nor SKUs")


def hourly_usd(sku: dict[str, Any]) -> float | None:
    """USD per usage hour from units + nanos of the first tier; None if not an hourly USD rate."""
    infos = sku.get("pricingInfo")
    if not isinstance(infos, list) or not infos or not isinstance(infos[0], dict):
        return None
    expression = infos[0].get("pricingExpression") or {}
    rates = expression.get("tieredRates") or []
    if expression.get("usageUnit") != "h" or not rates or not isinstance(rates[0], dict):
        return None
    price = rates[0].get("unitPrice") or {}
    if price.get("currencyCode", "USD") != "USD":
        return None
    try:
        return int(price.get("units") or 0) + int(price.get("nanos") or 0) / 1e9
    except (TypeError, ValueError):
        return None


def _classify(match: re.Match[str]) -> tuple[str, str] | None:
    """(pricing, offering suffix) or None for kinds that are not a rentable list price."""
    attached = (match["attached"] or "").lower()
    if match["commit"]:
        years = int(match["years"] or 0)
        if not years or attached:
            return None
        return "reserved", f" ({years} Year{'s' if years > 1 else ''} commitment)"
    if "dws" in attached:
        return None  # Dynamic Workload Scheduler: a different product
    if match["preemptible"] or "preemptible" in attached or "spot" in attached:
        return "spot", ""
    return ("on_demand", "") if not attached else None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def parse(raw: RawCapture) -> pl.DataFrame:
    payload = load_json(raw.body, what="gcp")
    best: dict[tuple[str, str, str], tuple[int, dict[str, Any]]] = {}
    for sku in _skus(payload):
        category = sku.get("category") or {}
        if category and category.get("resourceGroup") not in (None, "GPU"):
            continue
        match = _DESCRIPTION.match(str(sku.get("description") or "").strip())
        kind = _classify(match) if match else None
        price = hourly_usd(sku)
        if match is None or kind is None or not price or price <= 0:
            continue
        pricing, suffix = kind
        phrase = match["gpu"].strip()
        accelerator, gpu_name, memory = ACCELERATORS.get(phrase, (_slug(phrase), phrase, 0.0))
        regions = [r for r in sku.get("serviceRegions") or [] if isinstance(r, str)]
        places = regions or [match["place"].strip().lower()]
        for region in places:
            row = {
                "provider": "gcp", "offering": accelerator + suffix, "gpu_name": gpu_name,
                "gpu_count": 1.0, "gpu_memory_gb": memory or None, "vcpus": None,
                "ram_gb": None, "region": region, "pricing": pricing,
                "price_usd_per_hour": price, "billing_increment_s": 1, "available": None,
                "gpu_only": True, "monthly_fee_usd": None,
            }
            key = (row["offering"], region, pricing)
            if key not in best or len(places) < best[key][0]:
                best[key] = (len(places), row)
    return rows_frame([row for _, row in best.values()])


SOURCE = SourceDef(
    name="gcp",
    provider="gcp",
    kind="api",
    url=URL,
    example=EXAMPLES_DIR / "gcp" / "billing_catalog_gpu_skus_2025-06-17.json",
    example_as_of="2025-06-17",
    fetch_fn=fetch,
    parse_fn=parse,
    secret_names=("GCP_API_KEY",),
)
