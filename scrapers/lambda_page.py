"""Lambda's public pricing page (no key): https://lambda.ai/pricing, on-demand instance tables.

Facts (../shared/captures/PAGES.md §1, from third-party scraper code; no raw page was
available to check them against):
- server-rendered `<table class="_pricingTable_<hash>">`, one per GPU-count tab (`role=tabpanel`,
  `aria-labelledby` -> the tab button, whose text is "1x", "2x", "4x", "8x"); each row is
  `<tr>` with the GPU in its first `<th>` and `<td data-label="VRAM/GPU|vCPUs|RAM|STORAGE|
  PRICE/GPU/HR">` cells. Prices are USD per GPU-hour and differ by GPU count.
- since about Dec 2025 the tab contents are embedded as JSON strings,
  `{"contentHtml":"\\u003Ctable ...","label":"8x"}`, which are unescaped and parsed the same way.
- the page also carries 1-Click Clusters and Reserved sections, and heading rows
  ("On-Demand", "Reserved") with no numbers: neither is an on-demand instance price.

The page names no instance type, so `offering` is the Lambda Cloud API name derived from the
GPU and count (gpu_8x_h100_sxm5), making these rows the same as the `lambda` API source's.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import polars as pl
from bs4 import BeautifulSoup, Tag

from scrapers.base import (
    EXAMPLES_DIR,
    GLOBAL_REGION,
    HttpSettings,
    ParseError,
    RawCapture,
    SourceDef,
    rows_frame,
)
from scrapers.http import request
from scrapers.lambda_api import BILLING_INCREMENT_S

NAME = "lambda-page"
BASE = "https://lambda.ai"
PATH = "/pricing"
URL = BASE + PATH

_COUNT_LABEL = re.compile(r"^\s*(\d+)\s*x\s*$", re.IGNORECASE)
_NUMBER = re.compile(r"(\d+(?:[.,]\d+)*)")
_SKIPPED_SECTIONS = re.compile(r"cluster|reserved", re.IGNORECASE)
# {"contentHtml":"...","label":"8x"}, the way the page embeds each tab.
_TAB_JSON = re.compile(r'"contentHtml"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"label"\s*:\s*"([^"]*)"')


# Page GPU name (without "NVIDIA"), memory GB -> the API's instance-type stem.
_API_STEMS: dict[tuple[str, int], str] = {
    ("B200 SXM6", 180): "b200_sxm6",
    ("H100 SXM", 80): "h100_sxm5",
    ("H100 PCIe", 80): "h100_pcie",
    ("GH200", 96): "gh200",
    ("A100 SXM", 80): "a100_80gb_sxm4",
    ("A100 SXM", 40): "a100_sxm4",
    ("A100 PCIe", 40): "a100",
    ("A6000", 48): "a6000",
    ("A10", 24): "a10",
    ("Tesla V100", 16): "v100",
    ("V100", 16): "v100",
    ("Quadro RTX 6000", 24): "rtx6000",
    ("RTX 6000", 24): "rtx6000",
}
# Where Lambda's names break the pattern: its 8x A100 SXM 40 GB is plain gpu_8x_a100.
_API_NAME_EXCEPTIONS: dict[str, str] = {"gpu_8x_a100_sxm4": "gpu_8x_a100"}


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url, headers={"Accept": "text/html"})


def api_instance_name(gpu_name: str, memory_gb: float | None, count: int) -> str:
    """The Lambda Cloud API instance type for a page row ("NVIDIA H100 SXM", 80, 8 ->
    gpu_8x_h100_sxm5); unknown GPUs get the same pattern from their own name."""
    short = re.sub(r"^\s*NVIDIA\s+", "", gpu_name, flags=re.IGNORECASE).strip()
    stem = _API_STEMS.get((short, round(memory_gb or 0)))
    if stem is None:
        stem = re.sub(r"[^a-z0-9]+", "_", short.lower()).strip("_")
    name = f"gpu_{count}x_{stem}"
    return _API_NAME_EXCEPTIONS.get(name, name)


def _number(text: str | None) -> float | None:
    match = _NUMBER.search(text or "")
    return float(match.group(1).replace(",", "")) if match else None


def _gigabytes(text: str | None) -> float | None:
    value = _number(text)
    if value is None:
        return None
    return value * 1024 if re.search(r"\bTi?B\b", text or "", re.IGNORECASE) else value


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


def _cells(row: Tag) -> dict[str, str]:
    return {
        str(cell.get("data-label")).strip().upper(): cell.get_text(" ", strip=True)
        for cell in row.find_all("td")
        if cell.get("data-label")
    }


def _pick(cells: dict[str, str], *prefixes: str) -> str | None:
    # Prefixes, not substrings: "RAM" must not match "VRAM/GPU".
    return next((v for k, v in cells.items() if k.startswith(prefixes)), None)


def parse(raw: RawCapture) -> pl.DataFrame:
    if raw.body.lstrip().startswith(b"provider,product,"):
        raise ParseError("lambda-page: this is a third-party scraper's CSV table, not the "
                         "page; it is reference data for the conformance tests")
    text = raw.text()
    soup = BeautifulSoup(text, "lxml")
    tabs = _html_tabs(soup) + _json_tabs(text)
    count_tabs = [(int(m.group(1)), panel) for label, panel in tabs
                  if (m := _COUNT_LABEL.match(label))]
    if not count_tabs:
        raise ParseError("lambda-page: no '1x/2x/4x/8x' pricing tabs found (layout changed?)")
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for count, panel in count_tabs:
        for row in panel.find_all("tr"):
            cells = _cells(row)
            header = row.find("th")
            price = _number(_pick(cells, "PRICE"))
            if header is None or price is None or price <= 0:
                continue  # the header row, or a section heading picked up as a row
            gpu_name = header.get_text(" ", strip=True)
            memory = _number(_pick(cells, "VRAM"))
            offering = api_instance_name(gpu_name, memory, count)
            if offering in seen:
                continue
            seen.add(offering)
            rows.append({
                "provider": "lambda",
                "offering": offering,
                "gpu_name": gpu_name,
                "gpu_count": float(count),
                "gpu_memory_gb": memory,
                "vcpus": _number(_pick(cells, "VCPU", "CPU")),
                "ram_gb": _gigabytes(_pick(cells, "RAM", "MEMORY")),
                "region": GLOBAL_REGION,
                "pricing": "on_demand",
                "price_usd_per_hour": round(price * count, 6),
                "billing_increment_s": BILLING_INCREMENT_S,
            })
    return rows_frame(rows)


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
