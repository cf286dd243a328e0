"""AWS bulk offer CSV: list-price filter, GPU table, streaming in bounded memory, filtered fetch.

The fixture encodes the documented format (SOURCES.md §5 and AWS's public offer-file layout):
5 metadata lines, the 98-column header of the 2025 AmazonEC2 file, quoted non-empty fields and
bare empty ones, and the decoy rows the filter must drop (Windows, RHEL, dedicated, unused and
allocated capacity reservations, pre-installed SQL, capacity blocks, reserved terms, non-GPU).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from contract import FetchError, HttpSettings, ParseError, RawCapture, now_utc
from schemas.observation import to_observations, validate
from scrapers import aws

EXAMPLE = aws.SOURCE.example
REPO = Path(__file__).resolve().parents[2]


def _raw(body: bytes) -> RawCapture:
    return RawCapture(source="aws", url=aws.URL, fetched_at=now_utc(), body=body)


def _prices(frame) -> dict[tuple[str, str], float]:
    return {(r["offering"], r["region"]): r["price_usd_per_hour"]
            for r in frame.iter_rows(named=True)}


def test_example_keeps_only_linux_shared_on_demand_list_prices() -> None:
    frame = aws.parse(_raw(EXAMPLE.read_bytes()))
    prices = _prices(frame)
    assert frame.height == 14
    assert prices[("g5.xlarge", "us-east-1")] == 1.006  # not Windows 1.19, RHEL 1.166, SQL 2.006
    assert prices[("p5.48xlarge", "us-east-1")] == 55.04  # not the capacity-block 31.464
    assert prices[("p5.48xlarge", "us-west-2")] == 55.04
    assert ("m5.large", "us-east-1") not in prices
    assert set(frame["pricing"]) == {"on_demand"}
    assert set(frame["provider"]) == {"aws"}


def test_gpu_specs_come_from_the_table_or_the_gpu_column() -> None:
    rows = {r["offering"]: r for r in aws.parse(_raw(EXAMPLE.read_bytes())).iter_rows(named=True)}
    assert rows["p4d.24xlarge"]["gpu_count"] == 8 and rows["p4d.24xlarge"]["gpu_memory_gb"] == 40
    assert rows["g6e.12xlarge"]["gpu_name"] == "NVIDIA L40S" and rows["g6e.12xlarge"]["vcpus"] == 48
    # g6.64xlarge is not in the table: family L4, count from the file's "GPU" column
    assert rows["g6.64xlarge"]["gpu_name"] == "NVIDIA L4" and rows["g6.64xlarge"]["gpu_count"] == 8


def test_every_row_validates_with_a_catalog_gpu() -> None:
    raw = _raw(EXAMPLE.read_bytes())
    batch = validate(to_observations(aws.parse(raw), raw, "run"))
    assert batch.quarantined.height == 0
    models = dict(zip(batch.good["offering"], batch.good["gpu_model"], strict=True))
    assert models["p5.48xlarge"] == "H100 SXM"
    assert models["p4d.24xlarge"] == "A100 40GB"
    assert models["g5g.xlarge"] == "T4"
    assert "unknown" not in set(models.values())


def test_every_table_gpu_maps_to_the_catalog() -> None:
    from schemas.gpus import normalise_gpu_name

    unknown = {t for t, s in aws.instance_gpus().items()
               if normalise_gpu_name(s.gpu_name, s.gpu_memory_gb) == "unknown"}
    assert unknown == set()


def test_header_without_required_columns_is_a_parse_error() -> None:
    body = b'"FormatVersion","v1.0"\n"SKU","Instance Type","PricePerUnit"\n"A","g5.xlarge","1"\n'
    with pytest.raises(ParseError, match="TermType"):
        aws.parse(_raw(body))


def test_body_without_header_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="header"):
        aws.parse(_raw(b"<html>Access Denied</html>"))


def _write_big_offer(path: Path, target_bytes: int) -> int:
    """A file in the offer layout: 9 non-GPU rows to 1 GPU list price, each in its own region."""
    lines = EXAMPLE.read_text().splitlines()
    preamble_and_header, body = lines[:6], lines[6:]
    non_gpu = next(line for line in body if '"m5.large"' in line)
    gpu = next(line for line in body if '"g4dn.xlarge"' in line)
    written = gpu_rows = 0
    with path.open("w") as handle:
        handle.write("\n".join(preamble_and_header) + "\n")
        block = (non_gpu + "\n") * 9
        while written < target_bytes:
            handle.write(block)
            handle.write(gpu.replace('"us-east-1"', f'"test-region-{gpu_rows}"') + "\n")
            written += len(block) + len(gpu) + 1
            gpu_rows += 1
    return gpu_rows


# Runs in a fresh interpreter so that the high-water mark (ru_maxrss, which also sees polars'
# native allocations) measures this parse alone. Warm-up first: polars' CSV reader and thread
# pool have a one-off cost that is not per-file.
_MEASURE = """
import resource, sys
from scrapers import aws
list(aws.parse_offer_csv_lines(open(sys.argv[2])))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rows = 0
with open(sys.argv[1]) as handle:
    for frame in aws.parse_offer_csv_lines(handle):
        rows += frame.height
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(rows, (after - before) * 1024)
"""


def test_a_100_mb_file_streams_in_bounded_memory(tmp_path: Path) -> None:
    big = tmp_path / "index.csv"
    expected = _write_big_offer(big, 100 * 1024 * 1024)
    size = big.stat().st_size
    assert size > 100 * 1024 * 1024
    result = subprocess.run([sys.executable, "-c", _MEASURE, str(big), str(EXAMPLE)],
                            capture_output=True, text=True, check=True, cwd=REPO, timeout=300)
    rows, growth = map(int, result.stdout.split())
    assert rows == expected  # ~16,000 rows: several chunks of CHUNK_LINES
    assert expected > aws.CHUNK_LINES
    # one chunk of GPU lines (~8 MB of text) and its frame, not the 100 MB file
    assert growth < 48 * 1024 * 1024, f"peak memory grew by {growth / 2**20:.1f} MiB"


def _offer_server(calls: list[httpx.Request], status: int = 200) -> httpx.MockTransport:
    text = EXAMPLE.read_text()
    east, west = text.split('"FormatVersion"', 2)[1:]

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        if status != 200:
            return httpx.Response(status)
        region = request.url.path.split("/")[-2]
        section = {"us-east-1": east, "us-west-2": west}[region]
        return httpx.Response(200, text='"FormatVersion"' + section,
                              headers={"content-type": "text/csv"})

    return httpx.MockTransport(handler)


def test_fetch_streams_each_region_and_keeps_a_reparseable_filtered_capture() -> None:
    calls: list[httpx.Request] = []
    settings = HttpSettings(base_urls={"aws": "http://mirror.test"})
    with httpx.Client(transport=_offer_server(calls)) as client:
        raw = aws.fetch(client, settings, regions=("us-east-1", "us-west-2"))
    assert [str(c.url) for c in calls] == [
        "http://mirror.test/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.csv",
        "http://mirror.test/offers/v1.0/aws/AmazonEC2/current/us-west-2/index.csv",
    ]
    assert all(c.method == "GET" for c in calls)
    text = raw.text()
    assert '"m5.large"' not in text and '"Reserved"' not in text  # filtered out while streaming
    assert text.count('"FormatVersion"') == 2  # each region keeps its preamble and header
    assert _prices(aws.parse(raw)) == _prices(aws.parse(_raw(EXAMPLE.read_bytes())))
    assert raw.url.startswith("http://mirror.test/offers/v1.0/aws/AmazonEC2/current/")


def test_fetch_reports_server_errors_as_transient() -> None:
    with httpx.Client(transport=_offer_server([], status=503)) as client, \
            pytest.raises(FetchError) as caught:
        aws.fetch(client, HttpSettings(), regions=("us-east-1",))
    assert caught.value.transient
    assert "us-east-1/index.csv" in caught.value.url


def test_fetch_caps_the_kept_bytes() -> None:
    with httpx.Client(transport=_offer_server([])) as client, \
            pytest.raises(FetchError, match="cap"):
        aws.fetch(client, HttpSettings(max_bytes=2000), regions=("us-east-1",))
