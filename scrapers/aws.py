"""AWS EC2 on-demand prices from the public bulk price list (no key).

Facts (../shared/captures/SOURCES.md §5): per-region offer files live at
`https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/<region>/index.csv`;
each opens with 5 two-column metadata lines ("FormatVersion", "Disclaimer", "Publication Date",
"Version", "OfferCode") before the header row. Non-empty fields are quoted, empty ones are bare.
`PricePerUnit` is USD per instance-hour. One instance type appears under many terms, operating
systems, tenancies and capacity states; the Linux, shared-tenancy, used-capacity, on-demand row
without pre-installed software is the list price. The file has no GPU model, so GPU name, count
and memory come from `aws_instance_gpus.csv` (the "GPU" column, when present, fills in the
count for a new size of a known family).

Size trade-off: a region's file is hundreds of MB and the whole-service file several GB, so
`fetch` streams each region line by line and keeps only the preamble, the header and the
on-demand rows of GPU families: a *filtered* raw capture, in the same CSV format and still
re-parseable by `parse`. Reserved-term rows and every non-GPU row are not archived. Regions are
concatenated, each with its own preamble and header. `parse_offer_csv_lines` is a pure
generator over lines, so the full, unfiltered file parses in bounded memory too.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import polars as pl

from scrapers.base import (
    EXAMPLES_DIR,
    FetchError,
    HttpSettings,
    ParseError,
    RawCapture,
    SourceDef,
    now_utc,
    rows_frame,
)
from scrapers.http import TRANSIENT_STATUS, _retry_after, _short

ROOT = "https://pricing.us-east-1.amazonaws.com"
OFFER_PATH = "/offers/v1.0/aws/AmazonEC2/current"
URL = f"{ROOT}{OFFER_PATH}/us-east-1/index.csv"
# Regions where AWS offers most GPU families; override with fetch(..., regions=...).
DEFAULT_REGIONS: tuple[str, ...] = (
    "us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1",
    "ap-southeast-2",
)
PREAMBLE_LINES = 5
INSTANCE_GPUS_PATH = Path(__file__).with_name("aws_instance_gpus.csv")
REQUIRED_COLUMNS = ("TermType", "Unit", "PricePerUnit", "Currency", "Instance Type", "Tenancy",
                    "Operating System", "CapacityStatus")


@dataclass(frozen=True, slots=True)
class InstanceGpus:
    gpu_name: str
    gpu_count: float
    gpu_memory_gb: float
    vcpus: float
    ram_gb: float


@cache
def instance_gpus(path: Path = INSTANCE_GPUS_PATH) -> dict[str, InstanceGpus]:
    """instance type -> its GPUs and size, from the table in the repo."""
    with path.open(newline="", encoding="utf-8") as handle:
        return {
            row["instance_type"]: InstanceGpus(
                gpu_name=row["gpu_name"], gpu_count=float(row["gpu_count"]),
                gpu_memory_gb=float(row["gpu_memory_gb"]), vcpus=float(row["vcpus"]),
                ram_gb=float(row["ram_gb"]),
            )
            for row in csv.DictReader(handle)
        }


@cache
def gpu_families() -> frozenset[str]:
    return frozenset(name.split(".", 1)[0] for name in instance_gpus())


@cache
def _gpu_line() -> re.Pattern[str]:
    """Matches a CSV line holding a quoted GPU instance type ("g5.xlarge"): a cheap prefilter."""
    families = sorted(gpu_families(), key=len, reverse=True)
    return re.compile(r'"(?:' + "|".join(map(re.escape, families)) + r')\.[0-9a-z-]+"')


def _family_default(family: str) -> InstanceGpus | None:
    return next((spec for name, spec in instance_gpus().items()
                 if name.split(".", 1)[0] == family), None)


def _number(text: str) -> float | None:
    match = re.match(r"\s*([0-9]+(?:\.[0-9]+)?)", text or "")
    return float(match.group(1)) if match else None


def _specs(instance_type: str, fields: Sequence[str], col: dict[str, int]) -> InstanceGpus | None:
    known = instance_gpus().get(instance_type)
    if known:
        return known
    family = _family_default(instance_type.split(".", 1)[0])
    count = _number(fields[col["GPU"]]) if "GPU" in col else None
    if family is None or not count:
        return None
    vcpus = _number(fields[col["vCPU"]]) if "vCPU" in col else None
    ram = _number(fields[col["Memory"]]) if "Memory" in col else None
    return InstanceGpus(family.gpu_name, count, family.gpu_memory_gb, vcpus or 0.0, ram or 0.0)


def _is_list_price(fields: Sequence[str], col: dict[str, int]) -> bool:
    def value(name: str) -> str:
        index = col.get(name)
        return fields[index] if index is not None else ""

    return (
        value("TermType") == "OnDemand"
        and value("Tenancy") == "Shared"
        and value("Operating System") == "Linux"
        and value("CapacityStatus") == "Used"
        and value("Pre Installed S/W") in ("", "NA")
        and value("MarketOption") in ("", "OnDemand")
        and value("Unit") == "Hrs"
        and value("Currency") == "USD"
    )


def parse_offer_csv_lines(
    lines: Iterable[str], region: str | None = None
) -> Iterator[dict[str, Any]]:
    """Yield one parsed row per GPU instance list price, reading `lines` once, in order.

    Holds one line at a time (plus a small seen-set), so a multi-GB file streams in bounded
    memory. Accepts several concatenated offer files (each with its preamble and header).
    `region` is used only when a file has no "Region Code" column.
    """
    gpu_line = _gpu_line()
    col: dict[str, int] | None = None
    width = 0
    seen: set[tuple[str, str]] = set()
    saw_header = False
    for line in lines:
        if col is None or line.startswith('"FormatVersion"'):
            col = None
            if line.startswith(('"SKU"', "SKU,")):
                header = next(csv.reader([line]))
                col = {name: index for index, name in enumerate(header)}
                width = len(header)
                missing = [name for name in REQUIRED_COLUMNS if name not in col]
                if missing:
                    raise ParseError(f"aws: offer CSV header lacks {', '.join(missing)}")
                saw_header = True
            continue
        if not gpu_line.search(line):
            continue
        fields = next(csv.reader([line]), [])
        if len(fields) != width or not _is_list_price(fields, col):
            continue
        instance_type = fields[col["Instance Type"]]
        row_region = fields[col["Region Code"]] if "Region Code" in col else ""
        row_region = row_region or region or "unknown"
        key = (instance_type, row_region)
        if key in seen:
            continue
        price = _number(fields[col["PricePerUnit"]])
        specs = _specs(instance_type, fields, col)
        if not price or specs is None:
            continue
        seen.add(key)
        yield {
            "provider": "aws",
            "offering": instance_type,
            "gpu_name": specs.gpu_name,
            "gpu_count": specs.gpu_count,
            "gpu_memory_gb": specs.gpu_memory_gb,
            "vcpus": specs.vcpus or None,
            "ram_gb": specs.ram_gb or None,
            "region": row_region,
            "pricing": "on_demand",
            "price_usd_per_hour": price,
            "billing_increment_s": 1,  # per-second billing for Linux (60 s minimum)
            "available": None,  # the price list says nothing about capacity
            "gpu_only": False,
            "monthly_fee_usd": None,
        }
    if not saw_header:
        raise ParseError("aws: no offer CSV header (a line starting with \"SKU\") found")


def parse(raw: RawCapture) -> pl.DataFrame:
    text = raw.body.decode("utf-8-sig", errors="replace")
    return rows_frame(list(parse_offer_csv_lines(io.StringIO(text))))


class _GpuOnDemandFilter:
    """During fetch: keep the preamble, the header, and on-demand rows of GPU families."""

    def __init__(self) -> None:
        self.kept = 0
        self.term_index: int | None = None

    def __call__(self, line: str) -> bool:
        if self.kept < PREAMBLE_LINES:
            self.kept += 1
            return True
        if self.term_index is None:  # the header row
            header = next(csv.reader([line]), [])
            self.term_index = header.index("TermType") if "TermType" in header else -1
            self.kept += 1
            return True
        if not _gpu_line().search(line):
            return False
        fields = next(csv.reader([line]), [])
        if self.term_index >= 0 and (len(fields) <= self.term_index
                                     or fields[self.term_index] != "OnDemand"):
            return False
        self.kept += 1
        return True


def fetch_region(client: httpx.Client, settings: HttpSettings, region: str) -> bytes:
    """Stream one region's offer CSV and return its filtered lines (see the module docstring)."""
    url = f"{settings.base_url('aws', ROOT)}{OFFER_PATH}/{region}/index.csv"
    headers = {"User-Agent": settings.user_agent, "Accept": "text/csv"}
    kept_lines: list[str] = []
    kept_bytes = 0
    try:
        with client.stream("GET", url, headers=headers, timeout=settings.timeout_s) as response:
            if response.status_code >= 400:
                raise FetchError("aws", url, f"HTTP {response.status_code}",
                                 transient=response.status_code in TRANSIENT_STATUS,
                                 retry_after_s=_retry_after(response))
            keep = _GpuOnDemandFilter()
            for line in response.iter_lines():
                if not keep(line):
                    continue
                kept_lines.append(line)
                kept_bytes += len(line) + 1
                if kept_bytes > settings.max_bytes:
                    raise FetchError("aws", url, f"GPU rows exceed the {settings.max_bytes}-byte "
                                     "cap; stopped reading")
    except httpx.TimeoutException:
        raise FetchError("aws", url, f"timed out after {settings.timeout_s:g} s",
                         transient=True) from None
    except httpx.ConnectError as exc:
        raise FetchError("aws", url, f"cannot connect ({_short(exc)})", transient=True) from None
    except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
        raise FetchError("aws", url, f"connection broke mid-response ({_short(exc)})",
                         transient=True) from None
    except httpx.HTTPError as exc:
        raise FetchError("aws", url, f"HTTP error ({_short(exc)})") from None
    if len(kept_lines) <= PREAMBLE_LINES:
        raise FetchError("aws", url, "response ended before the CSV header")
    return ("\n".join(kept_lines) + "\n").encode()


def fetch(client: httpx.Client, settings: HttpSettings,
          regions: Sequence[str] = DEFAULT_REGIONS) -> RawCapture:
    body = b"".join(fetch_region(client, settings, region) for region in regions)
    root = settings.base_url("aws", ROOT)
    url = (f"{root}{OFFER_PATH}/{regions[0]}/index.csv" if len(regions) == 1
           else f"{root}{OFFER_PATH}/region_index.json#regions={','.join(regions)}")
    return RawCapture(source="aws", url=url, fetched_at=now_utc(), body=body,
                      content_type="text/csv")


SOURCE = SourceDef(
    name="aws",
    provider="aws",
    kind="api",
    url=URL,
    example=EXAMPLES_DIR / "aws" / "ec2_offer_gpu_rows_2025-06-16.csv",
    example_as_of="2025-06-16",
    fetch_fn=fetch,
    parse_fn=parse,
)
