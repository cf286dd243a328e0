"""Memory: peak RSS while ingesting the AWS EC2 price list streamed from a multi-GB CSV.

Writes a price list in the real bulk format (5-line preamble, the 91-column header, quoted
fields; every term, OS and tenancy; ~90 % non-GPU instance types, as in the real file) built
from the bundled example's rows, then, in a fresh process, runs the real path: `aws.fetch_region`
streams it through httpx (a MockTransport serving the file in 1 MiB chunks) keeping only GPU
on-demand rows, and `warehouse.ingest.ingest` parses, validates and appends them. The child
reports its peak RSS (getrusage). Target: <= 1 GiB.

    python -m bench.memory_aws [--size small]
"""

from __future__ import annotations

import csv
import io
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import REPO, header, size_arg, verdict

TARGET_BYTES = 2**30
SIZES = {"small": 20 * 2**20, "full": 2 * 2**30}
REGIONS = ("us-east-1", "us-east-2", "us-west-1", "us-west-2", "eu-west-1", "eu-west-2",
           "eu-central-1", "eu-north-1", "ap-northeast-1", "ap-northeast-2", "ap-south-1",
           "ap-southeast-1", "ap-southeast-2", "ca-central-1", "sa-east-1", "me-south-1")
OTHER_TYPES = ("m5.large", "m5.xlarge", "c5.2xlarge", "c6i.4xlarge", "r5.8xlarge", "t3.micro",
               "t3.medium", "m6g.large", "c7g.xlarge", "r6i.2xlarge", "i3.large", "x2idn.16xlarge")
TERMS = ("OnDemand", "Reserved", "Reserved", "Reserved", "Reserved")
SYSTEMS = ("Linux", "Windows", "RHEL", "SUSE", "Ubuntu Pro")
TENANCIES = ("Shared", "Dedicated", "Host")
VARYING = ("SKU", "TermType", "Instance Type", "Operating System", "Tenancy", "Region Code",
           "PricePerUnit")

CHILD = """
import json, resource, sys, time, uuid
from pathlib import Path
import httpx
from scrapers import aws
from contract import HttpSettings, RawCapture, now_utc
from warehouse.connection import connect
from warehouse.ingest import ingest

path, work = Path(sys.argv[1]), Path(sys.argv[2])
def chunks():
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            yield block
client = httpx.Client(transport=httpx.MockTransport(
    lambda request: httpx.Response(200, content=chunks())))
settings = HttpSettings(base_urls={"aws": "http://aws.test"})
con = connect(work / "w.duckdb")
rss_ready = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
start = time.perf_counter()
body = aws.fetch_region(client, settings, "us-east-1")
fetched = time.perf_counter()
raw = RawCapture("aws", aws.URL, now_utc(), body, "text/csv")
outcome = ingest(con, aws.SOURCE, raw, run_id=uuid.uuid4().hex, archive_root=work / "archive")
done = time.perf_counter()
print(json.dumps({"rss_ready": rss_ready,
                  "rss_peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "kept_bytes": len(body), "status": outcome.status, "error": outcome.error,
                  "rows": outcome.rows_stored, "stream_s": fetched - start,
                  "ingest_s": done - fetched}))
"""


def _templates(example: Path) -> tuple[list[str], list[str], list[list[str]]]:
    lines = example.read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith('"SKU"'))
    names = next(csv.reader([lines[at]]))
    rows = [row + [""] * (len(names) - len(row)) for row in csv.reader(lines[at + 1:])
            if len(row) > 10 and row[0] != "SKU"]  # the example may hold several regions' files
    return lines[:at + 1], names, rows


def _render(names: list[str], row: list[str]) -> str:
    """One CSV line as AWS writes it (non-empty quoted, empty bare), with {placeholders}."""
    fields = []
    for name, value in zip(names, row, strict=True):
        if name in VARYING:
            fields.append('"{' + str(VARYING.index(name)) + '}"')
        else:
            fields.append(f'"{value}"'.replace("{", "{{").replace("}", "}}") if value else "")
    return ",".join(fields)


def write_price_list(path: Path, size: int, seed: int = 11) -> int:
    """Write a price list of about `size` bytes; returns the number of data lines."""
    from scrapers.aws import SOURCE

    head, names, rows = _templates(SOURCE.example)
    templates = [(_render(names, row), row[names.index("Instance Type")],
                  float(row[names.index("PricePerUnit")] or 1)) for row in rows]
    rng = random.Random(seed)
    written = lines = 0
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write("\n".join(head) + "\n")
        buffer = io.StringIO()
        while written < size:
            for _ in range(10_000):
                template, gpu_type, price = rng.choice(templates)
                gpu = rng.random() < 0.1
                kind = gpu_type if gpu else rng.choice(OTHER_TYPES)
                buffer.write(template.format(
                    f"SKU{rng.getrandbits(48):012X}", rng.choice(TERMS), kind,
                    rng.choice(SYSTEMS), rng.choice(TENANCIES), rng.choice(REGIONS),
                    f"{price * rng.uniform(0.8, 1.3) if gpu else rng.uniform(0.01, 5):.10f}"))
                buffer.write("\n")
            chunk = buffer.getvalue()
            out.write(chunk)
            written += len(chunk)
            lines += 10_000
            buffer = io.StringIO()
    return lines


def main(argv: list[str] | None = None) -> int:
    args = size_arg(__doc__.splitlines()[0]).parse_args(argv)
    header("AWS price list: peak memory while streaming a multi-GB CSV into the warehouse")
    work = Path(tempfile.mkdtemp(prefix="gpuprices-bench-aws-"))
    try:
        path = work / "index.csv"
        start = time.perf_counter()
        lines = write_price_list(path, SIZES[args.size])
        print(f"   wrote {path.stat().st_size / 2**30:.2f} GiB, {lines:,} rows, in "
              f"{time.perf_counter() - start:.0f} s")
        done = subprocess.run([sys.executable, "-c", CHILD, str(path), str(work)], cwd=REPO,
                              capture_output=True, text=True, timeout=3600, check=False)
        if done.returncode != 0:
            print(f"   child failed: {done.stderr[-800:]}")
            return 1
        result = json.loads(done.stdout.strip().splitlines()[-1])
        if result["status"] != "success":
            print(f"   ingest ended {result['status']}: {result['error']}")
            return 1
        peak = result["rss_peak"]
        print(f"   streamed + filtered in {result['stream_s']:.1f} s "
              f"({path.stat().st_size / 2**20 / result['stream_s']:.0f} MiB/s), kept "
              f"{result['kept_bytes'] / 2**20:.1f} MiB of GPU on-demand rows; ingest "
              f"{result['ingest_s']:.2f} s, {result['rows']} observations")
        print(f"   RSS after imports + open: {result['rss_ready'] / 2**20:.0f} MiB")
        print(f"   {verdict(peak <= TARGET_BYTES)} peak RSS {peak / 2**20:.0f} MiB "
              f"(target <= {TARGET_BYTES / 2**20:.0f} MiB)")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
