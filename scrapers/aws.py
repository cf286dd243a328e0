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
generator over lines that tests each line with one regex and parses only GPU lines, in chunks,
with polars: the full, unfiltered file parses in bounded memory too.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from contract import (
    FetchError,
    HttpSettings,
    ParseError,
    RawCapture,
    conform,
    empty_parsed,
    now_utc,
)
from scrapers._host_specs import HostSpec, load_host_specs
from scrapers.base import EXAMPLES_DIR, SourceDef
from scrapers.http import fetch_error, raise_for_status

if TYPE_CHECKING:
    import httpx
    import polars as pl

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


# The name the other AWS sources import.
InstanceGpus = HostSpec


@cache
def instance_gpus(path: Path = INSTANCE_GPUS_PATH) -> dict[str, InstanceGpus]:
    """instance type -> its GPUs and size, from the table in the repo."""
    return load_host_specs(path, "instance_type")


@cache
def gpu_families() -> frozenset[str]:
    return frozenset(name.split(".", 1)[0] for name in instance_gpus())


@cache
def _gpu_line() -> re.Pattern[str]:
    """Matches a CSV line holding a quoted GPU instance type ("g5.xlarge"): a cheap prefilter."""
    families = sorted(gpu_families(), key=len, reverse=True)
    return re.compile(r'"(?:' + "|".join(map(re.escape, families)) + r')\.[0-9a-z-]+"')


@cache
def _specs_frames() -> tuple[pl.DataFrame, pl.DataFrame]:
    """(per instance type, per family default) GPU specs as frames, for joins."""
    import polars as pl

    by_type = pl.DataFrame(
        [{"instance_type": name, "gpu_name": spec.gpu_name, "gpu_count": spec.gpu_count,
          "gpu_memory_gb": spec.gpu_memory_gb, "vcpus": spec.vcpus, "ram_gb": spec.ram_gb}
         for name, spec in instance_gpus().items()],
    ).with_columns(pl.col("instance_type").str.split(".").list.first().alias("family"))
    by_family = by_type.unique("family", keep="first", maintain_order=True).select(
        "family", pl.col("gpu_name").alias("family_gpu_name"),
        pl.col("gpu_memory_gb").alias("family_gpu_memory_gb"),
    )
    return by_type.drop("family"), by_family


# The list price of an instance: what each filter column must hold (absent columns are skipped;
# empty CSV fields read as null and count as "").
LIST_PRICE_VALUES: dict[str, tuple[str, ...]] = {
    "TermType": ("OnDemand",),
    "Tenancy": ("Shared",),
    "Operating System": ("Linux",),
    "CapacityStatus": ("Used",),
    "Pre Installed S/W": ("", "NA"),
    "MarketOption": ("", "OnDemand"),
    "Unit": ("Hrs",),
    "Currency": ("USD",),
}
OPTIONAL_COLUMNS = ("Region Code", "GPU", "vCPU", "Memory")
CHUNK_LINES = 5000


def _leading_number(column: str) -> pl.Expr:
    """ "0.5260000000" -> 0.526, "16 GiB" -> 16.0, "NA" -> null."""
    import polars as pl

    return pl.col(column).str.extract(r"^\s*([0-9]+(?:\.[0-9]+)?)", 1).cast(pl.Float64)


def _chunk_frame(header: str, lines: list[str], region: str | None) -> pl.DataFrame:
    """The GPU list prices among `lines` (CSV rows under `header`), in PARSED_SCHEMA."""
    import polars as pl

    names = next(csv.reader([header]))
    wanted = [c for c in (*LIST_PRICE_VALUES, "Instance Type", "PricePerUnit", *OPTIONAL_COLUMNS)
              if c in names]
    text = header + "\n" + "\n".join(lines) + "\n"
    frame = pl.read_csv(io.StringIO(text), columns=wanted, infer_schema=False,
                        truncate_ragged_lines=True)
    frame = frame.filter(*(pl.col(c).fill_null("").is_in(allowed)
                           for c, allowed in LIST_PRICE_VALUES.items() if c in frame.columns))
    frame = frame.with_columns(
        *(pl.lit(None, pl.String).alias(c) for c in OPTIONAL_COLUMNS if c not in frame.columns),
    )
    by_type, by_family = _specs_frames()
    frame = (
        frame.with_columns(pl.col("Instance Type").str.split(".").list.first().alias("family"))
        .join(by_type, left_on="Instance Type", right_on="instance_type", how="left")
        .join(by_family, on="family", how="left")
    )
    return frame.select(
        pl.lit("aws").alias("provider"),
        pl.col("Instance Type").alias("offering"),
        pl.coalesce("gpu_name", "family_gpu_name").alias("gpu_name"),
        # a size missing from the table: its family's GPU, the count from the "GPU" column
        pl.coalesce("gpu_count", _leading_number("GPU")).alias("gpu_count"),
        pl.coalesce("gpu_memory_gb", "family_gpu_memory_gb").alias("gpu_memory_gb"),
        pl.coalesce("vcpus", _leading_number("vCPU")).alias("vcpus"),
        pl.coalesce("ram_gb", _leading_number("Memory")).alias("ram_gb"),
        pl.col("Region Code").fill_null(region or "unknown").alias("region"),
        pl.lit("on_demand").alias("pricing"),
        _leading_number("PricePerUnit").alias("price_usd_per_hour"),
        pl.lit(1, pl.Int64).alias("billing_increment_s"),  # per-second billing, 60 s minimum
        pl.lit(None, pl.Boolean).alias("available"),  # the price list says nothing of capacity
        pl.lit(False).alias("gpu_only"),
        pl.lit(None, pl.Float64).alias("monthly_fee_usd"),
    ).filter(pl.col("price_usd_per_hour") > 0, pl.col("gpu_name").is_not_null(),
             pl.col("gpu_count") > 0)


