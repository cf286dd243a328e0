"""CoreWeave's public pricing page (no key): https://www.coreweave.com/pricing, GPU instances.

Every layout is read as a table whose columns are found by their header text, never by
position, so a cell that moves is read as what its header says or fails loudly:

- 2026 page (../shared/captures/coreweave, REAL_PAGES.md): a Webflow div grid per region,
  "REGION: NORTH AMERICA" and "REGION: EUROPE" (h5 before each grid). Header cells: GPU Model,
  GPU Count, VRAM (GB), vCPUs, System RAM (GB), Local Storage (TB), On-Demand Price (Per
  Hour), Spot Price (Per Hour) and, in North America only, Inference Single GPU Price (Per
  Hour). The model-name cell has the same `table-v2-cell` class as the numbers, so cells are
  matched to headers by order *within the row's own grid* (the mobile duplicates in
  `.table-cell-column` are not cells). The HGX H100 row has its own class
  (`gpu-pricing-and-kubernetes-gpu-pricing`); rows are found as `.table-row-v2` whatever else
  they are called. GPU counts carry footnote marks ("4^1"). Prices are per instance-hour.
- The earlier single grid (scrapers/examples/coreweave, PAGES.md §7): the same grid without
  regions and one "Instance Price" column (on-demand, per instance).
- The 2023 page (coreweave.com/gpu-cloud-pricing, Wayback 2023-09-21) priced GPU components a
  la carte: a Webflow grid of `w-row` divs (no `<table>`, read by shape with
  `pagekit.grid_tables`) whose price column is "GPU Component Cost Per Hour", CPU and RAM
  billed separately; a "Reserve Now" link may sit inside the price cell. Those rows are
  per-GPU prices for the GPU alone: gpu_count 1, `gpu_only=True`, offering "<model> (GPU
  component)" so they never pose as an instance. A grid whose header cells were cut away
  (a page excerpt) has the model in its first column. The CPU and RAM grids have no GPU
  model column and are not rows.

Decisions:
- Regions are regions: "north-america", "europe" (from the heading); no heading -> "global".
- "Contact sales" and "N/A" cells are not prices (counted, skipped).
- The Inference single-GPU column is stored as pricing `inference` (contract.PRICING), one GPU
  (the header says "Single GPU"), offering "<model> (inference, single GPU)": footnote 2 of
  the page says it applies only to CoreWeave inference-platform customers, so it is never the
  instance's price. On the 2026 page it is the on-demand price over the GPU count (GB200
  $42.00 / 4 = $10.50). A column that does not say single GPU / per GPU is not read (counted
  `INFERENCE_SKIP`).
- A row whose GPU count is blank uses `_KNOWN_GPU_COUNTS` (GB200 NVL72: a 4-GPU node, two
  Superchips, as the 2026 page's footnote 1 says), else it is skipped (counted).
- A cell under a price header that holds a bare number, or a row with more or fewer cells than
  the header, is a shifted layout: ParseError, never a guessed price.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from contract import GLOBAL_REGION, HttpSettings, Parsed, ParseError, RawCapture, Skips, rows_frame
from contract.prices import clean_text, parse_price
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request
from scrapers.pagekit import (
    StrategyParser,
    Table,
    foreign_currency,
    grid_tables,
    is_hidden,
    read_tables,
)

if TYPE_CHECKING:  # bs4 is imported where a page is read (start-up: BENCHMARKS §18)
    import httpx
    from bs4 import BeautifulSoup, Tag

__all__ = ["INFERENCE_SKIP", "NAME", "SOURCE", "URL", "fetch", "parse"]

NAME = "coreweave"
BASE = "https://www.coreweave.com"
PATH = "/pricing"
URL = BASE + PATH
_NUMBER = re.compile(r"^\s*(\d[\d,]*(?:\.\d+)?)")
_KNOWN_GPU_COUNTS: dict[str, float] = {"NVIDIA GB200 NVL72": 4.0, "NVIDIA GB300 NVL72": 4.0}
_REGION = re.compile(r"\bregion\s*:?\s*(?P<name>.+)$", re.IGNORECASE)
_HEADER_CLASSES = ("table-v2-header", "table-header-v2")
_CELL_CLASSES = {"table-v2-cell", "table-model-name", "table-header-cell"}
_NOT_A_PRICE = re.compile(r"contact|n/?a\b|^-*$|sold out|coming soon", re.IGNORECASE)
INFERENCE_SKIP = "inference single-GPU price (inference platform only)"


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/html"})


def _number(text: str) -> float | None:
    match = _NUMBER.match(text)
    return float(match.group(1).replace(",", "")) if match else None


def _cells(grid: Tag) -> list[Tag]:
    """A grid row's own cells, in order (not the mobile copies inside `.table-cell-column`)."""
    from bs4 import Tag

    return [c for c in grid.find_all(recursive=False)
            if isinstance(c, Tag) and _CELL_CLASSES.intersection(c.get("class") or ())]


