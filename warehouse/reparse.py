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

Captures kept for reparse (`include_failed`): a payload whose run failed (a layout the parser
did not know, or a batch `validate_guarded` flagged as a suspect layout) or was rejected (the
shrink guard), archived but never stored. Each is parsed again with the current parser and,
when it now passes the same guards, lands through `warehouse.ingest.land` (the refresh's own
path) as a 'success' run at its original observed time; later failed runs of the same payload
become 'unchanged' re-confirmations at their times. Those rows carry the original runs'
finish times, so a recovered capture does not make its source look fresh. A capture that
still fails leaves the warehouse as it was (it is already recorded as failed): the result
says why. Once landed it is a stored capture, so a second reparse re-parses it in place and
adds nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl

from contract import ParseError, RawCapture
from schemas.observation import batch_rejection, validate_guarded
from schemas.screens import band_screen
from scrapers.base import Source
from warehouse.append import (
    ScrapeRecord,
    append_batch,
    finish_run,
    replace_capture_observations,
    start_run,
)
from warehouse.archive import read_archived
from warehouse.fx import convert_batch, hold_out
from warehouse.ingest import land, parse_observations, prepare, unknown_names
from warehouse.screen_context import recorded_market
from warehouse.transaction import transaction

__all__ = ["FailedCapture", "ReparseResult", "failed_captures", "reparse_captures",
           "stored_captures"]


@dataclass(frozen=True, slots=True)
class ReparseResult:
    source: str
    capture_id: str
    observed_at: datetime
    # stored captures: reparsed | reparse_failed | reparse_rejected | skipped;
    # failed/rejected captures: landed | still_failed | still_rejected | skipped
    status: str
    rows_before: int
    rows_after: int
    rows_quarantined: int
    note: str
    was: str = "stored"  # what the capture was before: stored | failed | rejected

    @property
    def problem(self) -> bool:
        """A stored capture the current parser cannot read again is a regression; a failed
        capture that still fails is only still waiting for a parser fix."""
        return self.was == "stored" and self.status != "reparsed"


@dataclass(frozen=True, slots=True)
class FailedCapture:
    """An archived payload whose runs all failed or were rejected (never stored)."""

    source: str
    capture_id: str
    url: str
    content_type: str
    archive_path: str
    status: str  # of its first run: failed | rejected
    error: str | None  # the first run's reason
    runs: tuple[tuple[datetime, datetime, datetime], ...]  # (observed, started, finished)


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


def failed_captures(con: duckdb.DuckDBPyConnection, source: str | None = None,
                    since: date | None = None) -> list[FailedCapture]:
    """Archived captures kept for reparse (failed or rejected runs, no success), oldest first."""
    rows = con.execute(
        "SELECT s.source, s.capture_id, r.url, r.content_type, r.archive_path, s.status, "
        "s.error, s.observed_at, s.started_at, s.finished_at "
        "FROM scrape_run s JOIN raw_capture r ON r.capture_id = s.capture_id "
        "WHERE s.status IN ('failed', 'rejected') AND s.observed_at IS NOT NULL "
        "AND ($source IS NULL OR s.source = $source) "
        "AND ($since IS NULL OR s.observed_at >= CAST($since AS TIMESTAMPTZ)) "
        "AND NOT EXISTS (SELECT 1 FROM scrape_run ok WHERE ok.source = s.source "
        "AND ok.capture_id = s.capture_id AND ok.status = 'success') "
        "ORDER BY s.observed_at, s.source, s.finished_at",
        {"source": source, "since": since},
    ).fetchall()
    found: dict[tuple[str, str], FailedCapture] = {}
    for name, capture_id, url, ctype, path, status, error, observed, started, finished in rows:
        key = (str(name), str(capture_id))
        known = found.get(key)
        run = (observed, started, finished)
        if known is None:
            found[key] = FailedCapture(key[0], key[1], str(url), str(ctype or ""), str(path),
                                       str(status), error, (run,))
        else:
            found[key] = FailedCapture(*key, known.url, known.content_type, known.archive_path,
                                       known.status, known.error, (*known.runs, run))
    return list(found.values())


def _rows_before(con: duckdb.DuckDBPyConnection, source: str, observed_at: datetime
                 ) -> int | None:
    """Rows parsed by the source's last stored capture before `observed_at` (shrink guard)."""
    row = con.execute(
        "SELECT arg_max(rows_parsed, observed_at) FROM scrape_run WHERE source = ? "
        "AND status = 'success' AND observed_at < ?", [source, observed_at]).fetchone()
    return int(row[0]) if row and row[0] is not None else None


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
                     since: date | None = None, include_failed: bool = True
                     ) -> list[ReparseResult]:
    """Re-parse the stored captures of `source` (a name in `sources`; all by default) observed
    on/after `since`, each with its parser from `sources` (the caller's registry); with
    `include_failed`, then the failed/rejected captures kept for reparse."""
    captures = stored_captures(con, source, since)
    failed = failed_captures(con, source, since) if include_failed else []
    if not captures and not failed:
        return []
    run_id = f"reparse-{uuid.uuid4().hex[:12]}"
    start_run(con, run_id, "reparse", offline=True,
              note=f"reparse of {len(captures)} stored and {len(failed)} failed captures "
                   f"(source={source or 'all'}, since={since or 'start'})")
    results = []
    for name, capture_id, url, observed_at, content_type, archive_rel, before in captures:
        assert isinstance(observed_at, datetime) and isinstance(before, int)
        results.append(_reparse_one(con, sources, run_id, str(name), str(capture_id), str(url),
                                    observed_at, str(content_type or ""), str(archive_rel),
                                    before, archive_root))
    results += [_reparse_failed(con, sources, run_id, capture, archive_root)
                for capture in failed]
    changed = sum(r.status in ("reparsed", "landed") for r in results)
    problems = [r for r in results if r.problem]
    finish_run(con, run_id, "completed" if not problems else "partial",
               note=f"{changed} reparsed or landed, {len(results) - changed} kept as they were")
    return results


