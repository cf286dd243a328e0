"""Hugging Face Inference Endpoints: dedicated GPU instances for a deployed model, priced per
hour, read from the docs source (markdown, no key): the pricing page of the
huggingface/hf-endpoints-documentation repository, served raw by GitHub.

Layouts known (the docs source at several commits; ../shared/captures/huggingface has the
2024-11-21 one): `## CPU Instances`, `## GPU Instances` and `## Accelerator Instances` (some
revisions `## INF2 Instances`) markdown tables with the columns Provider (the hosting cloud:
aws, gcp, azure) / Instance Type (nvidia-a100, inf2, tpu) / Instance Size (x1, x4, 2x2) /
Hourly rate ("$1", "$0.5", "$12.5": whole dollars written without decimals) / GPUs or
Accelerators (the count) / Memory, GPU Memory or Accelerator Memory (the instance's total) /
RAM / Architecture (the chip: "NVIDIA A100", "AWS Inferentia2", "Google TPU v5e", "GCP
TPUv5e"). Columns are found by header text, so reordered or renamed memory columns read too;
older revisions without an Instance Type column name the offering by its architecture.

Decisions:
- Pricing kind `inference`: an instance that serves one deployed model (billed per minute
  while initializing or running), not a general-purpose VM. The rate is the whole instance's
  (a replica): gpu_count from the GPUs column, per-GPU = rate / count; memory per GPU = the
  total / count.
- The offering is "<cloud> <type> <size>" ("aws nvidia-a100 x4"): the cloud is where the
  endpoint runs, not a region (the page names none: "global"). The same type and size on two
  clouds at two prices are two offerings.
- CPU tables (no GPU or accelerator count) are not read. Rows whose cells do not match the
  header (a trailing note outside the table's columns, a missing cell) are skipped and
  counted, never read shifted; a row marked "deprecated" is stored with available = False.
- A page without such a table (the Jobs or Spaces pricing pages) is refused: ParseError.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from contract import GLOBAL_REGION, HttpSettings, Parsed, ParseError, RawCapture, Skips, rows_frame
from contract.prices import clean_text, parse_price
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request
from scrapers.huggingface_docs import markdown_tables
from scrapers.huggingface_jobs import size_gb

if TYPE_CHECKING:
    import httpx

__all__ = ["NAME", "SOURCE", "URL", "fetch", "parse"]

NAME = "huggingface-endpoints"
BASE = "https://raw.githubusercontent.com"
PATH = "/huggingface/hf-endpoints-documentation/main/docs/source/support/pricing.mdx"
URL = BASE + PATH
# Where the page lived before (the docs moved it under support/ in 2025).
HISTORY_URLS = (BASE + "/huggingface/hf-endpoints-documentation/main/docs/source/pricing.mdx",
                URL)
_DEPRECATED = re.compile(r"\bdeprecated\b|\bretir", re.I)


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    url = settings.base_url(NAME, BASE) + PATH
    return request(client, settings, NAME, "GET", url,
                   headers={"Accept": "text/markdown, text/plain;q=0.9"})


def _column(header: list[str], *names: str) -> int | None:
    """The first column whose header is one of `names` (in the order given)."""
    for name in names:
        if name in header:
            return header.index(name)
    return None


def _cell(row: list[str], index: int | None) -> str:
    return clean_text(row[index]) if index is not None and index < len(row) else ""


def _read_table(header: list[str], body: list[list[str]], skips: Skips
                ) -> list[dict[str, Any]]:
    at = {
        "cloud": _column(header, "provider", "cloud", "vendor"),
        "type": _column(header, "instance type"),
        "size": _column(header, "instance size", "size"),
        "price": _column(header, "hourly rate", "hourly price", "price"),
        "count": _column(header, "gpus", "accelerators", "gpu", "accelerator"),
        "memory": _column(header, "accelerator memory", "gpu memory", "memory"),
        "ram": _column(header, "ram"),
        "chip": _column(header, "architecture", "gpu model", "accelerator type"),
    }
    if at["count"] is None or at["price"] is None or at["chip"] is None:
        return []  # a CPU table: no GPU count
    rows: list[dict[str, Any]] = []
    for cells in body:
        if len(cells) != len(header):
            skips.skip("row cells do not match the header")
            continue
        chip = re.sub(r"\*?\([^)]*\)\*?", "", _cell(cells, at["chip"])).strip(" *")
        count = size_gb(_cell(cells, at["count"]))
        price = parse_price(_cell(cells, at["price"]), default_period="hour")
        if not chip or not count or count <= 0:
            skips.skip("no chip or count")
            continue
        if price is None or price.currency != "USD" or price.period is None \
                or price.amount <= 0:
            skips.skip("no USD hourly price")
            continue
        memory = size_gb(_cell(cells, at["memory"]))
        name = " ".join(p for p in (_cell(cells, at["cloud"]),
                                    _cell(cells, at["type"]) or chip,
                                    _cell(cells, at["size"])) if p)
        rows.append({
            "provider": "huggingface", "offering": name, "gpu_name": chip,
            "gpu_count": count, "gpu_memory_gb": memory / count if memory else None,
            "ram_gb": size_gb(_cell(cells, at["ram"])), "region": GLOBAL_REGION,
            "pricing": "inference", "price_usd_per_hour": price.hourly(),
            "billing_increment_s": 60,
            "available": False if _DEPRECATED.search(" ".join(cells)) else None,
        })
    return rows


def parse(raw: RawCapture) -> Parsed:
    """Rows of the GPU and accelerator tables, and the rows skipped by reason."""
    rows: list[dict[str, Any]] = []
    skips = Skips()
    tables = [(h, b) for h, b in markdown_tables(raw.text())
              if "hourly rate" in h and ("provider" in h or "instance size" in h)]
    if not tables:
        raise ParseError(f"{NAME}: no table of instances with an hourly rate (not the "
                         "Inference Endpoints pricing page?)")
    for header, body in tables:
        rows += _read_table(header, body, skips)
    if not rows:
        raise ParseError(f"{NAME}: no GPU instance priced ({skips.describe() or 'no GPU table'})")
    return Parsed(rows_frame(rows), skips)


SOURCE = SourceDef(
    name=NAME,
    provider="huggingface",
    kind="page",
    url=URL,
    example=EXAMPLES_DIR / NAME / "pricing_2025-06-01.mdx",
    example_as_of="2025-06-01",
    fetch_fn=fetch,
    parse_fn=parse,
    history_urls=HISTORY_URLS,
)