def _region_named(heading: str) -> str:
    """"REGION: NORTH AMERICA" -> "north-america"; a heading naming no region -> global."""
    match = _REGION.search(clean_text(heading))
    if match is None:
        return GLOBAL_REGION
    return re.sub(r"[^a-z0-9]+", "-", match.group("name").lower()).strip("-") or GLOBAL_REGION


def _region(header: Tag) -> str:
    heading = header.find_previous(["h1", "h2", "h3", "h4", "h5", "h6"])
    return _region_named(heading.get_text(" ", strip=True) if heading else "")


def v2_grid_tables(soup: BeautifulSoup) -> list[Table]:
    """Webflow div grids as Tables: headers from the header grid, rows from `.table-row-v2`.

    A table's rows are the visible `.table-row-v2` elements under the header's parent; the
    region heading before the header becomes the caption.
    """
    tables: list[Table] = []
    for header in soup.find_all(class_=list(_HEADER_CLASSES)):
        if is_hidden(header):
            continue
        grid = header.select_one(".table-grid") or header
        headers = [clean_text(c.get_text(" ", strip=True)) for c in _cells(grid)]
        container = header.parent
        if not headers or container is None:
            continue
        rows, elements = [], []
        for row in container.select(".table-row-v2"):
            if is_hidden(row):
                continue
            row_grid = row.select_one(".table-grid") or row
            rows.append([clean_text(c.get_text(" ", strip=True)) for c in _cells(row_grid)])
            elements.append(row)
        tables.append(Table(headers=headers, rows=rows, element=header,
                            row_elements=elements, caption=_region(header)))
    return tables


def _price(text: str, column: str, offering: str) -> float | None:
    """Per-hour amount of a price cell; None for "Contact sales" / "N/A"; ParseError else."""
    if _NOT_A_PRICE.search(text):
        return None
    price = parse_price(text, default_period="hour")
    if price is None or price.currency != "USD" or foreign_currency(text):
        raise ParseError(f"coreweave: {offering!r}: {column!r} cell holds {text!r}, not a "
                         "price (cells shifted?)")
    return price.hourly()


def _model_column(table: Table) -> int | None:
    for keywords in (("gpu model",), ("model",), ("gpu type",)):
        index = table.column(*keywords)
        if index is not None:
            return index
    # a grid whose header cells were cut away (an excerpt): the model is the first column
    if table.headers and not table.headers[0] and table.rows and all(
            row and re.search(r"[A-Za-z]", row[0]) and _number(row[0]) is None
            for row in table.rows):
        return 0
    return None


def _columns(table: Table) -> dict[str, int | None]:
    return {
        "model": _model_column(table),
        "count": table.column("gpu count"),
        "vram": table.column("vram"),
        "vcpus": table.column("vcpu", exclude=("per gpu",)),
        "ram": table.column("ram", exclude=("vram", "per gpu")),
        "on_demand": next((i for i in (table.column("on-demand"), table.column("on demand"),
                                       table.column("instance price")) if i is not None), None),
        "spot": table.column("spot"),
        "inference": table.column("inference"),
        "component": next((i for i in (table.column("gpu component"),
                                       table.column("per gpu", exclude=("vcpu", "ram")))
                           if i is not None), None),
    }


def _inference_row(table: Table, index: int, cells: list[str], common: dict[str, Any],
                   skips: Skips) -> dict[str, Any] | None:
    """The inference-platform price of one GPU, when the header says it is per single GPU."""
    header, name = table.headers[index], common["gpu_name"]
    price = _price(cells[index], header, name)
    if price is None:
        return None
    if not re.search(r"single\s+gpu|per\s+gpu|/\s*gpu", header, re.I):
        skips.skip(INFERENCE_SKIP)
        return None
    return {**common, "offering": f"{name} (inference, single GPU)", "gpu_count": 1.0,
            "pricing": "inference", "price_usd_per_hour": price, "gpu_only": False,
            "vcpus": None, "ram_gb": None}


