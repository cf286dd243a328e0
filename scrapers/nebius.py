"""Nebius AI Cloud GPU prices from its public price page (no key): https://nebius.com/prices.

Layouts known (../shared/captures/REAL_PAGES.md, "Pages of nine more providers"):
- 2024: whole instances priced per hour, the GPU count in the item ("8 × H200 SXM"): stored
  per instance (gpu_count 8, per-GPU = price / 8).
- 2026: page-constructor div tables (`pc-highlight-table-block__head/__row/__cell`, no
  `<table>`), priced per GPU-hour: "NVIDIA GPU Instances" (Item / vCPUs / RAM, GB /
  "On-demand, GPU-hour" / "GPU-hour (Effective October 1, 2026)") and "Preemptible NVIDIA GPU
  Instances" ("Spot price, GPU-hour*"). Real `<table>`s are read the same way.
Decisions:
- The "Effective <date>" column announces future prices: skipped (counted) for captures
  fetched before that date; from that date it is the on-demand price and the plain column is
  the superseded one. The capture's own fetched_at decides, so the parse stays pure.
- Preemptible cells read "from $0.79", and footnote "*" says spot prices are dynamic (shown
  only in the console, changing as often as every 15 minutes): a floor, not a price, so
  skipped ("spot floor", counted). A cell whose footnote says it is billed at a flat rate
  (L40S, "**") is a real price and is stored as spot.
- "from $1.55" on-demand (L40S, vCPU/RAM ranges "8-40") is the smallest configuration's
  price: stored. "Contact us" (GB200/GB300 NVL72) is skipped, counted.
- Per-GPU rows name no instance size: each is a 1-GPU offering at the per-GPU-hour price.
  "NVIDIA L40S with Intel CPU" is offering; its GPU is "NVIDIA L40S".
Not on the page: regions, availability, billing increment. No public price API is known
(the console's calculator needs an account); the page is the source.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
from bs4 import BeautifulSoup, Tag

from scrapers._neocloud import (
    Layout,
    div_grid,
    footnotes,
    json_ld_reader,
    page_rows,
    read_price_table,
)
from scrapers.base import EXAMPLES_DIR, HttpSettings, Parsed, RawCapture, Skips, SourceDef
from scrapers.http import request
from scrapers.pagekit import StrategyParser, Table, clean_text, read_tables

__all__ = ["NAME", "SOURCE", "URL", "fetch", "parse"]

NAME = "nebius"
BASE = "https://nebius.com"
PATH = "/prices"
URL = BASE + PATH
_BLOCK_HEAD = re.compile(r"^(pc-[\w-]+)__head$")


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/html"})


def _gpu_name(shown: str) -> str:
    """"NVIDIA L40S with Intel CPU" -> "NVIDIA L40S" (the host CPU is not the GPU)."""
    return re.sub(r"\s+with\s+.*$", "", shown, flags=re.I)


LAYOUT = Layout(provider=NAME, gpu_name=_gpu_name)


def _div_tables(soup: BeautifulSoup) -> list[Table]:
    """page-constructor tables: `<block>__head` and `<block>__body` rows of `<block>__cell`."""
    tables: list[Table] = []
    for head in soup.find_all(class_=_BLOCK_HEAD):
        block = next(m.group(1) for c in head.get("class") or () if (m := _BLOCK_HEAD.match(c)))
        container = head.parent
        if not isinstance(container, Tag):
            continue
        title = head.find_previous(["h1", "h2", "h3", "h4"])
        table = div_grid(container, header_cells=f".{block}__head .{block}__cell",
                         rows=f".{block}__body .{block}__row", cells=f".{block}__cell",
                         caption=clean_text(title.get_text(" ", strip=True)) if title else "")
        if table is not None:
            tables.append(table)
    return tables


def _tables(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    notes = footnotes(soup)
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for table in [*read_tables(soup), *_div_tables(soup)]:
        rows += read_price_table(table, LAYOUT, skips, section=table.caption,
                                 fetched_at=raw.fetched_at, notes=notes)
    return page_rows(rows, skips)


parse = StrategyParser(NAME, (
    ("json-ld", json_ld_reader(LAYOUT)),
    ("table", _tables),
))

SOURCE = SourceDef(
    name=NAME,
    provider=NAME,
    kind="page",
    url=URL,
    example=EXAMPLES_DIR / NAME / "prices_2026-03-02.html",
    example_as_of="2026-03-02",
    fetch_fn=fetch,
    parse_fn=parse,
)
