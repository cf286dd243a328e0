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

Price text is parsed once, by contract.prices.parse_price, which every page source imports:
`parse_price("$2.99 / GPU / hr")` knows the amount, the currency, the period and whether it is
per GPU or per instance, from the page's own words, and refuses text it cannot read for sure.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from contract import Parsed, ParseError, RawCapture, Skips
from contract.prices import (
    PriceTextError,
    clean_text,
    parse_price,
)

if TYPE_CHECKING:  # bs4 is imported where a page is read (start-up: BENCHMARKS §18)
    import polars as pl
    from bs4 import BeautifulSoup, Tag

__all__ = [
    "STRATEGY_ORDER",
    "Strategy",
    "StrategyParser",
    "Table",
    "aria_tables",
    "badges_say_unavailable",
    "commitment_term",
    "count_in_name",
    "data_attribute_elements",
    "embedded_json_objects",
    "foreign_currency",
    "gpu_label",
    "grid_tables",
    "is_hidden",
    "json_ld_objects",
    "json_ld_products",
    "name_badges",
    "next_data",
    "no_price_reason",
    "offers_of",
    "parse_with_strategies",
    "read_tables",
    "soup_of",
    "visible",
]

StrategyName = Literal["json-ld", "next-data", "data-attributes", "table", "cards", "api"]
STRATEGY_ORDER: tuple[str, ...] = ("json-ld", "next-data", "data-attributes", "table", "cards")


def soup_of(raw: RawCapture | str | bytes) -> BeautifulSoup:
    from bs4 import BeautifulSoup

    if isinstance(raw, RawCapture):
        raw = raw.body
    return BeautifulSoup(raw, "lxml")


# --- prices ---------------------------------------------------------------------------------
# Price text is read by ONE function, contract.prices.parse_price: this module's strategies
# and every page source call it.

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


# Tailwind-style "hidden lg:grid": hidden on narrow screens, shown from a breakpoint on. A
# page is read as a desktop browser shows it, so such an element is visible.
_SHOWN_FROM_BREAKPOINT = re.compile(
    r"^(?:sm|md|lg|xl|2xl):(?:block|flex|grid|table|inline|inline-block|inline-flex|"
    r"inline-grid|contents|flow-root|table-row|table-cell|table-row-group)$")


def _hidden_by_class(classes: Iterable[str]) -> bool:
    names = set(classes)
    hidden = _HIDDEN_CLASSES.intersection(names)
    if hidden == {"hidden"} and any(_SHOWN_FROM_BREAKPOINT.match(c) for c in names):
        return False
    return bool(hidden)


def is_hidden(tag: Tag) -> bool:
    """True when the element or an ancestor is hidden (template remnants, duplicate blocks).
    A responsive "hidden lg:grid" (shown on a desktop screen) is not hidden."""
    from bs4 import Tag

    node: Any = tag
    while isinstance(node, Tag):
        if node.name == "template" or node.has_attr("hidden"):
            return True
        if node.get("aria-hidden") == "true" and node.name not in ("svg", "i", "span"):
            return True
        if _HIDDEN_STYLE.search(str(node.get("style") or "")):
            return True
        if _hidden_by_class(node.get("class") or ()):
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


_STRING_BODY = re.compile(r'(?:[^"\\]|\\.)*', re.S)


def embedded_json_objects(text: str, type_name: str) -> list[dict[str, Any]]:
    """Every JSON object `{"type": "<type_name>", ...}` a page embeds, whether as plain JSON
    (a `<script>` payload) or escaped inside a JavaScript string (`{\\"type\\":...}`, the
    state a server-rendered app hydrates from). Objects that do not decode are left out."""
    found: list[dict[str, Any]] = []
    pattern = re.compile(r'\{\s*(\\*)"type\1"\s*:\s*\1"' + re.escape(type_name) + r'\1"')
    decoder = json.JSONDecoder(strict=False)
    for match in pattern.finditer(text):
        chunk = text[match.start():]
        for _ in range(len(match.group(1)).bit_length()):  # 1 backslash: one level, 3: two
            body = _STRING_BODY.match(chunk)
            try:
                chunk = json.loads(f'"{body.group(0) if body else chunk}"', strict=False)
            except json.JSONDecodeError:
                chunk = ""
                break
        try:
            value, _ = decoder.raw_decode(chunk)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


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


