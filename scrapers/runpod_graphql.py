"""RunPod GPU types: POST https://api.runpod.io/graphql, query gpuTypes (key optional).

Facts (../shared/captures/SOURCES.md §2, MORE_SOURCES.md, gpuhunt's runpod provider):
- `securePrice`, `communityPrice`, `secureSpotPrice`, `communitySpotPrice` are USD per GPU-hour;
  0 or null means not offered. Secure and community cloud are different products, so they are
  different pricing values: on_demand, community, spot, community_spot.
- `secureCloud` / `communityCloud` say whether the type is offered on that cloud at all; where
  they are false the API still fills in placeholder prices (communityPrice 0.5 for MI300X and
  B200, securePrice 0.5 for RTX 4070 Ti ...), so those prices are not rows.
- `lowestPrice(input: {gpuCount: n, secureCloud: true})` gives, for n GPUs in one pod,
  `uninterruptablePrice` / `minimumBidPrice` per GPU, `stockStatus` (null = none in stock),
  `minVcpu`, `minMemory`; stockStatus "High" / "Medium" / "Low" is kept as stock_level
  (contract.STOCK_LEVELS), null as available=false. We ask for n = 1 (alias-free, for stock
  and specs) and for 2, 4, 8 under the aliases lowestPrice_2/_4/_8; a multi-GPU pod is a row
  of its own only when its per-GPU price differs from the 1-GPU price (offering "8x <type
  id>").
- The captures in ../shared store the bare `gpuTypes` list; the API wraps it as
  {"data": {"gpuTypes": [...]}}, with an `errors` list when the query fails.
- Without the flags (the 2026 field subset in ../shared/captures/runpod-graphql keeps only id,
  displayName, memoryInGb, securePrice, communityPrice) the placeholder must be recognised from
  the price itself. Rule: in a payload where no type carries `secureCloud`/`communityCloud`, a
  `securePrice` or `communityPrice` of exactly 0.50 is the placeholder and never a row. Every
  0.50 of those two fields in the 2025 capture (which has the flags) sits on a flag that is
  false (MI300X, B200, RTX 4070 Ti, 4080, 4080 SUPER, RTX 2000 Ada, A2000, PRO 6000 WK), and
  every 0.50 in the 2026 subset sits beside a different price for the other cloud (12 rows).
  The cost: a real price of exactly $0.50 in a flagless payload is lost (counted, not guessed).
  Spot fields are not subject to the rule (a 0.50 secure spot price is real in 2025: L40).
- MIG slices ("NVIDIA RTX PRO 6000 Blackwell Server Edition MIG 1g.24gb", displayName "PRO 6000
  MIG 24GB") are priced per slice-hour. They are stored as a fraction of their card: gpu_count
  = slice memory / card memory (24 / 96 = 0.25), gpu_memory_gb = the card's memory (as for
  Azure's fractional sizes, so count x memory = the slice's 24 GB), offering = the slice id.
  The card is the type whose id is the slice id before " MIG"; a slice whose card is not in the
  payload is skipped with a counted reason (its fraction would be a guess).
`parse` returns the rows and the prices not stored, counted by reason (a `Parsed`).
Prices are the same in every data center, so rows are region "global". Pods bill per second.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from contract import GLOBAL_REGION, HttpSettings, Parsed, ParseError, RawCapture, Skips, rows_frame
from scrapers._json import as_float, load_json
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request

if TYPE_CHECKING:
    import httpx

NAME = "runpod"
BASE = "https://api.runpod.io"
PATH = "/graphql"
URL = BASE + PATH
MULTI_GPU_COUNTS = (2, 4, 8)
_LOWEST_FIELDS = "uninterruptablePrice minimumBidPrice stockStatus minVcpu minMemory"
QUERY = (
    "query GpuTypes { gpuTypes { id displayName manufacturer memoryInGb maxGpuCount "
    "secureCloud communityCloud securePrice communityPrice secureSpotPrice communitySpotPrice "
    f"lowestPrice(input: {{gpuCount: 1, secureCloud: true}}) {{ {_LOWEST_FIELDS} }} "
    + " ".join(
        f"lowestPrice_{n}: lowestPrice(input: {{gpuCount: {n}, secureCloud: true}}) "
        f"{{ {_LOWEST_FIELDS} }}"
        for n in MULTI_GPU_COUNTS
    )
    + " } }"
)
# (price field, pricing, cloud flag, lowestPrice field for multi-GPU pods)
_PRICES = (
    ("securePrice", "on_demand", "secureCloud", "uninterruptablePrice"),
    ("secureSpotPrice", "spot", "secureCloud", "minimumBidPrice"),
    ("communityPrice", "community", "communityCloud", None),
    ("communitySpotPrice", "community_spot", "communityCloud", None),
)
_LOWEST_ALIAS = re.compile(r"^lowestPrice(?:_(\d+))?$")
_FLAGS = ("secureCloud", "communityCloud")
PLACEHOLDER_PRICE = 0.50  # what the API fills in for a cloud that does not offer the type
# Skip reasons, shared with runpod-page (its 2023 layout embeds these same records).
PLACEHOLDER_SKIP = "placeholder price 0.50 (no cloud flags)"
FLAG_OFF_SKIP = "price behind a false cloud flag (placeholder)"
_PLACEHOLDER_FIELDS = ("securePrice", "communityPrice")
_MIG = re.compile(r"\s+MIG\b(?:\s+(?P<profile>\d+g\.(?P<gb>\d+)gb))?", re.IGNORECASE)
PRICE_TOLERANCE = 0.005  # half a cent: anything smaller is float noise, not a different price
_LEVELS = {"high": "high", "medium": "medium", "low": "low"}  # stockStatus -> STOCK_LEVELS


def _level(quote: dict[str, Any]) -> str | None:
    status = quote.get("stockStatus")
    return _LEVELS.get(status.strip().lower()) if isinstance(status, str) else None


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    headers = {"Accept": "application/json"}
    key = settings.secret("RUNPOD_API_KEY")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "POST", url, headers=headers,
                   json={"query": QUERY, "variables": {}})


def _gpu_types(payload: Any) -> list[dict[str, Any]]:
    if isinstance(payload, dict):
        errors = payload.get("errors")
        if errors:
            messages = [e.get("message", str(e)) if isinstance(e, dict) else str(e)
                        for e in (errors if isinstance(errors, list) else [errors])]
            raise ParseError(f"runpod: GraphQL errors: {'; '.join(messages)}")
        data = payload.get("data")
        payload = data.get("gpuTypes") if isinstance(data, dict) else payload.get("gpuTypes")
    if not isinstance(payload, list):
        raise ParseError("runpod: expected {'data': {'gpuTypes': [...]}} or a gpuTypes list")
    types = [t for t in payload if isinstance(t, dict)]
    if payload and not any("id" in t for t in types):
        raise ParseError("runpod: gpuTypes entries have no 'id' (not a gpuTypes list?)")
    return types


def _lowest_prices(gpu: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """lowestPrice objects by GPU count (the un-aliased field is the 1-GPU one)."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in gpu.items():
        match = _LOWEST_ALIAS.match(key)
        if match and isinstance(value, dict):
            found[int(match.group(1) or 1)] = value
    return found


