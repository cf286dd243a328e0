"""Google Cloud GPU machine prices from the public pricing page, no key needed.

https://cloud.google.com/products/compute/pricing/accelerator-optimized. The Billing Catalog
source (scrapers/gcp.py, needs GCP_API_KEY) stays the richer one: every region, GPU-only SKUs.
This page covers GCP when no key is set; its offerings are named like gcp.py's machine rows
(the machine type, "a2-highgpu-1g"; commitments as "a2-highgpu-1g (1 Year commitment)") and
its GPU names are gcp.py's for the known machine series (A2 ultra = A100 80GB, A3 = H100 SXM).

Layout known: 2026 (saved copy, ../shared/captures/gcp-page): one `<table>` per group of
machine series, read by header text. Columns: "Machine type", "GPU", "Components" ("GPUs: 8
vCPUs: 224 Memory: 3,968GB ..."), "Price (USD)" (on demand), optionally "Compute Flexible CUD -
1 Year / 3 Year", "DWS Flex-start price", "DWS Calendar Mode price", "Current Spot pricing",
"Compute Resource CUDs - 1 Year / 3 Year"; cells like "$64.4400 / 1 hour". Section rows ("A3
Mega") carry no prices. Prices are per machine; the per-GPU price is price / GPUs, and G4
machines that rent a fraction of a GPU ("GPUs: 1/8") get a fractional gpu_count.

Stored: on demand, spot, resource-based CUDs (reserved, "(N Year commitment)", term_months
12 or 36), flexible CUDs (reserved, "(N Year flexible commitment)"), DWS Calendar mode
(capacity reserved for a fixed number of days: reserved, "(DWS Calendar mode)", no term in
months) and DWS Flex-start (not preemptible, but queued until capacity frees and limited to 7
days of run time: pricing `flex` under its own offering, "a3-highgpu-8g (DWS Flex-start)": a
price nobody can get on demand; gcp.py skips DWS SKUs, so these rows exist only here).
Skipped and counted: "N/A" and "-" cells (not offered), cells that hold no price (one spot
cell holds a machine name, "g2-standard-24-spot"), zero prices, and non-USD prices. Typo
cells like "$2 .0000" read as 2.0 (contract.prices.parse_price). Cells are read by header position:
a row with more or fewer cells than the header (a cell deleted) is skipped whole, so no price
ever moves into another column (a deleted on-demand cell must not make the Flex-start price
the on-demand one).

Not on the page: the region. The live page has a region picker (us-central1 by default); a
saved page shows no selection, so the region is the picker's selected region when the page
shows one and "global" (no region named) otherwise. Also not stated: availability, billing
increment (GCP bills per second, but the page does not say so).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from contract import GLOBAL_REGION, HttpSettings, Parsed, RawCapture, Skips, rows_frame
from contract.prices import clean_text, parse_price
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.gcp import ACCELERATORS
from scrapers.http import request
from scrapers.pagekit import StrategyParser, Table, read_tables

if TYPE_CHECKING:
    import httpx
    from bs4 import BeautifulSoup

NAME = "gcp-page"
BASE = "https://cloud.google.com"
PATH = "/products/compute/pricing/accelerator-optimized"
URL = BASE + PATH

_MACHINE = re.compile(r"^[a-z][a-z0-9]*-[a-z0-9]+-\d+[a-z]?$")
_GPUS = re.compile(r"GPUs?\s*:\s*(\d+)(?:\s*/\s*(\d+))?", re.I)
_VCPUS = re.compile(r"vCPUs?\s*:\s*(\d+)", re.I)
_MEMORY = re.compile(r"Memory\s*:\s*([\d,]+(?:\.\d+)?)\s*Gi?B", re.I)
_YEARS = re.compile(r"(\d)\s*Years?", re.I)
_PER_ONE = re.compile(r"/\s*1\s+(hour|month|day)\b", re.I)
_NOT_OFFERED = re.compile(r"^(?:n/?a|-|–|—)$", re.I)
_CURRENCY_IN_HEADER = re.compile(r"\(([A-Z]{3})\)")
_REGION = re.compile(r"\b((?:us|europe|asia|northamerica|southamerica|australia|me|africa)"
                     r"-[a-z]+\d)\b")
# Machine series -> gcp.py's accelerator phrase (its GPU name and memory), for names that line up.
_SERIES: dict[str, str] = {
    "a2-highgpu": "Nvidia Tesla A100", "a2-megagpu": "Nvidia Tesla A100",
    "a2-ultragpu": "Nvidia Tesla A100 80GB", "a3-highgpu": "Nvidia H100 80GB",
    "a3-edgegpu": "Nvidia H100 80GB", "a3-megagpu": "Nvidia H100 80GB Mega",
    "a3-ultragpu": "H200 141GB", "a4-highgpu": "Nvidia B200", "g2-standard": "Nvidia L4",
}


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/html"})


def _column_kind(header: str) -> tuple[str, str] | None:
    """(pricing, offering suffix) of a price column, ("skip", reason), or None (not a price)."""
    low = header.lower()
    years = _YEARS.search(header)
    plural = "s" if years and years.group(1) != "1" else ""
    if "flex-start" in low or "flex start" in low:
        return "flex", " (DWS Flex-start)"
    if "calendar" in low:
        return "reserved", " (DWS Calendar mode)"
    if "spot" in low:
        return "spot", ""
    if "cud" in low or "commit" in low:
        if not years:
            return "skip", "commitment without a term"
        flexible = "flexible " if "flexible" in low else ""
        return "reserved", f" ({years.group(1)} Year{plural} {flexible}commitment)"
    if "price" in low:
        return "on_demand", ""
    return None


def _gpu_name(machine: str, page_gpu: str) -> tuple[str, float | None]:
    """gcp.py's GPU name and memory for a known series whose GPU the page agrees with."""
    series = machine.rsplit("-", 1)[0]
    phrase = _SERIES.get(series)
    if phrase:
        _, name, memory = ACCELERATORS[phrase]
        model = re.sub(r"(?i)\bnvidia\b", "", page_gpu).split()
        if model and model[0].upper() in name.upper():
            return name, memory
    return page_gpu, None