# --- tables drawn with divs -----------------------------------------------------------------

_MONEY = re.compile(r"(?:US\$|[$€£¥₹])\s*\d|\d\s*(?:USD|EUR|GBP)\b")
_BLOCK_TAGS = frozenset({"div", "p", "li", "ul", "ol", "section", "article", "header", "footer",
                         "table", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "dl",
                         "dt", "dd", "main", "nav", "aside"})
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_LONGEST_HEADER = 80  # characters: longer text before a grid is prose, not a column header


def _cells_of(row: Tag) -> list[Tag]:
    """A grid row's cells: its element children, looking through single-child wrappers."""
    node = row
    while True:
        children = [c for c in node.find_all(True, recursive=False)
                    if c.name not in ("script", "style", "template")]
        if len(children) != 1:
            return children
        node = children[0]


def _is_leaf_block(tag: Tag) -> bool:
    """A block element with text whose descendants are inline only (a header cell)."""
    return (tag.name in _BLOCK_TAGS and tag.find(list(_BLOCK_TAGS)) is None
            and bool(clean_text(tag.get_text(" ", strip=True))))


def _grid_header(first_row: Tag, width: int) -> tuple[list[str], Tag | None]:
    """Header texts of a div grid, right-aligned to `width` cells, and the first header cell.

    A sibling before the first row with as many cells and no money is the header row. Else
    the header cells are the last `width` short text blocks before the first row (a page whose
    header row is not the rows' sibling, or an excerpt cut inside the header: the cells cut
    away stay blank, on the left, where a grid's name column is)."""
    for sibling in first_row.find_previous_siblings(True):
        cells = _cells_of(sibling)
        texts = [clean_text(c.get_text(" ", strip=True)) for c in cells]
        if len(cells) == width and any(texts) and not _MONEY.search(" ".join(texts)):
            return texts, cells[0]
        break
    found: list[Tag] = []
    for tag in first_row.find_all_previous(True):
        if len(found) == width:
            break
        if not _is_leaf_block(tag) or is_hidden(tag):
            continue
        text = clean_text(tag.get_text(" ", strip=True))
        if len(text) > _LONGEST_HEADER or (found and tag.name in _HEADINGS
                                          and tag.name != found[0].name):
            break  # prose or a section heading: the header cells are all found
        found.append(tag)
    texts = [clean_text(t.get_text(" ", strip=True)) for t in reversed(found)]
    return [""] * (width - len(texts)) + texts, (found[-1] if found else None)


def grid_tables(soup: BeautifulSoup | Tag, *, min_cells: int = 3) -> list[Table]:
    """Tables drawn with divs (Webflow, HubSpot, CMS grids), found by shape, not by class.

    Rows are sibling elements of the same tag and first class, each holding the same number
    (at least `min_cells`) of cells, and at least one showing money; rows inside a `<table>`
    are `read_tables`' business. Headers: see `_grid_header`. A row with fewer cells (a page
    cut mid-row) is dropped when it shows no money and kept (short) otherwise, so a reader that
    checks cell counts fails loudly on it.
    """
    tables: list[Table] = []
    for parent in soup.find_all(True):
        if parent.name in ("table", "tr", "thead", "tbody") or parent.find_parent("table"):
            continue
        groups: dict[tuple[str, str], list[Tag]] = {}
        for child in parent.find_all(True, recursive=False):
            classes = child.get("class") or [""]
            groups.setdefault((child.name, classes[0]), []).append(child)
        for members in groups.values():
            rows = [m for m in members if not is_hidden(m)]
            if len(rows) < 2:
                continue
            widths = Counter(len(_cells_of(r)) for r in rows)
            width, seen = widths.most_common(1)[0]
            if width < min_cells or seen < 2:
                continue
            texts = [[clean_text(c.get_text(" ", strip=True)) for c in _cells_of(r)]
                     for r in rows]
            if not any(_MONEY.search(" ".join(t)) for t in texts):
                continue
            kept = [(r, t) for r, t in zip(rows, texts, strict=True)
                    if len(t) == width or _MONEY.search(" ".join(t))]
            headers, first_header = _grid_header(kept[0][0], width)
            anchor = first_header or kept[0][0]
            heading = anchor.find_previous(_HEADINGS)
            tables.append(Table(
                headers=headers, rows=[t for _, t in kept], element=parent,
                row_elements=[r for r, _ in kept],
                caption=clean_text(heading.get_text(" ", strip=True)) if heading else ""))
    return tables


