"""Lambda's public pricing page (no key): https://lambda.ai/pricing (before 2025
lambdalabs.com/service/gpu-cloud). On-demand instance prices, and reserved prices where the
page states a term.

Layouts it reads, tried in this order (`gpuprices parse` names the one that read the page):

1. `table/tabs`, lambda.ai 2025-2026: server-rendered `<table class="_pricingTable_<hash>">`,
   one per GPU-count tab (`role=tabpanel`, `aria-labelledby` -> the tab button "1x" .. "8x");
   the GPU in each row's `<th>`, `<td data-label="VRAM/GPU|vCPUs|RAM|STORAGE|PRICE/GPU/HR*">`
   cells. Since about Dec 2025 the tabs are also embedded as JSON strings
   (`{"contentHtml":"\\u003Ctable ...","label":"8x"}`), unescaped and read the same way.
   1-Click Cluster / Reserved sections (in 2026 their tabs are labelled by GPU, "NVIDIA HGX
   B200", with DURATION "2 weeks - 1 year" and GPU COUNT "16+": a range of terms, not one) and
   heading rows ("On-Demand") are not instance prices.
2. `table/rows`, lambdalabs.com HubSpot tables, 2023 and 2024, read by header words (by cell
   shape when a table has none): a row per instance named "On-demand 8x NVIDIA H100 SXM"
   (2024) or "8x NVIDIA H100 SXM" + a "New" badge (2023), GPU memory, vCPUs, RAM, storage
   and the price. Per GPU or per instance comes from the page's words, never from the date:
   "$2.99 / GPU / hr" (2024) is per GPU-hour, "$20.72 / hr" (2023, no "/ GPU", and no "/GPU"
   in the column header either) is the whole instance per hour. The 2023 page names two
   instances "8x NVIDIA A100": the 40 GB and the 80 GB one, told apart by the VRAM cell
   (gpu_8x_a100 and gpu_8x_a100_80gb_sxm4). Rows without a price ("Reserved 8x ... CONTACT
   SALES") are not rows.
   The 2023 page also had a "Reserved Cloud Cluster pricing" table: a label ("Reserved",
   "Sprint"), an instance type ("8x NVIDIA H100"), a GPU column ("H100 SXM"), a price per
   GPU ("$1.89/H100/hour"), a Term ("3-years", "3-months") and a cluster size in GPUs
   ("64 - 60,000", not an instance). Those are stored as pricing `reserved` for the instance
   type (price x GPUs), `term_months` from the Term and the term in the offering
   (`gpu_8x_h100_sxm5_reserved_3y`); a row naming no instance is one GPU's price
   (`reserved_3y_h100_sxm5`). A reserved price whose term the page does not state is left
   out: a commitment of unknown length is not comparable with anything.
3. `json-ld`, a fallback for a page whose price list is schema.org data only: Offers (of a
   Product, an AggregateOffer or an OfferCatalog) in USD per hour, named like the tables
   ("NVIDIA H100 SXM", "8x NVIDIA H100 SXM"); per GPU when the offer's words say so, a count
   in the name makes it the instance's price otherwise, no count is one GPU.

Cells are checked against their columns before a price is read: money under a spec column
(VRAM, vCPUs, RAM, STORAGE) or a size under the price column ("22 TiB SSD" under PRICE) is a
damaged or edited page and a ParseError, never a price. A price in another currency is not
stored (counted "non-USD price").

Rows seen but not stored are counted by reason (`SOURCE.parse_report(raw).skips`): no price
("CONTACT SALES", "Sold out"), a $0 placeholder, a reserved price without a stated term, a
cluster price not per GPU.

A page none of these read -> ParseError naming the strategies tried.

The page names no instance type, so `offering` is the Lambda Cloud API name derived from the
GPU and count (gpu_8x_h100_sxm5), making these rows the same offerings as the `lambda` API
source's and SkyPilot's Lambda catalog (so `source_disagreement` compares like with like).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from contract import GLOBAL_REGION, HttpSettings, Parsed, ParseError, RawCapture, Skips, rows_frame
from contract.prices import clean_text, parse_price, price_unit
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request
from scrapers.lambda_api import BILLING_INCREMENT_S
from scrapers.pagekit import (
    StrategyParser,
    Table,
    badges_say_unavailable,
    commitment_term,
    count_in_name,
    foreign_currency,
    gpu_label,
    json_ld_objects,
    name_badges,
    no_price_reason,
    offers_of,
    read_tables,
)

if TYPE_CHECKING:  # bs4 is imported where a page is read (start-up: BENCHMARKS §18)
    import httpx
    from bs4 import BeautifulSoup, Tag

__all__ = ["NAME", "SOURCE", "URL", "api_instance_name", "fetch", "parse"]

NAME = "lambda-page"
BASE = "https://lambda.ai"
PATH = "/pricing"
URL = BASE + PATH

_COUNT_LABEL = re.compile(r"^\s*(\d+)\s*x\s*$", re.IGNORECASE)
_NUMBER = re.compile(r"(\d+(?:[.,]\d+)*)")
_MONEY = re.compile(r"(?:US\$|C\$|A\$|[$€£¥₹])\s*\d|\d\s*(?:USD|EUR|GBP|CAD|CHF|JPY)\b"
                    r"|\b(?:USD|EUR|GBP|CAD|CHF|JPY)\s*\d")
_SKIPPED_SECTIONS = re.compile(r"cluster|reserved", re.IGNORECASE)
# {"contentHtml":"...","label":"8x"}, the way the page embeds each tab.
_TAB_JSON = re.compile(r'"contentHtml"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"label"\s*:\s*"([^"]*)"')
# "On-demand 8x NVIDIA H100 SXM", "Reserved 8x ...", "8x NVIDIA H100 SXM5".
_INSTANCE = re.compile(r"^(?:(?P<kind>on[- ]?demand|reserved)\s+)?(?P<count>\d{1,2})\s*x\s+"
                       r"(?P<gpu>.*\S)\s*$", re.IGNORECASE)
_GPU_TOKEN = re.compile(r"\b(?:[A-Z]{1,3}\d{2,4}[A-Z]?|A\d{4,5}|RTX\s*\d{4})\b")
_MEMORY_IN_NAME = re.compile(r"\(?\s*(\d{2,3})\s*GB\s*\)?", re.IGNORECASE)

# Page GPU name (without "NVIDIA", SXM/PCIe generation digits dropped, lower case), memory GB
# -> the API's instance-type stem (names as in scrapers/examples/lambda).
_API_STEMS: dict[tuple[str, int], str] = {
    ("b200 sxm", 180): "b200_sxm6",
    ("h100 sxm", 80): "h100_sxm5",
    ("h100 pcie", 80): "h100_pcie",
    ("gh200", 96): "gh200",
    ("a100 sxm", 80): "a100_80gb_sxm4",
    ("a100 sxm", 40): "a100_sxm4",
    ("a100 pcie", 40): "a100",
    ("a100", 40): "a100",
    ("a100", 80): "a100_80gb_sxm4",
    ("a6000", 48): "a6000",
    ("rtx a6000", 48): "a6000",
    ("a10", 24): "a10",
    ("tesla v100", 16): "v100",
    ("v100", 16): "v100",
    ("quadro rtx 6000", 24): "rtx6000",
    ("rtx 6000", 24): "rtx6000",
}
# Where Lambda's names break the pattern: its 8x A100 SXM 40 GB is plain gpu_8x_a100.
_API_NAME_EXCEPTIONS: dict[str, str] = {"gpu_8x_a100_sxm4": "gpu_8x_a100"}


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/html"})


def _stem(gpu_name: str, memory_gb: float | None) -> str:
    short = re.sub(r"^\s*NVIDIA\s+", "", gpu_name, flags=re.IGNORECASE).strip()
    in_name = _MEMORY_IN_NAME.search(short)
    if in_name:
        memory_gb = memory_gb or float(in_name.group(1))
        short = (short[:in_name.start()] + " " + short[in_name.end():]).strip()
    key = re.sub(r"\b(sxm|pcie)\d\b", r"\1", clean_text(short).lower())
    stem = _API_STEMS.get((key, round(memory_gb or 0)))
    if stem is None and not memory_gb:  # no memory stated: the one stem of that name, if one
        stems = {v for (name, _), v in _API_STEMS.items() if name == key}
        stem = stems.pop() if len(stems) == 1 else None
    return stem or re.sub(r"[^a-z0-9]+", "_", short.lower()).strip("_")


def api_instance_name(gpu_name: str, memory_gb: float | None, count: int) -> str:
    """The Lambda Cloud API instance type for a page row ("NVIDIA H100 SXM", 80, 8 ->
    gpu_8x_h100_sxm5); unknown GPUs get the same pattern from their own name."""
    name = f"gpu_{count}x_{_stem(gpu_name, memory_gb)}"
    return _API_NAME_EXCEPTIONS.get(name, name)


def _number(text: str | None) -> float | None:
    match = _NUMBER.search(text or "")
    return float(match.group(1).replace(",", "")) if match else None


def _gigabytes(text: str | None) -> float | None:
    value = _number(text)
    if value is None:
        return None
    return value * 1024 if re.search(r"\bTi?B\b", text or "", re.IGNORECASE) else value


class _Rows:
    """Rows of one page; the same offering twice must carry the same price."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self._prices: dict[tuple[str, str], float] = {}

    def add(self, row: dict[str, Any]) -> None:
        key = (row["offering"], row["pricing"])
        price = row["price_usd_per_hour"]
        if key in self._prices:
            if abs(self._prices[key] - price) > 0.005:
                raise ParseError(f"lambda-page: {key[0]} ({key[1]}) priced twice, "
                                 f"{self._prices[key]} and {price} (layout misread?)")
            return
        self._prices[key] = price
        self.rows.append(row)