def _rows_of(table: Table, skips: Skips) -> Iterator[dict[str, Any]]:
    at = _columns(table)
    prices = [k for k in ("on_demand", "spot", "component") if at[k] is not None]
    if at["model"] is None or not prices:
        return  # not a GPU price table (CPU / RAM / storage tables of the same page)
    for cells in table.rows:
        if len(cells) != len(table.headers):
            raise ParseError(f"coreweave: a row of {len(cells)} cells under {len(table.headers)} "
                             f"headers ({cells[:1]}): layout changed")
        name = cells[at["model"]]
        if not name or _number(name) is not None:
            raise ParseError(f"coreweave: model cell {name!r} is not a model name "
                             "(cells shifted?)")

        def number(key: str, cells: list[str] = cells) -> float | None:
            index = at[key]
            return _number(cells[index]) if index is not None else None

        common = {"provider": "coreweave", "gpu_name": name, "region": table.caption,
                  "gpu_memory_gb": number("vram"), "vcpus": number("vcpus"),
                  "ram_gb": number("ram")}
        if at["component"] is not None:
            price = _price(cells[at["component"]], table.headers[at["component"]], name)
            if price is None:
                skips.skip("no price (contact sales / N/A)")
                continue
            yield {**common, "offering": f"{name} (GPU component)", "gpu_count": 1.0,
                   "pricing": "on_demand", "price_usd_per_hour": price, "gpu_only": True,
                   "vcpus": None, "ram_gb": None}
            continue
        if at["inference"] is not None:
            inference = _inference_row(table, at["inference"], cells, common, skips)
            if inference is not None:
                yield inference
        count = number("count") or _KNOWN_GPU_COUNTS.get(name)
        if not count or count != int(count):
            skips.skip("no GPU count")
            continue
        for pricing in ("on_demand", "spot"):
            index = at[pricing]
            if index is None:
                continue
            price = _price(cells[index], table.headers[index], name)
            if price is None:
                skips.skip("no price (contact sales / N/A)")
                continue
            yield {**common, "offering": name, "gpu_count": count, "pricing": pricing,
                   "price_usd_per_hour": price, "gpu_only": False}


def _read(tables: list[Table]) -> Parsed:
    """Rows of every GPU price table, and the cells not stored, counted by reason."""
    skips = Skips()
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str, float]] = set()
    for table in tables:
        for row in _rows_of(table, skips):
            key = (row["offering"], row["pricing"], row["region"], row["price_usd_per_hour"])
            if key in seen:  # the same price shown twice (e.g. a repeated block)
                skips.skip("repeated row")
                continue
            seen.add(key)
            rows.append(row)
    return Parsed(rows_frame(rows), skips)


def _tables(raw: RawCapture, soup: BeautifulSoup) -> Parsed:
    """The 2024-2026 Webflow grids (known by their header class) and HTML tables."""
    tables = v2_grid_tables(soup) + read_tables(soup)
    if not tables and soup.select(".table-row-v2"):
        raise ParseError("coreweave: price rows without a header row (layout changed?)")
    return _read(tables)


def _grid(raw: RawCapture, soup: BeautifulSoup) -> Parsed:
    """Any other grid of divs, found by its shape (the 2023 a la carte page)."""
    tables = [t for t in grid_tables(soup) if t.element is not None
              and not t.element.find_parent(class_=list(_HEADER_CLASSES))]
    for table in tables:
        table.caption = _region_named(table.caption)
    return _read(tables)


def _accepts(raw: RawCapture) -> None:
    if raw.body.lstrip().startswith(b"provider,product,"):
        raise ParseError("coreweave: this is a third-party scraper's CSV table, not the "
                         "page; it is reference data for the conformance tests")


parse = StrategyParser(NAME, (("table", _tables), ("grid", _grid)), accepts=_accepts)

SOURCE = SourceDef(
    name=NAME,
    provider="coreweave",
    kind="page",
    url=URL,
    example=EXAMPLES_DIR / "coreweave" / "pricing_2026-02-11.html",
    example_as_of="2026-02-11",
    history_urls=("https://www.coreweave.com/gpu-cloud-pricing", URL),
    fetch_fn=fetch,
    parse_fn=parse,
)
