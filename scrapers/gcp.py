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

Whole VMs: when the payload also holds the machine series' core and RAM SKUs ("A2 Instance Core
running in ...", "A2 Instance Ram ...", "N1 Predefined Instance Core ...", with a "Spot
Preemptible " prefix for spot; RAM per GiB-hour), a row per machine type of `MACHINES` is formed
(`gpu_only=False`): vCPUs x core + GB x RAM + GPUs x GPU, on-demand and spot, in every region
where all three prices exist. A2/A3/G2 shapes are GCP's documented ones; for N1, whose GPUs
attach to any shape, one reference shape (n1-standard-8 + 1 GPU) is priced. Bundled local SSD
(a2-ultragpu, a3-highgpu) is not added: under 1 % of those machines' price. The shared capture
holds GPU SKUs only, so it yields GPU rows only. The legacy pricing-calculator JSON
(../shared/captures/gcp/) has no GPUs and is rejected with a ParseError.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from contract import (
    FetchError,
    HttpSettings,
    ParseError,
    RawCapture,
    SourceSkipped,
    now_utc,
    rows_frame,
)
from scrapers._json import load_json
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request

if TYPE_CHECKING:
    import httpx
    import polars as pl

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

# machine type, series in the core/RAM SKU descriptions, vCPUs, RAM GB, GPU phrase, GPU count
MACHINES: tuple[tuple[str, str, int, float, str, int], ...] = (
    *((f"a2-highgpu-{n}g", "A2", 12 * n, 85.0 * n, "Nvidia Tesla A100", n) for n in (1, 2, 4, 8)),
    ("a2-megagpu-16g", "A2", 96, 1360.0, "Nvidia Tesla A100", 16),
    *((f"a2-ultragpu-{n}g", "A2", 12 * n, 170.0 * n, "Nvidia Tesla A100 80GB", n)
      for n in (1, 2, 4, 8)),
    *((f"a3-highgpu-{n}g", "A3", 26 * n, 234.0 * n, "Nvidia H100 80GB", n) for n in (1, 2, 4, 8)),
    *((f"g2-standard-{v}", "G2", v, 4.0 * v, "Nvidia L4", g)
      for v, g in ((4, 1), (8, 1), (12, 1), (16, 1), (24, 2), (32, 1), (48, 4), (96, 8))),
    *((f"n1-standard-8+1x{ACCELERATORS[phrase][0]}", "N1 Predefined", 8, 30.0, phrase, 1)
      for phrase in ("Nvidia Tesla T4", "Nvidia Tesla P4", "Nvidia Tesla P100",
                     "Nvidia Tesla V100", "Nvidia Tesla K80")),
)
_COMPONENT = re.compile(
    r"^(?P<spot>Spot Preemptible )?(?P<series>N1 Predefined|A2|A3|G2) Instance "
    r"(?P<resource>Core|Ram) running in (?P<place>.+)$"
)

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


def unit_price(sku: dict[str, Any]) -> tuple[float, str] | None:
    """(USD per usage unit, usage unit) from units + nanos of the first tier, or None."""
    infos = sku.get("pricingInfo")
    if not isinstance(infos, list) or not infos or not isinstance(infos[0], dict):
        return None
    expression = infos[0].get("pricingExpression") or {}
    rates = expression.get("tieredRates") or []
    if not rates or not isinstance(rates[0], dict):
        return None
    price = rates[0].get("unitPrice") or {}
    if price.get("currencyCode", "USD") != "USD":
        return None
    try:
        value = int(price.get("units") or 0) + int(price.get("nanos") or 0) / 1e9
    except (TypeError, ValueError):
        return None
    return value, str(expression.get("usageUnit") or "")


def hourly_usd(sku: dict[str, Any]) -> float | None:
    """USD per hour (GPU, vCPU); None when the SKU is not priced per hour."""
    found = unit_price(sku)
    return found[0] if found and found[1] == "h" else None


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