# --- names ----------------------------------------------------------------------------------

# Words a page puts beside a GPU's name that are not part of it: badges ("New", "Sold out")
# and marketing phrasing ("B300 GPU on Runpod", "Rent an H100", "H100 Cloud GPU").
_NAME_BADGE = re.compile(
    r"\s*[-–|·(]?\s*\b(?:new|popular|most popular|best value|limited(?: availability)?|"
    r"sold out|out of stock|in stock|available now|coming soon|beta|preview|hot|"
    r"recommended|featured)\b\s*!?\s*\)?\s*$", re.I)
_NAME_SELLER = re.compile(r"\s+(?:(?:cloud\s+)?gpus?\s+)?(?:on|at|from|by)\s+[A-Z][\w.-]*"
                          r"(?:\s+cloud)?\s*$")
_NAME_NOUN = re.compile(r"\s+(?:cloud\s+)?(?:gpus?(?:\s+(?:instances?|servers?))?|instances?)"
                        r"\s*$", re.I)
_NAME_VERB = re.compile(r"^\s*(?:rent|deploy|buy)\s+(?:an?\s+)?", re.I)
_UNAVAILABLE_BADGE = re.compile(r"sold out|out of stock|coming soon", re.I)


def name_badges(text: str) -> tuple[str, tuple[str, ...]]:
    """A GPU name without the badges and marketing words around it, and the badges found:
    "1x NVIDIA H100 PCIe New" -> ("1x NVIDIA H100 PCIe", ("New",)); "B300 GPU on Runpod" ->
    ("B300", ()). The name is never emptied: text made only of such words is returned as is."""
    name = clean_text(text)
    badges: list[str] = []
    while True:
        before = name
        badge = _NAME_BADGE.search(name)
        if badge and badge.start() > 0:
            badges.insert(0, clean_text(badge.group(0)).strip("-–|·() !"))
            name = name[:badge.start()]
        for pattern in (_NAME_SELLER, _NAME_NOUN, _NAME_VERB):
            stripped = pattern.sub("", name)
            if stripped.strip():
                name = stripped
        name = clean_text(name)
        if name == before:
            return name, tuple(badges)


_COUNT_BRACKETED = re.compile(r"\s*\(\s*(?:(\d{1,3})\s*[x×]|[x×]\s*(\d{1,3}))\s*\)\s*", re.I)
_COUNT_BEFORE = re.compile(r"^\s*(\d{1,3})\s*[x×]\s+(?=\S)|^\s*(\d{1,3})[x×](?=[A-Za-z])",
                           re.I)
_COUNT_AFTER = re.compile(r"(?<=[A-Za-z0-9])\s*[x×]\s*(\d{1,3})\s*$", re.I)


def count_in_name(text: str) -> tuple[float | None, str]:
    """The GPU count a name writes and the name without it: "NVIDIA H100 (8x)", "8x H100",
    "8 x H100", "H100x8", "MI300Xx8" -> 8; (None, name) when it writes none. A model number
    ending in X ("MI300X") is not a count; the count is whole digits after the x."""
    name = clean_text(text)
    for pattern in (_COUNT_BRACKETED, _COUNT_BEFORE):
        match = pattern.search(name)
        if match:
            count = next(g for g in match.groups() if g)
            rest = clean_text(name[:match.start()] + " " + name[match.end():])
            if rest:
                return float(count), rest
    match = _COUNT_AFTER.search(name)
    if match and match.start() > 0:
        return float(match.group(1)), clean_text(name[:match.start()])
    return None, name


