"""Paperspace (DigitalOcean) machine prices: https://www.paperspace.com/pricing (no key).

Prices are per machine (not per GPU) per hour. Layouts it reads, tried in this order
(`gpuprices parse` names the one that read the page):

1. `table`: any visible `<table>` with an hourly-price column and a machine or GPU column,
   columns recognised by header words (our assumed layout for the bundled example, written
   from documented figures; no real page in this shape has been seen). Hourly price ->
   on_demand, with a monthly fee column in monthly_fee_usd (never folded into the hourly
   price); a monthly subscription column -> reserved at its hourly equivalent over 730 h.
   Multi-GPU machines carry the count in their name ("A100-80Gx8") or GPU cell ("8x H100").
2. `cards`, paperspace.com/pricing 2024 (Webflow, Wayback 2024-01-23): one card per machine,
   `h1.instance-names` ("A100-80G"), a price wrap "$ | h1.instance-price-2 | / hour" and spec
   items ("NVIDIA HGX H100 GPU", "16 GB GPU", "256 GB RAM", "20 vCPU"). Rules:
   - an unmarked price is the hourly on-demand price of one machine of that type;
   - a price marked with asterisks ("2.24*") is whatever its footnote ("*$2.24/hour pricing is
     for a 3-year commitment ...") says: with a stated term it is stored as `reserved`, offering
     "<name>_reserved_<term>" (H100_reserved_3y); never as on-demand. A footnote's own on-demand
     price for the same machine ("On-demand pricing for H100 is $6.00/hour") is that machine's
     on_demand row. The figure in brackets after it ("($8.96)") says nothing of what it is and
     is not read;
   - hidden elements (Webflow `hide`, `w-condition-invisible`, display:none) are never rows:
     the page keeps a hidden template remnant inside the H100 card ($3.09, "NVIDIA A100 GPU")
     and a hidden duplicate block of older cards;
   - "Multi-GPU types: 2x 4x 8x" with "multiply the specs and price by the number of GPUs" is a
     rule, not a shown price: those machines are not rows.
Rows seen but not stored are counted by reason (`SOURCE.parse_report(raw).skips`): CPU-only
machines, "Contact sales" / zero prices, hidden cards, marked prices whose footnote states no
term. A page none of these read -> ParseError naming the strategies tried.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from contract import GLOBAL_REGION, HttpSettings, Parsed, ParseError, RawCapture, Skips, rows_frame
from contract.prices import clean_text, parse_price
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request
from scrapers.pagekit import (
    StrategyParser,
    commitment_term,
    foreign_currency,
    no_price_reason,
    read_tables,
    visible,
)

if TYPE_CHECKING:  # bs4 is imported where a page is read (start-up: BENCHMARKS §18)
    import httpx
    from bs4 import BeautifulSoup, Tag

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
    """Dollars in a cell: "$2.24"; None for no amount, no "$", or another currency's dollar
    or sign ("C$2.24", "€2.24")."""
    match = _NUMBER.search((text or "").replace(",", ""))
    if not match or "$" not in (text or "") or foreign_currency(text):
        return None
    return float(match.group(1))


def _number(text: str | None) -> float | None:
    match = _NUMBER.search((text or "").replace(",", ""))
    return float(match.group(1)) if match else None


def _gpu_count(machine: str, gpu: str) -> tuple[float, str]:
    """(count, GPU name without its count) from "A100-80Gx8" / "8x NVIDIA H100"."""
    if match := _COUNT_PREFIX.match(gpu):
        return float(match.group(1)), gpu[match.end():].strip()
    if match := _COUNT_SUFFIX.search(machine):
        return float(match.group(1)), gpu
    return 1.0, gpu


def _rows_of(table: list[list[str]], skips: Skips) -> list[dict[str, Any]]:
    header, *body = table
    cols = _columns(header)
    if "hourly" not in cols or not ({"machine", "gpu"} & cols.keys()):
        return []
    rows: list[dict[str, Any]] = []
    for cells in body:
        if len(cells) < len(header):
            skips.skip("row with fewer cells than the header")
            continue

        def cell(role: str, cells: list[str] = cells) -> str | None:
            return cells[cols[role]] if role in cols else None

        machine = cell("machine") or cell("gpu") or ""
        gpu_text = cell("gpu") or machine
        if _NO_GPU.match(gpu_text.strip()):
            skips.skip("CPU-only machine")  # no GPU to price
            continue
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
        monthly = _money(cell("monthly"))
        if not (hourly and hourly > 0) and not (monthly and monthly > 0):
            skips.skip("non-USD price" if foreign_currency(cell("hourly"))
                       else no_price_reason(cell("hourly")))
        if hourly and hourly > 0:
            rows.append({**common, "pricing": "on_demand", "price_usd_per_hour": hourly,
                         "monthly_fee_usd": _money(cell("fee"))})
        if monthly and monthly > 0:
            rows.append({**common, "pricing": "reserved",
                         "price_usd_per_hour": round(monthly / HOURS_PER_MONTH, 6)})
    return rows


def _tables(raw: RawCapture, soup: BeautifulSoup) -> Parsed:
    rows: list[dict[str, Any]] = []
    skips = Skips()
    seen: set[tuple[str, str]] = set()
    for table in read_tables(soup):
        if not table.headers or "hourly" not in _columns(table.headers):
            continue
        for row in _rows_of([table.headers, *table.rows], skips):
            key = (row["offering"], row["pricing"])
            if key not in seen:
                seen.add(key)
                rows.append(row)
    return Parsed(rows_frame(rows), skips)


# --- Webflow cards (2024) -------------------------------------------------------------------

_CARD_NAME = re.compile(r"instance-names?\b")
_CARD_PRICE = re.compile(r"^instance-price(?:-\d+)?$")
_CARD_SPEC = re.compile(r"^instance-specs(?:-\d+)?$")
_NAME_MEMORY = re.compile(r"-(\d{2,3})G\b", re.IGNORECASE)  # A100-80G
_MARKER = re.compile(r"(\*+)\s*$")
# "On-demand pricing for H100 is $6.00/hour"
_FOOTNOTE_ON_DEMAND = re.compile(
    r"on[- ]demand\s+pric\w*\s+for\s+(?P<name>[\w+-]+)\s+is\s+(?P<price>\$\s*[\d.,]+\s*/\s*\w+)",
    re.IGNORECASE)


def _card_of(name_el: Tag) -> Tag | None:
    """The smallest ancestor of a card's name that holds a visible price."""
    from bs4 import Tag

    node = name_el.parent
    while isinstance(node, Tag) and node.name not in ("body", "html"):
        prices = visible(node.find_all(class_=_CARD_PRICE))
        if prices:
            return node
        node = node.parent
    return None


