"""SkyPilot's public price catalog: one `vms.csv` per cloud, attributed to the real provider.

Facts (../shared/history/README.md): schema v5, one row per instance type per region (per
availability zone for aws and gcp); `Price` and `SpotPrice` are USD per instance-hour for the
whole instance; column order differs between clouds and over time, so columns are read by
header name only. GCP rows with an empty InstanceType price the attached GPUs alone (the host
VM is a separate, accelerator-less row): they are kept with `gpu_only=True`.

Payloads `parse` accepts:
- the live capture, a JSON container written by `fetch`:
  {"format": "gpuprices-skypilot-vms/1", "catalog": "v5", "clouds": {"<cloud>": "<vms.csv>"},
   "missing": {"<cloud>": "<why>"}}
- a single plain vms.csv (a snapshot such as `lambda/2024-04-23_vms.csv`). Its cloud is
  recognised from its content: instance names (gpu_1x_* = lambda, *_SECURE / *_COMMUNITY =
  runpod, Standard_* = azure, p4d.24xlarge-style = aws, empty InstanceType or zones like
  us-central1-a = gcp, regions like "East Coast (NY2)" = paperspace), then the header order.
Callers that know the cloud (the backfill) call `parse_vms_csv(text, cloud)` directly.
"""

from __future__ import annotations

import ast
import csv
import io
import re
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Any

import orjson

from contract import FetchError, HttpSettings, ParseError, RawCapture, now_utc, rows_frame
from schemas.gpus import UNKNOWN_GPU, load_catalog, normalise_gpu_name, spec_of
from scrapers._json import as_float, load_json
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import request

if TYPE_CHECKING:
    import httpx
    import polars as pl

RAW_BASE = "https://raw.githubusercontent.com"
CATALOG_PATH = "/skypilot-org/skypilot-catalog/master/catalogs/v5"
URL = RAW_BASE + CATALOG_PATH + "/{cloud}/vms.csv"
CLOUDS: tuple[str, ...] = ("lambda", "runpod", "aws", "azure", "gcp", "paperspace")
CONTAINER_FORMAT = "gpuprices-skypilot-vms/1"

REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")

# Billing granularity where the provider documents it (aws/gcp: per second after the first
# minute; lambda: one-minute increments, PAGES.md §1). Unknown elsewhere: left null.
BILLING_INCREMENT_S: dict[str, int] = {"aws": 1, "gcp": 1, "lambda": 60}

# TPUs are priced per slice whose chip count the name encodes differently per generation
# (v5litepod-8 = 8 chips, v4-8 = 4 chips), and FPGAs are not GPUs: neither fits a
# $/GPU-hour table, so they are skipped rather than stored as 'unknown'.
# (AWS FPGAs appear as "Virtex UltraScale (VU9P)".)
_NOT_A_GPU = re.compile(r"^tpu|fpga|xilinx|virtex|\bvu\d+p\b", re.IGNORECASE)

# Azure sizes that hold a slice of one GPU but which the catalog lists with AcceleratorCount 1
# (Microsoft's NVadsA10 v5 and NVv4 size tables).
AZURE_GPU_FRACTION: dict[str, float] = {
    "Standard_NV6ads_A10_v5": 1 / 6,
    "Standard_NV12ads_A10_v5": 1 / 3,
    "Standard_NV18ads_A10_v5": 1 / 2,
    "Standard_NV4as_v4": 1 / 8,
    "Standard_NV8as_v4": 1 / 4,
    "Standard_NV16as_v4": 1 / 2,
}

# Instance families whose H100 form factor is public but which the catalog writes as plain
# "H100": aws p5, gcp a3 and azure ND H100 v5 are SXM parts, azure NCads H100 v5 are H100 NVL
# (94 GB). The replacement names are the catalog's own spellings for those parts (runpod).
_H100_VARIANT_BY_INSTANCE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(p5[a-z]*\.|a3-|Standard_ND)", re.IGNORECASE), "H100-SXM"),
    (re.compile(r"^Standard_NC\d+ads_H100_v5$", re.IGNORECASE), "H100-NVL"),
)

# Header orders seen upstream (README), used only when the content names no cloud.
_HEADER_ORDERS: dict[tuple[str, ...], str] = {
    ("InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "Price",
     "Region", "GpuInfo", "SpotPrice"): "lambda",
    ("InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "GpuInfo",
     "Region", "SpotPrice", "Price"): "runpod",
    ("InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "GpuInfo",
     "Price", "SpotPrice", "Region", "AvailabilityZone"): "aws",
    ("InstanceType", "vCPUs", "MemoryGiB", "AcceleratorName", "AcceleratorCount", "GpuInfo",
     "Region", "AvailabilityZone", "Price", "SpotPrice"): "gcp",
    ("InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "GpuInfo",
     "Price", "SpotPrice", "Region", "Generation"): "azure",
}


