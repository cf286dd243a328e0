"""Oracle Cloud (OCI) GPU prices from Oracle's public price list API (no key).

`GET https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD` answers
`{lastUpdated, items: [{partNumber, displayName, metricName, serviceCategory,
currencyCodeLocalizations: [{currencyCode, prices: [{model, value}]}]}]}` (format of the
2026-10-01 copy in ../shared/captures/oci). The list is one document; should Oracle page it
(ORDS `hasMore` + a `next` link), fetch follows the links and stores the pages as a JSON list,
which parse reads too.

Units come from `metricName`:
- "GPU Per Hour": a per-GPU price of a GPU shape family ("OCI - Compute - GPU - H200"): one
  row per part, gpu_count 1, on demand (the PAY_AS_YOU_GO price). "A100 - v2" is the
  BM.GPU.A100-v2.8 shape's A100 80GB (Oracle's shape docs).
- "Node Per Hour": a whole host ("Oracle Cloud VMware Solution - BM.GPU.A10.64 - 1 Year
  Commit"); gpu_count from the shape, for shapes listed in `_NODE_SHAPES` only (OCVS names a
  host by its OCPU count: BM.GPU.A10.64 is the 64-OCPU host with 4 A10s, Oracle's BM.GPU.A10.4).
- "... Monthly Commit" / "1 Year Commit" / "3 Year Commit": reserved, the term in the offering
  ("(1 Year commitment)", as the gcp source writes it) and in term_months (1, 12, 36).
Skipped and counted: legacy parts whose name gives no GPU model ("GPU Standard - X7", "GPU -
E3"), names whose model is not in the catalog ("H100T", a second H100 part beside the H100
one), Compute Cloud@Customer and Roving Edge parts (hardware on the customer's premises, billed
on top of an infrastructure subscription; "Resource Possession Per Day"), node shapes with no
known GPU count, any unit that is not per hour, prices in other currencies (only USD is
stored), and parts with no single PAY_AS_YOU_GO price.

Not in the list: regions (Oracle charges one price in every commercial region; the list names
none: "global"), availability, billing increment.
"""

from __future__ import annotations

import re
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
from schemas.gpus import UNKNOWN_GPU, normalise_gpu_name
from scrapers._json import as_float, load_json
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request

if TYPE_CHECKING:
    import httpx

NAME = "oci"
BASE = "https://apexapps.oracle.com"
PATH = "/pls/apex/cetools/api/v1/products/"
URL = BASE + PATH + "?currencyCode=USD"
MAX_PAGES = 20

# OCVS host shape -> (GPU, GPUs per host). Oracle names OCVS hosts by OCPU count.
_NODE_SHAPES: dict[str, tuple[str, int]] = {"BM.GPU.A10.64": ("A10", 4)}
# Oracle's shape names for GPUs whose catalog name differs.
_MODEL_ALIASES: dict[str, str] = {"A100 v2": "A100 80GB"}
_SHAPE = re.compile(r"^(?:BM|VM)\.GPU[\w.-]*$")
_TERM = re.compile(r"^(?:(?P<monthly>monthly)|(?P<years>\d+)\s*years?)\s+commit$", re.I)
_ON_PREMISES = re.compile(r"cloud@customer|roving edge", re.I)
_GPU_PREFIX = re.compile(r"^GPU[.\s]+", re.I)


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    params = {"currencyCode": "USD"}
    first = request(client, settings, NAME, "GET", url, params=params,
                    headers={"Accept": "application/json"}, display_url=url + "?currencyCode=USD")
    pages = [first.body]
    page = load_json(first.body, what=NAME)
    while isinstance(page, dict) and page.get("hasMore") is True:
        next_url = next((link.get("href") for link in page.get("links") or []
                         if isinstance(link, dict) and link.get("rel") == "next"), None)
        if not next_url or len(pages) >= MAX_PAGES:
            raise FetchError(NAME, url, "paged answer without a next link, or too many pages")
        raw = request(client, settings, NAME, "GET", str(next_url),
                      headers={"Accept": "application/json"})
        pages.append(raw.body)
        page = load_json(raw.body, what=NAME)
    if len(pages) == 1:
        return first
    return RawCapture(source=NAME, url=first.url, fetched_at=now_utc(),
                      body=b"[" + b",".join(pages) + b"]", content_type="application/json")


def _items(payload: Any) -> list[dict[str, Any]]:
    pages = payload if isinstance(payload, list) else [payload]
    items: list[dict[str, Any]] = []
    for page in pages:
        if not isinstance(page, dict) or not isinstance(page.get("items"), list):
            raise ParseError("oci: expected the price list {items: [...]} (or a list of pages)")
        items.extend(i for i in page["items"] if isinstance(i, dict))
    return items


