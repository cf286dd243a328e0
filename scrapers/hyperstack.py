"""Hyperstack (NexGen Cloud) GPU prices from its public page (no key):
https://www.hyperstack.cloud/gpu-pricing.

Layouts known (../shared/captures/REAL_PAGES.md; other dates read through other projects'
saved Wayback excerpts):
- 2024 (Wayback 2024-08): a sortable HTML `<table>`: GPU Model / VRAM (GB) / Max pCPUs per
  GPU / Max RAM (GB) per GPU / "Pricing Per Hour" / "Reservation Pricing"; cells "$ 2.20 per
  Hour" and "Starts from $1.32/hour". The plain "Pricing Per Hour" column is the on-demand
  price (the page's main one): a price column whose header and section name no kind is read
  as on-demand here (Layout.plain_price), never a "Starting from" one.
- 2025-2026 (Wayback 2025-07, saved 2026): HubSpot div cards, each titled by an h3
  ("On-Demand GPU Pricing", "Reservation Pricing", "Spot VM Pricing", "On-Demand CPU
  Pricing") over a head row (`.page-price_card_head_item`) and rows
  (`.page-price_card_row_item` > `..._row_item_col`). Every grid is read wherever it sits
  (an excerpt cut inside a card loses the card element and its title: the grid's own "Pricing
  Per Hour" header still makes it on-demand). A column's own words ("Spot VM") come first,
  then the card's title.
Decisions:
- Rows are GPU models, not instances: the columns "Max pCPUs per GPU" and "Max RAM (GB) per
  GPU" make each row one GPU priced per GPU-hour (gpu_count 1). The unit, "Per Hour", is
  stated once; the reservation and spot cards list bare amounts, read as hourly too.
- Reservation prices are "Starting from" floors with no term on the page: stored as `reserved`
  with the offering "<GPU> (reserved, term not stated)", so they never pass for a known term.
- "Max" caps are not the offering's vCPUs/RAM (left null).
- The page says "billed per minute" (2026): billing_increment_s = 60, read from the page.
- Short forms spelled out in gpu_name (the offering keeps the page's words): "RTX Pro 6000
  SE" is the RTX PRO 6000 Blackwell Server Edition; "H100 NVLink" / "A100 NVLink" are
  Hyperstack's PCIe cards joined by NVLink bridges (its product pages and its 2024 table say
  "H100 PCIe NVLink"; priced beside the PCIe card, far below H100 SXM), stored as "NVIDIA
  H100 PCIe NVLink". The catalog keeps "H100 NVLink" = SXM for other providers (Nebius'
  2024 cards write it for its HGX boards), so this is Hyperstack's reading, not the catalog's.
- "NVIDIA RTX A6000/A40" (2024) is one offer served by either card at one price; the catalog
  files it under RTX A6000 (the card the later pages name alone, "NVIDIA A6000").
Not on the page: regions (Hyperstack runs in Canada, Norway and the US; prices are not split
by region), availability. Hyperstack's API has a pricebook (`GET /pricebook`, hourly costs of
every resource; needs an API key); the page stays the keyless default.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any

from contract import HttpSettings, Parsed, RawCapture, Skips
from contract.prices import clean_text
from scrapers._neocloud import (
    Layout,
    billing_increment_from,
    div_grid,
    json_ld_reader,
    page_rows,
    read_price_table,
)
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request
from scrapers.pagekit import StrategyParser, is_hidden, read_tables

if TYPE_CHECKING:
    import httpx
    from bs4 import BeautifulSoup

__all__ = ["NAME", "SOURCE", "URL", "fetch", "parse"]

NAME = "hyperstack"
BASE = "https://www.hyperstack.cloud"
PATH = "/gpu-pricing"
URL = BASE + PATH


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/html"})


def _gpu_name(shown: str) -> str:
    """The page's short forms spelled out: "RTX Pro 6000 SE", "H100 NVLink" (a PCIe card)."""
    name = re.sub(r"\bSE\s*$", "Server Edition", shown)
    return re.sub(r"\b(H100|A100)\s+NVLink\b", r"\1 PCIe NVLink", name)


LAYOUT = Layout(provider=NAME, rows_are_gpus=True, default_period="hour", gpu_name=_gpu_name,
                plain_price="on_demand")


def _layout(soup: BeautifulSoup) -> Layout:
    return dataclasses.replace(LAYOUT, billing_increment_s=billing_increment_from(
        soup.get_text(" ", strip=True)))


def _tables(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    layout = _layout(soup)
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for table in read_tables(soup):
        rows += read_price_table(table, layout, skips, section=table.caption,
                                 fetched_at=raw.fetched_at)
    return page_rows(rows, skips)


def _cards(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    layout = _layout(soup)
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for head in soup.select(".page-price_card_head"):
        grid = head.parent
        if grid is None or is_hidden(grid):
            continue
        card = grid.find_parent(class_="page-price_card")
        title = (card.select_one(".page-price_card_top h3, h3, h2") if card is not None
                 else None) or grid.find_previous(["h2", "h3"])
        skips.skip("hidden row", sum(
            1 for r in grid.select(".page-price_card_row_item") if is_hidden(r)))
        table = div_grid(grid, header_cells=".page-price_card_head_item",
                         rows=".page-price_card_row_item", cells=".page-price_card_row_item_col",
                         caption=clean_text(title.get_text(" ", strip=True)) if title else "")
        if table is not None:
            rows += read_price_table(table, layout, skips, section=table.caption,
                                     fetched_at=raw.fetched_at)
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
    example=EXAMPLES_DIR / NAME / "gpu-pricing_2026-03-02.html",
    example_as_of="2026-03-02",
    fetch_fn=fetch,
    parse_fn=parse,
)
