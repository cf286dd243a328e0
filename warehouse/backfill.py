"""Land dated historical captures of one source (a backfill), oldest first, idempotently.

Which captures, and how they are read from files, is the source's business (e.g.
scrapers/skypilot_history.py); flows.backfill wires the two. Decisions, and why:
- History lands under the live source's own name, so history and nightly data are one
  series: the price-change and point-in-time views see a backfilled price and tonight's price
  of the same offering as consecutive observations.
- Everything lands through `warehouse.ingest.ingest` (archive, parse, validate, quarantine,
  guard). The shrink guard compares each capture with the previous one of the same import,
  not with the last nightly run (a six-cloud live catalog would make a two-cloud history
  snapshot look like a broken response). A capture identical to an earlier one has the same
  capture_id, so it is recorded as an 'unchanged' run that re-confirms the stored prices: no
  price is stored twice. A capture already imported (same capture, same date) is skipped, so
  a re-import adds nothing at all.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import duckdb

from contract import RawCapture
from scrapers.base import Source
from warehouse.append import SourceInfo, finish_run, register_sources, start_run
from warehouse.ingest import ingest

__all__ = ["DatedCapture", "SnapshotResult", "already_imported", "backfill_captures"]


@dataclass(frozen=True, slots=True)
class DatedCapture:
    """One historical capture (fetched_at = when the prices held) and what it was made of."""

    day: date
    raw: RawCapture
    parts: tuple[str, ...]  # e.g. the clouds in a SkyPilot snapshot
    note: str


@dataclass(frozen=True, slots=True)
class SnapshotResult:
    day: date
    clouds: tuple[str, ...]  # the capture's parts
    capture_id: str
    status: str  # success | unchanged | rejected | failed | already imported
    rows_stored: int
    rows_quarantined: int
    error: str | None


def already_imported(con: duckdb.DuckDBPyConnection, source: str, capture_id: str,
                     observed_at: datetime) -> bool:
    row = con.execute(
        "SELECT count(*) FROM scrape_run WHERE source = ? AND capture_id = ? AND observed_at = ? "
        "AND status IN ('success', 'unchanged')",
        [source, capture_id, observed_at],
    ).fetchone()
    return bool(row and row[0])


def backfill_captures(con: duckdb.DuckDBPyConnection, source: Source,
                      captures: Iterable[DatedCapture], *, archive_root: Path,
                      label: str) -> list[SnapshotResult]:
    """Land each capture of `source` (oldest first) in its own run. Safe to run again."""
    register_sources(con, [SourceInfo(source.name, "*" if source.aggregator else source.provider,
                                      source.kind, source.url, source.aggregator)])
    results = []
    previous_rows: int | None = None  # the shrink guard compares capture with capture
    for item in captures:
        raw = item.raw
        if already_imported(con, source.name, raw.capture_id, raw.fetched_at):
            results.append(SnapshotResult(item.day, item.parts, raw.capture_id,
                                          "already imported", 0, 0, None))
            continue
        # One run per capture: scrape_run holds one row per (run, source).
        run_id = f"backfill-{source.name}-{item.day.isoformat()}-{uuid.uuid4().hex[:8]}"
        start_run(con, run_id, "backfill", offline=True, note=f"{label}: {item.day}")
        outcome = ingest(con, source, raw, run_id=run_id, archive_root=archive_root,
                         note=item.note, previous_rows=previous_rows)
        if outcome.status == "success":
            previous_rows = outcome.rows_parsed
        finish_run(con, run_id, "completed" if outcome.ok else "failed", note=outcome.error)
        results.append(SnapshotResult(item.day, item.parts, raw.capture_id, outcome.status,
                                      outcome.rows_stored, outcome.rows_quarantined,
                                      outcome.error))
    return results
