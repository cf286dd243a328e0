"""The page-parsing toolkit every page source shares.

Pages carry their prices in a few recurring shapes. A page source tries them in a fixed order
of robustness, structured data first (it survives visual redesigns), then tables read by
their header text, then cards:

    json-ld  ->  next-data  ->  data-attributes  ->  table  ->  cards

`parse_with_strategies` runs a source's strategies in that order and returns the first that
read rows, with its name (`gpuprices parse` prints it). A strategy returns a frame, or a
`Parsed` (rows + the rows it skipped, counted by reason: `Skips`); one that does not
recognise the page returns None; one that recognises the page but finds it broken raises
ParseError. When none reads the page, the ParseError names every strategy tried, or, when the
layout was recognised but every row on it was skipped, the skips, so a new layout fails
loudly instead of yielding a guessed number.

Price text is parsed once, by contract.prices.parse_price (re-exported here):
`parse_price("$2.99 / GPU / hr")` knows the amount, the currency, the period and whether it is
per GPU or per instance, from the page's own words, and refuses text it cannot read for sure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import polars as pl
from bs4 import BeautifulSoup, Tag

from contract.prices import (
    HOURS_PER,
    PagePrice,
    Period,
    PriceTextError,
    clean_text,
    parse_price,
    price_unit,
)
from scrapers.base import Parsed, ParseError, RawCapture, Skips

__all__ = [
    "HOURS_PER",
    "STRATEGY_ORDER",
    "PagePrice",
    "Period",
    "PriceTextError",
    "Strategy",
    "StrategyParser",
    "Table",
    "clean_text",
    "commitment_term",
    "data_attribute_elements",
    "is_hidden",
    "json_ld_objects",
    "json_ld_products",
    "next_data",
    "no_price_reason",
    "parse_price",
    "parse_with_strategies",
    "price_unit",
    "read_tables",
    "soup_of",
    "visible",
]

StrategyName = Literal["json-ld", "next-data", "data-attributes", "table", "cards", "api"]
STRATEGY_ORDER: tuple[str, ...] = ("json-ld", "next-data", "data-attributes", "table", "cards")


def soup_of(raw: RawCapture | str | bytes) -> BeautifulSoup:
    if isinstance(raw, RawCapture):
        raw = raw.body
    return BeautifulSoup(raw, "lxml")


# --- prices ---------------------------------------------------------------------------------
# Price text is read by ONE function, contract.prices.parse_price (re-exported here): this
# module's strategies and every page source call it.

_NO_PRICE_WORDS = (("contact", "contact sales"), ("talk to", "contact sales"),
                   ("quote", "contact sales"), ("call us", "contact sales"),
                   ("request", "contact sales"), ("sold out", "sold out"),
                   ("coming soon", "coming soon"), ("waitlist", "coming soon"))


def no_price_reason(text: str | None) -> str:
    """Why a price cell holds no price to store, in the words every page source counts skips
    by: "contact sales", "sold out", "coming soon", "no price (zero)", "no price (n/a)",
    "no price (unreadable)"."""
    low = clean_text(text).lower()
    for word, reason in _NO_PRICE_WORDS:
        if word in low:
            return reason
    if not low or low in {"-", "–", "—"} or re.fullmatch(r"n/?a\.?", low):
        return "no price (n/a)"
    try:
        price = parse_price(low, default_currency="USD")
    except PriceTextError:
        return "no price (unreadable)"
    return "no price (zero)" if price is not None and price.amount <= 0 else \
        "no price (unreadable)"


_TERM_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "twelve": 12,
               "eighteen": 18, "twenty-four": 24, "thirty-six": 36}
_TERM = re.compile(r"\b(?P<n>\d{1,2}|" + "|".join(_TERM_WORDS) + r")\s*[- ]?\s*"
                   r"(?P<unit>years?|yrs?|months?|mos?)\b(?!\s*/)", re.I)


def commitment_term(text: str | None) -> str | None:
    """The commitment a price text names, normalised ("3-year commitment" -> "3y",
    "6 months" -> "6mo"); None when it names none. "/ month" is a period, not a term."""
    match = _TERM.search(clean_text(text))
    if match is None:
        return None
    word = match.group("n").lower()
    number = int(word) if word.isdigit() else _TERM_WORDS[word]
    unit = "y" if match.group("unit").lower().startswith("y") else "mo"
    if unit == "mo" and number % 12 == 0:
        number, unit = number // 12, "y"
    return f"{number}{unit}"


# --- visibility -----------------------------------------------------------------------------

_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_HIDDEN_CLASSES = {"w-condition-invisible", "hidden", "d-none", "sr-only", "visually-hidden",
                   "hide", "is-hidden", "w-dyn-hide"}


def is_hidden(tag: Tag) -> bool:
    """True when the element or an ancestor is hidden (template remnants, duplicate blocks)."""
    node: Any = tag
    while isinstance(node, Tag):
        if node.name == "template" or node.has_attr("hidden"):
            return True
        if node.get("aria-hidden") == "true" and node.name not in ("svg", "i", "span"):
            return True
        if _HIDDEN_STYLE.search(str(node.get("style") or "")):
            return True
        if _HIDDEN_CLASSES.intersection(node.get("class") or ()):
            return True
        node = node.parent
    return False


def visible(tags: Iterable[Tag]) -> list[Tag]:
    return [t for t in tags if not is_hidden(t)]


# --- structured data ------------------------------------------------------------------------

def json_ld_objects(soup: BeautifulSoup) -> list[Any]:
    """Every object in the page's `application/ld+json` scripts (@graph and lists flattened)."""
    found: list[Any] = []
    for script in soup.find_all("script", attrs={"type": "application/ld+json"}):
        text = script.string or script.get_text()
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            continue  # pages ship broken JSON-LD; it is not this page's price data then
        stack = [data]
        while stack:
            item = stack.pop(0)
            if isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, dict):
                graph = item.get("@graph")
                if isinstance(graph, list):
                    stack.extend(graph)
                else:
                    found.append(item)
    return found


