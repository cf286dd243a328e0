"""OVHcloud Public Cloud GPU instances, priced in euros, from OVHcloud's public order catalog.

`GET https://eu.api.ovh.com/v1/order/catalog/public/cloud?ovhSubsidiary=FR` (no key) answers
the order catalog of the French subsidiary: `locale` {currencyCode "EUR", subsidiary,
taxRate}, `plans` (the "project" plan lists its addon families: "instance" ...), and `addons`,
one per orderable plan code. An instance addon: `planCode` "<flavor>.consumption" (hourly) or
"<flavor>.monthly.postpaid" (a month at a fixed price), optionally with a variant suffix
(".3AZ" multi-zone regions, ".LZ..." local zones), `product` "publiccloud-instance",
`pricings` [{capacities, mode, interval, intervalUnit, price, tax, formattedPrice ...}] with
`price` an integer in 10^-8 of the currency (280000000 = 2.80 EUR), `blobs.technical` {cpu
{cores}, memory {size GB}, gpu {model, number, memory {size GB}}, os {family}},
`blobs.tags` ("active", "coming_soon" ...) and `configurations` [{name "region", values
["GRA9", "BHS5" ...]}] (the regions it can be ordered in; often on the monthly variant only).
Format as in the order-catalog captures other projects saved (the eco catalog of the same
API, and trimmed public-cloud bodies of 2026-08); prices exclude VAT.

parse: one row per GPU flavour x billing mode x region:
- "<flavor>.consumption": on demand, the hourly price;
- "<flavor>.monthly.postpaid": reserved for 1 month (term_months 1), quoted as its hourly
  equivalent over 730 h;
- region: each region the addon's `configurations` name; an addon naming none takes the regions
  of its flavour's other plain addons, else "global" (one price everywhere). A variant
  (".3AZ", ".LZ") naming no region is skipped: its price belongs to regions it does not name.
The price is kept in the catalog's currency (`currency`, `price_native_per_hour`; USD is filled
downstream from the ECB rate of the day; a USD catalog is stored as USD).
Skipped and counted: Windows flavours (licence included in the price), flavours tagged
coming_soon (not orderable), fractional GPU counts, other billing modes, addons with no single
recurring price. Addons that are not instances or carry no GPU are not read.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from contract import GLOBAL_REGION, HttpSettings, Parsed, ParseError, RawCapture, Skips, rows_frame
from scrapers._json import as_float, load_json
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request

if TYPE_CHECKING:
    import httpx

__all__ = ["SOURCE", "fetch", "parse"]

NAME = "ovhcloud"
BASE = "https://eu.api.ovh.com"
PATH = "/v1/order/catalog/public/cloud"
SUBSIDIARY = "FR"
URL = f"{BASE}{PATH}?ovhSubsidiary={SUBSIDIARY}"
PRICE_UNITS = 100_000_000  # catalog prices are integers in 10^-8 of the currency
HOURS_PER_MONTH = 730
_PLAN = re.compile(r"^(?P<flavor>[a-z0-9][a-z0-9-]*)\."
                   r"(?P<mode>consumption|monthly\.postpaid)(?:\.(?P<variant>.+))?$")
_RECURRING = {"consumption", "renew"}  # capacities of the price billed per hour / per month
_CURRENCY = re.compile(r"^[A-Z]{3}$")


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, params={"ovhSubsidiary": SUBSIDIARY},
                   headers={"Accept": "application/json"},
                   display_url=f"{url}?ovhSubsidiary={SUBSIDIARY}")


def _currency(document: dict[str, Any]) -> str:
    locale = document.get("locale")
    code = locale.get("currencyCode") if isinstance(locale, dict) else None
    if not isinstance(code, str) or not _CURRENCY.match(code):
        raise ParseError(f"{NAME}: the catalog names no currency (locale.currencyCode {code!r})")
    return code


def _regions(addon: dict[str, Any]) -> list[str]:
    for config in addon.get("configurations") or []:
        if isinstance(config, dict) and config.get("name") == "region":
            return sorted({str(v) for v in config.get("values") or [] if v})
    return []


def _gpu(addon: dict[str, Any]) -> dict[str, Any] | None:
    blobs = addon.get("blobs") if isinstance(addon.get("blobs"), dict) else {}
    technical = blobs.get("technical") if isinstance(blobs.get("technical"), dict) else {}
    gpu = technical.get("gpu")
    return gpu if isinstance(gpu, dict) and gpu.get("number") else None


def _price(addon: dict[str, Any]) -> float | None:
    """The one recurring price (per hour or per month) in currency units, else None."""
    prices = {p.get("price") for p in addon.get("pricings") or [] if isinstance(p, dict)
              and _RECURRING & set(p.get("capacities") or [])}
    if len(prices) != 1:
        return None
    (value,) = prices
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ParseError(f"{NAME}: {addon.get('planCode')}: price {value!r} is not a number")
    return value / PRICE_UNITS if value > 0 else None


def _candidates(addons: list[Any], skips: Skips) -> list[tuple[dict[str, Any], Any]]:
    """GPU instance addons worth a row, with their plan code's parts."""
    found = []
    for addon in addons:
        if not isinstance(addon, dict) or addon.get("product") != "publiccloud-instance":
            continue
        gpu = _gpu(addon)
        if gpu is None:
            continue  # a CPU flavour
        plan = _PLAN.match(str(addon.get("planCode") or ""))
        if plan is None:
            skips.skip("billing mode not hourly or monthly")
            continue
        tags = addon.get("blobs", {}).get("tags") or []
        if plan["flavor"].startswith("win-"):
            skips.skip("Windows flavour (licence in the price)")
        elif "coming_soon" in tags:
            skips.skip("coming soon (not orderable yet)")
        elif as_float(gpu.get("number")) is None or float(gpu["number"]) % 1:
            skips.skip("fractional GPU count")
        else:
            found.append((addon, plan))
    return found


