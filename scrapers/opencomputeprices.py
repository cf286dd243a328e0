"""OpenComputePrices: an open dataset of GPU prices from 65+ providers (aggregator).

Facts (../shared/captures/MORE_SOURCES.md; repo thatkavish/OpenComputePrices): the collector
publishes `data.tar.gz` on the GitHub release tag `latest-data`, holding one CSV per collector
(`<source>.csv`) plus derived files starting with `_` (`_master.csv` = all of them again,
`_latest_gpu_offers.csv`). Every CSV has the same 31-column header (snapshot_date, source,
provider, instance_type, gpu_name, gpu_memory_gb, gpu_count, region, pricing_type,
price_per_hour, currency, price_unit, available, ...) and keeps some history, so only each
collector's latest snapshot_date is read. `price_per_hour` is the whole instance.

The parser accepts the release tarball and a single CSV (as ../shared stores them). Rows are
attributed to the real provider (lambda_labs -> lambda, google_cloud -> gcp ...). Skipped, on
purpose: non-USD or non-hourly prices (Novita's per-token inference rows), pricing types
outside our set, gpu_count 0 (Oracle's price-list rows name no count), rows without a GPU
name, and zero prices.
"""

from __future__ import annotations

import csv
import io
import re
import tarfile
from collections.abc import Iterable, Iterator
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from contract import GLOBAL_REGION, HttpSettings, ParseError, RawCapture, rows_frame
from schemas.gpus import UNKNOWN_GPU, load_catalog, normalise_gpu_name
from scrapers._json import as_float
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request

if TYPE_CHECKING:
    import httpx
    import polars as pl

RELEASE_PATH = "/thatkavish/OpenComputePrices/releases/download/latest-data/data.tar.gz"
URL = "https://github.com" + RELEASE_PATH
REQUIRED_COLUMNS = ("snapshot_date", "source", "provider", "instance_type", "gpu_name",
                    "gpu_count", "pricing_type", "price_per_hour", "currency", "price_unit")

# Their pricing_type -> our PRICING set. Anything else (e.g. "inference") is not a GPU-hour.
PRICING_MAP = {"on_demand": "on_demand", "spot": "spot", "preemptible": "spot",
               "reserved": "reserved", "commitment": "reserved", "committed": "reserved"}
COMMUNITY_PRICING = {"on_demand": "community", "spot": "community_spot"}
# Their provider names -> our provider ids, where they differ beyond case and punctuation.
PROVIDER_MAP = {"lambdalabs": "lambda", "lambdacloud": "lambda", "googlecloud": "gcp",
                "google": "gcp", "oraclecloud": "oracle", "oci": "oracle", "do": "digitalocean",
                "vast": "vastai", "datacrunch": "verda", "hotaisle": "hotaisle"}
_NOT_A_NAME = re.compile(r"^\s*[\d.]*\s*$")
# Linode labels its plans "Dedicated 64GB + RTX6000 GPU x2": the GPU is after the "+".
_PLAN_LABEL = re.compile(r"\+\s*(?P<gpu>.+?)\s+GPU\s+x\s*\d+\s*$", re.IGNORECASE)


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    # GitHub answers with a redirect to its object store; the refresh client follows it.
    url = settings.base_url("opencomputeprices", "https://github.com") + RELEASE_PATH
    return request(client, settings, "opencomputeprices", "GET", url,
                   headers={"Accept": "application/octet-stream"})


def provider_id(name: str) -> str:
    """'lambda_labs' -> 'lambda', 'Packet·ai' -> 'packetai', 'runpod_sponsored' -> 'runpod'."""
    key = re.sub(r"[^a-z0-9]", "", name.lower().removesuffix("_sponsored"))
    return PROVIDER_MAP.get(key, key)


def _csv_texts(body: bytes) -> Iterator[tuple[str, str]]:
    """(file name, CSV text) for each collector CSV in the payload."""
    if body[:2] == b"\x1f\x8b":
        try:
            with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as archive:
                for member in archive.getmembers():
                    name = PurePosixPath(member.name).name
                    # `_master.csv` and the other `_` files repeat or derive collector rows.
                    if not member.isfile() or not name.endswith(".csv") or name.startswith("_"):
                        continue
                    handle = archive.extractfile(member)
                    if handle is not None:
                        yield name, handle.read().decode("utf-8", errors="replace")
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise ParseError(f"opencomputeprices: unreadable tar.gz ({exc})") from None
        return
    yield "data.csv", body.decode("utf-8-sig", errors="replace")


