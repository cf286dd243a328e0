"""Fluidstack GPU prices from its public pricing page (no key): https://www.fluidstack.io/pricing.

Layouts known (../shared/captures/REAL_PAGES.md, "Pages of nine more providers"):
- 2023: GPU component prices: the GPU alone per hour, with vCPU and RAM billed per unit
  beside it, and a 6-month commitment column. Stored with `gpu_only=True` (the price covers
  the GPU, not the VM), decided from the page itself: a vCPU or RAM price ("$0.009 / vCPU / hr",
  a "vCPU" row with an amount) or the words "billed separately". vCPU/RAM rows are not GPU
  offers (skipped, counted "not a GPU offering").
- 2025: `<table class="pricing_table">`: Model / VRAM (GB) / Max vCPUs per GPU / Max RAM (GB)
  per GPU / On-Demand Price (/hr) / 1 Year price (/hr); "n/a" cells (skipped, counted).
Rows are GPU models ("per GPU" caps), so each is a 1-GPU offering priced per GPU-hour.
Commitment columns are `reserved`, the term in the offering ("Nvidia H200 (1 Year commitment)",
"(6 Months commitment)"). "Max" caps are not the offering's vCPUs/RAM (left null).
Not on the page: regions, availability, billing increment. Fluidstack publishes no price API
without an account; the page is the source.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any

from contract import HttpSettings, Parsed, RawCapture, Skips
from contract.prices import clean_text
from scrapers._neocloud import Layout, json_ld_reader, page_rows, read_price_table
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request
from scrapers.pagekit import StrategyParser, Table, grid_tables, read_tables

if TYPE_CHECKING:
    import httpx
    from bs4 import BeautifulSoup

__all__ = ["NAME", "SOURCE", "URL", "fetch", "parse"]

NAME = "fluidstack"
BASE = "https://www.fluidstack.io"
PATH = "/pricing"
URL = BASE + PATH
LAYOUT = Layout(provider=NAME, rows_are_gpus=True)
# A price per vCPU or per GB of RAM, or words saying the host is billed apart from the GPU.
_COMPONENT_PRICE = re.compile(
    r"\$\s*\d[\d.,]*\s*(?:/|per)\s*(?:v?CPU|core|GB|GiB)\b"
    r"|(?:vCPUs?|RAM|memory)\b[^.]{0,80}\bbilled\s+separately", re.I)
_COMPONENT_ROW = re.compile(r"^\s*(?:v?CPUs?|RAM|Memory|System\s+RAM)\b", re.I)
# A vCPU or RAM column whose header carries a unit price ("Max RAM (GB) per GPU ($0.005/hr)").
_COMPONENT_HEADER = re.compile(r"\b(?:v?CPUs?|RAM|memory)\b.*\$\s*\d", re.I)


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/html"})


def _gpu_only(soup: BeautifulSoup, tables: list[Table]) -> bool:
    """True when the page prices vCPU or RAM as components beside the GPU: in its text, in a
    vCPU/RAM row, or in a vCPU/RAM column header ("Max vCPUs per GPU ($0.01/hr)")."""
    if _COMPONENT_PRICE.search(clean_text(soup.get_text(" ", strip=True))):
        return True
    return any(_COMPONENT_ROW.match(row[0]) and "$" in " ".join(row[1:])
               for table in tables for row in table.rows if row) or any(
        _COMPONENT_HEADER.search(header) for table in tables for header in table.headers)


def _read(raw: RawCapture, soup: BeautifulSoup, tables: list[Table]) -> Parsed:
    layout = dataclasses.replace(LAYOUT, gpu_only=_gpu_only(soup, tables))
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for table in tables:
        rows += read_price_table(table, layout, skips, section=table.caption,
                                 fetched_at=raw.fetched_at)
    return page_rows(rows, skips)


def _tables(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    return _read(raw, soup, read_tables(soup))


def _grid(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    """The 2023 div grid: header cells then `.pricing-row` rows, found by shape."""
    return _read(raw, soup, grid_tables(soup))


parse = StrategyParser(NAME, (
    ("json-ld", json_ld_reader(LAYOUT)),
    ("table", _tables),
    ("grid", _grid),
))

SOURCE = SourceDef(
    name=NAME,
    provider=NAME,
    kind="page",
    url=URL,
    example=EXAMPLES_DIR / NAME / "pricing_2025-03-03.html",
    example_as_of="2025-03-03",
    fetch_fn=fetch,
    parse_fn=parse,
)
