"""Hugging Face Jobs hardware: GET https://huggingface.co/api/jobs/hardware (public, no key).

Facts (../shared/captures/PAGES.md §4; huggingface_hub `JobHardware` / `list_jobs_hardware`):
a JSON list of flavors with `name` (flavor id: t4-small, l4x1, a100-large, h200x8 ...),
`prettyName`, `cpu` ("4 vCPU"), `ram` ("15 GB"), `accelerator` (null for CPU flavors, else
{type, model, quantity, vram, manufacturer} as strings; `vram` is the flavor's total),
`unitCostMicroUSD`, `unitCostUSD` and `unitLabel` ("minute"). Billing is per minute, so the
hourly price is the per-minute cost x 60. No recorded response exists in ../shared: the
bundled example is built from these facts and the prices of the 2026-08-21 Jobs docs.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from contract import GLOBAL_REGION, HttpSettings, ParseError, RawCapture, rows_frame
from scrapers._json import as_float, load_json
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request

if TYPE_CHECKING:
    import httpx
    import polars as pl

URL = "https://huggingface.co/api/jobs/hardware"
_PER_HOUR = {"second": 3600.0, "minute": 60.0, "hour": 1.0}
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)\s*(TB|GB|GIB)?", re.IGNORECASE)


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url("huggingface-jobs", "https://huggingface.co") + "/api/jobs/hardware"
    return request(client, settings, "huggingface-jobs", "GET", url,
                   headers={"Accept": "application/json"})


def size_gb(text: Any) -> float | None:
    """'15 GB' -> 15, '2 TB' -> 2048, 24 -> 24; None when there is no number."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    if not isinstance(text, str):
        return None
    match = _NUMBER.search(text)
    if not match:
        return None
    value = float(match.group(1))
    return value * 1024 if (match.group(2) or "").upper() == "TB" else value


def _flavors(payload: Any) -> list[dict[str, Any]]:
    if isinstance(payload, dict):  # tolerate a wrapper such as {"hardware": [...]}
        payload = next((v for v in payload.values() if isinstance(v, list)), None)
    if not isinstance(payload, list):
        raise ParseError("huggingface-jobs: expected a JSON list of hardware flavors")
    flavors = [f for f in payload if isinstance(f, dict)]
    if flavors and not any("name" in f and "unitLabel" in f for f in flavors):
        raise ParseError("huggingface-jobs: flavors lack name/unitLabel (API shape changed?)")
    return flavors


def _hourly(flavor: dict[str, Any]) -> float | None:
    unit = str(flavor.get("unitLabel") or "").lower()
    if unit not in _PER_HOUR:
        return None  # an unknown unit must not be guessed into an hourly price
    cost = as_float(flavor.get("unitCostUSD"))
    if cost is None:
        micro = as_float(flavor.get("unitCostMicroUSD"))
        cost = micro / 1e6 if micro is not None else None
    if cost is None or cost <= 0:
        return None
    # The API resolves a microdollar per minute (6e-5 $/h): 4 decimals keep all it says.
    return round(cost * _PER_HOUR[unit], 4)


def parse(raw: RawCapture) -> pl.DataFrame:
    rows: list[dict[str, Any]] = []
    for flavor in _flavors(load_json(raw.body, what="huggingface-jobs")):
        accelerator = flavor.get("accelerator")
        name = flavor.get("name")
        if not isinstance(accelerator, dict) or not isinstance(name, str):
            continue  # CPU-only flavors carry no GPU price
        price = _hourly(flavor)
        count = as_float(accelerator.get("quantity")) or 1.0
        if price is None:
            continue
        total_vram = size_gb(accelerator.get("vram"))
        rows.append({
            "provider": "huggingface",
            "offering": name,
            "gpu_name": accelerator.get("model"),
            "gpu_count": count,
            "gpu_memory_gb": total_vram / count if total_vram else None,
            "vcpus": size_gb(flavor.get("cpu")),
            "ram_gb": size_gb(flavor.get("ram")),
            "region": GLOBAL_REGION,
            "pricing": "on_demand",
            "price_usd_per_hour": price,
            "billing_increment_s": 60,
            "available": None,
        })
    return rows_frame(rows)


SOURCE = SourceDef(
    name="huggingface-jobs",
    provider="huggingface",
    kind="api",
    url=URL,
    example=EXAMPLES_DIR / "huggingface-jobs" / "hardware_2026-08-21.json",
    example_as_of="2026-08-21",
    fetch_fn=fetch,
    parse_fn=parse,
)
