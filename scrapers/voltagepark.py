"""Voltage Park GPU prices: the public page https://www.voltagepark.com/pricing (no key).

Layout known: 2025-07-12 (Wayback, ../shared/captures/voltagepark): Webflow offer cards. Each
offer starts with an eyebrow title (`div.text-eyebrow`: "On-Demand, Ethernet", "On-demand,
3200 Gbps Infiniband", "Long-Term Reserve"), then a price heading ("$1.99/hr") and a feature
list ("1-1016 HGX H100 GPUs for your bursts and experimentation.", "Self-serve. Up within 15
mins. No minimum terms."). The parser walks the page in document order from one title to the
next, so a card cut or nested differently still reads.

Price basis: "$1.99/hr" does not say "per GPU", but the card offers "1-1016 HGX H100 GPUs" at
that one rate: a single rate for any count from one GPU up is a rate per GPU-hour. So an offer
whose features give a GPU range is stored per GPU (gpu_count 1, the whole offering being one
GPU-hour), one offering per network fabric, with the smallest count in the offering name
when it is above one ("8-1016" on InfiniBand: sold in whole 8-GPU nodes). An offer whose text
says neither "/GPU" nor a GPU range is skipped and counted, never guessed.

Not on the page: regions (the page names none: "global"), availability, billing increment.
"Long-Term Reserve" shows no price ("Contact sales" or nothing): skipped and counted.
Price API: Voltage Park's dashboard has an API for instances but no published keyless price
list; the page is the source.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from contract import GLOBAL_REGION, HttpSettings, Parsed, RawCapture, Skips, rows_frame
from contract.prices import clean_text, parse_price
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request
from scrapers.pagekit import StrategyParser, is_hidden

if TYPE_CHECKING:  # bs4 is imported where a page is read (start-up: BENCHMARKS §18)
    import httpx
    from bs4 import BeautifulSoup, Tag

NAME = "voltagepark"
BASE = "https://www.voltagepark.com"
PATH = "/pricing"
URL = BASE + PATH

_TITLE_CLASS = "text-eyebrow"
# "1-1016 HGX H100 GPUs", "8 – 1016 H100 GPUs"
_RANGE = re.compile(r"\b(\d{1,4})\s*[-–]\s*(\d{1,5})\s+(?P<gpu>[A-Z][\w .-]*?)\s+GPUs?\b")
_KINDS = ((re.compile(r"on[\s-]?demand", re.I), "on_demand"),
          (re.compile(r"\bspot\b", re.I), "spot"),
          (re.compile(r"reserve|commit|long[\s-]?term", re.I), "reserved"))
_TERM = re.compile(r"(\d{1,2})[\s-]*(month|year)s?", re.I)


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/html"})


def _titles(soup: BeautifulSoup) -> list[Tag]:
    return [t for t in soup.find_all(True) if _TITLE_CLASS in (t.get("class") or ())
            and any(p.search(t.get_text()) for p, _ in _KINDS)]


def _segment(title: Tag, stop: Tag | None) -> list[str]:
    """The visible texts after `title` up to the next title, in page order."""
    from bs4 import NavigableString

    texts: list[str] = []
    for node in title.next_elements:
        if node is stop:
            break
        if isinstance(node, NavigableString) and node.parent is not None \
                and node.parent.name not in ("script", "style") and not is_hidden(node.parent):
            text = clean_text(str(node))
            if text:
                texts.append(text)
    return texts


def _price_text(texts: list[str]) -> str | None:
    for index, text in enumerate(texts):
        if "$" in text or "€" in text or "£" in text:
            unit = texts[index + 1] if index + 1 < len(texts) and "/" not in text else ""
            return f"{text} {unit}".strip()
    return None


def _offer(title_text: str, texts: list[str], skips: Skips) -> dict[str, Any] | None:
    kind = next((k for p, k in _KINDS if p.search(title_text)), None)
    price_text = _price_text(texts)
    joined = " ".join(texts)
    if price_text is None:
        skips.skip("contact sales" if re.search(r"contact|talk to", joined, re.I)
                     else "offer without a price")
        return None
    price = parse_price(price_text)
    if price is None:
        skips.skip("contact sales")
        return None
    if price.currency != "USD":
        skips.skip("not USD")
        return None
    if price.period != "hour":
        skips.skip(f"price per {price.period or 'unstated period'}, not per hour")
        return None
    gpu_range = _RANGE.search(joined)
    if gpu_range is None:  # the range names the GPU and makes the rate a per-GPU one
        skips.skip("no GPU range (price basis and GPU not stated)")
        return None
    gpu = clean_text(gpu_range.group("gpu"))
    smallest = int(gpu_range.group(1))
    detail = clean_text(title_text.split(",", 1)[1]) if "," in title_text else ""
    offering = gpu + (f", {detail}" if detail else "")
    if smallest > 1:
        offering += f" (from {smallest} GPUs)"
    if kind == "reserved":
        term = _TERM.search(joined)
        offering += (f" ({term.group(1)}-{term.group(2).lower()} commitment)" if term
                     else " (commitment, term not stated)")
    return {
        "provider": "voltagepark",
        "offering": offering,
        "gpu_name": gpu,
        "gpu_count": 1.0,
        "region": GLOBAL_REGION,
        "pricing": kind,
        "price_usd_per_hour": price.amount,
    }


def _cards(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    titles = _titles(soup)
    if not titles:
        return None
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for index, title in enumerate(titles):
        if is_hidden(title):
            skips.skip("hidden offer")
            continue
        stop = titles[index + 1] if index + 1 < len(titles) else None
        row = _offer(clean_text(title.get_text(" ", strip=True)), _segment(title, stop), skips)
        if row:
            rows.append(row)
    return Parsed(rows_frame(rows), skips)


PARSER = StrategyParser(NAME, (("cards", _cards),))

SOURCE = SourceDef(
    name=NAME,
    provider="voltagepark",
    kind="page",
    url=URL,
    example=EXAMPLES_DIR / NAME / "pricing_2025-07-12.html",
    example_as_of="2025-07-12",
    fetch_fn=fetch,
    parse_fn=PARSER,
)
