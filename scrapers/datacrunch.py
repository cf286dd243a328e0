"""DataCrunch (renamed Verda in 2025) GPU instance prices from its public products page (no
key): https://datacrunch.io/products.

Layout known (../shared/captures/REAL_PAGES.md, "Pages of nine more providers"), 2025: one
HTML `<table>` (styled-components class names, so read by header text only): Instance name /
GPU model / GPU (the count) / CPU / RAM / VRAM (the instance's total) / P2P / On demand price
/ Dynamic price / Spot price, cells like "$3.64/h". Prices are **per instance** ("1B200.30V"
$3.64/h, "8B200.240V" $29.10/h): the count column gives gpu_count, per-GPU = price / count.
A page excerpt cut inside the table (no `<table>` element left) is read the same way.
Decisions:
- "Dynamic price" is skipped (counted "dynamic price (re-priced daily)"): the footnote says
  dynamically-priced instances update daily even after deployment, unlike on-demand prices,
  which are fixed once deployed. The closed pricing set has no class for a non-interruptible
  price that moves under a running instance, and filing it as on_demand would let a price
  that cannot be held undercut the fixed one in every ranking.
- Spot prices are stored as `spot`; "Contact sales" or "-" cells are skipped, counted; a
  price in EUR (the company is in Finland) is never stored as USD (counted "non-USD price").
Not on the page: regions (DataCrunch runs in Finland and Iceland; the table does not split
prices by location), availability, billing increment. DataCrunch's public API
(`GET https://api.datacrunch.io/v1/instance-types`, `price_per_hour` and spot prices) needs
OAuth2 client credentials; the page stays the keyless default.
"""

from __future__ import annotations

from typing import Any

import httpx
from bs4 import BeautifulSoup

from scrapers._neocloud import (
    Layout,
    json_ld_reader,
    loose_table,
    page_rows,
    read_price_table,
)
from scrapers.base import EXAMPLES_DIR, HttpSettings, Parsed, RawCapture, Skips, SourceDef
from scrapers.http import request
from scrapers.pagekit import StrategyParser, read_tables

__all__ = ["NAME", "SOURCE", "URL", "fetch", "parse"]

NAME = "datacrunch"
BASE = "https://datacrunch.io"
PATH = "/products"
URL = BASE + PATH
LAYOUT = Layout(provider=NAME)


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/html"})


def _tables(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    tables = read_tables(soup)
    loose = loose_table(soup)
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for table in [*tables, *([loose] if loose is not None else [])]:
        rows += read_price_table(table, LAYOUT, skips, section=table.caption,
                                 fetched_at=raw.fetched_at)
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
    example=EXAMPLES_DIR / NAME / "products_2025-08-08.html",
    example_as_of="2025-08-08",
    fetch_fn=fetch,
    parse_fn=parse,
)