def _types(item: dict[str, Any]) -> set[str]:
    kind = item.get("@type")
    return set(kind) if isinstance(kind, list) else {str(kind)}


def json_ld_products(soup: BeautifulSoup) -> list[dict[str, Any]]:
    """JSON-LD objects of @type Product (or with offers), the usual carrier of prices."""
    return [o for o in json_ld_objects(soup)
            if "Product" in _types(o) or ("offers" in o and "name" in o)]


def offers_of(product: dict[str, Any]) -> list[dict[str, Any]]:
    """A Product's offers as a list (a single Offer, a list, or an AggregateOffer's offers)."""
    offers = product.get("offers")
    if isinstance(offers, dict):
        inner = offers.get("offers")
        return [o for o in inner if isinstance(o, dict)] if isinstance(inner, list) else [offers]
    return [o for o in offers if isinstance(o, dict)] if isinstance(offers, list) else []


def next_data(soup: BeautifulSoup) -> Any | None:
    """The JSON of Next.js's `<script id="__NEXT_DATA__">`, or None when the page has none."""
    script = soup.find("script", id="__NEXT_DATA__")
    if script is None:
        return None
    try:
        return json.loads(script.string or script.get_text())
    except json.JSONDecodeError as exc:
        raise ParseError(f"__NEXT_DATA__ is not valid JSON ({exc.msg})") from None


def find_dicts(data: Any, has: Iterable[str]) -> list[dict[str, Any]]:
    """Every dict anywhere in `data` that holds all the keys in `has` (depth-first, in order)."""
    keys = tuple(has)
    found: list[dict[str, Any]] = []
    stack: list[Any] = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if all(k in item for k in keys):
                found.append(item)
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return found


def data_attribute_elements(soup: BeautifulSoup, *prefixes: str) -> list[Tag]:
    """Visible elements carrying any `data-*` attribute that starts with one of `prefixes`."""
    wanted = tuple(f"data-{p}" for p in prefixes)
    return visible(soup.find_all(lambda t: any(a.startswith(wanted) for a in t.attrs)))


# --- tables ---------------------------------------------------------------------------------

@dataclass(slots=True)
class Table:
    """An HTML table (or a grid of divs) read as header texts + rows of cell texts."""

    headers: list[str]
    rows: list[list[str]]
    element: Tag | None = None
    row_elements: list[Tag] = field(default_factory=list)
    caption: str = ""  # the nearest heading before the table (a region, a section)

    def column(self, *keywords: str, exclude: tuple[str, ...] = ()) -> int | None:
        """Index of the first header containing every keyword (case-insensitive), else None."""
        for index, header in enumerate(self.headers):
            low = header.lower()
            if all(k.lower() in low for k in keywords) and not any(
                    x.lower() in low for x in exclude):
                return index
        return None

    def records(self) -> Iterator[dict[str, str]]:
        for row in self.rows:
            yield {h: (row[i] if i < len(row) else "") for i, h in enumerate(self.headers)}