def _number(pattern: re.Pattern[str], text: str) -> float | None:
    match = pattern.search(text)
    return float(match.group(1).replace(",", "")) if match else None


def _region(soup: BeautifulSoup) -> str:
    """The region the page says it shows (a selected option), else GLOBAL_REGION."""
    chosen = soup.select("option[selected], [aria-selected='true']")
    found = {m.group(1) for tag in chosen if (m := _REGION.search(tag.get_text(" ")))}
    return found.pop() if len(found) == 1 else GLOBAL_REGION


def _cell_reader(cells: list[str]) -> Callable[[int | None], str]:
    return lambda i: cells[i] if i is not None and i < len(cells) else ""


def _read_table(table: Table, region: str, rows: list[dict[str, Any]], skips: Skips,
                seen: set[tuple[str, str]]) -> None:
    machine_col = table.column("machine")
    gpu_col = table.column("gpu", exclude=("price", "cud", "dws"))
    parts_col = table.column("component")
    kinds = {i: k for i, h in enumerate(table.headers) if (k := _column_kind(h)) is not None}
    for cells in table.rows:
        cell = _cell_reader(cells)
        machine = cell(machine_col)
        if not _MACHINE.match(machine):
            continue  # a section row ("A3 Mega") or a note
        if len(cells) != len(table.headers):
            skips.skip("row cells do not match the header")
            continue
        parts = cell(parts_col)
        gpus = _GPUS.search(parts)
        if gpus is None or int(gpus.group(1)) == 0:
            skips.skip("no GPU count in the components")
            continue
        count = int(gpus.group(1)) / int(gpus.group(2) or 1)
        gpu_name, memory = _gpu_name(machine, cell(gpu_col))
        for index, (pricing, suffix) in kinds.items():
            text = clean_text(cell(index))
            if pricing == "skip":
                if text and not _NOT_OFFERED.match(text):
                    skips.skip(suffix)
                continue
            if not text or _NOT_OFFERED.match(text):
                skips.skip("not offered (N/A or -)")
                continue
            price = parse_price(_PER_ONE.sub(r"/ \1", text))
            header_currency = _CURRENCY_IN_HEADER.search(table.headers[index])
            if price is None:
                skips.skip("cell holds no price (e.g. a machine name)")
                continue
            if price.currency != "USD" or (header_currency and header_currency.group(1) != "USD"):
                skips.skip("not USD")
                continue
            if price.period is None or price.amount <= 0:
                skips.skip("price without a period, or zero")
                continue
            key = (machine + suffix, pricing)
            if key in seen:
                skips.skip("machine listed twice")
                continue
            seen.add(key)
            years = _YEARS.search(suffix) if pricing == "reserved" else None
            rows.append({**_row(machine + suffix, gpu_name, count, memory, parts, region,
                                pricing, price.hourly()),
                         "term_months": 12.0 * int(years.group(1)) if years else None})


def _row(offering: str, gpu_name: str, count: float, memory: float | None, parts: str,
         region: str, pricing: str, per_hour: float) -> dict[str, Any]:
    return {
        "provider": "gcp", "offering": offering, "gpu_name": gpu_name, "gpu_count": count,
        "gpu_memory_gb": memory, "vcpus": _number(_VCPUS, parts),
        "ram_gb": _number(_MEMORY, parts), "region": region, "pricing": pricing,
        "price_usd_per_hour": per_hour, "gpu_only": False,
    }


def _tables(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    priced = [t for t in read_tables(soup)
              if t.column("machine") is not None and t.column("component") is not None
              and any(_column_kind(h) not in (None, ("skip", "")) for h in t.headers)]
    if not priced:
        return None
    rows: list[dict[str, Any]] = []
    skips = Skips()
    region = _region(soup)
    seen: set[tuple[str, str]] = set()
    for table in priced:
        _read_table(table, region, rows, skips, seen)
    return Parsed(rows_frame(rows), skips)


PARSER = StrategyParser(NAME, (("table", _tables),))

SOURCE = SourceDef(
    name=NAME,
    provider="gcp",
    kind="page",
    url=URL,
    example=EXAMPLES_DIR / NAME / "accelerator-optimized_2026-03-01.html",
    example_as_of="2026-03-01",
    fetch_fn=fetch,
    parse_fn=PARSER,
)