def _offered(gpu: dict[str, Any], flag: str) -> bool:
    # Older captures may lack the flags: then the price alone decides.
    return gpu.get(flag) is not False


def _mig_fraction(gpu: dict[str, Any], gpu_id: str,
                  memory_by_id: dict[str, float]) -> tuple[float, float] | str:
    """(fraction of the card, the card's memory) for a MIG slice, or the reason to skip it."""
    match = _MIG.search(gpu_id)
    assert match is not None
    card_memory = memory_by_id.get(gpu_id[: match.start()].strip())
    slice_memory = as_float(gpu.get("memoryInGb")) or (
        float(match.group("gb")) if match.group("gb") else None)
    if not card_memory or not slice_memory or slice_memory >= card_memory:
        return "MIG slice whose card (or memory) is not in the payload"
    return slice_memory / card_memory, card_memory


def parse(raw: RawCapture) -> Parsed:
    rows: list[dict[str, Any]] = []
    skips = Skips()
    types = _gpu_types(load_json(raw.body, what=NAME))
    flagless = not any(flag in t for t in types for flag in _FLAGS)
    memory_by_id = {str(t.get("id")): as_float(t.get("memoryInGb")) or 0.0 for t in types}
    for gpu in types:
        gpu_id = gpu.get("id")
        if not isinstance(gpu_id, str) or not gpu_id or gpu_id == "unknown":
            continue
        lowest = _lowest_prices(gpu)
        single = lowest.get(1, {})
        in_stock = None if 1 not in lowest else single.get("stockStatus") is not None
        max_count = as_float(gpu.get("maxGpuCount"))
        common = {
            "provider": "runpod",
            "offering": gpu_id,
            "gpu_name": gpu.get("displayName") or gpu_id,
            "gpu_memory_gb": as_float(gpu.get("memoryInGb")) or None,
            "region": GLOBAL_REGION,
            "billing_increment_s": 1,
        }
        count = 1.0
        is_slice = _MIG.search(gpu_id) is not None
        if is_slice:
            fraction = _mig_fraction(gpu, gpu_id, memory_by_id)
            if isinstance(fraction, str):
                skips.skip(fraction, sum(
                    1 for f, *_ in _PRICES if (as_float(gpu.get(f)) or 0) > 0))
                continue
            count, common["gpu_memory_gb"] = fraction
        for field, pricing, flag, lowest_field in _PRICES:
            price = as_float(gpu.get(field))
            if not price or price <= 0:
                continue
            if not _offered(gpu, flag):
                skips.skip(FLAG_OFF_SKIP)
                continue
            if flagless and field in _PLACEHOLDER_FIELDS and price == PLACEHOLDER_PRICE:
                skips.skip(PLACEHOLDER_SKIP)
                continue
            secure = flag == "secureCloud"
            rows.append({**common, "pricing": pricing, "gpu_count": count,
                         "price_usd_per_hour": price,
                         "vcpus": as_float(single.get("minVcpu")) if secure else None,
                         "ram_gb": as_float(single.get("minMemory")) if secure else None,
                         "available": in_stock if secure else None,
                         "stock_level": _level(single) if secure else None})
            if lowest_field is None or is_slice:
                continue
            for gpus, quote in sorted(lowest.items()):
                per_gpu = as_float(quote.get(lowest_field))
                if (gpus == 1 or not per_gpu or per_gpu <= 0
                        or (max_count and gpus > max_count)
                        or abs(per_gpu - price) < PRICE_TOLERANCE):
                    continue
                rows.append({**common, "offering": f"{gpus}x {gpu_id}",
                             "pricing": pricing, "gpu_count": float(gpus),
                             "price_usd_per_hour": round(per_gpu * gpus, 6),
                             "vcpus": as_float(quote.get("minVcpu")),
                             "ram_gb": as_float(quote.get("minMemory")),
                             "available": quote.get("stockStatus") is not None,
                             "stock_level": _level(quote)})
    return Parsed(rows_frame(rows), skips)


SOURCE = SourceDef(
    name=NAME,
    provider="runpod",
    kind="api",
    url=URL,
    example=EXAMPLES_DIR / "runpod" / "graphql_gpuTypes_2025-06-21.json",
    example_as_of="2025-06-21",
    fetch_fn=fetch,
    parse_fn=parse,
    secret_names=("RUNPOD_API_KEY",),
)
