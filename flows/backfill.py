"""Backfills: land dated history from public archives through the refresh's own ingest path.

Every capture, whatever archive it comes from, becomes one RawCapture observed at its own
time and goes through `warehouse.ingest.ingest` (archive by hash, the source's own parser,
validation, quarantine, guards, idempotent append), exactly as a nightly refresh would land
it. Each capture is its own run (`scrape_run` holds one row per run and source) with a run id
derived from the capture itself, so a second run finds what the first stored and skips it:
running twice adds nothing, and an interrupted run resumes where it stopped (each capture
commits alone). The source is passed in: nothing here picks concrete scrapers. This is the one
backfill engine (`backfill_captures`): every archive, SkyPilot snapshot folders included, feeds
it. The derived tables (market price included) are kept up by each capture's own append.

Plain functions, no Prefect: a backfill is an interactive, one-off command.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb

from contract import FetchError, RawCapture, RunStatus
from scrapers.base import Source
from scrapers.demo_history import load_snapshots, replay_dates, snapshot_capture
from scrapers.ocp_archive import split_by_day
from scrapers.skypilot import SOURCE as SKYPILOT
from scrapers.skypilot_git import blob_reader, catalog_states, state_capture
from scrapers.skypilot_history import find_snapshots
from scrapers.skypilot_history import snapshot_capture as skypilot_snapshot_capture
from scrapers.wayback import ArchiveClient, Every, fetch_capture, list_captures, pick_every
from warehouse.append import SourceInfo, finish_run, register_sources, start_run
from warehouse.archive import read_archived
from warehouse.ingest import ScrapeOutcome, ingest, record_fetch_failure

__all__ = [
    "CaptureResult",
    "Progress",
    "SnapshotResult",
    "backfill_captures",
    "backfill_ocp_archives",
    "backfill_skypilot",
    "backfill_skypilot_git",
    "backfill_wayback",
    "register_source",
    "replay_examples",
]

DONE = (RunStatus.SUCCESS, RunStatus.UNCHANGED, RunStatus.REJECTED)


@dataclass(frozen=True, slots=True)
class CaptureResult:
    key: str  # what the capture is in its archive (timestamp, commit, file@date)
    observed_at: object
    status: str  # success | unchanged | rejected | failed | already stored
    rows_stored: int
    capture_id: str | None
    error: str | None
    fetched: bool  # a request was sent for it (False: skipped or read back from the archive)
    rows_quarantined: int = 0


@dataclass(slots=True)
class Progress:
    total: int = 0
    done: int = 0
    failed: int = 0
    rows: int = 0

    def add(self, result: CaptureResult) -> None:
        self.done += 1
        self.failed += result.status in (RunStatus.FAILED, RunStatus.REJECTED)
        self.rows += result.rows_stored


OnProgress = Callable[[Progress, CaptureResult], None]


def register_source(con: duckdb.DuckDBPyConnection, source: Source) -> None:
    register_sources(con, [SourceInfo(source.name, "*" if source.aggregator else source.provider,
                                      source.kind, source.url, source.aggregator)])


def prior_status(con: duckdb.DuckDBPyConnection, run_id: str,
                 source: str) -> tuple[str, str | None] | None:
    row = con.execute("SELECT status, capture_id FROM scrape_run WHERE run_id = ? AND source = ?",
                      [run_id, source]).fetchone()
    return (str(row[0]), row[1]) if row else None


def _ensure_run(con: duckdb.DuckDBPyConnection, run_id: str, note: str) -> None:
    exists = con.execute("SELECT count(*) FROM refresh_run WHERE run_id = ?", [run_id]).fetchone()
    if not (exists and exists[0]):  # an interrupted run left it 'running': finish it now
        start_run(con, run_id, "backfill", offline=True, note=note)


@dataclass(frozen=True, slots=True)
class Pending:
    """One capture to land: its run id, what to call it, and how to get its bytes."""

    run_id: str
    key: str
    observed_at: object
    note: str
    load: Callable[[], tuple[RawCapture, bool]]  # -> (capture, fetched over the network)


def backfill_captures(con: duckdb.DuckDBPyConnection, source: Source,
                      pending: Iterable[Pending], *, archive_root: Path, total: int = 0,
                      on_progress: OnProgress | None = None) -> list[CaptureResult]:
    """Land each pending capture (oldest first), skipping those a previous run stored."""
    register_source(con, source)
    progress = Progress(total=total)
    results: list[CaptureResult] = []
    previous_rows: int | None = None  # the shrink guard compares capture with capture

    def done(result: CaptureResult) -> None:
        results.append(result)
        progress.add(result)
        if on_progress:
            on_progress(progress, result)

    for item in pending:
        prior = prior_status(con, item.run_id, source.name)
        if prior and prior[0] in DONE:
            done(CaptureResult(item.key, item.observed_at, "already stored", 0, prior[1], None,
                               False))
            continue
        _ensure_run(con, item.run_id, item.note)
        try:
            raw, fetched = item.load()
        except FetchError as error:
            record_fetch_failure(con, source, run_id=item.run_id,
                                 started_at=datetime.now(UTC), attempts=1, error=str(error))
            finish_run(con, item.run_id, "failed", note=str(error))
            done(CaptureResult(item.key, item.observed_at, RunStatus.FAILED, 0, None, str(error),
                               True))
            continue
        outcome: ScrapeOutcome = ingest(con, source, raw, run_id=item.run_id,
                                        archive_root=archive_root, note=item.note,
                                        previous_rows=previous_rows)
        if outcome.status == RunStatus.SUCCESS:
            previous_rows = outcome.rows_parsed
        finish_run(con, item.run_id, "completed" if outcome.ok else "failed", note=outcome.error)
        done(CaptureResult(item.key, raw.fetched_at, outcome.status, outcome.rows_stored,
                           outcome.capture_id, outcome.error, fetched,
                           outcome.rows_quarantined))
    return results


# ---- the Wayback Machine -------------------------------------------------------------------

DIGEST_NOTE = "wayback digest={digest} timestamp={timestamp} original={original}"


def stored_digest(con: duckdb.DuckDBPyConnection, source: str,
                  digest: str) -> tuple[str, str, str] | None:
    """(capture_id, archive path, content type) of a capture with this archive digest."""
    row = con.execute(
        "SELECT s.capture_id, r.archive_path, r.content_type FROM scrape_run s "
        "JOIN raw_capture r USING (capture_id) WHERE s.source = ? AND s.note LIKE ? LIMIT 1",
        [source, f"wayback digest={digest} %"],
    ).fetchone()
    return (str(row[0]), str(row[1]), str(row[2] or "")) if row else None


def backfill_wayback(con: duckdb.DuckDBPyConnection, archive: ArchiveClient, source: Source,
                     *, archive_root: Path, since: date | None = None,
                     until: date | None = None, every: Every = "month",
                     on_progress: OnProgress | None = None,
                     on_listed: Callable[[int], None] | None = None) -> list[CaptureResult]:
    """Land the archive's captures of `source`'s page addresses, one per week/month.

    A digest seen before (this run or an earlier one) is read back from the raw archive
    instead of being fetched again; it lands as an 'unchanged' re-confirmation at its time.
    A capture the parser cannot read is stored as 'failed' with the reason; a later run reads
    it back from the archive (no request) and tries the then-current parser again.
    """
    captures = pick_every(list_captures(archive, source.name, source.archive_urls,
                                        since=since, until=until), every)
    if on_listed:
        on_listed(len(captures))

    def pending() -> Iterable[Pending]:
        for capture in captures:
            def load(capture=capture) -> tuple[RawCapture, bool]:  # type: ignore[no-untyped-def]
                known = stored_digest(con, source.name, capture.digest)
                if known and (archive_root / known[1]).exists():
                    body = read_archived(archive_root, known[1])
                    return RawCapture(source=source.name, url=archive.base + capture.raw_path,
                                      fetched_at=capture.observed_at, body=body,
                                      content_type=known[2] or capture.mimetype), False
                return fetch_capture(archive, source.name, capture), True

            yield Pending(
                run_id=f"wayback-{source.name}-{capture.timestamp}-{capture.digest[:16]}",
                key=capture.timestamp, observed_at=capture.observed_at,
                note=DIGEST_NOTE.format(digest=capture.digest, timestamp=capture.timestamp,
                                        original=capture.original),
                load=load)

    return backfill_captures(con, source, pending(), archive_root=archive_root,
                             total=len(captures), on_progress=on_progress)


# ---- the SkyPilot catalog's git history -------------------------------------------------------

def backfill_skypilot_git(con: duckdb.DuckDBPyConnection, repo: Path, source: Source, *,
                          archive_root: Path, clouds: tuple[str, ...],
                          since: date | None = None, until: date | None = None,
                          on_progress: OnProgress | None = None) -> list[CaptureResult]:
    """Land every distinct catalog state of a local clone, dated at its commit (streamed)."""
    with blob_reader(repo) as reader:
        def pending() -> Iterable[Pending]:
            for state in catalog_states(repo, clouds):
                day = state.committed_at.date()
                if (since and day < since) or (until and day > until):
                    continue
                files = ", ".join(f"{v}/{c}@{b[:10]}" for c, v, b in state.files)
                yield Pending(
                    run_id=f"skypilot-git-{state.commit[:16]}", key=state.commit[:12],
                    observed_at=state.committed_at,
                    note=f"skypilot git {state.commit}: {files}",
                    load=lambda state=state: (state_capture(state, reader, source), False))

        return backfill_captures(con, source, pending(), archive_root=archive_root,
                                 on_progress=on_progress)


# ---- OpenComputePrices archive files ----------------------------------------------------------

def backfill_ocp_archives(con: duckdb.DuckDBPyConnection, inputs: list[str], source: Source,
                          *, archive_root: Path,
                          download: Callable[[str], bytes] | None = None,
                          on_progress: OnProgress | None = None) -> list[CaptureResult]:
    """Land each day of each archive file (a path, or an http(s) URL given to `download`)."""
    def pending() -> Iterable[Pending]:
        for item in inputs:
            is_url = item.startswith(("http://", "https://"))
            if is_url:
                if download is None:
                    raise ValueError(f"{item}: URLs need a download function")
                payload: io.BufferedIOBase = io.BytesIO(download(item))
                url = item
            else:
                payload = Path(item).open("rb")  # noqa: SIM115 (closed below)
                url = Path(item).resolve().as_uri()
            with payload:
                for raw in split_by_day(payload, name=Path(item).name, source=source.name,
                                        url=url):
                    day = raw.fetched_at.date().isoformat()
                    yield Pending(run_id=f"ocp-archive-{day}-{raw.capture_id[:16]}", key=day,
                                  observed_at=raw.fetched_at,
                                  note=f"opencomputeprices archive {Path(item).name}, {day}",
                                  load=lambda raw=raw: (raw, False))

    return backfill_captures(con, source, pending(), archive_root=archive_root,
                             on_progress=on_progress)


# ---- the demo's bundled history -----------------------------------------------------------------

def replay_examples(con: duckdb.DuckDBPyConnection, sources: dict[str, Source], *,
                    archive_root: Path, today: date,
                    on_progress: OnProgress | None = None) -> list[CaptureResult]:
    """Replay scrapers/examples/HISTORY.toml's snapshots before `today` (see replay_dates).

    Idempotent by content: a snapshot already replayed (any day) is not replayed again.
    """
    snapshots = load_snapshots()
    placed = replay_dates(snapshots, today)
    results: list[CaptureResult] = []
    for name in dict.fromkeys(s.source for s in snapshots):
        source = sources[name]
        items = []
        for snapshot in sorted((s for s in snapshots if s.source == name),
                               key=lambda s: s.as_of):
            raw = snapshot_capture(snapshot, source, placed[snapshot])
            items.append(Pending(
                run_id=f"demo-replay-{name}-{snapshot.as_of}-{raw.capture_id[:12]}",
                key=f"{name} as of {snapshot.as_of}", observed_at=raw.fetched_at,
                note=f"demo replay of the bundled {name} snapshot as of {snapshot.as_of} "
                     f"({snapshot.file.name}; values from {snapshot.values_from})",
                load=lambda raw=raw: (raw, False)))
        results += backfill_captures(con, source, items, archive_root=archive_root,
                                     on_progress=on_progress)
    return results


# ---- SkyPilot catalog snapshot folders ----------------------------------------------------------

@dataclass(frozen=True, slots=True)
class SnapshotResult:
    """One snapshot folder's landing, as `gpuprices backfill skypilot DIR` lists it."""

    day: date
    clouds: tuple[str, ...]  # the clouds whose files made the capture
    capture_id: str
    status: str  # success | unchanged | rejected | failed | already stored
    rows_stored: int
    rows_quarantined: int
    error: str | None


def backfill_skypilot(con: duckdb.DuckDBPyConnection, directory: Path, *,
                      archive_root: Path) -> list[SnapshotResult]:
    """Import every SkyPilot snapshot folder under `directory`, oldest first. Safe to rerun:
    a snapshot is one run named by its day and capture, so a second import skips it."""
    snapshots = find_snapshots(directory)
    items, parts = [], {}
    for snapshot in snapshots:
        raw = skypilot_snapshot_capture(snapshot, SKYPILOT)
        files = ", ".join(f"{c}/{p.name}" for c, p in snapshot.files.items())
        key = snapshot.day.isoformat()
        parts[key] = (snapshot.day, tuple(snapshot.files), raw.capture_id)
        items.append(Pending(
            run_id=f"skypilot-folder-{key}-{raw.capture_id[:16]}", key=key,
            observed_at=raw.fetched_at,
            note=f"skypilot snapshot from {directory.name}: {key}: {files}",
            load=lambda raw=raw: (raw, False)))
    results = backfill_captures(con, SKYPILOT, items, archive_root=archive_root)
    return [SnapshotResult(parts[r.key][0], parts[r.key][1], parts[r.key][2], r.status,
                           r.rows_stored, r.rows_quarantined, r.error) for r in results]