def gpu_label(text: str) -> str:
    """The GPU name in a product name or a name cell (see `name_badges`)."""
    return name_badges(text)[0]


def badges_say_unavailable(badges: Iterable[str]) -> bool | None:
    """False when a badge says the offering cannot be rented now ("Sold out"), else None."""
    return False if any(_UNAVAILABLE_BADGE.search(b) for b in badges) else None


# --- another currency on a page priced in dollars -------------------------------------------

_FOREIGN_SIGN = {"€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "₩": "KRW", "C$": "CAD",
                 "A$": "AUD", "NZ$": "NZD", "HK$": "HKD", "S$": "SGD", "R$": "BRL"}
_FOREIGN = re.compile(r"(?<![A-Za-z])(?:NZ|HK|[CASR])\$|[€£¥₹₩]|\b(EUR|GBP|CHF|JPY|CAD|AUD|NZD|"
                      r"INR|CNY|RMB|SGD|HKD|BRL|KRW|SEK|NOK|DKK|PLN)\b")


def foreign_currency(text: str | None) -> str | None:
    """The ISO code of a currency other than the US dollar that text shows ("C$2.99" -> CAD,
    "€ 2.99" -> EUR, "2.99 CHF" -> CHF), or None. For sources whose amounts sit apart from
    their sign (data attributes, split spans) and which must never store another currency's
    number as dollars."""
    match = _FOREIGN.search(clean_text(text))
    if match is None:
        return None
    return match.group(1) or _FOREIGN_SIGN[match.group(0)]


_ARIA_CELLS = ("cell", "gridcell", "columnheader", "rowheader")


def aria_tables(soup: BeautifulSoup | Tag, *, heading_tags: tuple[str, ...] = (
        "h1", "h2", "h3", "h4", "h5", "h6")) -> list[Table]:
    """Every visible table made of divs with ARIA roles (`role="table"` or "grid", rows
    `role="row"`, cells `role="cell"`/"columnheader"...), as React UI kits render them
    (Gravity UI's pc-table). The header is the first row of column headers, or a first row
    of words only; cells of a nested table belong to that table, not this one."""
    tables: list[Table] = []
    for element in soup.find_all(attrs={"role": ["table", "grid"]}):
        if is_hidden(element):
            continue
        row_tags = [r for r in element.find_all(attrs={"role": "row"})
                    if r.find_parent(attrs={"role": ["table", "grid"]}) is element]
        grid = [[c for c in r.find_all(attrs={"role": list(_ARIA_CELLS)})
                 if c.find_parent(attrs={"role": "row"}) is r] for r in row_tags]
        if not grid:
            continue
        first = [clean_text(c.get_text(" ", strip=True)) for c in grid[0]]
        is_header = bool(grid[0]) and (
            all(c.get("role") == "columnheader" for c in grid[0])
            or (len(first) >= 2 and all(first) and not any(re.search(r"\d", t) for t in first)))
        body = [(r, cells) for r, cells in zip(row_tags[1:] if is_header else row_tags,
                                              grid[1:] if is_header else grid, strict=True)
                if not is_hidden(r)]
        heading = element.find_previous(heading_tags)
        tables.append(Table(
            headers=first if is_header else [],
            rows=[[clean_text(c.get_text(" ", strip=True)) for c in cells] for _, cells in body],
            element=element, row_elements=[r for r, _ in body],
            caption=clean_text(heading.get_text(" ", strip=True)) if heading else ""))
    return tables


# --- running strategies ---------------------------------------------------------------------

Strategy = tuple[str, Callable[[RawCapture, "BeautifulSoup"], "pl.DataFrame | Parsed | None"]]


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
    import polars as pl

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