def _rows(body: bytes) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    files = 0
    for name, text in _csv_texts(body):
        files += 1
        reader = csv.DictReader(io.StringIO(text))
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ParseError(f"opencomputeprices: {name} lacks columns {missing} "
                             "(not their CSV schema, or it changed)")
        rows.extend(reader)
    if not files:
        raise ParseError("opencomputeprices: the archive holds no collector CSV")
    return _latest_snapshot(rows)


def _latest_snapshot(rows: Iterable[dict[str, str]]) -> list[dict[str, str]]:
    """Only each collector's newest snapshot: older rows are history, not current prices."""
    rows = list(rows)
    newest: dict[str, str] = {}
    for row in rows:
        source = row.get("source") or ""
        newest[source] = max(newest.get(source, ""), row.get("snapshot_date") or "")
    return [r for r in rows if (r.get("snapshot_date") or "") == newest[r.get("source") or ""]]


def _family_memories(gpu_name: str) -> list[float]:
    """Memory sizes of the catalog variants of the named card (A100 -> [80, 40])."""
    model = normalise_gpu_name(gpu_name)
    if model == UNKNOWN_GPU:
        return []
    family = next(s.family for s in load_catalog() if s.gpu_model == model)
    return [s.memory_gb for s in load_catalog() if s.family == family]


def _near(value: float, sizes: list[float]) -> bool:
    return any(abs(value - size) <= 0.2 * size for size in sizes)


def _count_and_memory(row: dict[str, str], gpu_name: str) -> tuple[float | None, float | None]:
    """GPU count and per-GPU memory. Collectors disagree on gpu_memory_gb: most give the
    instance total (massedcompute 160 for 2x H100), some the per-GPU size (linode 20 for
    2x RTX 4000 Ada); the catalog decides which reading fits the card. Vultr's `vcg-*` plans are
    GPU slices priced by VRAM (4 GB of an 80 GB A100) that list gpu_count 1 for every size, so
    their count is total VRAM / card memory (0.05 .. 8)."""
    count = as_float(row.get("gpu_count"))
    total = as_float(row.get("gpu_memory_gb"))
    if not total or total <= 0:
        total = None
    sizes = _family_memories(gpu_name) if total else []
    if row.get("instance_type", "").startswith("vcg-") and total and sizes:
        return total / max(sizes), max(sizes)
    if count is None or count <= 0:
        return count, None
    if not total:
        return count, None
    per_gpu = total / count
    if sizes and not _near(per_gpu, sizes) and _near(total, sizes):
        per_gpu = total
    return count, per_gpu


def parse(raw: RawCapture) -> pl.DataFrame:
    out: list[dict[str, Any]] = []
    for row in _rows(raw.body):
        pricing = PRICING_MAP.get((row.get("pricing_type") or "").strip().lower())
        price = as_float(row.get("price_per_hour"))
        gpu_name = (row.get("gpu_name") or "").strip()
        label = _PLAN_LABEL.search(gpu_name)
        if label:
            gpu_name = label.group("gpu")
        if (
            pricing is None
            or (row.get("currency") or "").upper() != "USD"
            or (row.get("price_unit") or "").lower() != "hour"
            or price is None or price <= 0
            or _NOT_A_NAME.match(gpu_name)  # empty or a bare number (a scraper lost the name)
        ):
            continue
        count, memory = _count_and_memory(row, gpu_name)
        if count is None or count <= 0:
            continue
        provider = provider_id(row.get("provider") or row.get("source") or "")
        offering = row.get("instance_type") or gpu_name
        if provider == "runpod" and offering.upper().endswith("_COMMUNITY"):
            # SkyPilot's runpod names say the cloud: community prices are `community`, as in
            # the runpod and skypilot-catalog sources, so source_disagreement compares like
            # with like (not a community price against the secure on-demand one).
            pricing = COMMUNITY_PRICING.get(pricing, pricing)
        available = (row.get("available") or "").strip().lower()
        out.append({
            "provider": provider,
            "offering": offering,
            "gpu_name": gpu_name,
            "gpu_count": count,
            "gpu_memory_gb": memory,
            "vcpus": as_float(row.get("vcpus")) or None,
            "ram_gb": as_float(row.get("ram_gb")) or None,
            "region": (row.get("region") or row.get("zone") or "").strip() or GLOBAL_REGION,
            "pricing": pricing,
            "price_usd_per_hour": price,
            "billing_increment_s": None,
            "available": {"true": True, "false": False}.get(available),
        })
    return rows_frame(out)


SOURCE = SourceDef(
    name="opencomputeprices",
    provider="*",
    kind="catalog",
    url=URL,
    example=EXAMPLES_DIR / "opencomputeprices" / "ocp_sample_2026-03-22.csv",
    example_as_of="2026-03-22",
    fetch_fn=fetch,
    parse_fn=parse,
    aggregator=True,
)