def _expand(cells: list[Tag]) -> list[str]:
    texts: list[str] = []
    for cell in cells:
        span = int(str(cell.get("colspan") or 1)) if str(cell.get("colspan") or 1).isdigit() else 1
        texts.extend([clean_text(cell.get_text(" ", strip=True))] * max(1, min(span, 50)))
    return texts


def _is_header_row(row: Tag, cells: list[Tag], first: bool) -> bool:
    """A `<thead>` row, a row of `<th>` only, or (CMS tables written with `<td>` only) a
    first row with at least two cells, none holding a digit."""
    if row.find_parent("thead") is not None or all(c.name == "th" for c in cells):
        return True
    texts = [clean_text(c.get_text(" ", strip=True)) for c in cells]
    return first and len(cells) >= 2 and all(texts) and not any(
        re.search(r"\d", t) for t in texts)


def _table_of(element: Tag | None, rows: list[Tag], heading_tags: tuple[str, ...]) -> Table:
    headers: list[str] = []
    body: list[Tag] = []
    for index, row in enumerate(rows):
        cells = row.find_all(["th", "td"], recursive=False)
        if not headers and not body and cells and _is_header_row(row, cells, index == 0):
            headers = _expand(cells)
            continue
        if not is_hidden(row):
            body.append(row)
    anchor = element if element is not None else (rows[0] if rows else None)
    heading = anchor.find_previous(heading_tags) if anchor is not None else None
    return Table(
        headers=headers,
        rows=[_expand(r.find_all(["th", "td"], recursive=False)) for r in body],
        element=element, row_elements=body,
        caption=clean_text(heading.get_text(" ", strip=True)) if heading else "")


def read_tables(soup: BeautifulSoup | Tag, *, heading_tags: tuple[str, ...] = (
        "h1", "h2", "h3", "h4", "h5", "h6")) -> list[Table]:
    """Every visible `<table>`: headers from `<thead>`, a first row of `<th>` cells, or a
    first `<td>` row of words only (CMS tables); `colspan` cells repeat across their columns.

    Rows outside any table (an excerpt cut inside a table, broken markup) are read as one
    more table without an element, so a page cut mid-table still reads by its rows.
    """
    tables: list[Table] = []
    for element in soup.find_all("table"):
        if is_hidden(element):
            continue
        rows = [r for r in element.find_all("tr") if r.find_parent("table") is element]
        tables.append(_table_of(element, rows, heading_tags))
    orphans = [r for r in soup.find_all("tr")
               if r.find_parent("table") is None and not is_hidden(r)]
    if orphans:
        tables.append(_table_of(None, orphans, heading_tags))
    return tables


# --- running strategies ---------------------------------------------------------------------

Strategy = tuple[str, Callable[[RawCapture, BeautifulSoup], "pl.DataFrame | Parsed | None"]]


@dataclass(frozen=True, slots=True)
class StrategyParser:
    """A page source's parse function: its strategies in order; callable like any parser."""

    source: str
    strategies: tuple[Strategy, ...]
    accepts: Callable[[RawCapture], None] | None = None  # raises ParseError for non-pages

    def __call__(self, raw: RawCapture) -> Parsed:
        return parse_with_strategies(self.source, raw, self.strategies, accepts=self.accepts)


def parse_with_strategies(source: str, raw: RawCapture, strategies: Iterable[Strategy], *,
                          accepts: Callable[[RawCapture], None] | None = None) -> Parsed:
    """The rows of the first strategy that read the page, its skips and its name; else a
    ParseError naming every strategy tried (or what was skipped, if rows were seen).

    A strategy returns None (or no rows) when the page does not carry its structure.
    """
    if accepts is not None:
        accepts(raw)
    soup = soup_of(raw)
    tried: list[str] = []
    skipped = Skips()
    for name, strategy in strategies:
        result = strategy(raw, soup)
        parsed = Parsed(result) if isinstance(result, pl.DataFrame) else result
        if parsed is not None and parsed.frame.height > 0:
            return Parsed(parsed.frame, parsed.skips, name)
        if parsed is not None:
            skipped.update(parsed.skips)
        tried.append(name)
    if skipped:  # the layout was recognised, but every row on it was skipped
        raise ParseError(f"{source}: no price stored; every row skipped "
                         f"({skipped.describe()}); tried {', '.join(tried)}")
    raise ParseError(f"{source}: layout not recognised; tried {', '.join(tried) or 'nothing'} "
                     "and none found prices (page redesigned, or not this provider's page?)")
