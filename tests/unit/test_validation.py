"""Validation: bad rows are quarantined with the check they failed; good rows of the batch land."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

from contract import RawCapture, rows_frame
from schemas.observation import to_observations, validate
from scrapers.base import SourceDef
from warehouse.connection import connect
from warehouse.ingest import ingest

WHEN = datetime(2025, 6, 12, 3, 0, tzinfo=UTC)
GOOD: dict[str, Any] = {
    "provider": "acme", "offering": "h100-1x", "gpu_name": "H100 SXM", "gpu_count": 1.0,
    "gpu_memory_gb": 80.0, "region": "us-east", "pricing": "on_demand",
    "price_usd_per_hour": 2.50, "billing_increment_s": 1, "available": True,
}
ROWS: list[dict[str, Any]] = [
    GOOD,
    {**GOOD, "offering": "h100-8x", "gpu_count": 8.0, "price_usd_per_hour": 20.0},
    {**GOOD, "offering": "h100-cents", "price_usd_per_hour": 0.01},  # $0.01/h: a unit slip
    {**GOOD, "offering": "h100-gold", "price_usd_per_hour": 500.0},
    {**GOOD, "offering": "h100-pre", "pricing": "preemptible"},  # not in the closed set
    {**GOOD, "offering": None},  # null key
    {**GOOD, "offering": "h100-free", "price_usd_per_hour": 0.0},
]
EXPECTED_REASONS = {  # the band's reason names the band (schemas/screens.py)
    "h100-cents": "suspect: $0.01/GPU-h outside the band $0.1978-$39.56 for H100 SXM",
    "h100-gold": "suspect: $500.0/GPU-h outside the band",
    "h100-pre": "pricing: isin",
    None: "offering: not_nullable",
    "h100-free": "suspect: $0.0/GPU-h outside the band",
}


def raw_capture(body: bytes = b"acme price list v1") -> RawCapture:
    return RawCapture(source="acme", url="https://acme.example/prices", fetched_at=WHEN,
                      body=body)


def test_each_bad_row_is_quarantined_with_its_reason() -> None:
    batch = validate(to_observations(rows_frame(ROWS), raw_capture(), "run-1"))
    assert sorted(batch.good["offering"]) == ["h100-1x", "h100-8x"]
    reasons = dict(zip(batch.quarantined["offering"], batch.quarantined["failed_check"],
                       strict=True))
    assert set(reasons) == set(EXPECTED_REASONS)
    for offering, reason in EXPECTED_REASONS.items():
        assert reason in reasons[offering], (offering, reasons[offering])


def test_per_gpu_price_is_price_over_count() -> None:
    batch = validate(to_observations(rows_frame(ROWS[:2]), raw_capture(), "run-1"))
    per_gpu = dict(zip(batch.good["offering"], batch.good["price_usd_per_gpu_hour"], strict=True))
    assert per_gpu == {"h100-1x": 2.5, "h100-8x": 2.5}
    # A parser that forgot to divide by the count: only the 8-GPU row is wrong.
    tampered = batch.good.with_columns(pl.col("price_usd_per_hour").alias("price_usd_per_gpu_hour"))
    rejected = validate(tampered)
    assert rejected.good["offering"].to_list() == ["h100-1x"]
    assert rejected.quarantined["failed_check"].to_list() == [
        "per-GPU price $20.0 is not the whole $20.0 over 8.0 GPUs"]


def test_band_follows_the_gpu_class() -> None:
    cheap_t4 = {**GOOD, "offering": "t4", "gpu_name": "Tesla T4", "gpu_memory_gb": 16.0,
                "price_usd_per_hour": 0.12}
    h100_at_t4_price = {**GOOD, "offering": "h100", "price_usd_per_hour": 0.12}
    batch = validate(to_observations(rows_frame([cheap_t4, h100_at_t4_price]), raw_capture(),
                                     "r"))
    assert batch.good["offering"].to_list() == ["t4"]
    assert batch.quarantined["offering"].to_list() == ["h100"]


@pytest.fixture
def con(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    connection = connect(tmp_path / "w.duckdb")
    yield connection
    connection.close()


def test_good_rows_of_a_mixed_batch_land_and_bad_ones_go_to_quarantine(
        con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    source = SourceDef(name="acme", provider="acme", kind="api", url="https://acme.example/prices",
                       example=tmp_path / "none.json", example_as_of="2025-06-12",
                       fetch_fn=None, parse_fn=lambda raw: rows_frame(ROWS))
    outcome = ingest(con, source, raw_capture(), run_id="run-1", archive_root=tmp_path / "raw")
    assert outcome.status == "success"
    assert (outcome.rows_parsed, outcome.rows_stored, outcome.rows_quarantined) == (7, 2, 5)
    stored = con.execute("SELECT offering FROM observation ORDER BY offering").fetchall()
    assert stored == [("h100-1x",), ("h100-8x",)]
    quarantined = dict(con.execute(
        "SELECT coalesce(offering, '<null>'), failed_check FROM quarantine").fetchall())
    assert "outside the band" in quarantined["h100-cents"]
    assert "pricing: isin" in quarantined["h100-pre"]
    assert quarantined["<null>"] == "offering: not_nullable"
    run = con.execute("SELECT status, rows_stored, rows_quarantined FROM scrape_run").fetchone()
    assert run == ("success", 2, 5)