def _row(offering: str, gpu_name: str, count: int, memory: float | None, vcpus: float | None,
         ram: float | None, pricing: str, per_hour: float,
         available: bool | None = None) -> dict[str, Any]:
    return {
        "provider": "lambda", "offering": offering, "gpu_name": gpu_name,
        "gpu_count": float(count), "gpu_memory_gb": memory, "vcpus": vcpus, "ram_gb": ram,
        "region": GLOBAL_REGION, "pricing": pricing,
        "price_usd_per_hour": round(per_hour, 6), "billing_increment_s": BILLING_INCREMENT_S,
        "available": available,
    }


# --- 2025-2026: tabbed _pricingTable_ tables ------------------------------------------------

def _html_tabs(soup: BeautifulSoup) -> list[tuple[str, Tag]]:
    """(tab label, panel) for the server-rendered layout, skipping cluster/reserved sections."""
    tabs: list[tuple[str, Tag]] = []
    for panel in soup.find_all(attrs={"role": "tabpanel"}):
        label_id = panel.get("aria-labelledby")
        tab = soup.find(id=label_id) if label_id else None
        label = tab.get_text(" ", strip=True) if tab else str(panel.get("aria-label") or "")
        heading = panel.find_previous(["h1", "h2", "h3", "h4"])
        if heading and _SKIPPED_SECTIONS.search(heading.get_text(" ", strip=True)):
            continue
        tabs.append((label, panel))
    return tabs


