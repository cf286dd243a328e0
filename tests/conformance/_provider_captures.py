"""Shared steps of the conformance tests over ../shared/captures/<provider> (skip without it)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from contract import RawCapture
from schemas.observation import to_observations, validate
from scrapers.base import SourceDef
from tests.conftest import CAPTURES, shared_file

FETCHED_AT = datetime(2026, 1, 1, tzinfo=UTC)


def capture_files(folder: str, pattern: str) -> list[Path]:
    """Every capture of a provider, or one placeholder that skips when ../shared is absent."""
    return sorted((CAPTURES / folder).glob(pattern)) or [CAPTURES / folder / "missing"]


def good_rows(source: SourceDef, folder: str, path: Path) -> pl.DataFrame:
    """The capture parsed and validated: every row good, every GPU in the catalog."""
    shared_file("captures", folder, path.name)
    raw = RawCapture(source=source.name, url=source.url, fetched_at=FETCHED_AT,
                     body=path.read_bytes())
    batch = validate(to_observations(source.parse(raw), raw, "conformance"))
    assert batch.quarantined.height == 0, batch.quarantined["failed_check"].to_list()
    assert batch.good.height > 0
    assert "unknown" not in batch.good["gpu_model"].to_list()
    return batch.good


def one(frame: pl.DataFrame, offering: str, pricing: str) -> dict[str, object]:
    rows = frame.filter((pl.col("offering") == offering) & (pl.col("pricing") == pricing))
    assert rows.height == 1, (offering, pricing, rows.height)
    return rows.row(0, named=True)
