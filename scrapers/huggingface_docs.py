"""Hugging Face hardware price tables from the official docs, served as markdown.

Two sources, one parser: `huggingface-docs` reads the Jobs pricing page
(https://huggingface.co/docs/hub/en/jobs-pricing.md) and `huggingface-spaces` the Spaces GPU
page (https://huggingface.co/docs/hub/en/spaces-gpus.md). Facts (../shared/captures/PAGES.md
§4): markdown tables with a Hardware column ("Nvidia T4 - small", "4x Nvidia L4", "Google TPU
v5e - 2x2"), CPU / Memory / GPU Memory (total for the flavor) / Disk columns whose order changed
across revisions, and an Hourly Price per instance ("$0.40", "$1", "Free!", "coming soon").
Removed flavors are struck through (~~Nvidia H100~~). Billing is per minute.

Status words in the label: a flavor being retired is labelled "*Nvidia H100 - deprecated
December 2025*" (2025-12 revision) before it is struck through. Such a row is stored with the
GPU and flavor it names (h100, h100x8) and `available=False`: the price is real, the flavor is
on its way out. A label or price saying "coming soon" is not a price yet: skipped. Tables with
and without a GPU Memory column are both read (columns are found by header text); without one
gpu_memory_gb stays null and the catalog's memory applies. `parse` also returns the skipped
rows counted by reason (CPU flavors, free tiers, coming soon, struck through): a `Parsed`.

The hardware label is turned into the API's flavor id (t4-small, l4x4, a10g-largex2, a100x8,
h200, v5e-2x2 ...) so that these rows and the `huggingface-jobs` API rows name the same thing.

Each source reads its own page only (one source of a provider may accept a capture): the Jobs
page names Jobs and never Spaces, the Spaces page names Spaces and never Jobs, so a source
refuses (ParseError) a page that does not name its product; the Inference Endpoints page
(no Hardware / Hourly Price table) is refused by both and read by `huggingface-endpoints`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from contract import GLOBAL_REGION, HttpSettings, Parsed, ParseError, RawCapture, Skips, rows_frame
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request
from scrapers.huggingface_jobs import size_gb

if TYPE_CHECKING:
    import httpx

DOCS_BASE = "https://huggingface.co"
JOBS_PATH = "/docs/hub/en/jobs-pricing.md"
SPACES_PATH = "/docs/hub/en/spaces-gpus.md"

# "4x Nvidia A100 - large", "Nvidia T4 - small", "Google TPU v5e - 2x2", "Nvidia RTX PRO 6000"
_LABEL = re.compile(
    r"^(?:(?P<count>\d+)\s*x\s+)?(?:Nvidia|NVIDIA|Google|AMD)\s+(?P<model>.+?)"
    r"(?:\s+-\s+(?P<size>[\w.]+))?$"
)
# " - deprecated December 2025", " (removed ...)", " - coming soon": a status, not the model.
_STATUS = re.compile(r"\s*[-(]\s*(?P<word>deprecated|retiring|removed|coming soon)\b.*$",
                     re.IGNORECASE)
_TOPOLOGY = re.compile(r"^(\d+)x(\d+)$")
_PRICE = re.compile(r"\$\s*(\d+(?:\.\d+)?)")
# Flavor ids that do not follow the label pattern (the API calls 4x "A100 - large" a100x4).
_ID_EXCEPTIONS = {"a100-largex4": "a100x4", "a100-largex8": "a100x8"}


def _fetcher(source: str, path: str) -> Any:
    def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
        url = settings.base_url(source, DOCS_BASE) + path
        return request(client, settings, source, "GET", url,
                       headers={"Accept": "text/markdown, text/plain;q=0.9"})
    return fetch


def _cells(line: str) -> list[str]:
    return [c.strip().strip("*").strip() for c in line.strip().strip("|").split("|")]


def markdown_tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """Every markdown table: (lower-cased header cells, body rows)."""
    tables: list[tuple[list[str], list[list[str]]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines) - 1:
        if lines[i].lstrip().startswith("|") and re.match(r"^\s*\|?[\s:|-]+\|?\s*$", lines[i + 1]) \
                and "-" in lines[i + 1]:
            header = [c.lower() for c in _cells(lines[i])]
            body = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                body.append(_cells(lines[i]))
                i += 1
            tables.append((header, body))
        else:
            i += 1
    return tables


def flavor_of(label: str) -> tuple[str, str, float] | None:
    """('4x Nvidia A100 - large') -> ('a100x4', 'A100', 4.0); None for CPU or unknown labels."""
    match = _LABEL.match(label.strip())
    if not match:
        return None
    model = match.group("model").strip()
    size = match.group("size")
    explicit = match.group("count")
    count = float(explicit or 1)
    base = re.sub(r"\s+", "-", model.lower())
    if model.upper().startswith("TPU") and size and _TOPOLOGY.match(size):
        rows, cols = _TOPOLOGY.match(size).groups()  # type: ignore[union-attr]
        return f"{base.removeprefix('tpu-')}-{size}", model, float(int(rows) * int(cols))
    if size:
        flavor = f"{base}-{size}" + (f"x{int(count)}" if count > 1 else "")
    else:
        flavor = f"{base}x{int(count)}" if explicit else base
    return _ID_EXCEPTIONS.get(flavor, flavor), model, count


def _column(header: list[str], *names: str) -> int | None:
    for name in names:
        for index, cell in enumerate(header):
            if cell == name:
                return index
    return None


def _status(label: str) -> tuple[str, str | None]:
    """The label without its status words, and the status ('deprecated', 'coming soon' ...)."""
    match = _STATUS.search(label)
    if match is None:
        return label, None
    return label[: match.start()].strip(), match.group("word").lower()


def parse(raw: RawCapture) -> Parsed:
    """Rows, and the table rows not stored counted by reason."""
    text = raw.text()
    priced = [(h, b) for h, b in markdown_tables(text)
              if "hardware" in h and "hourly price" in h]
    if not priced:
        raise ParseError("huggingface docs: no table with Hardware and Hourly Price columns "
                         "(page layout changed?)")
    rows: list[dict[str, Any]] = []
    skips = Skips()
    for header, body in priced:
        at = {
            "hardware": _column(header, "hardware"),
            "price": _column(header, "hourly price"),
            "cpu": _column(header, "cpu"),
            "ram": _column(header, "memory", "ram"),
            "vram": _column(header, "gpu memory", "accelerator memory"),
        }
        for cells in body:
            def cell(key: str, cells: list[str] = cells, at: dict[str, int | None] = at) -> str:
                index = at[key]
                return cells[index] if index is not None and index < len(cells) else ""

            label = cell("hardware")
            if not label:
                continue
            if "~~" in label:
                skips.skip("struck through (removed flavor)")
                continue
            label, status = _status(label)
            flavor = flavor_of(label)
            if flavor is None:
                skips.skip("not a GPU flavor (CPU)")
                continue
            price_text = cell("price")
            if status == "coming soon" or "soon" in price_text.lower():
                skips.skip("coming soon (no price yet)")
                continue
            price = _PRICE.search(price_text)
            if price is None:
                skips.skip("no price (free tier or blank)")
                continue
            offering, model, count = flavor
            total_vram = size_gb(cell("vram"))
            rows.append({
                "provider": "huggingface",
                "offering": offering,
                "gpu_name": model,
                "gpu_count": count,
                "gpu_memory_gb": total_vram / count if total_vram else None,
                "vcpus": size_gb(cell("cpu")),
                "ram_gb": size_gb(cell("ram")),
                "region": GLOBAL_REGION,
                "pricing": "on_demand",
                "price_usd_per_hour": float(price.group(1)),
                "billing_increment_s": 60,
                # A deprecated or retiring flavor is priced but on its way out.
                "available": False if status in ("deprecated", "retiring", "removed") else None,
            })
    return Parsed(rows_frame(rows), skips)


def _page_of(source: str, product: str) -> Callable[[RawCapture], Parsed]:
    """`parse` for one product's page: a page that never names the product is refused."""
    word = re.compile(rf"\b{product}\b", re.IGNORECASE)

    def parse_page(raw: RawCapture) -> Parsed:
        if not word.search(raw.text()):
            raise ParseError(f"{source}: the page never names {product} (another page?)")
        return parse(raw)
    return parse_page


SOURCES = [
    SourceDef(
        name="huggingface-docs",
        provider="huggingface",
        kind="page",
        url=DOCS_BASE + JOBS_PATH,
        example=EXAMPLES_DIR / "huggingface-docs" / "jobs-pricing_2026-08-21.md",
        example_as_of="2026-08-21",
        fetch_fn=_fetcher("huggingface-docs", JOBS_PATH),
        parse_fn=_page_of("huggingface-docs", "jobs?"),
    ),
    SourceDef(
        name="huggingface-spaces",
        provider="huggingface",
        kind="page",
        url=DOCS_BASE + SPACES_PATH,
        example=EXAMPLES_DIR / "huggingface-spaces" / "spaces-gpus_2024-10-01.md",
        example_as_of="2024-10-01",
        fetch_fn=_fetcher("huggingface-spaces", SPACES_PATH),
        parse_fn=_page_of("huggingface-spaces", "spaces?"),
    ),
]
