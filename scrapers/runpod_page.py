"""RunPod's public pricing page (no key): https://www.runpod.io/pricing, GPU pod prices.

Facts (../shared/captures/PAGES.md §2, from third-party BeautifulSoup scraper code; no raw page
was available to check them against): a Webflow page where each GPU is an
`<a class="gpu-pricing-row ...">`, the GPU name in `.gpu-pricing-row__model-wrapper`, spec tags
in `.gpu-pricing-row__tag` ("80GB VRAM", "20 vCPUs", "125GB RAM"), and one price element
`.cc-gpu-price` carrying BOTH prices as attributes `data-secure-cloud-price` and
`data-community-cloud-price` (its text shows whichever toggle is active). USD per GPU-hour for
a 1-GPU pod, billed per second. Secure cloud -> on_demand, community cloud -> community; an
empty or zero attribute means that cloud does not offer the GPU.
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

NAME = "runpod-page"
BASE = "https://www.runpod.io"
PATH = "/pricing"
URL = BASE + PATH
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")
_PRICE_ATTRIBUTES = (
    ("data-secure-cloud-price", "on_demand"),
    ("data-community-cloud-price", "community"),
)


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/html"})


def _number(text: str | None) -> float | None:
    match = _NUMBER.search((text or "").replace(",", ""))
    return float(match.group(1)) if match else None


def _specs(row: Tag) -> dict[str, float | None]:
    """VRAM, vCPUs and RAM from the row's tags, recognised by their unit words."""
    specs: dict[str, float | None] = {"gpu_memory_gb": None, "vcpus": None, "ram_gb": None}
    for tag in row.select(".gpu-pricing-row__tag"):
        text = tag.get_text(" ", strip=True)
        upper = text.upper()
        if "VRAM" in upper:
            specs["gpu_memory_gb"] = _number(text)
        elif "CPU" in upper:
            specs["vcpus"] = _number(text)
        elif "RAM" in upper:
            specs["ram_gb"] = _number(text)
    return specs


def parse(raw: RawCapture) -> pl.DataFrame:
    if raw.body.lstrip().startswith(b"provider,product,"):
        raise ParseError("runpod-page: this is a third-party scraper's CSV table, not the "
                         "page; it is reference data for the conformance tests")
    soup = BeautifulSoup(raw.text(), "lxml")
    gpu_rows = soup.select(".gpu-pricing-row")
    if not gpu_rows:
        raise ParseError("runpod-page: no .gpu-pricing-row elements (layout changed?)")
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for row in gpu_rows:
        name_el = row.select_one(".gpu-pricing-row__model-wrapper")
        price_el = row.select_one(".cc-gpu-price")
        if name_el is None or price_el is None:
            continue
        name = name_el.get_text(" ", strip=True)
        for attribute, pricing in _PRICE_ATTRIBUTES:
            price = _number(price_el.get(attribute))  # type: ignore[arg-type]
            if not name or not price or price <= 0 or (name, pricing) in seen:
                continue
            seen.add((name, pricing))
            rows.append({
                "provider": "runpod",
                "offering": name,
                "gpu_name": name,
                "gpu_count": 1.0,
                **_specs(row),
                "region": GLOBAL_REGION,
                "pricing": pricing,
                "price_usd_per_hour": price,
                "billing_increment_s": 1,
            })
    return rows_frame(rows)


SOURCE = SourceDef(
    name=NAME,
    provider="runpod",
    kind="page",
    url=URL,
    example=EXAMPLES_DIR / "runpod-page" / "pricing_2026-02-11.html",
    example_as_of="2026-02-11",
    history_urls=("https://www.runpod.io/gpu-instance/pricing", URL),
    fetch_fn=fetch,
    parse_fn=parse,
)