def parse_offer_csv_lines(
    lines: Iterable[str], region: str | None = None, *, chunk_lines: int = CHUNK_LINES
) -> Iterator[pl.DataFrame]:
    """Yield frames of GPU instance list prices, reading `lines` once, in order.

    Each line is first tested with one regex (does it name a GPU instance type?); only those
    lines are kept, `chunk_lines` at a time, and parsed in bulk by polars, so a multi-GB file
    streams in bounded memory. Accepts several concatenated offer files (each with its preamble
    and header). `region` is used only when a file has no "Region Code" column. An instance
    type is reported once per region (the first list price seen).
    """
    import polars as pl

    gpu_line = _gpu_line()
    header: str | None = None
    saw_header = False
    chunk: list[str] = []
    seen: set[tuple[str, str]] = set()

    def flush() -> Iterator[pl.DataFrame]:
        if header is None or not chunk:
            return
        frame = _chunk_frame(header, chunk, region)
        chunk.clear()
        fresh: list[bool] = []
        for key in zip(frame["offering"], frame["region"], strict=True):
            fresh.append(key not in seen)
            seen.add(key)
        if frame.height:
            yield frame.filter(pl.Series(fresh, dtype=pl.Boolean))

    for line in lines:
        if line.startswith(('"FormatVersion"', "FormatVersion,")):
            yield from flush()
            header = None
        elif header is None:
            if line.startswith(('"SKU"', "SKU,")):
                names = next(csv.reader([line]))
                missing = [name for name in REQUIRED_COLUMNS if name not in names]
                if missing:
                    raise ParseError(f"aws: offer CSV header lacks {', '.join(missing)}")
                header, saw_header = line.rstrip("\r\n"), True
        elif gpu_line.search(line):
            chunk.append(line.rstrip("\r\n"))
            if len(chunk) >= chunk_lines:
                yield from flush()
    yield from flush()
    if not saw_header:
        raise ParseError("aws: no offer CSV header (a line starting with \"SKU\") found")


def parse(raw: RawCapture) -> pl.DataFrame:
    import polars as pl

    text = raw.body.decode("utf-8-sig", errors="replace")
    frames = list(parse_offer_csv_lines(text.splitlines()))
    return conform(pl.concat(frames)) if frames else empty_parsed()


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


MAX_LINE_BYTES = 1024 * 1024  # no offer-CSV line comes near this


def _bounded_lines(response: httpx.Response, url: str) -> Iterator[str]:
    """The response's lines, holding at most one bounded line (iter_lines buffers a line of
    any length, so a newline-free response would be read whole into memory)."""
    pending = b""
    for chunk in response.iter_bytes():
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            yield line.rstrip(b"\r").decode("utf-8", errors="replace")
        if len(pending) > MAX_LINE_BYTES:
            raise FetchError("aws", url, f"a line longer than {MAX_LINE_BYTES} bytes (not an "
                             "offer CSV); stopped reading")
    if pending:
        yield pending.rstrip(b"\r").decode("utf-8", errors="replace")


def fetch_region(client: httpx.Client, settings: HttpSettings, region: str) -> bytes:
    """Stream one region's offer CSV and return its filtered lines (see the module docstring)."""
    import httpx

    url = f"{settings.base_url('aws', ROOT)}{OFFER_PATH}/{region}/index.csv"
    headers = {"User-Agent": settings.user_agent, "Accept": "text/csv"}
    kept_lines: list[str] = []
    kept_bytes = 0
    try:
        with client.stream("GET", url, headers=headers, timeout=settings.timeout_s) as response:
            raise_for_status("aws", url, response)
            keep = _GpuOnDemandFilter()
            for line in _bounded_lines(response, url):
                if not keep(line):
                    continue
                kept_lines.append(line)
                kept_bytes += len(line) + 1
                if kept_bytes > settings.max_bytes:
                    raise FetchError("aws", url, f"GPU rows exceed the {settings.max_bytes}-byte "
                                     "cap; stopped reading")
    except httpx.HTTPError as exc:
        raise fetch_error("aws", url, exc, settings.timeout_s) from None
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