# Stored as source `skypilot-catalog`; `skypilot` is accepted on the command line.
NAME = "skypilot-catalog"


def fetch(client: httpx.Client, settings: HttpSettings) -> RawCapture:
    """One GET per cloud, bundled into one JSON container (see the module docstring).

    A transient failure fails the fetch (the flow retries it); a cloud whose file is gone
    (404 ...) is listed under "missing" so that the other clouds still land.
    """
    base = settings.base_url(NAME, RAW_BASE) + CATALOG_PATH
    clouds: dict[str, str] = {}
    missing: dict[str, str] = {}
    for cloud in CLOUDS:
        url = f"{base}/{cloud}/vms.csv"
        try:
            raw = request(client, settings, NAME, "GET", url,
                          headers={"Accept": "text/csv, text/plain"})
        except FetchError as error:
            if error.transient:
                raise
            missing[cloud] = error.reason
            continue
        clouds[cloud] = raw.text()
    if not clouds:
        raise FetchError(NAME, base, "no cloud catalog could be read: " +
                         "; ".join(f"{c}: {why}" for c, why in missing.items()))
    body = orjson.dumps(
        {"format": CONTAINER_FORMAT, "catalog": "v5", "clouds": clouds, "missing": missing},
        option=orjson.OPT_SORT_KEYS,
    )
    return RawCapture(source=NAME, url=base + "/", fetched_at=now_utc(), body=body,
                      content_type="application/json")


def parse(raw: RawCapture) -> pl.DataFrame:
    import polars as pl

    text = raw.body.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if text.startswith("{"):
        container = load_json(raw.body, what="skypilot")
        clouds = container.get("clouds") if isinstance(container, dict) else None
        if not isinstance(clouds, dict) or not all(isinstance(v, str) for v in clouds.values()):
            raise ParseError('skypilot: expected {"clouds": {"<cloud>": "<vms.csv text>"}}')
        frames = [parse_vms_csv(csv_text, str(cloud)) for cloud, csv_text in clouds.items()]
        return pl.concat(frames, how="vertical") if frames else rows_frame([])
    header, records = _read(text)
    return _rows(header, records, infer_cloud(header, records))


def parse_vms_csv(text: str, cloud: str) -> pl.DataFrame:
    """Parse one cloud's vms.csv (any snapshot, any column order) into parsed rows."""
    header, records = _read(text)
    return _rows(header, records, cloud.strip().lower())


