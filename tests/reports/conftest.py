"""A warehouse built by hand from known prices, for exact report assertions."""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

from schemas.gpus import gpu_memory_of
from schemas.observation import OBSERVATION_SCHEMA
from warehouse.append import ScrapeRecord, SourceInfo, append_batch, register_sources
from warehouse.connection import connect

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)  # a Friday of ISO week 2026-W47


def same_day(moment: datetime, now: datetime) -> datetime:
    """`moment`, or the start of `now`'s UTC day when it falls on the day before: layouts built
    on the real clock keep their "now" captures on today (run just after midnight UTC, a
    capture an hour or two back is yesterday's, and every day-by-day answer gains a day)."""
    return max(moment, datetime.combine(now.astimezone(UTC).date(), datetime.min.time(), UTC))

PLAN_DDL = """
CREATE TABLE IF NOT EXISTS plan (provider VARCHAR, plan VARCHAR, usd_per_month DOUBLE,
    compute_units_per_month DOUBLE, gpu_model VARCHAR, units_per_gpu_hour DOUBLE,
    gpu_hours_per_week DOUBLE, session_limit_h DOUBLE, as_of DATE, source_url VARCHAR,
    notes VARCHAR, kind VARCHAR)
"""
OWNERSHIP_DDL = """
CREATE TABLE IF NOT EXISTS gpu_ownership (gpu_model VARCHAR, purchase_usd DOUBLE,
    power_watts DOUBLE, as_of DATE, source_url VARCHAR, notes VARCHAR, kind VARCHAR)
"""


def offer(provider: str, offering: str, gpu_model: str, price: float, *, count: float = 1,
          pricing: str = "on_demand", region: str = "us", available: bool | None = True,
          gpu_only: bool = False, memory: float | None = None) -> dict[str, Any]:
    return {"provider": provider, "offering": offering, "gpu_model": gpu_model,
            "gpu_name": gpu_model, "gpu_count": float(count),
            "gpu_memory_gb": memory or gpu_memory_of(gpu_model), "region": region,
            "pricing": pricing, "price_usd_per_hour": price,
            "price_usd_per_gpu_hour": price / count, "available": available,
            "gpu_only": gpu_only}


class Builder:
    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.runs = 0
        self.last_capture_id = ""  # the capture `capture` stored last

    def source(self, name: str, provider: str, *, kind: str = "api",
               aggregator: bool = False) -> None:
        register_sources(self.con, [SourceInfo(name, provider, kind, f"https://{name}.test/",
                                               aggregator)])

    def capture(self, source: str, at: datetime, offers: list[dict[str, Any]],
                run_id: str | None = None) -> str:
        """Store one capture of `source` observed (and finished) at `at`."""
        self.runs += 1
        run_id = run_id or f"run-{self.runs}"
        capture_id = hashlib.sha256(f"{source}{at}{offers}".encode()).hexdigest()
        self.con.execute(
            "INSERT INTO refresh_run VALUES (?, 'refresh', ?, ?, false, 'completed', NULL) "
            "ON CONFLICT DO NOTHING", [run_id, at, at])
        rows = [{**o, "observed_at": at, "run_id": run_id, "capture_id": capture_id,
                 "source": source, "source_url": f"https://{source}.test/", "vcpus": None,
                 "ram_gb": None, "billing_increment_s": 1, "monthly_fee_usd": None}
                for o in offers]
        good = pl.DataFrame(rows, schema=OBSERVATION_SCHEMA) if rows else None
        record = ScrapeRecord(run_id=run_id, source=source, started_at=at, status="success",
                              finished_at=at, observed_at=at, capture_id=capture_id,
                              rows_parsed=len(rows), rows_stored=len(rows))
        capture = {"capture_id": capture_id, "source": source, "url": "https://x.test/",
                   "fetched_at": at, "content_type": "application/json", "size_bytes": 1,
                   "archive_path": f"{capture_id}.gz"}
        append_batch(self.con, record, capture=capture, good=good)
        self.last_capture_id = capture_id
        return run_id

    def confirm(self, source: str, at: datetime, capture_id: str) -> None:
        """A run at `at` that fetched the stored capture `capture_id` again (unchanged)."""
        self.runs += 1
        run_id = f"run-{self.runs}"
        self.con.execute(
            "INSERT INTO refresh_run VALUES (?, 'refresh', ?, ?, false, 'completed', NULL)",
            [run_id, at, at])
        append_batch(self.con, ScrapeRecord(run_id=run_id, source=source, started_at=at,
                                            status="unchanged", finished_at=at, observed_at=at,
                                            capture_id=capture_id))

    def failure(self, source: str, at: datetime, run_id: str, error: str) -> None:
        append_batch(self.con, ScrapeRecord(run_id=run_id, source=source, started_at=at,
                                            finished_at=at, status="failed", error=error))

    def plans(self, rows: list[tuple[Any, ...]]) -> None:
        """Replace the plan table's rows (created here when migration 002 is absent)."""
        self.con.execute(PLAN_DDL)
        self.con.execute("DELETE FROM plan")
        self.con.executemany(
            "INSERT INTO plan (provider, plan, usd_per_month, compute_units_per_month, "
            "gpu_model, units_per_gpu_hour, gpu_hours_per_week, session_limit_h, as_of, "
            "source_url, kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, DATE '2026-01-01', "
            "'https://plans.test/', 'static')", rows)

    def ownership(self, rows: list[tuple[str, float, float]]) -> None:
        self.con.execute(OWNERSHIP_DDL)
        self.con.execute("DELETE FROM gpu_ownership")
        self.con.executemany(
            "INSERT INTO gpu_ownership (gpu_model, purchase_usd, power_watts, as_of, source_url, "
            "kind) VALUES (?, ?, ?, DATE '2026-01-01', 'https://own.test/', 'static')", rows)


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = connect(tmp_path / "w.duckdb")
    try:
        yield connection
    finally:
        connection.close()