def _regions(sku: dict[str, Any], place: str) -> list[str]:
    regions = [r for r in sku.get("serviceRegions") or [] if isinstance(r, str)]
    return regions or [place.strip().lower()]


def _keep_most_specific(prices: dict[Any, tuple[int, Any]], key: Any, width: int,
                        value: Any) -> None:
    """A single-region SKU beats a multi-region one for the same key."""
    if key not in prices or width < prices[key][0]:
        prices[key] = (width, value)


def _gpu_row(accelerator: str, suffix: str, gpu_name: str, memory: float, region: str,
             pricing: str, price: float) -> dict[str, Any]:
    return {
        "provider": "gcp", "offering": accelerator + suffix, "gpu_name": gpu_name,
        "gpu_count": 1.0, "gpu_memory_gb": memory or None, "vcpus": None, "ram_gb": None,
        "region": region, "pricing": pricing, "price_usd_per_hour": price,
        "billing_increment_s": 1, "available": None, "gpu_only": True, "monthly_fee_usd": None,
    }


def _machine_rows(gpu_prices: dict[tuple[str, str, str], float],
                  components: dict[tuple[str, str, str, str], float]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    regions = {(region, pricing) for _, _, region, pricing in components}
    for machine, series, vcpus, ram_gb, phrase, count in MACHINES:
        accelerator, gpu_name, memory = ACCELERATORS[phrase]
        for region, pricing in sorted(regions):
            core = components.get((series, "Core", region, pricing))
            ram = components.get((series, "Ram", region, pricing))
            gpu = gpu_prices.get((accelerator, region, pricing))
            if core is None or ram is None or gpu is None:
                continue
            rows.append({
                "provider": "gcp", "offering": machine, "gpu_name": gpu_name,
                "gpu_count": float(count), "gpu_memory_gb": memory, "vcpus": float(vcpus),
                "ram_gb": ram_gb, "region": region, "pricing": pricing,
                "price_usd_per_hour": vcpus * core + ram_gb * ram + count * gpu,
                "billing_increment_s": 1, "available": None, "gpu_only": False,
                "monthly_fee_usd": None,
            })
    return rows


def parse(raw: RawCapture) -> pl.DataFrame:
    payload = load_json(raw.body, what="gcp")
    best: dict[tuple[str, str, str], tuple[int, dict[str, Any]]] = {}
    parts: dict[tuple[str, str, str, str], tuple[int, float]] = {}
    for sku in _skus(payload):
        description = str(sku.get("description") or "").strip()
        found = unit_price(sku)
        if not found or found[0] <= 0:
            continue
        price, unit = found
        component = _COMPONENT.match(description)
        if component:
            if unit != ("h" if component["resource"] == "Core" else "GiBy.h"):
                continue
            pricing = "spot" if component["spot"] else "on_demand"
            places = _regions(sku, component["place"])
            for region in places:
                key = (component["series"], component["resource"], region, pricing)
                _keep_most_specific(parts, key, len(places), price)
            continue
        category = sku.get("category") or {}
        if category and category.get("resourceGroup") not in (None, "GPU"):
            continue
        match = _DESCRIPTION.match(description)
        kind = _classify(match) if match else None
        if match is None or kind is None or unit != "h":
            continue
        pricing, suffix = kind
        phrase = match["gpu"].strip()
        accelerator, gpu_name, memory = ACCELERATORS.get(phrase, (_slug(phrase), phrase, 0.0))
        places = _regions(sku, match["place"])
        for region in places:
            row = _gpu_row(accelerator, suffix, gpu_name, memory, region, pricing, price)
            _keep_most_specific(best, (row["offering"], region, pricing), len(places), row)
    rows = [row for _, row in best.values()]
    gpu_prices = {key: row["price_usd_per_hour"] for key, (_, row) in best.items()
                  if row["pricing"] != "reserved"}
    components = {key: price for key, (_, price) in parts.items()}
    return rows_frame(rows + _machine_rows(gpu_prices, components))


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