def parse(raw: RawCapture) -> Parsed:
    """GPU rows of the catalog; ParseError when it is not one or has no GPU price."""
    document = load_json(raw.body, what=NAME)
    if not isinstance(document, dict) or not isinstance(document.get("addons"), list):
        raise ParseError(f"{NAME}: expected the order catalog {{locale, plans, addons: [...]}}")
    currency = _currency(document)
    skips = Skips()
    candidates = _candidates(document["addons"], skips)
    flavor_regions: dict[str, set[str]] = defaultdict(set)
    for addon, plan in candidates:
        if not plan["variant"]:
            flavor_regions[plan["flavor"]].update(_regions(addon))
    rows: list[dict[str, Any]] = []
    for addon, plan in candidates:
        price = _price(addon)
        if price is None:
            skips.skip("no single recurring price")
            continue
        regions = _regions(addon) or sorted(flavor_regions[plan["flavor"]])
        if not regions and plan["variant"]:
            skips.skip("regional variant naming no region")
            continue
        technical = addon["blobs"]["technical"]
        gpu = technical["gpu"]
        monthly = plan["mode"] != "consumption"
        hourly = round(price / HOURS_PER_MONTH, 6) if monthly else price
        offering = plan["flavor"] + (f" ({plan['variant']})" if plan["variant"] else "")
        common = {
            "provider": "ovh", "offering": offering,
            "gpu_name": str(gpu.get("model") or "").strip() or None,
            "gpu_count": float(gpu["number"]),
            "gpu_memory_gb": as_float((gpu.get("memory") or {}).get("size")),
            "vcpus": as_float((technical.get("cpu") or {}).get("cores")),
            "ram_gb": as_float((technical.get("memory") or {}).get("size")),
            "pricing": "reserved" if monthly else "on_demand",
            "term_months": 1.0 if monthly else None,
            **({"price_usd_per_hour": hourly} if currency == "USD"
               else {"currency": currency, "price_native_per_hour": hourly}),
        }
        rows += [{**common, "region": region} for region in regions or [GLOBAL_REGION]]
    if not rows:
        raise ParseError(f"{NAME}: no GPU instance price in the catalog "
                         f"({skips.describe() or 'no GPU flavour'})")
    return Parsed(rows_frame(rows), skips)


SOURCE = SourceDef(
    name=NAME,
    provider="ovh",
    kind="api",
    url=URL,
    example=EXAMPLES_DIR / NAME / "catalog_cloud_fr_2026-08-22.json",
    example_as_of="2026-08-22",
    fetch_fn=fetch,
    parse_fn=parse,
    aliases=("ovh",),
)
