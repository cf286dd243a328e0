"""What the neocloud price pages (crusoe, nebius, hyperstack, fluidstack, datacrunch) share.

These providers publish one price list each, as an HTML table, a grid of divs, or a list of
cards. Every layout is turned into a `pagekit.Table` (header texts + cell texts) and read by
one header-driven reader, `read_price_table`, so that a source only says where its tables are
and how it names things. Rules it applies, from the page's own words:

- A price column is classified by its header, else by its section's title: on-demand, spot
  ("spot", "preemptible"), reserved with the term kept in the offering ("1 Year price" ->
  "<offering> (1 Year commitment)", term_months 12; no term -> "(reserved, term not
  stated)"), "dynamic" (re-priced daily: pricing `dynamic` where the source's Layout says so,
  else skipped), or announced ("Effective October 1, 2026"). A plain price header that names
  no kind ("Pricing Per Hour") is the Layout's `plain_price` kind, when the source sets one.
- An announced price is stored with `effective_from` (the date it takes effect): before that
  date under its own offering ("<offering> (from 2026-10-01)", an announcement beside the
  price in force; skipped when it equals that price); on or after it, it IS the on-demand
  price of the offering and the plain column, superseded, is skipped. The capture's own
  fetched_at decides, so the parse stays pure.
- Per GPU when the cell or its header says so ("/GPU-hr", "GPU-hour", "per GPU"); else per
  instance when the row names a GPU count ("8 × H200 SXM", a "GPU" count column); else, only
  when the source says its rows are single GPUs, per GPU. Otherwise the row is skipped
  ("price unit not stated"): never a guessed unit. `price_usd_per_hour` is the whole offering.
- Cells without a price are skipped and counted by reason ("contact sales", "no price (n/a)");
  non-USD prices are never stored as USD (counted "non-USD price"); hidden rows are skipped.
- Cells are read by header position, so a row with more or fewer cells than the header has
  (a cell deleted or added) is skipped whole ("row cells do not match the header"), never
  read with its prices shifted into the wrong columns.

`read_price_table` adds its skips to the `Skips` it is given; a source's strategy returns
`page_rows(rows, skips)`, a `Parsed`, so a count of "contact sales" cells reaches
`gpuprices parse` and the run record without failing the parse.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from contract import GLOBAL_REGION, Parsed, RawCapture, Skips, rows_frame
from contract.prices import PagePrice, Period, clean_text, parse_price
from scrapers.pagekit import (
    Table,
    foreign_currency,
    is_hidden,
    json_ld_products,
    no_price_reason,
    offers_of,
)

if TYPE_CHECKING:  # bs4 is imported where a page is read (start-up: BENCHMARKS §18)
    import polars as pl
    from bs4 import BeautifulSoup, Tag

__all__ = [
    "Column",
    "Layout",
    "Reader",
    "billing_increment_from",
    "classify_column",
    "div_grid",
    "footnotes",
    "is_gpu_name",
    "json_ld_reader",
    "loose_table",
    "page_rows",
    "read_price_table",
    "term_months_of",
]

# --- results --------------------------------------------------------------------------------

Reader = Callable[[RawCapture, "BeautifulSoup"], "Parsed | None"]


def page_rows(rows: list[dict[str, Any]], skips: Skips) -> Parsed:
    """A strategy's answer: its rows (memory filled in, one per offering) and its skips."""
    return Parsed(_dedupe(rows_frame(_fill_memory(rows))), skips)


