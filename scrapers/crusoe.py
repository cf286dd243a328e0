"""Crusoe Cloud GPU prices from its public pricing page (no key): https://www.crusoe.ai/cloud/pricing.

The page moved from crusoecloud.com/pricing (2024-2025) to crusoe.ai/cloud/pricing. Layouts
known (../shared/captures/REAL_PAGES.md, "Pages of nine more providers"):
- 2025: an HTML `<table>`, one row per GPU, with On-Demand / Spot / 6-month / 1-year / 3-year
  columns, per GPU-hour. Read as a table by header text; terms go into the offering
  ("NVIDIA H100 80GB HGX (6 Months commitment)", pricing `reserved`).
- late 2025 - 2026: a Webflow CMS list (`.w-dyn-item`) under a heading row "GPU model /
  On-demand / Current spot"; each item has the model (h4), tags (memory "80GB", form factor
  "HGX" / "SXM" / "PCIe" / "NVL72") and one rich-text cell per column: "$3.90/GPU-hr" or
  "Contact sales" (skipped, counted). Read as cards.
The same page carries a "Self-Serve Deployments" list (dedicated inference endpoints, "Price
per hour" with no on-demand/spot heading): a different product, never read as an instance.
Prices say "/GPU-hr": per GPU; an instance size is not on the page, so each row is a 1-GPU
offering. "HGX" names the SXM board: the GPU is stored as "NVIDIA HGX H100".
Not on the page: regions, availability, billing increment ("per-hour (or per-second)").
No public price API is known; the page is the source.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from contract import HttpSettings, Parsed, RawCapture, Skips
from contract.prices import clean_text
from scrapers._neocloud import Layout, json_ld_reader, page_rows, read_price_table
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request
from scrapers.pagekit import StrategyParser, Table, is_hidden, read_tables

if TYPE_CHECKING:
    import httpx
    from bs4 import BeautifulSoup, Tag

__all__ = ["NAME", "SOURCE", "URL", "fetch", "parse"]

NAME = "crusoe"
BASE = "https://www.crusoe.ai"
PATH = "/cloud/pricing"
URL = BASE + PATH
OLD_URL = "https://crusoecloud.com/pricing"  # the address until 2025; redirects now


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/html"})


def _gpu_name(shown: str) -> str:
    """"NVIDIA H100 80GB HGX" -> "NVIDIA HGX H100": memory is stored apart, HGX is SXM."""
    name = clean_text(re.sub(r"\b\d+(?:\.\d+)?\s*GB\b", " ", shown, flags=re.I))
    if re.search(r"\bHGX\b", name, re.I):
        name = "NVIDIA HGX " + clean_text(re.sub(r"\b(?:NVIDIA|HGX)\b", " ", name, flags=re.I))
    return name


LAYOUT = Layout(provider=NAME, rows_are_gpus=True, gpu_name=_gpu_name)


def _tables(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for table in read_tables(soup):
        rows += read_price_table(table, LAYOUT, skips, section=table.caption,
                                 fetched_at=raw.fetched_at)
    return page_rows(rows, skips)


def _section(heading_row: Tag) -> str:
    """The title of a list's section and the description under it ("Self-Serve Deployments
    pricing. Spin up dedicated endpoints ...")."""
    title = heading_row.find_previous(["h2", "h3"])
    if title is None:
        return ""
    words = [title.get_text(" ", strip=True)]
    description = heading_row.find_previous("p")
    if description is not None and description.find_previous(["h2", "h3"]) is title:
        words.append(description.get_text(" ", strip=True))
    return clean_text(" ".join(words))


def _cards(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    """Each heading row ("GPU model / On-demand / Current spot") and the list items after it;
    a column its header does not name is named by the list's section ("Self-Serve Deployments
    ... dedicated endpoints": inference)."""
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for heading_row in soup.select(".pricing-table-heading"):
        headers = [clean_text(h.get_text(" ", strip=True))
                   for h in heading_row.select(".pricing-heading")]
        parent = heading_row.parent
        if is_hidden(heading_row) or len(headers) < 2 or parent is None:
            continue
        cells_of: list[list[str]] = []
        for item in parent.select(".w-dyn-item"):
            if is_hidden(item):
                skips.skip("hidden row")
                continue
            heading = item.select_one("h1, h2, h3, h4, h5, .pricing-item-heading")
            if heading is None:
                continue
            tags = [clean_text(t.get_text(" ", strip=True)) for t in item.select(".pricing-tag")]
            name = clean_text(" ".join([heading.get_text(" ", strip=True), *tags]))
            cells = [clean_text(c.get_text(" ", strip=True))
                     for c in item.select(".pricing-rich")]
            cells_of.append([name, *cells])
        if cells_of:
            rows += read_price_table(Table(headers=headers, rows=cells_of), LAYOUT, skips,
                                     section=_section(heading_row), fetched_at=raw.fetched_at)
    return page_rows(rows, skips)


parse = StrategyParser(NAME, (
    ("json-ld", json_ld_reader(LAYOUT)),
    ("table", _tables),
    ("cards", _cards),
))

SOURCE = SourceDef(
    name=NAME,
    provider=NAME,
    kind="page",
    url=URL,
    example=EXAMPLES_DIR / NAME / "pricing_2026-03-02.html",
    example_as_of="2026-03-02",
    fetch_fn=fetch,
    parse_fn=parse,
)