def _footnotes(soup: BeautifulSoup) -> dict[str, str]:
    """Visible footnotes by their asterisk marker ("*", "**")."""
    notes: dict[str, str] = {}
    for element in visible(soup.find_all(["p", "div", "li", "span"])):
        if element.find(["p", "div", "li"]):
            continue  # the innermost block only
        text = clean_text(element.get_text(" ", strip=True))
        match = re.match(r"^(\*+)(?!\*)\S", text)
        if match:
            notes.setdefault(match.group(1), text)
    return notes


def _card_specs(card: Tag, name: str) -> dict[str, Any]:
    gpu_name, memory, vcpus, ram = name, None, None, None
    for spec in visible(card.find_all(class_=_CARD_SPEC)):
        text = clean_text(spec.get_text(" ", strip=True))
        if re.fullmatch(r"(\d+)\s*GB\s+GPU", text, re.IGNORECASE):
            memory = _number(text)
        elif re.search(r"\bGPU\b", text) and not re.match(r"\d", text):
            gpu_name = re.sub(r"\s*\bGPU\b\s*$", "", text).strip()
        elif re.search(r"\bvCPUs?\b", text, re.IGNORECASE):
            vcpus = _number(text)
        elif re.search(r"\bRAM\b", text):
            ram = _number(text)
    if memory is None and (in_name := _NAME_MEMORY.search(name)):
        memory = float(in_name.group(1))
    return {"gpu_name": gpu_name, "gpu_memory_gb": memory, "vcpus": vcpus, "ram_gb": ram}


def _cards(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    from bs4 import Tag

    notes = _footnotes(soup)
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    names = soup.find_all(class_=_CARD_NAME)
    shown = visible(names)
    skips = Skips()
    skips.skip("hidden card", len(names) - len(shown))

    def add(row: dict[str, Any]) -> None:
        key = (row["offering"], row["pricing"])
        if key in rows and rows[key]["price_usd_per_hour"] != row["price_usd_per_hour"]:
            raise ParseError(f"paperspace: {key[0]} shown twice with different prices "
                             f"({rows[key]['price_usd_per_hour']} and {row['price_usd_per_hour']})")
        rows.setdefault(key, row)

    for name_el in shown:
        name = clean_text(name_el.get_text(" ", strip=True))
        card = _card_of(name_el)
        if not name or card is None:
            continue
        prices = visible(card.find_all(class_=_CARD_PRICE))
        if len(prices) != 1:
            raise ParseError(f"paperspace: card {name!r} shows {len(prices)} prices")
        amount_text = clean_text(prices[0].get_text(" ", strip=True))
        wrap = prices[0].parent if isinstance(prices[0].parent, Tag) else prices[0]
        wrap_text = clean_text(wrap.get_text(" ", strip=True))
        if foreign_currency(wrap_text):  # "€ 1.89 / hour" is not $1.89
            skips.skip("non-USD price")
            continue
        price = parse_price(wrap_text, default_currency="USD")
        if price is None or price.amount <= 0:  # "Contact sales", "Coming soon"
            skips.skip(no_price_reason(wrap.get_text(" ", strip=True)))
            continue
        if price.period is None:
            raise ParseError(f"paperspace: card {name!r} price {amount_text!r} names no period")
        common = {"provider": "paperspace", "gpu_count": 1.0, "region": GLOBAL_REGION,
                  **_card_specs(card, name)}
        marker = _MARKER.search(amount_text)
        if marker is None:
            add({**common, "offering": name, "pricing": "on_demand",
                 "price_usd_per_hour": round(price.hourly(), 6)})
            continue
        # A marked price is whatever its footnote says it is; never an on-demand price.
        note = notes.get(marker.group(1), "")
        term = commitment_term(note)
        if term is not None:
            add({**common, "offering": f"{name}_reserved_{term}", "pricing": "reserved",
                 "price_usd_per_hour": round(price.hourly(), 6)})
        else:
            skips.skip("marked price whose footnote states no term")
        stated = _FOOTNOTE_ON_DEMAND.search(note)
        if stated and stated.group("name").lower() == name.lower():
            on_demand = parse_price(stated.group("price"))
            if on_demand is not None and on_demand.period is not None:
                add({**common, "offering": name, "pricing": "on_demand",
                     "price_usd_per_hour": round(on_demand.hourly(), 6)})
    return Parsed(rows_frame(list(rows.values())), skips) if names else None


parse = StrategyParser(source=NAME, strategies=(("table", _tables), ("cards", _cards)))


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
