"""DigitalOcean GPU Droplet prices: the public page https://www.digitalocean.com/pricing/gpu-droplets.

Layouts known:
- 2025-07-07 (Wayback, ../shared/captures/digitalocean): styled-components cards. Each card
  (class `CardPricingstyles__StyledCardPricingCard-sc-…`) holds a name in an `<h3>` ("NVIDIA
  H100x8", "AMD Instinct™ MI300X"), a price container (`…StyledPriceContainer…`) with "$2.99"
  + "/GPU/hour" and a label "On-Demand Price" or "Reserved Price", and on on-demand cards a
  spec list ("GPUs per Droplet 8", "GPU Memory 640 GB", "Droplet Memory 1,920 GiB", "Droplet
  vCPUs 160"). Reserved cards come first and say "… if you reserve via a contractual
  commitment of 12 months"; they are stored as `reserved` with the term in the offering.
  Their price is a floor ("Prices start as low as $1.99/GPU/hour").
- 2026 (docs.digitalocean.com/products/droplets/details/pricing, "Last verified 18 Aug 2026",
  and the same tables on the pricing page): `<table>`s "GPU | Price" under the headings
  "On-Demand GPU Droplet Pricing", "Spot GPU Droplet Pricing" and "Contract GPU Droplet
  Pricing"; rows "NVIDIA H100" $4.41 per hour and "NVIDIA H100 (8x)" $35.28 per hour. A count
  in the name ("(8x)", "x8") is the Droplet's GPUs and "$X per hour" without "/GPU" is the
  whole Droplet (35.28 = 8 x 4.41), so the per-GPU price is the price over the count. The kind
  comes from the column header, else from the section heading; contract rows ("Per contract
  after contacting sales") are skipped, counted as contact sales. Spot prices "may change
  daily" but the Droplet can be reclaimed (two hours' notice): they are `spot`.

Prices are per GPU-hour when the text says so ("/GPU/hour"); `price_usd_per_hour` is then the
price times the Droplet's GPUs (the "xN" of the name, or "GPUs per Droplet").

Promotions: a card can show a struck-through list price beside a promotional one ("$6.74"
struck, "$3.39 /GPU/hour*"; the footnote "*Promotional pricing is subject to change at any
time. Promotional pricing is limited to on-demand GPU Droplets"). The promotional price is
what an on-demand Droplet is billed while it lasts, so it is the price stored; the struck list
price is not stored. Struck = inside `<s>`/`<del>`, styled `line-through`, or a
`…StrikeThrough…` wrapper followed by another price in the same container (a lone price in
such a wrapper, as on the H100x8 card, is the price: the wrapper is only styled when a
promotion follows).

Names: the 2026 tables write "NVIDIA RTX 4000" and "NVIDIA RTX 6000" for the Droplets the
2025 cards call "NVIDIA RTX 4000 Ada Generation" and "... 6000 Ada Generation" (the same
$0.76 and $1.57): DigitalOcean offers no Turing Quadro cards, so those two names are read as
the Ada cards (`_GPU_NAMES`). "NVIDIA B300, air-cooled" / "liquid-cooled" is one GPU, B300;
the cooling stays in the offering.

Not on the page: regions (GPU Droplets run in a few datacentres, e.g. NYC2, TOR1; the page
names none, so the region is "global"), availability, and the billing increment.
"Contact sales" cards without a number are skipped and counted.

Price API: DigitalOcean's API lists sizes with `price_hourly` (GET /v2/sizes, needs a token,
DIGITALOCEAN_TOKEN); the page stays the keyless default.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from contract import GLOBAL_REGION, HttpSettings, Parsed, RawCapture, Skips, rows_frame
from contract.prices import clean_text, parse_price
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request
from scrapers.pagekit import StrategyParser, count_in_name, foreign_currency, is_hidden, read_tables

if TYPE_CHECKING:  # bs4 is imported where a page is read (start-up: BENCHMARKS §18)
    import httpx
    from bs4 import BeautifulSoup, Tag

NAME = "digitalocean"
BASE = "https://www.digitalocean.com"
PATH = "/pricing/gpu-droplets"
URL = BASE + PATH

_CARD = "CardPricingstyles__StyledCardPricingCard"
_PRICE_BOX = "CardPricingstyles__StyledPriceContainer"
_STRIKE = re.compile(r"StrikeThrough", re.I)
# DigitalOcean's short names for its Ada Generation cards (see the module docstring).
_GPU_NAMES = {"NVIDIA RTX 4000": "NVIDIA RTX 4000 Ada Generation",
              "NVIDIA RTX 6000": "NVIDIA RTX 6000 Ada Generation"}
_COOLING = re.compile(r",?\s*\b(?:air|liquid)[- ]cooled\b", re.I)
_TERM = re.compile(r"(\d{1,2})[\s-]*(month|year)s?", re.I)
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_MONEY = re.compile(r"[$€£¥₹]|\b(?:USD|EUR|GBP|CAD)\b")
_LABELS = (("on-demand", "on_demand"), ("on demand", "on_demand"), ("reserved", "reserved"),
           ("spot", "spot"), ("contract", "reserved"))


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/html"})


def _clean_name(text: str) -> str:
    return clean_text(text.replace("™", "").replace("®", ""))


def _has_class(tag: Tag, prefix: str) -> bool:
    return any(str(c).startswith(prefix) for c in tag.get("class") or ())


def _number(text: str) -> float | None:
    match = _NUMBER.search(text)
    return float(match.group(0).replace(",", "")) if match else None


def _struck(tag: Tag) -> bool:
    from bs4 import Tag

    node: Any = tag
    while isinstance(node, Tag) and not _has_class(node, _PRICE_BOX):
        if node.name in ("s", "del", "strike"):
            return True
        if "line-through" in str(node.get("style") or ""):
            return True
        node = node.parent
    return False


def _price_groups(box: Tag) -> list[Tag]:
    """The elements of the container that each show one price, in page order."""
    level = box
    while True:
        priced = [c for c in level.find_all(True, recursive=False)
                  if _MONEY.search(c.get_text()) and not is_hidden(c)]
        if len(priced) == 1 and len(_MONEY.findall(priced[0].get_text())) > 1:
            level = priced[0]  # one wrapper around several prices: look inside it
            continue
        return priced


def _current_price(box: Tag) -> str | None:
    """The price text a customer pays: the one not struck through (see the docstring)."""
    unstruck = [g for g in _price_groups(box) if not _struck(g)]
    if len(unstruck) > 1:  # a list price in a StrikeThrough wrapper, then the promotion
        unstruck = [g for g in unstruck
                    if not any(_STRIKE.search(str(c)) for c in g.get("class") or ())]
    if len(unstruck) != 1:
        return None
    return clean_text(unstruck[0].get_text(" ", strip=True))


def _specs(card: Tag) -> dict[str, str]:
    """'GPUs per Droplet' -> '8' from the spec list: a label span followed by a value span."""
    specs: dict[str, str] = {}
    for item in card.find_all("li"):
        spans = [clean_text(s.get_text(" ", strip=True)) for s in item.find_all("span")]
        spans = [s for s in spans if s]
        if len(spans) == 2:
            specs[spans[0].lower()] = spans[1]
    return specs


def _pricing(text: str) -> str | None:
    low = text.lower()
    return next((kind for word, kind in _LABELS if word in low), None)


def _row(name: str, price_text: str, pricing: str, count: float, specs: dict[str, str],
         term_text: str, skips: Skips) -> dict[str, Any] | None:
    price = parse_price(price_text)
    if price is None:
        skips.skip("contact sales" if "contact" in price_text.lower() else "no price")
        return None
    if price.currency != "USD" or foreign_currency(price_text):
        skips.skip("non-USD price")
        return None
    if price.period != "hour":
        skips.skip(f"price per {price.period or 'unstated period'}, not per hour")
        return None
    offering = name
    term_months: float | None = None
    if pricing == "reserved":
        term = _TERM.search(term_text)
        offering += (f" ({term.group(1)}-{term.group(2).lower()} commitment)" if term
                     else " (commitment, term not stated)")
        if term:
            term_months = float(term.group(1)) * (12 if term.group(2).lower() == "year" else 1)
    memory_total = _number(specs.get("gpu memory", ""))
    return {
        "provider": "digitalocean",
        "offering": offering,
        "gpu_name": _gpu_name(name),
        "term_months": term_months,
        "gpu_count": count,
        "gpu_memory_gb": memory_total / count if memory_total else None,
        "vcpus": _number(specs.get("droplet vcpus", "")),
        "ram_gb": _number(specs.get("droplet memory", "")),
        "region": GLOBAL_REGION,
        "pricing": pricing,
        "price_usd_per_hour": price.amount * count if price.per_gpu else price.amount,
    }


def _gpu_name(name: str) -> str:
    """The GPU a Droplet name names: without its count ("NVIDIA H100 (8x)", "H100x8") and
    cooling, DigitalOcean's short Ada names made whole (module docstring)."""
    bare = _COOLING.sub("", count_in_name(name)[1]).strip(" ,")
    return _GPU_NAMES.get(bare, bare)


