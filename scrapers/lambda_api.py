"""Lambda Cloud instance types: GET https://cloud.lambda.ai/api/v1/instance-types (key needed).

Facts (../shared/captures/SOURCES.md §3): `Authorization: Bearer $LAMBDA_API_KEY`; the answer is
{"data": {"<instance type name>": {"instance_type": {...}, "regions_with_capacity_available":
[{"name": "us-east-1", ...}]}}}, keyed by name, not a list. `price_cents_per_hour` is an integer
in US cents for the whole instance; `specs` has vcpus, memory_gib, storage_gib, gpus; the GPU
model and memory are only in `description` ("1x A100 (40 GB SXM4)"). No spot price. Lambda
bills on-demand instances by the minute (docs.lambda.ai/public-cloud/billing).

One row per region with capacity (available=True). An instance type with no capacity anywhere
still has a price, so it becomes one row in region "global" with available=False: prices do
not differ by region, and dropping it would make a sold-out GPU look delisted.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from contract import GLOBAL_REGION, HttpSettings, ParseError, RawCapture, SourceSkipped, rows_frame
from scrapers._json import as_float, load_json
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request

if TYPE_CHECKING:
    import httpx
    import polars as pl

NAME = "lambda"
BASE = "https://cloud.lambda.ai"
PATH = "/api/v1/instance-types"
URL = BASE + PATH
BILLING_INCREMENT_S = 60

# "1x A100 (40 GB SXM4)", "8x H100 (80 GB SXM5)", "1x GH200 (96 GB)", "1x RTX 6000 (24 GB)"
_DESCRIPTION = re.compile(
    r"^\s*(?:(?P<count>\d+)\s*x\s+)?(?P<name>[^()]+?)\s*"
    r"\(\s*(?P<memory>\d+(?:\.\d+)?)\s*GB\s*(?P<variant>[^)]*)\)"
)


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    key = settings.secret("LAMBDA_API_KEY")
    if not key:
        raise SourceSkipped("LAMBDA_API_KEY not set; lambda-page covers Lambda")
    url = settings.base_url(NAME, BASE) + PATH
    headers = {"Accept": "application/json", "Authorization": f"Bearer {key}"}
    return request(client, settings, NAME, "GET", url, headers=headers)


def parse_description(text: str) -> tuple[float | None, str, float | None]:
    """(gpu_count, gpu_name with its form factor, memory GB per GPU) from a Lambda description.

    >>> parse_description("8x A100 (80 GB SXM4)")
    (8.0, 'A100 SXM4', 80.0)
    """
    match = _DESCRIPTION.match(text or "")
    if not match:
        return None, (text or "").strip(), None
    name = " ".join(part for part in (match["name"].strip(), match["variant"].strip()) if part)
    count = float(match["count"]) if match["count"] else None
    return count, name, float(match["memory"])


def _entries(payload: Any) -> list[tuple[str, dict[str, Any]]]:
    data = payload.get("data") if isinstance(payload, dict) else None
    if isinstance(payload, dict) and "error" in payload and data is None:
        error = payload["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise ParseError(f"lambda: the API answered with an error: {message}")
    if not isinstance(data, dict):
        raise ParseError("lambda: expected {'data': {<instance type name>: {...}}}")
    entries = [(name, entry) for name, entry in data.items() if isinstance(entry, dict)]
    if data and not entries:
        raise ParseError("lambda: 'data' holds no instance-type objects")
    return entries


def parse(raw: RawCapture) -> pl.DataFrame:
    rows: list[dict[str, Any]] = []
    for key, entry in _entries(load_json(raw.body, what=NAME)):
        instance = entry.get("instance_type")
        if not isinstance(instance, dict):
            raise ParseError(f"lambda: {key!r} has no 'instance_type' object")
        cents = as_float(instance.get("price_cents_per_hour"))
        if cents is None or cents <= 0:
            continue
        specs = instance.get("specs") if isinstance(instance.get("specs"), dict) else {}
        described_count, gpu_name, memory = parse_description(
            str(instance.get("description") or instance.get("gpu_description") or "")
        )
        count = as_float(specs.get("gpus")) or described_count
        if not count:
            continue  # a CPU-only instance type: not a GPU price
        common = {
            "provider": "lambda",
            "offering": str(instance.get("name") or key),
            "gpu_name": gpu_name or None,
            "gpu_count": count,
            "gpu_memory_gb": memory,
            "vcpus": as_float(specs.get("vcpus")),
            "ram_gb": as_float(specs.get("memory_gib")),
            "pricing": "on_demand",
            "price_usd_per_hour": cents / 100,
            "billing_increment_s": BILLING_INCREMENT_S,
        }
        regions = entry.get("regions_with_capacity_available") or []
        names = [r.get("name") for r in regions if isinstance(r, dict) and r.get("name")]
        if names:
            rows += [{**common, "region": name, "available": True} for name in names]
        else:
            rows.append({**common, "region": GLOBAL_REGION, "available": False})
    return rows_frame(rows)


SOURCE = SourceDef(
    name=NAME,
    provider="lambda",
    kind="api",
    url=URL,
    example=EXAMPLES_DIR / "lambda" / "instance-types_2026-02-11.json",
    example_as_of="2026-02-11",
    fetch_fn=fetch,
    parse_fn=parse,
    secret_names=("LAMBDA_API_KEY",),
)
