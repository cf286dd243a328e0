"""Re-parse archived raw captures with today's parsers (after a parser fix).

For each stored capture (one that has a 'success' scrape_run) of the chosen sources and dates:
read the payload back from the archive, parse and validate it with the current code, and
swap that capture's observations and quarantine rows for the new ones in one transaction
(`replace_capture_observations`). The new rows keep the capture's original observation time,
so every history view (daily_price, price_change, price_at, latest_price) reads them exactly
where the old rows were.

Recorded as: one refresh_run (flow 'reparse') per invocation, and one scrape_run per capture
with status 'reparsed' (or 'reparse_failed' / 'reparse_rejected', old rows kept) and a note
'reparse of <capture_id>: N -> M rows'. Those statuses are not 'success'/'unchanged', so the
capture_seen / latest_capture views, freshness and staleness ignore them: a re-parse is not a
new observation. The capture's original 'success' run gets its row counts updated, so the
counts shown per source match the rows now stored.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb

from contract import ParseError, RawCapture
from schemas.observation import batch_rejection, validate_guarded
from scrapers.base import Source
from warehouse.append import (
    ScrapeRecord,
    append_batch,
    finish_run,
    replace_capture_observations,
    start_run,
)
from warehouse.archive import read_archived
from warehouse.ingest import parse_observations, unknown_names


@dataclass(frozen=True, slots=True)
class ReparseResult:
    source: str
    capture_id: str
    observed_at: datetime
    status: str  # reparsed | reparse_failed | reparse_rejected | skipped
    rows_before: int
    rows_after: int
    rows_quarantined: int
    note: str


def stored_captures(con: duckdb.DuckDBPyConnection, source: str | None = None,
                    since: date | None = None) -> list[tuple[object, ...]]:
    """(source, capture_id, url, observed_at, content_type, archive_path, rows), oldest first."""
    return con.execute(
        "SELECT c.source, c.capture_id, r.url, c.stored_observed_at, r.content_type, "
        "r.archive_path, (SELECT count(*) FROM observation o WHERE o.capture_id = c.capture_id "
        "AND o.source = c.source) AS rows_before "
        "FROM capture_seen c JOIN raw_capture r USING (capture_id) "
        "WHERE c.stored_observed_at IS NOT NULL AND ($source IS NULL OR c.source = $source) "
        "AND ($since IS NULL OR c.stored_observed_at >= CAST($since AS TIMESTAMPTZ)) "
        "ORDER BY c.stored_observed_at, c.source",
        {"source": source, "since": since},
    ).fetchall()


def _update_original_counts(con: duckdb.DuckDBPyConnection, source: str, capture_id: str,
                            record: ScrapeRecord) -> None:
    con.execute(
        "UPDATE scrape_run SET rows_parsed = ?, rows_stored = ?, rows_quarantined = ?, "
        "unknown_gpus = ? WHERE source = ? AND capture_id = ? AND status = 'success'",
        [record.rows_parsed, record.rows_stored, record.rows_quarantined,
         record.unknown_gpus, source, capture_id],
    )


def reparse_captures(con: duckdb.DuckDBPyConnection, sources: Mapping[str, Source], *,
                     archive_root: Path, source: str | None = None,
                     since: date | None = None) -> list[ReparseResult]:
    """Re-parse the stored captures of `source` (a name in `sources`; all by default) observed
    on/after `since`, each with its parser from `sources` (the caller's registry)."""
    captures = stored_captures(con, source, since)
    if not captures:
        return []
    run_id = f"reparse-{uuid.uuid4().hex[:12]}"
    start_run(con, run_id, "reparse", offline=True,
              note=f"reparse of {len(captures)} captures (source={source or 'all'}, "
                   f"since={since or 'start'})")
    results = []
    for name, capture_id, url, observed_at, content_type, archive_rel, before in captures:
        assert isinstance(observed_at, datetime) and isinstance(before, int)
        results.append(_reparse_one(con, sources, run_id, str(name), str(capture_id), str(url),
                                    observed_at, str(content_type or ""), str(archive_rel),
                                    before, archive_root))
    changed = sum(r.status == "reparsed" for r in results)
    failed = [r for r in results if r.status != "reparsed"]
    finish_run(con, run_id, "completed" if not failed else "partial",
               note=f"{changed} reparsed, {len(failed)} kept as they were")
    return results


def _reparse_one(con: duckdb.DuckDBPyConnection, sources: Mapping[str, Source], run_id: str,
                 name: str, capture_id: str, url: str, observed_at: datetime,
                 content_type: str, archive_rel: str, before: int,
                 archive_root: Path) -> ReparseResult:
    def result(status: str, after: int, quarantined: int, note: str) -> ReparseResult:
        return ReparseResult(name, capture_id, observed_at, status, before, after,
                             quarantined, note)

    src = sources.get(name)
    if src is None:
        return result("skipped", before, 0, "source no longer registered")
    try:
        body = read_archived(archive_root, archive_rel)
    except FileNotFoundError:
        return result("skipped", before, 0, f"archive file missing: {archive_root / archive_rel}")
    raw = RawCapture(source=name, url=url, fetched_at=observed_at.astimezone(UTC), body=body,
                     content_type=content_type or "application/octet-stream")
    capture_run = f"{run_id}:{capture_id[:12]}"  # scrape_run holds one row per (run, source)
    record = ScrapeRecord(run_id=capture_run, source=name, started_at=datetime.now(UTC),
                          status="reparse_failed", observed_at=raw.fetched_at,
                          capture_id=capture_id)
    try:
        observations = parse_observations(src, raw, capture_run)
    except ParseError as exc:
        record.error = f"parse error: {exc}"
        record.note = f"reparse of {capture_id} failed; old rows kept"
        append_batch(con, record)
        return result("reparse_failed", before, 0, record.error)
    batch = validate_guarded(observations, aggregator=src.aggregator)
    record.rows_parsed = observations.height
    record.rows_quarantined = batch.quarantined.height
    record.unknown_gpus = unknown_names(batch.good)
    rejection = batch.suspect or batch_rejection(batch.good.height, before)
    if rejection:
        record.status = "reparse_rejected"
        record.error = f"reparse rejected: {rejection}"
        record.note = f"reparse of {capture_id} rejected; old rows kept"
        append_batch(con, record)
        return result("reparse_rejected", before, batch.quarantined.height, record.error)
    record.status = "reparsed"
    record.rows_stored = batch.good.height
    record.note = f"reparse of {capture_id}: {before} -> {batch.good.height} rows"
    replace_capture_observations(con, record, capture_id, batch.good, batch.quarantined)
    _update_original_counts(con, name, capture_id, record)
    return result("reparsed", batch.good.height, batch.quarantined.height, record.note)