def _json_tabs(text: str) -> list[tuple[str, Tag]]:
    """(tab label, parsed table HTML) for the layout that embeds tabs as escaped JSON."""
    from bs4 import BeautifulSoup

    tabs: list[tuple[str, Tag]] = []
    for match in _TAB_JSON.finditer(text):
        try:
            html = json.loads(f'"{match.group(1)}"')
        except json.JSONDecodeError as exc:
            raise ParseError(f"lambda-page: undecodable tab JSON ({exc.msg})") from None
        tabs.append((match.group(2), BeautifulSoup(html, "lxml")))
    if not tabs and '\\"contentHtml\\"' in text:
        # The JSON sits inside a JS string literal: undo one level of \\ and \" escaping.
        return _json_tabs(text.replace("\\\\", "\0").replace('\\"', '"').replace("\0", "\\"))
    return tabs


def _labelled_cells(row: Tag) -> dict[str, str]:
    return {
        str(cell.get("data-label")).strip().upper(): clean_text(cell.get_text(" ", strip=True))
        for cell in row.find_all("td")
        if cell.get("data-label")
    }


def _pick(cells: dict[str, str], *prefixes: str) -> str | None:
    # Prefixes, not substrings: "RAM" must not match "VRAM/GPU".
    return next((v for k, v in cells.items() if k.startswith(prefixes)), None)


