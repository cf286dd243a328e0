"""Nebius AI Cloud GPU prices from its public price page (no key): https://nebius.com/prices.

Layouts known (../shared/captures/REAL_PAGES.md; more dates read through other projects'
saved pages):
- 2024-11 (Wayback): a Gravity-UI div table (`role="table"`, rows `role="row"`, cells
  `role="cell"`, the first row the header): GPU / vRAM, GB / RAM, GB / vCPUS / On demand /
  Reserve, whole instances priced per hour ("8 × H200 SXM" $28.00 = 8 × $3.50; vRAM is the
  instance's total). Price cards above the table ("NVIDIA H200 ... $2.30 / hour", "As low as
  ...") repeat the table's prices: not rows. The unit, "/ hour", is stated by those cards only,
  so the table's bare amounts are read as hourly.
- 2026 (saved page, Wayback 2026-07): page-constructor div tables
  (`pc-highlight-table-block__head/__row/__cell`, no `<table>`), priced per GPU-hour:
  "NVIDIA GPU Instances" (Item / vCPUs / RAM, GB / "Preemptible, GPU-hour" / "On-demand,
  GPU-hour", some months a third column "GPU-hour (Effective October 1, 2026)") and in some
  months a separate "Preemptible NVIDIA GPU Instances" table ("Spot price, GPU-hour*").
- 2026-08 (live): the same tables as the page's escaped JSON state
  (`{\\"type\\":\\"highlight-table-block\\",\\"title\\":...,\\"table\\":{\\"content\\":[[header],
  [row]...]}}`), which a capture may hold without the rendered HTML: read as tables too
  (strategy "embedded-json", before the rendered tables: it is the data they are drawn from).
Decisions:
- "Effective <date>" columns announce prices: stored as on_demand with effective_from = that
  date, under "<item> (from <date>)" while the capture predates it (skipped when equal to the
  price in force); on a capture fetched on or after that date the column IS the on-demand
  price of the item and the plain column is the superseded one (skipped, counted).
- Preemptible cells read "from $0.79" where footnote "*" says spot prices are dynamic (shown
  only in the console): a floor, not a price, so skipped ("spot floor", counted). A cell
  whose footnote says it is billed at a flat rate (L40S, "**") is a real price: spot.
- "from $1.55" on-demand (L40S "with Intel/AMD CPU", vCPU/RAM ranges "8-40") is the smallest
  configuration's price: stored. "Contact us" (GB200/GB300 NVL72) and "––" are skipped.
- "Reserve" (2024: a commitment of 3 months to 3 years, per the section text) is reserved
  with the term not stated. A price column that names no kind ("Price per hour", as the CPU
  table writes it) is the on-demand price; its rows must still name a GPU.
- Per-GPU rows name no instance size: each is a 1-GPU offering at the per-GPU-hour price.
  "NVIDIA L40S with Intel CPU" is the offering; its GPU is "NVIDIA L40S".
Not on the page: regions, availability, billing increment. No public price API is known
(the console's calculator needs an account); the page is the source.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from contract import HttpSettings, Parsed, RawCapture, Skips
from contract.prices import clean_text
from scrapers._neocloud import (
    Layout,
    div_grid,
    footnotes,
    json_ld_reader,
    page_rows,
    read_price_table,
)
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request
from scrapers.pagekit import StrategyParser, Table, aria_tables, embedded_json_objects, read_tables

if TYPE_CHECKING:  # bs4 is imported where a page is read (start-up: BENCHMARKS §18)
    import httpx
    from bs4 import BeautifulSoup

__all__ = ["NAME", "SOURCE", "URL", "fetch", "parse"]

NAME = "nebius"
BASE = "https://nebius.com"
PATH = "/prices"
URL = BASE + PATH
_BLOCK_HEAD = re.compile(r"^(pc-[\w-]+)__head$")
_TABLE_BLOCK = "highlight-table-block"
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")  # markdown link: its text only
_MARK = re.compile(r"\^(\*+)\^")  # "^*^" footnote marks in the page data


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/html"})


def _gpu_name(shown: str) -> str:
    """"NVIDIA L40S with Intel CPU" -> "NVIDIA L40S" (the host CPU is not the GPU)."""
    return re.sub(r"\s+with\s+.*$", "", shown, flags=re.I)


# A price column that names no kind ("Price per hour") is the on-demand list price.
LAYOUT = Layout(provider=NAME, gpu_name=_gpu_name, default_period="hour",
                plain_price="on_demand")


def _div_tables(soup: BeautifulSoup) -> list[Table]:
    """page-constructor tables: `<block>__head` and `<block>__body` rows of `<block>__cell`."""
    from bs4 import Tag

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


def _read(tables: list[Table], raw: RawCapture, notes: dict[str, str]) -> Parsed | None:
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for table in tables:
        rows += read_price_table(table, LAYOUT, skips, section=table.caption,
                                 fetched_at=raw.fetched_at, notes=notes)
    return page_rows(rows, skips) if rows or skips else None


def _tables(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    return _read([*read_tables(soup), *aria_tables(soup), *_div_tables(soup)], raw,
                 footnotes(soup))


def _cell(value: Any) -> str:
    """A cell of the page data as the page shows it: link text, footnote marks, and a run of
    dashes ("––", not offered) as one dash."""
    text = _MARK.sub(r"\1", _LINK.sub(r"\1", str(value)))
    return re.sub(r"^\s*[-–—]+\s*$", "-", clean_text(text))


def _embedded(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    """The page's JSON state: each highlight-table-block's `table.content` is a table whose
    first row is the header."""
    tables: list[Table] = []
    for block in embedded_json_objects(raw.text(), _TABLE_BLOCK):
        content = (block.get("table") or {}).get("content") if isinstance(
            block.get("table"), dict) else None
        if not isinstance(content, list) or len(content) < 2 \
                or not all(isinstance(r, list) for r in content):
            continue
        tables.append(Table(headers=[_cell(c) for c in content[0]],
                            rows=[[_cell(c) for c in r] for r in content[1:]],
                            caption=_cell(block.get("title") or "")))
    return _read(tables, raw, footnotes(soup)) if tables else None


parse = StrategyParser(NAME, (
    ("json-ld", json_ld_reader(LAYOUT)),
    ("embedded-json", _embedded),
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
