"""RunPod Serverless GPU prices: the docs' per-second table (no key).

Fetched from the source of the docs snippet, runpod/docs `snippets/serverless-gpu-pricing-
table.mdx` (PAGES.md §2: the snippet outlived the pricing section of serverless/pricing.mdx).
A markdown table (or the same table rendered to HTML by the docs site):
| GPU type(s) | Memory | Flex cost per second | Active cost per second | Description |
Facts: prices are USD per second per worker GPU, billed by the second (a price shown in another
currency is a ParseError, never read as dollars). Flex workers scale to
zero; active workers run always-on at a 20-30 % discount. The 2026-05 revision keeps one
"Cost per second" column, which carries the flex rates (same figures as the earlier Flex
column, docs.runpod.io/serverless/pricing), so it is read as flex. A row is a GPU class
("L4, A5000, 3090"; "4090 PRO"): the class, with the worker type, is the offering, and each
GPU in it is a row of its own so that every card maps to the catalog.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from contract import GLOBAL_REGION, HttpSettings, ParseError, RawCapture, rows_frame
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request
from scrapers.pagekit import foreign_currency

if TYPE_CHECKING:  # bs4 is imported where a page is read (start-up: BENCHMARKS §18)
    import httpx
    import polars as pl

NAME = "runpod-serverless"
BASE = "https://raw.githubusercontent.com"
PATH = "/runpod/docs/main/snippets/serverless-gpu-pricing-table.mdx"
URL = BASE + PATH
SECONDS_PER_HOUR = 3600
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")
# The docs' short names -> (GPU name the catalog knows, its memory when it differs from the
# class's memory: an A4500 has 20 GB in the "16 GB" class). "PRO" marks a tier, not a card,
# except in "6000s PRO", RunPod's name for the RTX PRO 6000.
_SHORT_NAMES: dict[str, tuple[str, float | None]] = {
    "A4000": ("RTX A4000", 16), "A4500": ("RTX A4500", 20), "RTX 4000": ("RTX 4000 Ada", 20),
    "A5000": ("RTX A5000", 24), "A6000": ("RTX A6000", 48), "3090": ("RTX 3090", 24),
    "4090": ("RTX 4090", 24), "5090": ("RTX 5090", 32), "6000 Ada": ("RTX 6000 Ada", 48),
    "6000s": ("RTX PRO 6000", 96), "A100": ("A100", 80),
}


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/plain"})


def _markdown_tables(text: str) -> list[list[list[str]]]:
    tables: list[list[list[str]]] = []
    current: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        stripped = line.strip()
        if stripped.startswith("|"):
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if not all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                current.append([c.replace("**", "").strip() for c in cells])
        elif current:
            tables.append(current)
            current = []
    return tables


def _html_tables(text: str) -> list[list[list[str]]]:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(text, "lxml")
    return [[[c.get_text(" ", strip=True) for c in tr.find_all(["th", "td"])]
             for tr in table.find_all("tr")] for table in soup.find_all("table")]


def _price_columns(header: list[str]) -> list[tuple[int, str]]:
    """(column, worker type) for each per-second price column."""
    columns = []
    for index, cell in enumerate(header):
        lowered = cell.lower()
        if "flex" in lowered:
            columns.append((index, "flex"))
        elif "active" in lowered:
            columns.append((index, "active"))
        elif "cost" in lowered or "price" in lowered:
            columns.append((index, "flex"))  # the single-column revision lists flex rates
    return columns


def _gpu(short: str, class_memory: float | None) -> tuple[str, float | None]:
    name = re.sub(r"\s+PRO$", "", short.strip(), flags=re.IGNORECASE)
    full, memory = _SHORT_NAMES.get(name, (name, None))
    return full, memory or class_memory


def _number(text: str) -> float | None:
    match = _NUMBER.search(text.replace(",", ""))
    return float(match.group(1)) if match else None


def parse(raw: RawCapture) -> pl.DataFrame:
    text = raw.text()
    tables = _markdown_tables(text) or _html_tables(text)
    priced = [t for t in tables if t and any("gpu" in c.lower() for c in t[0])
              and _price_columns(t[0])]
    if not priced:
        raise ParseError("runpod-serverless: no 'GPU type(s)' table with a per-second price "
                         "column (layout changed?)")
    rows: list[dict[str, Any]] = []
    for header, *body in priced:
        gpu_col = next(i for i, c in enumerate(header) if "gpu" in c.lower())
        memory_col = next((i for i, c in enumerate(header) if "memory" in c.lower()), None)
        for cells in body:
            if len(cells) < len(header) or not cells[gpu_col]:
                continue
            group = cells[gpu_col]
            class_memory = _number(cells[memory_col]) if memory_col is not None else None
            for column, worker in _price_columns(header):
                currency = foreign_currency(cells[column])
                if currency:
                    raise ParseError(f"runpod-serverless: {group!r} is priced in {currency} "
                                     f"({cells[column]!r}), not US dollars")
                per_second = _number(cells[column])
                if not per_second or per_second <= 0:
                    continue
                for short in group.split(","):
                    gpu_name, memory = _gpu(short, class_memory)
                    rows.append({
                        "provider": "runpod",
                        "offering": f"serverless {group} ({worker})",
                        "gpu_name": gpu_name,
                        "gpu_count": 1.0,
                        "gpu_memory_gb": memory,
                        "region": GLOBAL_REGION,
                        "pricing": "serverless",
                        "price_usd_per_hour": round(per_second * SECONDS_PER_HOUR, 6),
                        "billing_increment_s": 1,
                    })
    return rows_frame(rows)


SOURCE = SourceDef(
    name=NAME,
    provider="runpod",
    kind="page",
    url=URL,
    example=EXAMPLES_DIR / "runpod-serverless" / "serverless-gpu-pricing-table_2025-10-01.mdx",
    example_as_of="2025-10-01",
    fetch_fn=fetch,
    parse_fn=parse,
)