# What each spec column holds; a cell that does not look like its column is a misread page.
_SPEC_SHAPES: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    (("VRAM", "GPU MEMORY"), re.compile(r"\d+(?:\.\d+)?\s*GB", re.I)),
    (("VCPU", "CPU"), re.compile(r"\d+")),
    (("RAM", "MEMORY", "STORAGE"),
     re.compile(r"\d+(?:[.,]\d+)?\s*(?:GB|GiB|TB|TiB)\b.*", re.I)),
)


def _check_cells(cells: dict[str, str], where: str) -> None:
    """ParseError unless every labelled cell looks like its column: money only under PRICE,
    and sizes, counts and memory where their headers say. Two cells swapped by a page edit
    or a broken template ("22 TiB SSD" under PRICE, "$2.99" under STORAGE) are never read as
    a price."""
    for label, text in cells.items():
        if not text or label.startswith("PRICE"):
            continue
        if _MONEY.search(text):
            raise ParseError(f"lambda-page: {where}: money {text!r} under {label!r} "
                             "(cells swapped or shifted?)")
        shape = next((pattern for prefixes, pattern in _SPEC_SHAPES
                      if label.startswith(prefixes)), None)
        if shape is not None and not shape.fullmatch(text) and _NUMBER.search(text):
            raise ParseError(f"lambda-page: {where}: {text!r} under {label!r} is not what that "
                             "column holds (cells swapped or shifted?)")


def _tab_price(text: str, label: str, where: str, skips: Skips) -> float | None:
    """USD per GPU-hour of a tab's price cell; None (counted) when it holds no price."""
    if foreign_currency(text):
        skips.skip("non-USD price")
        return None
    price = parse_price(text)
    if price is None or price.amount <= 0:
        if re.search(r"\d", text) and not _MONEY.search(text):
            raise ParseError(f"lambda-page: {where}: {text!r} under {label!r} is not a price "
                             "(cells swapped or shifted?)")
        skips.skip(no_price_reason(text))
        return None
    if price.currency != "USD":
        skips.skip("non-USD price")
        return None
    period, per_gpu = price_unit(label)
    if (price.per_gpu or per_gpu) is not True or (price.period or period) != "hour":
        raise ParseError(f"lambda-page: tab price column {label!r} is not "
                         "per GPU-hour (layout changed?)")
    return price.amount


def _tabbed_tables(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    text = raw.text()
    count_tabs = [(int(m.group(1)), panel) for label, panel in _html_tabs(soup) + _json_tabs(text)
                  if (m := _COUNT_LABEL.match(label))]
    if not count_tabs:
        return None
    rows = _Rows()
    skips = Skips()
    for count, panel in count_tabs:
        for tr in panel.find_all("tr"):
            cells = _labelled_cells(tr)
            header = tr.find("th")
            price_label = next((k for k in cells if k.startswith("PRICE")), None)
            if header is None or price_label is None:
                continue  # the header row, or a section heading picked up as a row
            gpu_name, badges = name_badges(header.get_text(" ", strip=True))
            where = f"{count}x {gpu_name}"
            _check_cells(cells, where)
            per_gpu = _tab_price(cells[price_label], price_label, where, skips)
            if per_gpu is None:
                continue
            memory = _number(_pick(cells, "VRAM"))
            rows.add(_row(api_instance_name(gpu_name, memory, count), gpu_name, count, memory,
                          _number(_pick(cells, "VCPU", "CPU")),
                          _gigabytes(_pick(cells, "RAM", "MEMORY")),
                          "on_demand", per_gpu * count, badges_say_unavailable(badges)))
    return Parsed(rows_frame(rows.rows), skips)


# --- 2023-2024: HubSpot instance rows -------------------------------------------------------

_ROLE_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("memory", re.compile(r"gpu\s*mem|vram", re.I)),
    ("vcpus", re.compile(r"cpu", re.I)),
    ("ram", re.compile(r"^(?:ram|memory|system ram)$", re.I)),
    ("storage", re.compile(r"storage|disk", re.I)),
    ("term", re.compile(r"^term|duration|commitment", re.I)),
    ("gpu_count", re.compile(r"#\s*of\s*gpus|gpu\s*count|number of gpus", re.I)),
    ("network", re.compile(r"network|bandwidth", re.I)),
    ("gpu", re.compile(r"^gpus?$", re.I)),
    ("instance", re.compile(r"instance", re.I)),
    ("price", re.compile(r"price|cost|\$|/\s*h", re.I)),
)


