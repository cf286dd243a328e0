"""Backfill wiring: a source's history reader (scrapers) feeding the warehouse's backfill.

No Prefect here: `gpuprices backfill` calls it directly; a flow may wrap it later.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from scrapers.skypilot import SOURCE as SKYPILOT
from scrapers.skypilot_history import find_snapshots, snapshot_capture
from warehouse.backfill import DatedCapture, SnapshotResult, backfill_captures

__all__ = ["backfill_skypilot", "skypilot_captures"]


def skypilot_captures(directory: Path) -> list[DatedCapture]:
    """Every SkyPilot snapshot under `directory` as a dated capture of the live source."""
    captures = []
    for snapshot in find_snapshots(directory):
        files = ", ".join(f"{c}/{p.name}" for c, p in snapshot.files.items())
        captures.append(DatedCapture(snapshot.day, snapshot_capture(snapshot, SKYPILOT),
                                     tuple(snapshot.files),
                                     f"backfill of snapshot {snapshot.day}: {files}"))
    return captures


def backfill_skypilot(con: duckdb.DuckDBPyConnection, directory: Path, *,
                      archive_root: Path) -> list[SnapshotResult]:
    """Import every SkyPilot snapshot under `directory`, oldest first. Safe to run again."""
    return backfill_captures(con, SKYPILOT, skypilot_captures(directory),
                             archive_root=archive_root,
                             label=f"skypilot snapshot from {directory.name}")
