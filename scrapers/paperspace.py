"""Paperspace (DigitalOcean) machine prices: https://www.paperspace.com/pricing (no key).

No raw copy of this page was found (PAGES.md §3), so its HTML structure is unverified and the
parser is driven by table headers, not by CSS classes: any `<table>` with an hourly-price
column and a machine or GPU column is read; columns are recognised by their header words.
Facts it relies on: prices are per machine (not per GPU) per hour; each machine type also has
a monthly subscription price (a flat rate for the month, i.e. a one-month commitment), and
hourly machines pay a monthly access & storage fee on top of their usage (from $5/month for
50 GB; support.paperspace.com "Virtual Machine Billing Overview"). So:
- hourly price -> on_demand, with the monthly fee (a "fee" column) in monthly_fee_usd, never
  folded into the hourly price;
- monthly subscription price (a "monthly" column that is not a fee) -> reserved, quoted as its
  hourly equivalent over an average month (730 h).
Multi-GPU machines carry the count in their name ("A100-80Gx8") or GPU cell ("8x H100").
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

NAME = "paperspace"
BASE = "https://www.paperspace.com"
PATH = "/pricing"
URL = BASE + PATH
HOURS_PER_MONTH = 730
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")
_COUNT_SUFFIX = re.compile(r"x\s*(\d{1,2})\s*$", re.IGNORECASE)  # not RTX5000
_COUNT_PREFIX = re.compile(r"^\s*(\d+)\s*x\s+", re.IGNORECASE)
# GPU cells of CPU-only machines: empty, a dash, "None", "CPU ...", or a CPU machine name (C5).
_NO_GPU = re.compile(r"^(?:|-|—|–|none|n/a|cpu.*|c\d+)$", re.IGNORECASE)


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/html"})


def _columns(header: list[str]) -> dict[str, int]:
    """Column index by role, from the header words."""
    roles: dict[str, int] = {}
    for index, cell in enumerate(header):
        text = cell.lower()
        if "fee" in text:
            role = "fee"
        elif "hour" in text or "/hr" in text:
            role = "hourly"
        elif "month" in text:
            role = "monthly"
        elif "gpu" in text and ("mem" in text or "vram" in text):
            role = "gpu_memory"
        elif "gpu" in text:
            role = "gpu"
        elif "machine" in text or "instance" in text or text == "name":
            role = "machine"
        elif "cpu" in text:
            role = "vcpus"
        elif "ram" in text or "memory" in text:
            role = "ram"
        else:
            continue
        roles.setdefault(role, index)
    return roles


def _money(text: str | None) -> float | None:
    match = _NUMBER.search((text or "").replace(",", ""))
    return float(match.group(1)) if match and "$" in (text or "") else None


def _number(text: str | None) -> float | None:
    match = _NUMBER.search((text or "").replace(",", ""))
    return float(match.group(1)) if match else None


def _table_rows(table: Tag) -> list[list[str]]:
    return [[c.get_text(" ", strip=True) for c in tr.find_all(["th", "td"])]
            for tr in table.find_all("tr")]


def _gpu_count(machine: str, gpu: str) -> tuple[float, str]:
    """(count, GPU name without its count) from "A100-80Gx8" / "8x NVIDIA H100"."""
    if match := _COUNT_PREFIX.match(gpu):
        return float(match.group(1)), gpu[match.end():].strip()
    if match := _COUNT_SUFFIX.search(machine):
        return float(match.group(1)), gpu
    return 1.0, gpu


def _rows_of(table: list[list[str]]) -> list[dict[str, Any]]:
    header, *body = table
    cols = _columns(header)
    if "hourly" not in cols or not ({"machine", "gpu"} & cols.keys()):
        return []
    rows: list[dict[str, Any]] = []
    for cells in body:
        if len(cells) < len(header):
            continue

        def cell(role: str, cells: list[str] = cells) -> str | None:
            return cells[cols[role]] if role in cols else None

        machine = cell("machine") or cell("gpu") or ""
        gpu_text = cell("gpu") or machine
        if _NO_GPU.match(gpu_text.strip()):
            continue  # a CPU-only machine has no GPU to price
        count, gpu_name = _gpu_count(machine, gpu_text)
        common = {
            "provider": "paperspace",
            "offering": machine,
            "gpu_name": gpu_name,
            "gpu_count": count,
            "gpu_memory_gb": _number(cell("gpu_memory")),
            "vcpus": _number(cell("vcpus")),
            "ram_gb": _number(cell("ram")),
            "region": GLOBAL_REGION,
        }
        hourly = _money(cell("hourly"))
        if hourly and hourly > 0:
            rows.append({**common, "pricing": "on_demand", "price_usd_per_hour": hourly,
                         "monthly_fee_usd": _money(cell("fee"))})
        monthly = _money(cell("monthly"))
        if monthly and monthly > 0:
            rows.append({**common, "pricing": "reserved",
                         "price_usd_per_hour": round(monthly / HOURS_PER_MONTH, 6)})
    return rows


def parse(raw: RawCapture) -> pl.DataFrame:
    soup = BeautifulSoup(raw.text(), "lxml")
    tables = [_table_rows(t) for t in soup.find_all("table")]
    priced = [t for t in tables if t and "hourly" in _columns(t[0])]
    if not priced:
        raise ParseError("paperspace: no table with an hourly price column (layout changed?)")
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for table in priced:
        for row in _rows_of(table):
            key = (row["offering"], row["pricing"])
            if key not in seen:
                seen.add(key)
                rows.append(row)
    return rows_frame(rows)


SOURCE = SourceDef(
    name=NAME,
    provider="paperspace",
    kind="page",
    url=URL,
    example=EXAMPLES_DIR / "paperspace" / "pricing_2026-03-21.html",
    example_as_of="2026-03-21",
    history_urls=(URL,),
    fetch_fn=fetch,
    parse_fn=parse,
)