def _roles(headers: list[str]) -> dict[int, str]:
    """Column index -> role, from the header words (an empty header has no role)."""
    roles: dict[int, str] = {}
    for index, header in enumerate(headers):
        role = next((r for r, pattern in _ROLE_WORDS if header and pattern.search(header)), None)
        if role and role not in roles.values():
            roles[index] = role
    return roles


def _shape_roles(cells: list[str]) -> dict[int, str]:
    """Roles of a headerless row's cells, by shape: the first "NN GB" cell is GPU memory,
    the first bare integer vCPUs, the first GiB/TiB cell that is not storage ("SSD") the RAM,
    the one cell with money the price."""
    roles: dict[int, str] = {}
    for index, text in enumerate(cells[1:], start=1):
        if _MONEY.search(text) or re.search(r"contact|sold out|coming soon", text, re.I):
            role = "price"
        elif re.fullmatch(r"\d+(?:\.\d+)?\s*GB", text, re.IGNORECASE):
            role = "memory"
        elif re.fullmatch(r"\d+", text):
            role = "vcpus"
        elif re.search(r"\bGi?B\b|\bTi?B\b", text) and "SSD" not in text.upper():
            role = "ram"
        else:
            continue
        if role not in roles.values():
            roles[index] = role
    return roles


def _check_row(cells: list[str], roles: dict[int, str], where: str) -> None:
    """ParseError when money sits in a column that is not a price, or the price column holds
    a bare number or a size: two cells swapped are never read as a price."""
    for index, role in roles.items():
        text = cells[index] if index < len(cells) else ""
        if role == "price":
            if text and not _MONEY.search(text) and _NUMBER.search(text) and not re.search(
                    r"contact|sold out|coming soon|request", text, re.I):
                raise ParseError(f"lambda-page: {where}: price cell holds {text!r}, not a "
                                 "price (cells swapped or shifted?)")
        elif _MONEY.search(text):
            raise ParseError(f"lambda-page: {where}: money {text!r} in the {role} column "
                             "(cells swapped or shifted?)")


def _instance_cell(cells: list[str], roles: dict[int, str]) -> tuple[int, re.Match[str]] | None:
    """The cell naming an instance ("8x NVIDIA H100 SXM", "On-demand 1x NVIDIA A10")."""
    for index, text in enumerate(cells):
        if roles.get(index) in ("price", "memory", "vcpus", "ram", "storage", "term"):
            continue
        match = _INSTANCE.match(gpu_label(text))
        if match:
            return index, match
    return None


def _table_term(table: Table) -> str | None:
    """A term stated around the table: caption, headers, or the text just after it."""
    after = ""
    anchor = table.element or (table.row_elements[-1] if table.row_elements else None)
    if anchor is not None:
        following = anchor.find_next(string=True)
        after = clean_text(str(following)) if following else ""
    return commitment_term(" ".join([table.caption, *table.headers, after]))


_TERM_CODE = re.compile(r"^(\d+)(y|mo)$")


def _term_months(term: str) -> float:
    """Months of a `commitment_term` code: "3y" -> 36, "3mo" -> 3."""
    match = _TERM_CODE.match(term)
    if match is None:
        raise ParseError(f"lambda-page: commitment term {term!r} not understood")
    return float(int(match.group(1)) * (12 if match.group(2) == "y" else 1))