@pytest.fixture
def build(con: duckdb.DuckDBPyConnection) -> Builder:
    return Builder(con)


@pytest.fixture
def market(build: Builder) -> duckdb.DuckDBPyConnection:
    build_market(build)
    return build.con


def build_market(build: Builder, at: datetime = NOW) -> None:
    """Four direct sources (aws stale at 72 h), one aggregator, a week of history for two.

    Prices as seen at `at`; the week-ago captures are 8 days before it.
    """
    hours = timedelta(hours=1)
    for name, provider in (("vastai", "vastai"), ("lambda", "lambda"), ("runpod", "runpod"),
                           ("aws", "aws")):
        build.source(name, provider)
    build.source("skypilot", "*", kind="catalog", aggregator=True)
    week_ago = at - 8 * 24 * hours
    build.capture("vastai", week_ago, [
        offer("vastai", "4090-a", "RTX 4090", 0.50),
        offer("vastai", "a100-40", "A100 40GB", 0.80),
        offer("vastai", "3090", "RTX 3090", 0.25),
        offer("vastai", "old-offer", "RTX 3090", 0.30),
    ], run_id="run-week-ago")
    build.capture("lambda", week_ago, [
        offer("lambda", "gpu_1x_a100", "A100 40GB", 1.10),
        offer("lambda", "gpu_1x_a100_sxm4_80gb", "A100 80GB", 1.29),
        offer("lambda", "gpu_1x_h100_pcie", "H100 PCIe", 2.49),
    ], run_id="run-week-ago")
    build.capture("aws", at - 72 * hours, [
        offer("aws", "p4d.24xlarge", "A100 40GB", 32.77, count=8),
        offer("aws", "g4dn.xlarge", "T4", 0.526),
    ], run_id="run-old")
    now = same_day(at - 2 * hours, at)
    build.capture("vastai", now, [
        offer("vastai", "4090-a", "RTX 4090", 0.40),
        offer("vastai", "4090-a", "RTX 4090", 0.25, pricing="interruptible"),
        offer("vastai", "4090-b", "RTX 4090", 0.40, region="eu"),
        offer("vastai", "a100-40", "A100 40GB", 0.90),
        offer("vastai", "h100-x2", "H100 SXM", 4.00, count=2),
        offer("vastai", "3090", "RTX 3090", 0.25),
    ], run_id="run-now")
    build.capture("lambda", now, [
        offer("lambda", "gpu_1x_a100", "A100 40GB", 1.10),
        offer("lambda", "gpu_1x_a100_sxm4_80gb", "A100 80GB", 1.29),
        offer("lambda", "gpu_1x_h100_pcie", "H100 PCIe", 2.49),
        offer("lambda", "gpu_8x_h100_sxm5", "H100 SXM", 23.92, count=8),
    ], run_id="run-now")
    build.capture("runpod", now, [
        offer("runpod", "RTX 4090", "RTX 4090", 0.69),
        offer("runpod", "RTX 4090", "RTX 4090", 0.44, pricing="community"),
        offer("runpod", "A100 80GB", "A100 80GB", 1.99, available=False),
        offer("runpod", "L4", "L4", 0.43),
    ], run_id="run-now")
    build.capture("skypilot", now, [
        offer("lambda", "gpu_1x_a100", "A100 40GB", 1.50),
        offer("gcp", "a2-highgpu-1g", "A100 40GB", 3.67),
        offer("gcp", "nvidia-tesla-t4", "T4", 0.35, gpu_only=True),
    ], run_id="run-now")
    build.plans([
        ("colab", "Colab Free", 0.0, None, "T4", None, None, 12.0),
        ("colab", "Colab Pro", 9.99, 100.0, "T4", 1.96, None, 24.0),
        ("colab", "Colab Pro", 9.99, 100.0, "L4", 4.8, None, 24.0),
        ("kaggle", "Kaggle Free", 0.0, None, "P100", None, 30.0, 9.0),
        ("huggingface", "HF PRO", 9.0, None, None, None, None, None),
    ])
    build.ownership([("RTX 4090", 1600.0, 450.0), ("L4", 2500.0, 72.0)])


def cli_csv(*args: str) -> list[dict[str, str]]:
    """A command's rows, run with `--format csv` through typer's test runner (exit 0)."""
    from typer.testing import CliRunner

    from gpuprices.cli import app

    result = CliRunner().invoke(app, [*args, "--format", "csv"])
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.stdout)))