def _read(text: str) -> tuple[list[str], list[dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    header = [name.strip() for name in reader.fieldnames or []]
    reader.fieldnames = header
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise ParseError(f"skypilot: not a vms.csv (missing columns {', '.join(missing)}; "
                         f"header: {','.join(header)[:120]!r})")
    return header, list(reader)


def infer_cloud(header: list[str], records: list[dict[str, str]]) -> str:
    """Which cloud a plain vms.csv describes (see the module docstring for the rule)."""
    names = [r.get("InstanceType") or "" for r in records]
    zones = [r.get("AvailabilityZone") or "" for r in records]
    regions = [r.get("Region") or "" for r in records]
    checks: tuple[tuple[str, bool], ...] = (
        ("lambda", any(re.match(r"gpu_\d+x_", n) for n in names)),
        ("runpod", any(re.search(r"_(SECURE|COMMUNITY)$", n) for n in names)),
        ("azure", "Generation" in header or any(n.startswith("Standard_") for n in names)),
        ("gcp", "AvailabilityZone" in header and (
            any(not n for n in names) or any(re.match(r"[a-z]+-[a-z]+\d+-[a-z]$", z)
                                             for z in zones))),
        ("aws", any(re.match(r"[a-z0-9-]+\.(\d*x?large|metal)", n) for n in names)),
        ("paperspace", any(re.search(r"\((NY|CA|AMS)\d\)", r) for r in regions)),
    )
    for cloud, matched in checks:
        if matched:
            return cloud
    by_order = _HEADER_ORDERS.get(tuple(header))
    if by_order:
        return by_order
    raise ParseError("skypilot: cannot tell which cloud this vms.csv is for; "
                     "use parse_vms_csv(text, cloud)")


@cache
def _gpu_info_memory_mib(gpu_info: str) -> tuple[float | None, float | None]:
    """(first GPU's MemoryInfo.SizeInMiB, TotalGpuMemoryInMiB) from a GpuInfo dict-string."""
    if not gpu_info.startswith("{"):
        return None, None  # runpod and others write just the GPU name
    try:
        info = ast.literal_eval(gpu_info)  # a Python-literal dict, never code
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None, None
    if not isinstance(info, dict):
        return None, None
    gpus = info.get("Gpus") or []
    first = gpus[0] if isinstance(gpus, list) and gpus and isinstance(gpus[0], dict) else {}
    memory = first.get("MemoryInfo") if isinstance(first.get("MemoryInfo"), dict) else {}
    return as_float(memory.get("SizeInMiB")), as_float(info.get("TotalGpuMemoryInMiB"))


@cache
def _family_memories(accelerator: str) -> tuple[float, ...]:
    model = normalise_gpu_name(accelerator)
    spec = spec_of(model) if model != UNKNOWN_GPU else None
    if spec is None:
        return ()
    return tuple(s.memory_gb for s in load_catalog() if s.family == spec.family)


def per_gpu_memory_gb(accelerator: str, count: float | None, gpu_info: str) -> float | None:
    """Per-GPU memory from GpuInfo. SizeInMiB is per GPU in lambda's and aws's files, but the
    field is not reliable (lambda's TotalGpuMemoryInMiB equals one GPU's), so a size that only
    fits the GPU family once divided by the count is taken as the total across GPUs."""
    size_mib, _total = _gpu_info_memory_mib(gpu_info)
    if not size_mib or size_mib <= 0:
        return None
    size_gb = size_mib / 1024
    family = _family_memories(accelerator)
    if count and count > 1 and family:
        def fits(gb: float) -> bool:
            return any(abs(m - gb) <= 0.2 * m for m in family)

        if not fits(size_gb) and fits(size_gb / count):
            return size_gb / count
    return size_gb


def _pricings(cloud: str, instance: str) -> tuple[str, str]:
    """(pricing of Price, pricing of SpotPrice) for a row."""
    if cloud == "runpod" and instance.endswith("_COMMUNITY"):
        return "community", "community_spot"
    return "on_demand", "spot"


def _gpu_name(cloud: str, accelerator: str, instance: str) -> str:
    if accelerator == "H100" and cloud in ("aws", "gcp", "azure"):
        for pattern, name in _H100_VARIANT_BY_INSTANCE:
            if pattern.match(instance):
                return name
    return accelerator


def _rows(header: list[str], records: Iterable[dict[str, str]], cloud: str) -> pl.DataFrame:
    best: dict[tuple[str, str, str, bool], dict[str, Any]] = {}
    for record in records:
        accelerator = (record.get("AcceleratorName") or "").strip()
        price = as_float(record.get("Price"))
        # Non-GPU rows (host VMs, CPU instances) and rows the catalog could not price.
        if not accelerator or price is None or _NOT_A_GPU.search(accelerator):
            continue
        instance = (record.get("InstanceType") or "").strip()
        count = as_float(record.get("AcceleratorCount"))
        if cloud == "azure" and count == 1 and instance in AZURE_GPU_FRACTION:
            count = AZURE_GPU_FRACTION[instance]
        gpu_only = not instance
        if instance:
            offering = instance
        else:
            offering = f"{accelerator} x{count:g} (GPU only)" if count else \
                f"{accelerator} (GPU only)"
        common = {
            "provider": cloud,
            "offering": offering,
            "gpu_name": _gpu_name(cloud, accelerator, instance),
            "gpu_count": count,
            "gpu_memory_gb": per_gpu_memory_gb(accelerator, count,
                                               (record.get("GpuInfo") or "").strip()),
            "vcpus": as_float(record.get("vCPUs")),
            "ram_gb": as_float(record.get("MemoryGiB")),
            "region": (record.get("Region") or "").strip() or "unknown",
            "billing_increment_s": BILLING_INCREMENT_S.get(cloud),
            "available": None,  # a catalog lists what exists, not what is free now
            "gpu_only": gpu_only,
        }
        on_demand, spot = _pricings(cloud, instance)
        spot_price = as_float(record.get("SpotPrice"))
        for pricing, value in ((on_demand, price), (spot, spot_price)):
            if value is None:
                continue
            # aws/gcp repeat a row per availability zone: keep one per region, at the
            # cheapest zone (on-demand is the same in every zone; spot differs).
            key = (offering, common["region"], pricing, gpu_only)
            kept = best.get(key)
            if kept is None or value < kept["price_usd_per_hour"]:
                best[key] = {**common, "pricing": pricing, "price_usd_per_hour": value}
    return rows_frame(list(best.values()))


SOURCE = SourceDef(
    name=NAME,
    aliases=("skypilot",),
    provider="skypilot",
    kind="catalog",
    url=URL.format(cloud="<cloud>"),
    example=EXAMPLES_DIR / "skypilot" / "vms_2025-06-12.json",
    example_as_of="2025-06-12",
    fetch_fn=fetch,
    parse_fn=parse,
    aggregator=True,
)