def _instance_rows(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    rows = _Rows()
    skips = Skips()
    seen_instance_rows = 0
    for table in read_tables(soup):
        header_roles = _roles(table.headers)
        reserved_table = "reserved" in table.caption.lower()
        for cells in table.rows:
            if len(cells) < 2:
                continue
            roles = header_roles if "price" in header_roles.values() else _shape_roles(cells)
            found = _instance_cell(cells, roles)
            name = gpu_label(cells[0])
            if found is None and not _GPU_TOKEN.search(name):
                continue  # a heading row, or not an instance at all
            seen_instance_rows += found is not None
            where = clean_text(cells[found[0]] if found else name)
            _check_row(cells, roles, where)
            price_index = next((i for i, r in roles.items() if r == "price"), None)
            text = cells[price_index] if price_index is not None and \
                price_index < len(cells) else ""
            header = table.headers[price_index] if price_index is not None and \
                price_index < len(table.headers) else ""
            if foreign_currency(text):
                skips.skip("non-USD price")
                continue
            price = parse_price(text)
            if price is None or price.amount <= 0:  # "CONTACT SALES", "Sold out"
                skips.skip(no_price_reason(text or " ".join(cells)))
                continue
            if price.currency != "USD" or foreign_currency(text):
                skips.skip("non-USD price")
                continue
            header_period, header_per_gpu = price_unit(header)
            period = price.period or header_period
            if period is None:
                raise ParseError(f"lambda-page: price {text!r} names no period and its "
                                 f"column header {header!r} none either")
            per_gpu = price.per_gpu if price.per_gpu is not None else header_per_gpu
            hourly = price.amount / {"hour": 1.0, "minute": 1 / 60, "second": 1 / 3600}.get(
                period, float("nan"))
            if hourly != hourly:  # a monthly or yearly figure is not an instance-hour price
                raise ParseError(f"lambda-page: price {text!r} is not per hour")
            by_role = {role: cells[i] for i, role in roles.items() if i < len(cells)}
            instance = found[1] if found else None
            label = " ".join(c for i, c in enumerate(cells)
                             if found is None or i < found[0]) if found else ""
            kind = ((instance.group("kind") if instance else "") or label).lower()
            stated_term = commitment_term(by_role.get("term", ""))
            reserved = ("reserved" in kind or reserved_table or stated_term is not None
                        or instance is None)
            # a GPU column ("H100 SXM") beside the instance name ("8x NVIDIA H100") is exacter
            gpu_column = next((gpu_label(cells[i]) for i, r in roles.items() if r == "gpu"
                               and i < len(cells) and (found is None or i != found[0])), "")
            gpu_name = gpu_column if _GPU_TOKEN.search(gpu_column) else (
                gpu_label(instance.group("gpu")) if instance else name)
            memory = _number(by_role.get("memory"))
            vcpus, ram = _number(by_role.get("vcpus")), _gigabytes(by_role.get("ram"))
            if reserved:
                term = stated_term or commitment_term(" ".join(cells)) or _table_term(table)
                if term is None or (instance is None and per_gpu is not True):
                    # not comparable with anything
                    skips.skip("reserved price without a stated term" if term is None
                               else "cluster price not per GPU")
                    continue
                if instance is None:  # a cluster priced per GPU: one GPU's price
                    rows.add({**_row(f"reserved_{term}_{_stem(gpu_name, memory)}", gpu_name, 1,
                                     memory, None, None, "reserved", hourly),
                              "term_months": _term_months(term)})
                    continue
                count = int(instance.group("count"))
                rows.add({**_row(f"{api_instance_name(gpu_name, memory, count)}_reserved_{term}",
                                 gpu_name, count, memory, vcpus, ram, "reserved",
                                 hourly * count if per_gpu else hourly),
                          "term_months": _term_months(term)})
                continue
            count = int(instance.group("count"))  # type: ignore[union-attr]
            rows.add(_row(api_instance_name(gpu_name, memory, count), gpu_name, count, memory,
                          vcpus, ram, "on_demand", hourly * count if per_gpu else hourly))
    if not rows.rows and seen_instance_rows:
        raise ParseError(f"lambda-page: {seen_instance_rows} instance rows but no price read "
                         "from any of them (price cells changed?)")
    return Parsed(rows_frame(rows.rows), skips)


# --- fallback: schema.org offers ------------------------------------------------------------

_UNIT_CODES = {"HUR": "per hour", "MIN": "per minute", "SEC": "per second"}


def _offers(soup: BeautifulSoup) -> list[tuple[str, dict[str, Any]]]:
    """(name, offer) for every schema.org Offer on the page: a Product's (or its
    AggregateOffer's) offers under the product's name, and catalog offers under their own."""
    found: list[tuple[str, dict[str, Any]]] = []
    for item in json_ld_objects(soup):
        product = str(item.get("name") or "")
        for offer in offers_of(item):
            found.append((str(offer.get("name") or product), offer))
        entries = item.get("itemListElement")
        for entry in entries if isinstance(entries, list) else []:
            offer = entry.get("item", entry) if isinstance(entry, dict) else None
            if isinstance(offer, dict) and "Offer" in str(offer.get("@type")):
                offered = offer.get("itemOffered")
                name = str(offer.get("name") or (offered.get("name") if isinstance(
                    offered, dict) else "") or "")
                found.append((name, offer))
    return found


def _json_ld(raw: RawCapture, soup: BeautifulSoup) -> Parsed | None:
    offers = _offers(soup)
    if not offers:
        return None
    rows = _Rows()
    skips = Skips()
    for shown, offer in offers:
        count, bare = count_in_name(gpu_label(shown))
        gpu_name, badges = name_badges(bare)
        if not _GPU_TOKEN.search(gpu_name):
            continue
        spec = offer.get("priceSpecification")
        spec = spec[0] if isinstance(spec, list) and spec else spec
        spec = spec if isinstance(spec, dict) else {}
        unit = " ".join(str(x) for x in (
            _UNIT_CODES.get(str(spec.get("unitCode") or "").upper()), spec.get("unitText"),
            offer.get("unitText"), offer.get("description")) if x)
        amount = offer.get("price", spec.get("price"))
        currency = offer.get("priceCurrency") or spec.get("priceCurrency") or ""
        price = parse_price(f"{amount} {currency} {unit}")
        if price is None or price.amount <= 0:
            skips.skip(no_price_reason(str(amount or "")))
            continue
        if price.currency != "USD" or foreign_currency(f"{amount} {currency}"):
            skips.skip("non-USD price")
            continue
        if price.period != "hour":
            skips.skip("price names no period" if price.period is None else "not per hour")
            continue
        kind = "reserved" if re.search(r"reserv|commit", unit + shown, re.I) else "on_demand"
        if kind == "reserved":
            skips.skip("reserved price (json-ld)")
            continue
        gpus = int(count or 1)
        memory = _number(m.group(1)) if (m := _MEMORY_IN_NAME.search(gpu_name)) else None
        whole = price.amount * gpus if (price.per_gpu or count is None) else price.amount
        rows.add(_row(api_instance_name(gpu_name, memory, gpus), gpu_name, gpus, memory,
                      None, None, "on_demand", whole, badges_say_unavailable(badges)))
    return Parsed(rows_frame(rows.rows), skips)


def _not_a_scraped_table(raw: RawCapture) -> None:
    if raw.body.lstrip().startswith(b"provider,product,"):
        raise ParseError("lambda-page: this is a third-party scraper's CSV table, not the "
                         "page; it is reference data for the conformance tests")


parse = StrategyParser(
    source=NAME,
    strategies=(("table/tabs", _tabbed_tables), ("table/rows", _instance_rows),
                ("json-ld", _json_ld)),
    accepts=_not_a_scraped_table,
)

SOURCE = SourceDef(
    name=NAME,
    provider="lambda",
    kind="page",
    url=URL,
    example=EXAMPLES_DIR / "lambda-page" / "pricing_2026-02-11.html",
    example_as_of="2026-02-11",
    history_urls=("https://lambdalabs.com/service/gpu-cloud", URL),
    fetch_fn=fetch,
    parse_fn=parse,
)