def _fill_memory(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A GPU's memory stated in one section (on-demand) holds for the same GPU name in the
    others (spot, reserved) of the same page, when the page states exactly one value for it."""
    known: dict[str, set[float]] = {}
    for row in rows:
        if row.get("gpu_memory_gb"):
            known.setdefault(row["gpu_name"], set()).add(row["gpu_memory_gb"])
    return [{**row, "gpu_memory_gb": next(iter(known[row["gpu_name"]]))}
            if not row.get("gpu_memory_gb") and len(known.get(row["gpu_name"], ())) == 1
            else row for row in rows]


def _dedupe(frame: pl.DataFrame) -> pl.DataFrame:
    """One price per offering, pricing, term, region, count and effective date: a page that
    repeats a block (mobile and desktop copies) must not store it twice. The first occurrence
    wins; an announced price beside the one in force is a row of its own."""
    return frame.unique(["offering", "pricing", "term_months", "region", "gpu_count",
                         "effective_from"], keep="first", maintain_order=True)


# --- price columns --------------------------------------------------------------------------

_TERM = re.compile(r"(\d+)\s*[- ]?\s*(years?|yrs?|months?|mos?)\b", re.I)
_EFFECTIVE = re.compile(r"effective\s+(?:from\s+|on\s+)?([A-Z][a-z]+\.?\s+\d{1,2},?\s+\d{4}|"
                        r"\d{4}-\d{2}-\d{2})", re.I)
_PER_GPU_HEADER = re.compile(r"gpu[- ]?h(?:ou)?r|per\s+gpu|/\s*gpu|\bgpu\s*/\s*h", re.I)


@dataclass(frozen=True, slots=True)
class Column:
    """How one header's cells are priced. kind: on_demand, spot, reserved, inference, dynamic,
    announced."""

    index: int
    kind: str
    suffix: str = ""  # appended to the offering (a term)
    per_gpu: bool = False  # the header says the price is per GPU
    effective: date | None = None  # for announced prices
    header: str = ""
    term_months: float | None = None  # a reserved column's commitment, when it names one


def _term_suffix(text: str) -> str | None:
    match = _TERM.search(text)
    if not match:
        return None
    count = int(match.group(1))
    unit = "Year" if match.group(2).lower().startswith("y") else "Month"
    return f"({count} {unit}{'s' if count > 1 else ''} commitment)"


def term_months_of(text: str) -> float | None:
    """Months of the one commitment a text names ("1 Year price" -> 12, "6-month" -> 6)."""
    match = _TERM.search(text)
    if not match:
        return None
    count = int(match.group(1))
    return float(count * 12 if match.group(2).lower().startswith("y") else count)


def _effective_date(text: str) -> date | None:
    match = _EFFECTIVE.search(text)
    if not match:
        return None
    value = match.group(1).replace(".", "").replace(",", "")
    for fmt in ("%B %d %Y", "%b %d %Y", "%Y-%m-%d"):
        try:
            return datetime.strptime(value, fmt).date()
        except ValueError:
            continue
    return None


_PLAIN_PRICE = re.compile(r"\b(?:price|pricing|cost|rate)\b|/\s*h(?:ou)?r\b|\bper\s+hour\b",
                          re.I)
_FLOOR = re.compile(r"\bfrom\b|\bstart|as low as", re.I)
# A plain price of something else than an instance-hour (tokens, storage, a month ...).
_OTHER_UNIT = re.compile(r"token|\b[GT]i?B\b|month|minute|second|request|image|storage", re.I)


def classify_column(index: int, header: str, section: str = "",
                    plain_price: str | None = None) -> Column | None:
    """The pricing a header (else its section title) names; None for non-price columns.

    `plain_price`: the kind of a price header that names none, in a section that names none
    either ("Pricing Per Hour" on Hyperstack's 2024 table is its on-demand price); a header
    that names a floor ("Starting from") never becomes it."""
    per_gpu = bool(_PER_GPU_HEADER.search(header))
    column = _classify(index, header, section, per_gpu)
    if column is None and plain_price and _PLAIN_PRICE.search(header) \
            and not _FLOOR.search(header) and not _OTHER_UNIT.search(f"{header} {section}"):
        return Column(index, plain_price, per_gpu=per_gpu, header=header)
    return column


def _classify(index: int, header: str, section: str, per_gpu: bool) -> Column | None:
    for text in (header, section):
        low = text.lower()
        if not low:
            continue
        effective = _effective_date(text)
        if effective is not None:
            return Column(index, "announced", per_gpu=per_gpu, effective=effective,
                          header=header)
        if "dynamic" in low:
            return Column(index, "dynamic", per_gpu=per_gpu, header=header)
        if re.search(r"\binference\b|\bendpoints?\b", low):
            # a GPU priced for an inference product (an inference-only column, dedicated
            # inference endpoints): contract.PRICING["inference"], never an instance price
            return Column(index, "inference", suffix="(inference)", per_gpu=per_gpu,
                          header=header)
        if re.search(r"\bspot\b|preemptible|interruptible", low):
            return Column(index, "spot", per_gpu=per_gpu, header=header)
        term = _term_suffix(text)
        if term or re.search(r"reserv|commit", low):
            return Column(index, "reserved", suffix=term or "(reserved, term not stated)",
                          per_gpu=per_gpu, header=header, term_months=term_months_of(text))
        if re.search(r"on[- ]?demand|pay[- ]as[- ]you[- ]go", low):
            return Column(index, "on_demand", per_gpu=per_gpu, header=header)
        if text is header and not re.search(r"price|pricing|cost|rate|\$|/\s*h|hour|from",
                                            low):
            return None  # a spec column (VRAM, vCPUs ...): its section does not make it a price
    return None


# --- tables from divs -----------------------------------------------------------------------


def div_grid(container: Tag, *, header_cells: str, rows: str, cells: str,
             caption: str = "") -> Table | None:
    """A Table from a grid of divs: header cell selector, row selector, cell selector (CSS)."""
    headers = [clean_text(c.get_text(" ", strip=True)) for c in container.select(header_cells)]
    row_tags = [r for r in container.select(rows) if not is_hidden(r)]
    if not headers or not row_tags:
        return None
    body = [[clean_text(c.get_text(" ", strip=True)) for c in r.select(cells)] for r in row_tags]
    return Table(headers=headers, rows=body, element=container, row_elements=row_tags,
                 caption=caption)


def loose_table(soup: BeautifulSoup) -> Table | None:
    """Header cells and rows whose `<table>` element is missing (a page excerpt cut inside
    the table): `<th>` and `<tr>` outside any table, read as one table."""
    headers = [c for c in soup.find_all("th")
               if c.find_parent("table") is None and c.find_parent("tr") is None]
    rows = [r for r in soup.find_all("tr") if r.find_parent("table") is None
            and r.find("td") is not None and not is_hidden(r)]
    if not headers or not rows:
        return None
    return Table(headers=[clean_text(h.get_text(" ", strip=True)) for h in headers],
                 rows=[[clean_text(c.get_text(" ", strip=True))
                        for c in r.find_all(["td", "th"], recursive=False)] for r in rows],
                 row_elements=rows)


# --- page-wide facts ------------------------------------------------------------------------

_FOOTNOTE = re.compile(r"^(\*{1,4})\s*(?!\*)(.+)$", re.S)


def footnotes(soup: BeautifulSoup) -> dict[str, str]:
    """Footnote text by its marker ("*", "**"): the smallest elements that start with stars."""
    found: dict[str, str] = {}
    for tag in soup.find_all(["p", "li", "div", "span", "small"]):
        if tag.find(["p", "li", "div"]) is not None:
            continue
        match = _FOOTNOTE.match(clean_text(tag.get_text(" ", strip=True)))
        if match and match.group(1) not in found:
            found[match.group(1)] = match.group(2)
    return found


def billing_increment_from(text: str) -> int | None:
    """Seconds per billing increment when the page states exactly one ("billed per minute")."""
    low = clean_text(text).lower()
    minute = bool(re.search(r"billed\s+(?:per|by\s+the)\s+minute|per[- ]minute\s+billing|"
                            r"each\s+minute\s+of\s+use", low))
    second = bool(re.search(r"billed\s+(?:per|by\s+the)[- ]second|per[- ]second\s+billing", low))
    hour = bool(re.search(r"billed\s+(?:per|by\s+the)[- ]hour|per[- ]hour\s+billing", low))
    if minute + second + hour != 1:
        return None  # not stated, or several ("billed per-hour (or per-second)")
    return 60 if minute else 1 if second else 3600


# --- reading a price table ------------------------------------------------------------------

_COUNT_FIRST = re.compile(r"^\s*(\d{1,3})\s*[x×]\s*(.+)$", re.I)
_COUNT_LAST = re.compile(r"^(.+?)\s*[x×]\s*(\d{1,3})\s*$", re.I)
_MEMORY = re.compile(r"(\d{1,3}(?:\.\d+)?)\s*G(?:i)?B\b", re.I)
_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*$")
_GPU_WORD = re.compile(r"\b(?:NVIDIA|AMD|Tesla|Radeon|Instinct|Gaudi|GeForce|Quadro|RTX|HGX)\b"
                       r"|\b(?:[A-Z]{1,3}\d{2,4}[A-Z]{0,3}|MI\d{3}X?)\b", re.I)
_NOT_GPU = re.compile(r"\b(?:EPYC|Xeon|Ryzen|Ice Lake|Genoa|Sapphire Rapids|CPU[- ]only)\b"
                      r"|^\s*(?:v?CPUs?|RAM|Memory|Storage|Disk|NVMe|SSD)\b", re.I)
_STARS = re.compile(r"(\*{1,4})\s*$")

@dataclass(frozen=True, slots=True)
class Layout:
    """What one source's page means where the table itself does not say."""

    provider: str
    rows_are_gpus: bool = False  # each row is one GPU (no instance sizes on the page)
    default_period: Period | None = None  # the unit the page states once, not in every cell
    region: str = GLOBAL_REGION
    gpu_only: bool = False  # prices cover the GPU alone (vCPU, RAM billed beside it)
    billing_increment_s: int | None = None
    # The GPU as the page names it -> the name stored in gpu_name (None: unchanged).
    gpu_name: Callable[[str], str] | None = None
    # The kind of a plain price column ("Pricing Per Hour") whose header and section name
    # none; None: such a column is not read (the page must say what its prices are).
    plain_price: str | None = None
    # A "Dynamic price" column (re-priced daily) is stored as pricing `dynamic`; else skipped.
    dynamic: bool = False

    def gpu_name_of(self, shown: str) -> str:
        return self.gpu_name(shown) if self.gpu_name else shown


def _find_column(table: Table, *options: tuple[str, ...], exclude: tuple[str, ...] = ()
                 ) -> int | None:
    for keywords in options:
        index = table.column(*keywords, exclude=exclude)
        if index is not None:
            return index
    return None


def _exact_column(table: Table, *names: str) -> int | None:
    wanted = {n.lower() for n in names}
    return next((i for i, h in enumerate(table.headers) if h.lower().strip(" :") in wanted),
                None)


def _number(text: str) -> float | None:
    match = _NUMBER.match(text.replace(",", ""))
    return float(match.group(1)) if match else None


def is_gpu_name(name: str) -> bool:
    return bool(_GPU_WORD.search(name)) and not _NOT_GPU.search(name)


def read_price_table(table: Table, layout: Layout, skips: Skips, *, section: str = "",
                     fetched_at: datetime | None = None, notes: dict[str, str] | None = None,
                     ) -> list[dict[str, Any]]:
    """Rows of one price table; every priced cell becomes a row or a count in `skips`."""
    rows: list[dict[str, Any]] = []
    headers_text = " ".join(table.headers)
    columns = [c for i, h in enumerate(table.headers)
               if (c := classify_column(i, h, section, layout.plain_price)) is not None]
    if not columns:
        return rows
    name_col = _find_column(table, ("instance",), ("model",), ("item",), ("configuration",),
                            ("gpu type",), ("gpu",), exclude=("vram", "per gpu", "price"))
    name_col = 0 if name_col is None else name_col
    # A column with no amount and no "contact"/"n/a" in any cell is links ("Reserve here").
    columns = [c for c in columns if c.index != name_col and any(
        re.search(r"\d|contact|talk to|n/?a\b", row[c.index], re.I)
        for row in table.rows if c.index < len(row))]
    gpu_col = _find_column(table, ("gpu model",), ("gpu type",))
    gpu_col = gpu_col if gpu_col != name_col else None
    count_col = _exact_column(table, "gpu", "gpus", "gpu count", "# gpus", "number of gpus")
    vram_col = _find_column(table, ("vram",), ("gpu memory",))
    vcpu_col = _find_column(table, ("vcpu",), ("cpu",), exclude=("max", "per gpu", "type"))
    ram_col = _find_column(table, ("ram",), ("memory",), exclude=("max", "per gpu", "vram",
                                                                  "gpu memory"))
    announced = [c for c in columns if c.kind == "announced"]
    in_force = [c for c in announced
                if fetched_at is not None and c.effective and fetched_at.date() >= c.effective]
    per_gpu_rows = layout.rows_are_gpus or bool(re.search(r"per\s+gpu", headers_text, re.I))

    def cell(row: list[str], index: int | None) -> str:
        return row[index] if index is not None and index < len(row) else ""

    for row in table.rows:
        name = cell(row, name_col)
        shown_gpu = cell(row, gpu_col) or name
        if not name or not is_gpu_name(shown_gpu):
            if any(parse_price(cell(row, c.index)) for c in columns):
                skips.skip("not a GPU offering")
            continue
        if len(row) != len(table.headers):
            # A cell deleted (or added) shifts every later cell: never read prices by a
            # position that no longer holds the column's value.
            skips.skip("row cells do not match the header")
            continue
        count = _number(cell(row, count_col))
        bare = shown_gpu
        for pattern, count_group, name_group in ((_COUNT_FIRST, 1, 2), (_COUNT_LAST, 2, 1)):
            match = pattern.match(shown_gpu)
            if match:
                count = count or float(match.group(count_group))
                bare = match.group(name_group).strip()
                break
        memory_match = _MEMORY.search(bare) or _MEMORY.search(name)
        vram = _number(cell(row, vram_col))
        memory = (float(memory_match.group(1)) if memory_match
                  else vram / count if vram and count else vram)
        common = {
            "provider": layout.provider,
            "gpu_name": layout.gpu_name_of(bare),
            "gpu_memory_gb": memory,
            "vcpus": _number(cell(row, vcpu_col)),
            "ram_gb": _number(cell(row, ram_col)),
            "region": layout.region,
            "billing_increment_s": layout.billing_increment_s,
            "gpu_only": layout.gpu_only,
        }
        current = {c.index: cell(row, c.index) for c in columns if c.kind == "on_demand"}
        for column in columns:
            text = cell(row, column.index)
            if column.kind == "on_demand" and in_force:
                if parse_price(text):
                    skips.skip("superseded by an announced price now in force")
                continue
            if column.kind == "dynamic" and not layout.dynamic:
                if parse_price(text):
                    skips.skip("dynamic price (re-priced daily)")
                continue
            if column.kind == "announced" and column not in in_force \
                    and _same_price(text, current.values()):
                if parse_price(text):
                    skips.skip("announced price unchanged")
                continue
            price = parse_price(text, default_period=layout.default_period
                                or ("hour" if re.search(r"hour|/\s*hr?\b|\bhr\b|hourly",
                                                        column.header, re.I) else None))
            if price is None:
                skips.skip(no_price_reason(text))
                continue
            row_out = _priced_row(price, column, text, count, per_gpu_rows, notes, skips)
            if row_out is None:
                continue
            rows.append({**common, **row_out, **_kind_of(column),
                         "offering": _offering(name, column)})
    return rows


def _same_price(text: str, others: Any) -> bool:
    """The announced cell states the same amount as a price in force in the same row."""
    price = parse_price(text)
    return price is not None and any(
        (other := parse_price(o)) is not None and other.amount == price.amount
        and other.currency == price.currency for o in others)


def _kind_of(column: Column) -> dict[str, Any]:
    """pricing, term_months and effective_from of a price read from `column`."""
    if column.kind == "announced":
        return {"pricing": "on_demand", "effective_from": column.effective}
    return {"pricing": column.kind, "term_months": column.term_months}


def _offering(name: str, column: Column) -> str:
    """The offering a price belongs to, with a term's suffix. An announced price keeps the
    offering's name: its `effective_from` says from when it replaces the price in force
    (the warehouse's current price picks, per offering, the latest price in force)."""
    return f"{name} {column.suffix}" if column.suffix else name


def _priced_row(price: PagePrice, column: Column, text: str, count: float | None,
                per_gpu_rows: bool, notes: dict[str, str] | None, skips: Skips,
                ) -> dict[str, Any] | None:
    """gpu_count and the whole offering's hourly USD price, or None (a counted skip)."""
    if price.currency != "USD" or foreign_currency(text):  # "C$2.99" is not $2.99
        skips.skip("non-USD price")
        return None
    if price.period is None:
        skips.skip("price names no period")
        return None
    if price.amount <= 0:
        skips.skip("no price (zero)")
        return None
    if column.kind == "spot" and price.starting_from and not _flat_rate(text, notes):
        # "from $0.79" over a spot column: the floor of a price that moves with demand.
        skips.skip("spot floor (dynamic price, not today's)")
        return None
    hourly = price.hourly()
    per_gpu = bool(price.per_gpu) or column.per_gpu
    if per_gpu:
        gpus = count or 1.0
        return {"gpu_count": gpus, "price_usd_per_hour": round(hourly * gpus, 6)}
    if count:
        return {"gpu_count": count, "price_usd_per_hour": hourly}
    if per_gpu_rows:
        return {"gpu_count": 1.0, "price_usd_per_hour": hourly}
    skips.skip("price unit not stated (per GPU or per instance)")
    return None


def _flat_rate(text: str, notes: dict[str, str] | None) -> bool:
    """The cell's footnote says this preemptible price is a flat rate, not a dynamic one."""
    match = _STARS.search(clean_text(text))
    note = (notes or {}).get(match.group(1), "") if match else ""
    return "flat rate" in note.lower()


# --- structured data ------------------------------------------------------------------------


def json_ld_reader(layout: Layout) -> Reader:
    """Schema.org Product/Offer prices, when a page carries them: only offers in USD whose
    unit says hour (unitText / unitCode HUR) and whose product names a GPU are read."""
    def read(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
        rows: list[dict[str, Any]] = []
        skips = Skips()
        for product in json_ld_products(soup):
            name = clean_text(str(product.get("name") or ""))
            if not is_gpu_name(name):
                continue
            for offer in offers_of(product):
                row = _offer_row(layout, name, offer, skips)
                if row:
                    rows.append(row)
        return page_rows(rows, skips) if rows or skips else None
    return read


def _offer_row(layout: Layout, name: str, offer: dict[str, Any], skips: Skips,
               ) -> dict[str, Any] | None:
    spec = offer.get("priceSpecification")
    spec = spec[0] if isinstance(spec, list) and spec else spec
    spec = spec if isinstance(spec, dict) else {}
    currency = offer.get("priceCurrency") or spec.get("priceCurrency")
    amount = offer.get("price", spec.get("price"))
    unit = " ".join(str(x) for x in (spec.get("unitText"), spec.get("unitCode"),
                                     offer.get("unitText"), offer.get("description")) if x)
    if currency != "USD":
        skips.skip("non-USD price" if currency else "no price (unreadable)")
        return None
    try:
        value = float(amount)
    except (TypeError, ValueError):
        skips.skip("no price (unreadable)")
        return None
    if value <= 0 or not re.search(r"\bHUR\b|hour|/\s*hr?\b", unit, re.I):
        skips.skip("price names no period")
        return None
    column = classify_column(0, unit) or Column(0, "on_demand")
    if column.kind in ("dynamic", "announced"):
        skips.skip(f"{column.kind} price")
        return None
    per_gpu = column.per_gpu or layout.rows_are_gpus
    if not per_gpu:
        skips.skip("price unit not stated (per GPU or per instance)")
        return None
    suffix = f" {column.suffix}" if column.suffix else ""
    return {"provider": layout.provider, "offering": f"{name}{suffix}",
            "gpu_name": layout.gpu_name_of(name), "gpu_count": 1.0, "region": layout.region,
            "pricing": column.kind, "price_usd_per_hour": value,
            "billing_increment_s": layout.billing_increment_s, "gpu_only": layout.gpu_only}
