"""Modal serverless GPU prices: the public pricing page https://modal.com/pricing.

Facts (../shared/captures/PAGES.md §5): a server-rendered SvelteKit page. Each compute price is
a `div.line-item` holding the name ("Nvidia H100", "Nvidia A100, 80 GB") and a `p.price`
("$0.001097 / sec"). GPU prices are USD per second per GPU; CPU ("/ core / sec") and memory
("/ GiB / sec") line items sit beside them and are not GPU offers. A client-side toggle can
show per-hour text instead, so "/ h" and "/ hr" units are read too. Class names carry svelte
hashes, so only the stable `line-item` / `price` classes are matched. Line items that are not
a per-GPU price (CPU, memory) are counted as skipped (`SOURCE.parse_report(raw).skips`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from contract import GLOBAL_REGION, HttpSettings, Parsed, ParseError, RawCapture, Skips, rows_frame
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request
from scrapers.pagekit import StrategyParser, visible

if TYPE_CHECKING:
    import httpx
    from bs4 import BeautifulSoup, Tag

URL = "https://modal.com/pricing"
SECONDS_PER_HOUR = 3600

# "$0.001097 / sec", "$3.95 / h": amount, then the unit words after the slash.
_PRICE = re.compile(r"\$\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*/\s*(.+)$")
_PER_SECOND = {"sec", "s", "second"}
_PER_HOUR = {"h", "hr", "hour"}
# Memory written into the name ("Nvidia A100, 80 GB"): per GPU.
_NAME_MEMORY = re.compile(r"(\d{1,3})\s*GB\b", re.IGNORECASE)


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url("modal", "https://modal.com") + "/pricing"
    return request(client, settings, "modal", "GET", url,
                   headers={"Accept": "text/html,application/xhtml+xml"})


def _text(tag: Tag) -> str:
    return " ".join(tag.get_text(" ", strip=True).split())


def _gpu_line(item: Tag) -> tuple[str, float] | None:
    """(name, USD per hour) for a GPU line item; None for CPU, memory or anything else."""
    price_tag = item.find("p", class_="price")
    name_tag = item.find("p")
    if price_tag is None or name_tag is None or name_tag is price_tag:
        return None
    match = _PRICE.search(_text(price_tag))
    if not match:
        return None
    amount = float(match.group(1).replace(",", ""))
    unit = match.group(2).strip().lower()
    # "/ core / sec" and "/ GiB / sec" price CPU cores and memory, not a GPU.
    if unit in _PER_SECOND:
        return _text(name_tag), amount * SECONDS_PER_HOUR
    if unit in _PER_HOUR:
        return _text(name_tag), amount
    return None


def _line_items(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    """The `cards` strategy: visible `div.line-item` cards (2025 SvelteKit page)."""
    items = visible(soup.select("div.line-item"))
    if not items:
        return None  # not this layout: the StrategyParser says which strategies were tried
    rows: list[dict[str, Any]] = []
    skips = Skips()
    seen: set[str] = set()
    for item in items:
        line = _gpu_line(item)
        if line is None:
            skips.skip("not a per-GPU price (CPU, memory)")
            continue
        if line[0] in seen:  # a page rendered with both toggle states: keep the first
            continue
        name, per_hour = line
        seen.add(name)
        memory = _NAME_MEMORY.search(name)
        rows.append({
            "provider": "modal",
            "offering": name,
            "gpu_name": name,
            "gpu_count": 1.0,
            "gpu_memory_gb": float(memory.group(1)) if memory else None,
            "region": GLOBAL_REGION,
            "pricing": "serverless",
            "price_usd_per_hour": per_hour,
            "billing_increment_s": 1,
            "available": None,  # the pricing page says nothing of capacity
        })
    if not rows:
        raise ParseError(f"modal: {len(items)} line items but no per-GPU price "
                         "('$x / sec'); price table layout changed?")
    return Parsed(rows_frame(rows), skips)


# Layouts: `cards` = div.line-item + p.price, modal.com/pricing 2025 (rendered capture of
# 2025-06-12). Anything else -> ParseError naming the strategies tried.
parse = StrategyParser(source="modal", strategies=(("cards", _line_items),))

SOURCE = SourceDef(
    name="modal",
    provider="modal",
    kind="page",
    url=URL,
    example=EXAMPLES_DIR / "modal" / "pricing_2025-06-12.html",
    example_as_of="2025-06-12",
    history_urls=(URL,),
    fetch_fn=fetch,
    parse_fn=parse,
)