def _settle_landed(con: duckdb.DuckDBPyConnection, capture: FailedCapture, capture_run: str,
                   finished_at: datetime) -> None:
    """After a failed capture landed: its run stands for the night the payload was taken, so
    it gets that night's finish time (just after the failed run's, so the source's last status
    reads 'success'), not now, or a recovered capture would make its source look fresh; and
    the rows the failed run quarantined (a suspect layout) give way to the new batch's."""
    with transaction(con):
        con.execute("UPDATE scrape_run SET finished_at = ? WHERE run_id = ? AND source = ?",
                    [finished_at + timedelta(microseconds=1), capture_run, capture.source])
        con.execute("DELETE FROM quarantine WHERE capture_id = ? AND source = ? "
                    "AND run_id <> ?", [capture.capture_id, capture.source, capture_run])


def _reparse_failed(con: duckdb.DuckDBPyConnection, sources: Mapping[str, Source],
                    run_id: str, capture: FailedCapture, archive_root: Path) -> ReparseResult:
    """Parse a failed capture again; land it at its own time when it now passes the guards."""
    (observed_at, started_at, finished_at), later = capture.runs[0], capture.runs[1:]

    def result(status: str, after: int, quarantined: int, note: str) -> ReparseResult:
        return ReparseResult(capture.source, capture.capture_id, observed_at, status, 0, after,
                             quarantined, note, was=capture.status)

    src = sources.get(capture.source)
    if src is None:
        return result("skipped", 0, 0, "source no longer registered")
    try:
        body = read_archived(archive_root, capture.archive_path)
    except FileNotFoundError:
        return result("skipped", 0, 0,
                      f"archive file missing: {archive_root / capture.archive_path}")
    raw = RawCapture(source=capture.source, url=capture.url,
                     fetched_at=observed_at.astimezone(UTC), body=body,
                     content_type=capture.content_type or "application/octet-stream")
    capture_run = f"{run_id}:{capture.capture_id[:12]}"
    prepared = prepare(src, raw, capture_run, con)
    if prepared.batch is None:
        return result("still_failed", 0, 0, str(prepared.error))
    batch = prepared.batch
    previous = _rows_before(con, capture.source, observed_at)
    rejection = batch.suspect or batch_rejection(batch.good.height, previous)
    if rejection:
        return result("still_rejected" if not batch.suspect else "still_failed", 0,
                      batch.quarantined.height, rejection)
    note = (f"reparse of {capture.status} capture {capture.capture_id} "
            f"({capture.error or 'no reason recorded'})")
    outcome = land(con, src, raw, prepared, run_id=capture_run, archive_root=archive_root,
                   started_at=started_at, note=note, previous_rows=previous)
    if outcome.status != "success":  # the same guards as above: not expected
        return result(f"still_{outcome.status}", 0, outcome.rows_quarantined,
                      str(outcome.error))
    _settle_landed(con, capture, capture_run, finished_at)
    for index, (seen_at, seen_started, seen_finished) in enumerate(later, start=1):
        append_batch(con, ScrapeRecord(
            run_id=f"{capture_run}:{index}", source=capture.source, started_at=seen_started,
            finished_at=seen_finished + timedelta(microseconds=1), status="unchanged",
            observed_at=seen_at, capture_id=capture.capture_id,
            note=f"reparse: the same payload as {capture.capture_id[:12]} seen again"))
    again = f" (+{len(later)} later runs re-confirmed)" if later else ""
    return result("landed", outcome.rows_stored, outcome.rows_quarantined,
                  f"{capture.status} capture landed: {outcome.rows_stored} rows{again}")


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
    converted = convert_batch(con, observations, raw.fetched_at)  # rates may have arrived
    batch = hold_out(validate_guarded(converted.rows, aggregator=src.aggregator), converted)
    # the band narrowed to the market the capture was screened against when it landed
    banded = band_screen(batch.good, recorded_market(con, name, capture_id))
    if banded.quarantined.height:
        batch = replace(batch, good=banded.good, quarantined=pl.concat(
            [batch.quarantined, banded.quarantined], how="vertical_relaxed"))
    record.rows_parsed = observations.height
    record.rows_quarantined = batch.quarantined.height
    record.unknown_gpus = unknown_names(observations)  # held by the screens, not in good
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