def _gpu_count(name: str, specs: dict[str, str]) -> float:
    stated = _number(specs.get("gpus per droplet", ""))
    if stated:
        return stated
    return count_in_name(name)[0] or 1.0


def _cards(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    cards = soup.find_all(lambda t: t.name == "div" and _has_class(t, _CARD))
    if not cards:
        return None
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for card in cards:
        if is_hidden(card):
            skips.skip("hidden card")
            continue
        heading = card.find(["h2", "h3", "h4"])
        box = card.find(lambda t: _has_class(t, _PRICE_BOX))
        name = _clean_name(heading.get_text(" ", strip=True)) if heading else ""
        if not name or box is None:
            skips.skip("card without a name or price")
            continue
        pricing = _pricing(clean_text(box.get_text(" ", strip=True)))
        if pricing is None:
            skips.skip("price label neither on-demand nor reserved")
            continue
        price_text = _current_price(box)
        if price_text is None:
            box_text = box.get_text(" ", strip=True).lower()
            skips.skip("contact sales" if "contact" in box_text and not _MONEY.search(box_text)
                         else "no single current price")
            continue
        specs = _specs(card)
        row = _row(name, price_text, pricing, _gpu_count(name, specs), specs,
                   clean_text(card.get_text(" ", strip=True)), skips)
        if row:
            rows.append(row)
    return Parsed(rows_frame(rows), skips)


def _tables(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    """A table of Droplets: a GPU/Droplet name column and price columns read by header."""
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for table in read_tables(soup):
        name_col = table.column("gpu", exclude=("memory", "price"))
        if name_col is None:
            name_col = table.column("droplet", exclude=("memory", "price", "vcpu"))
        price_cols = [i for i, h in enumerate(table.headers) if "price" in h.lower()]
        if name_col is None or not price_cols:
            continue
        for cells in table.rows:
            name = _clean_name(cells[name_col]) if name_col < len(cells) else ""
            if not name:
                continue
            specs = {h.lower(): c for h, c in zip(table.headers, cells, strict=False)}
            count = _gpu_count(name, {"gpus per droplet": specs.get("gpus", "")})
            for col in price_cols:
                header = table.headers[col]
                # the header's words, else the section's ("Spot GPU Droplet Pricing")
                pricing = _pricing(header) or _pricing(table.caption)
                if pricing is None or col >= len(cells):
                    skips.skip("price column neither on-demand, spot nor reserved")
                    continue
                text = cells[col] + (" /GPU" if "per gpu" in header.lower() else "")
                row = _row(name, text, pricing, count, {}, f"{header} {table.caption}", skips)
                if row:
                    rows.append(row)
    return Parsed(rows_frame(rows), skips)


PARSER = StrategyParser(NAME, (("table", _tables), ("cards", _cards)))

SOURCE = SourceDef(
    name=NAME,
    provider="digitalocean",
    kind="page",
    url=URL,
    example=EXAMPLES_DIR / NAME / "gpu-droplets_2025-07-07.html",
    example_as_of="2025-07-07",
    fetch_fn=fetch,
    parse_fn=PARSER,
)
