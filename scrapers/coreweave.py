"""CoreWeave's public pricing page (no key): https://www.coreweave.com/pricing, GPU instances.

Source format, decided: the live page. The only real material here is a third-party scraper's
output table (../shared/captures/coreweave, becloudready/gpu-price, 2026-02-11); it is not
CoreWeave's format and depends on someone else's scraper, so it serves the conformance test
as reference numbers, not as a format this parser reads.

Facts (../shared/captures/PAGES.md §7, from that scraper's code; no raw page was available to
check them against): a Webflow page; each instance is a `div.table-row-v2.w-dyn-item` with
class `kubernetes-gpu-pricing`, holding `div.table-grid` > `h3.table-model-name` and
`div.table-v2-cell` cells in the order GPU count, VRAM (GB per GPU), vCPUs, system RAM (GB),
local storage (TB), then the price "$68.80". Prices are USD per instance-hour, not per GPU
(8x B200 $68.80). The scraped table leaves the GPU count of "NVIDIA GB200 NVL72" empty; its
instance is a 4-GPU node (two Grace CPUs: 144 vCPUs, 960 GB in the same row), so that count
is filled in from `_KNOWN_GPU_COUNTS` (an assumption, flagged in the report); a row with no
count and no entry there is skipped, since its per-GPU price would be a guess.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import polars as pl
from bs4 import BeautifulSoup, Tag

from scrapers.base import (
    EXAMPLES_DIR,
    GLOBAL_REGION,
    HttpSettings,
    ParseError,
    RawCapture,
    SourceDef,
    rows_frame,
)
from scrapers.http import request

NAME = "coreweave"
BASE = "https://www.coreweave.com"
PATH = "/pricing"
URL = BASE + PATH
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")
_KNOWN_GPU_COUNTS: dict[str, float] = {"NVIDIA GB200 NVL72": 4.0}
# Cell order after the model name (PAGES.md §7).
_SPEC_CELLS = ("gpu_count", "gpu_memory_gb", "vcpus", "ram_gb", "storage_tb")


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/html"})


def _number(text: str) -> float | None:
    match = _NUMBER.search(text.replace(",", ""))
    return float(match.group(1)) if match else None


def _row(item: Tag) -> dict[str, Any] | None:
    name_el = item.select_one(".table-model-name")
    cells = [c.get_text(" ", strip=True) for c in item.select(".table-v2-cell")]
    if name_el is None or not cells or "$" not in cells[-1]:
        return None
    name = name_el.get_text(" ", strip=True)
    price = _number(cells[-1])
    specs = {key: _number(text) for key, text in zip(_SPEC_CELLS, cells[:-1], strict=False)}
    count = specs.get("gpu_count") or _KNOWN_GPU_COUNTS.get(name)
    if not name or not price or price <= 0 or not count:
        return None
    return {
        "provider": "coreweave",
        "offering": name,
        "gpu_name": name,
        "gpu_count": count,
        "gpu_memory_gb": specs.get("gpu_memory_gb"),
        "vcpus": specs.get("vcpus"),
        "ram_gb": specs.get("ram_gb"),
        "region": GLOBAL_REGION,
        "pricing": "on_demand",
        "price_usd_per_hour": price,
    }


def parse(raw: RawCapture) -> pl.DataFrame:
    if raw.body.lstrip().startswith(b"provider,product,"):
        raise ParseError("coreweave: this is a third-party scraper's CSV table, not the "
                         "page; it is reference data for the conformance tests")
    soup = BeautifulSoup(raw.text(), "lxml")
    items = soup.select(".table-row-v2.kubernetes-gpu-pricing")
    if not items:
        raise ParseError("coreweave: no .table-row-v2.kubernetes-gpu-pricing rows "
                         "(layout changed?)")
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for item in items:
        row = _row(item)
        if row and row["offering"] not in seen:
            seen.add(row["offering"])
            rows.append(row)
    return rows_frame(rows)


SOURCE = SourceDef(
    name=NAME,
    provider="coreweave",
    kind="page",
    url=URL,
    example=EXAMPLES_DIR / "coreweave" / "pricing_2026-02-11.html",
    example_as_of="2026-02-11",
    history_urls=("https://www.coreweave.com/gpu-cloud-pricing", URL),
    fetch_fn=fetch,
    parse_fn=parse,
)