def _usd_price(item: dict[str, Any], skips: Skips) -> float | None:
    localisations = [c for c in item.get("currencyCodeLocalizations") or []
                     if isinstance(c, dict)]
    usd = [c for c in localisations if c.get("currencyCode") == "USD"]
    if not usd:
        skips.skip("not USD")
        return None
    prices = [p for p in usd[0].get("prices") or []
              if isinstance(p, dict) and p.get("model") == "PAY_AS_YOU_GO"]
    value = as_float(prices[0].get("value")) if len(prices) == 1 else None
    if value is None or value <= 0:
        skips.skip("no single PAY_AS_YOU_GO price")
        return None
    return value


def _parts(display_name: str) -> list[str]:
    """'OCI- Compute - GPU - MI355X' -> ['OCI', 'Compute', 'GPU', 'MI355X']."""
    text = re.sub(r"\s+", " ", display_name).replace("OCI-", "OCI -")
    return [p.strip() for p in text.split(" - ") if p.strip()]


def _term(parts: list[str]) -> tuple[list[str], str | None, float | None]:
    """Parts without a trailing commitment, the offering suffix of that commitment, and its
    length in months."""
    match = _TERM.match(parts[-1]) if parts else None
    if match is None:
        return parts, None, None
    if match["monthly"]:
        return parts[:-1], " (1 Month commitment)", 1.0
    years = int(match["years"])
    return parts[:-1], f" ({years} Year{'s' if years > 1 else ''} commitment)", 12.0 * years


def _gpu_model(parts: list[str]) -> str | None:
    """The GPU the name gives ('GPU - H200', 'GPU.L40S', 'GPU - A100 - v2'), else None."""
    for index, part in enumerate(parts):
        if part.upper() == "GPU" and index + 1 < len(parts):
            return " ".join(parts[index + 1:])
        if _GPU_PREFIX.match(part) and not _SHAPE.match(part):
            return _GPU_PREFIX.sub("", part)
    return None


def _row(item: dict[str, Any], skips: Skips) -> dict[str, Any] | None:
    name = str(item.get("displayName") or "")
    metric = str(item.get("metricName") or "").strip().lower()
    if _ON_PREMISES.search(name) or _ON_PREMISES.search(str(item.get("serviceCategory") or "")):
        skips.skip("on-premises part (Cloud@Customer, Roving Edge)")
        return None
    if metric not in ("gpu per hour", "node per hour"):
        skips.skip(f"unit not per GPU- or node-hour ({metric or 'none'})")
        return None
    parts, suffix, term_months = _term(_parts(name))
    shape = next((p for p in parts if _SHAPE.match(p)), None)
    if metric == "node per hour":
        if shape not in _NODE_SHAPES:
            skips.skip("node shape with no known GPU count")
            return None
        model, count = _NODE_SHAPES[shape]
        offering = f"OCVS {shape}" if "vmware" in name.lower() else shape
    else:
        found = _gpu_model(parts)
        model = _MODEL_ALIASES.get(found.replace("-", " ").strip(), found) if found else ""
        if not model or normalise_gpu_name(model) == UNKNOWN_GPU:
            skips.skip("name gives no GPU model in the catalog (legacy part)")
            return None
        count = 1
        offering = f"GPU {found} ({item.get('partNumber') or 'no part number'})"
    price = _usd_price(item, skips)
    if price is None:
        return None
    return {
        "provider": "oci", "offering": offering + (suffix or ""), "gpu_name": model,
        "gpu_count": float(count), "region": GLOBAL_REGION,
        "pricing": "reserved" if suffix else "on_demand",
        "price_usd_per_hour": price, "term_months": term_months,
    }


def parse(raw: RawCapture) -> Parsed:
    """Rows and skip counts of one price list; ParseError when no GPU price is left."""
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for item in _items(load_json(raw.body, what=NAME)):
        text = f"{item.get('displayName') or ''} {item.get('serviceCategory') or ''}"
        if "gpu" not in text.lower():
            continue  # not a GPU part: CPUs, storage, networking ...
        row = _row(item, skips)
        if row:
            rows.append(row)
    if not rows:
        raise ParseError(f"oci: no GPU price in the list ({skips.describe() or 'no GPU part'})")
    return Parsed(rows_frame(rows), skips)


SOURCE = SourceDef(
    name=NAME,
    provider="oci",
    kind="api",
    url=URL,
    example=EXAMPLES_DIR / NAME / "products_usd_2026-10-01.json",
    example_as_of="2026-10-01",
    fetch_fn=fetch,
    parse_fn=parse,
)
