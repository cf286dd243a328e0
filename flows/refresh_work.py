"""The refresh's work as plain functions: every source concurrently, fetch -> ingest.

Wiring only: fetching is scrapers', landing is warehouse.ingest's. A source that fails is
recorded; it never stops the others. No Prefect here: the `refresh` flow (flows/refresh.py)
runs the same functions as Prefect tasks; the CLI calls `refresh_now` directly.

Landings commit in groups (`Writer`): while one commit runs, the sources that finish
meanwhile wait, and the next commit lands all of them together; each source still gets (and
logs, and under Prefect fails on) its own outcome.

Both ways share one policy: at most `settings.max_workers` sources at once; transient fetch
errors retried by `with_retries` (the only retry layer); a source's fetch stops at
`settings.source_timeout_s`. Each source's outcome is logged on `gpuprices.refresh` from the
thread (or Prefect task) that ran it, so under Prefect it lands in that task run's logs.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, closing, contextmanager, nullcontext
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from contract import FetchError, ParseError, RawCapture, SourceSkipped
from contract.settings import Settings, load_settings
from flows.alerts import alerts_after_refresh
from flows.fx_rates import refresh_rates
from flows.index_fix import fix_after_refresh
from scrapers.base import Source
from scrapers.http import with_retries
from scrapers.registry import all_sources, resolve_names, secret_names
from warehouse.append import (
    SourceInfo,
    capture_stored,
    finish_run,
    register_sources,
    start_run,
)
from warehouse.connection import REFRESH_THREADS, open_warehouse
from warehouse.connection import cursor as cursor_of
from warehouse.ingest import (
    Landing,
    Prepared,
    ScrapeOutcome,
    land,
    land_group,
    prepare,
    record_fetch_failure,
)
from warehouse.lock import refresh_lock

if TYPE_CHECKING:  # imported where a live refresh opens its client
    import httpx

# The CLI listens here to draw its progress display; each record carries `outcome`.
progress_log = logging.getLogger("gpuprices.refresh")


def source_infos(sources: dict[str, Source]) -> list[SourceInfo]:
    return [
        SourceInfo(s.name, "*" if s.aggregator else s.provider, s.kind, s.url, s.aggregator)
        for s in sources.values()
    ]


def _fetch(source: Source, client: httpx.Client | None, settings: Settings
           ) -> tuple[Any, int]:
    """Fetch with retries until the source's deadline; no request outlives it."""
    if client is None:
        raise ValueError(f"{source.name}: a live refresh needs an HTTP client (none given)")
    attempts = 0
    limit = settings.source_timeout_s
    deadline = time.monotonic() + limit

    def once() -> Any:
        nonlocal attempts
        attempts += 1
        left = max(0.01, deadline - time.monotonic())
        http = settings.http
        if left < max(http.timeout_s, http.request_budget_s):
            http = dataclasses.replace(http, timeout_s=min(http.timeout_s, left),
                                       request_budget_s=min(http.request_budget_s, left))
        return source.fetch(client, http)

    def retrying(attempt: int, error: FetchError, wait_s: float) -> None:
        progress_log.info("%s: attempt %d of %d failed (%s); retrying in %.1f s", source.name,
                          attempt, settings.retries, error.reason, wait_s)

    try:
        return with_retries(once, attempts=settings.retries, base_s=settings.backoff_base_s,
                            deadline=deadline, on_retry=retrying), attempts
    except FetchError as error:
        if error.transient and attempts < settings.retries:  # the deadline ended it
            error = FetchError(error.source, error.url, f"{error.reason}; gave up at the "
                               f"source timeout ({limit:g} s, GPUPRICES_SOURCE_TIMEOUT_S)")
        error.attempts = attempts  # type: ignore[attr-defined]
        raise error from None


def scrape_source(
    source_name: str,
    *,
    settings: Settings,
    con: duckdb.DuckDBPyConnection,
    client: httpx.Client | None,
    writer: Writer,
    run_id: str,
    offline: bool,
) -> ScrapeOutcome:
    """Fetch, parse and land one source; its outcome is recorded and logged, never raised."""
    outcome = _scrape(all_sources()[source_name], settings=settings, con=con, client=client,
                      writer=writer, run_id=run_id, offline=offline)
    report_outcome(outcome)
    return outcome


def _scrape(
    source: Source,
    *,
    settings: Settings,
    con: duckdb.DuckDBPyConnection,
    client: httpx.Client | None,
    writer: Writer,
    run_id: str,
    offline: bool,
) -> ScrapeOutcome:
    started = datetime.now(UTC)
    if offline:
        raw, attempts = source.example_capture(), 1
        note = f"offline replay of the bundled example (as of {source.example_as_of})"
    else:
        note = None
        try:
            raw, attempts = _fetch(source, client, settings)
        except SourceSkipped as skipped:
            with writer.alone() as cursor:
                return record_fetch_failure(
                    cursor, source, run_id=run_id, started_at=started, attempts=0,
                    error=str(skipped), status="skipped")
        except FetchError as error:
            with writer.alone() as cursor:
                return record_fetch_failure(
                    cursor, source, run_id=run_id, started_at=started,
                    attempts=getattr(error, "attempts", 1), error=str(error))
        except ParseError as error:  # a paged fetch reads each page; a wrong one ends it here
            with writer.alone() as cursor:
                return record_fetch_failure(
                    cursor, source, run_id=run_id, started_at=started, attempts=1,
                    error=f"parse error: {error}")
    # Parse + validate outside the write lock (pure CPU), so other sources append meanwhile;
    # a payload already stored is not parsed at all (`land` checks again under the lock).
    prepared = None if capture_stored(cursor_of(con), source.name, raw.capture_id) \
        else _prepare_reading_rates(con, source, raw, run_id)
    return writer.land(Landing(source, raw, prepared, started, attempts, note))


@dataclass(eq=False)
class _Waiting:
    landing: Landing
    outcome: ScrapeOutcome | None = None
    alone: bool = False  # its group failed: it lands by itself


class Writer:
    """The refresh's one writer: writes take turns on `con` (one at a time, each on its own
    cursor), and landings commit in groups.

    `land` is a group commit: a source queues its landing and takes the write turn; whoever
    gets the turn lands every landing queued by then in one transaction (warehouse.ingest.
    land_group), and the sources whose landing it took find their outcome when their turn
    comes. A group that fails for a reason other than a conflict lands each capture alone, so
    a bad capture keeps no other out and its error is its own source's.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, *, run_id: str,
                 archive_root: Path) -> None:
        self._con, self._run_id, self._archive_root = con, run_id, archive_root
        self._turn = threading.Lock()
        self._queue_guard = threading.Lock()
        self._queue: list[_Waiting] = []
        self.commits = 0  # group commits made (the tests read it)

    @contextmanager
    def alone(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """One write of its own: the turn, a cursor, closed however the block ends (closing
        rolls back a transaction that anything, even a KeyboardInterrupt, cut short)."""
        with self._turn:
            cursor = cursor_of(self._con)
            try:
                yield cursor
            finally:
                cursor.close()

    def waiting(self) -> int:
        """Landings queued for the next group."""
        with self._queue_guard:
            return len(self._queue)

    def land(self, landing: Landing) -> ScrapeOutcome:
        """Land `landing`, with whichever others are queued when the turn comes."""
        mine = _Waiting(landing)
        with self._queue_guard:
            self._queue.append(mine)
        with self.alone() as cursor:
            if mine.outcome is None and not mine.alone:
                with self._queue_guard:
                    group, self._queue = self._queue, []
                self._land_together(cursor, group)
            if mine.outcome is not None:
                return mine.outcome
            return land(cursor, landing.source, landing.raw, landing.prepared,
                        run_id=self._run_id, archive_root=self._archive_root,
                        started_at=landing.started_at, attempts=landing.attempts,
                        note=landing.note)

    def _land_together(self, cursor: duckdb.DuckDBPyConnection, group: list[_Waiting]) -> None:
        if len(group) <= 1:  # (none: a failed leader's group took this one's landing)
            for waiting in group:
                waiting.alone = True  # `land` itself: the group path would add nothing
            return
        try:
            outcomes = land_group(cursor, [w.landing for w in group], run_id=self._run_id,
                                  archive_root=self._archive_root)
        except Exception as exc:
            progress_log.warning("%d landings failed together (%s: %s); each lands alone",
                                 len(group), type(exc).__name__, exc)
            for waiting in group:
                waiting.alone = True
            return
        self.commits += 1
        for waiting, outcome in zip(group, outcomes, strict=True):
            waiting.outcome = outcome


def _prepare_reading_rates(con: duckdb.DuckDBPyConnection, source: Source, raw: RawCapture,
                           run_id: str) -> Prepared:
    """`prepare` on a cursor of its own, closed after: it only reads exchange rates."""
    with closing(cursor_of(con)) as cursor:
        return prepare(source, raw, run_id, cursor)


def report_outcome(outcome: ScrapeOutcome) -> None:
    """The per-source line: INFO when it landed (or was skipped), ERROR when it failed."""
    if outcome.ok:
        progress_log.info("%s: %s, %d rows stored, %d quarantined", outcome.source,
                          outcome.status, outcome.rows_stored, outcome.rows_quarantined,
                          extra={"outcome": outcome})
    else:
        progress_log.error("%s: %s (%s): %s", outcome.source, outcome.status, outcome.url,
                           outcome.error, extra={"outcome": outcome})


def _plain_result(future: Future[ScrapeOutcome]) -> tuple[ScrapeOutcome | None, str]:
    try:
        return future.result(), ""
    except Exception as exc:
        return None, f"crashed: {type(exc).__name__}: {exc}"


# Runs scrape_source for every chosen source; yields (name, (outcome or None, failure reason)).
Runner = Callable[[list[str], dict[str, Any]], Iterable[tuple[str, tuple[ScrapeOutcome | None,
                                                                           str]]]]


def run_in_threads(names: list[str], kwargs: dict[str, Any]) -> Iterable[
        tuple[str, tuple[ScrapeOutcome | None, str]]]:
    """The sources in at most `settings.max_workers` threads (the plain path; the flow runs
    Prefect tasks instead)."""
    workers = max(1, min(len(names), kwargs["settings"].max_workers))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="source") as pool:
        futures = {name: pool.submit(scrape_source, name, **kwargs) for name in names}
        for name, future in futures.items():
            yield name, _plain_result(future)


def _http_client(settings: Settings, *, offline: bool
                 ) -> AbstractContextManager[httpx.Client | None]:
    """The refresh's HTTP client; none for an offline replay, which reads no page (no httpx
    import and no TLS context: ~0.15 s of the demo's refresh)."""
    if offline:
        return nullcontext(None)
    import httpx

    return httpx.Client(follow_redirects=True, timeout=settings.http.timeout_s)


def run_refresh(
    settings: Settings, *, source_names: list[str] | None = None, offline: bool = False,
    run_id: str | None = None, lock_wait_s: float = 0.0, runner: Runner | None = None,
) -> list[ScrapeOutcome]:
    """Refresh the chosen sources (all by default) into the warehouse.

    `runner` runs the per-source work; by default plain threads (the flow passes Prefect's).
    """
    sources = all_sources()
    chosen = resolve_names(source_names) if source_names else list(sources)  # KeyError: unknown
    run_id = run_id or f"refresh-{uuid.uuid4().hex[:12]}"
    outcomes: list[ScrapeOutcome] = []
    with (
        refresh_lock(settings.warehouse, wait_s=lock_wait_s),
        open_warehouse(settings.warehouse, threads=REFRESH_THREADS) as con,
        _http_client(settings, offline=offline) as client,
    ):
        register_sources(con, source_infos(sources))
        start_run(con, run_id, "refresh", offline=offline)
        refresh_rates(con, client, settings, offline=offline)  # ECB rates before any price
        writer = Writer(con, run_id=run_id, archive_root=settings.archive_root)
        kwargs = {"settings": settings, "con": con, "client": client,
                  "writer": writer, "run_id": run_id, "offline": offline}
        for name, (outcome, reason) in (runner or run_in_threads)(chosen, kwargs):
            if outcome is None:
                # The task itself died (timeout, bug): record it like any other failure.
                with writer.alone() as cursor:
                    outcome = record_fetch_failure(
                        cursor, sources[name], run_id=run_id,
                        started_at=datetime.now(UTC), attempts=1, error=f"task {reason}")
                report_outcome(outcome)
            outcomes.append(outcome)
        failed = [o.source for o in outcomes if not o.ok]
        if source_names is None:  # a full refresh: the day's fixing (flows/index_fix.py)
            with writer.alone() as cursor:
                fix_after_refresh(cursor, sources)
        status = "completed" if not failed else ("failed" if len(failed) == len(outcomes)
                                                 else "partial")
        finish_run(con, run_id, status, note=f"failed: {', '.join(failed)}" if failed else None)
    return outcomes


def summary_rows(outcomes: list[ScrapeOutcome]) -> list[dict[str, Any]]:
    rows = []
    for outcome in outcomes:
        row = asdict(outcome)
        row["unknown_gpus"] = ", ".join(outcome.unknown_gpus)
        rows.append(row)
    return rows


@dataclass(frozen=True, slots=True)
class RefreshResult:
    run_id: str
    warehouse: Path
    outcomes: list[ScrapeOutcome]

    @property
    def failed(self) -> list[ScrapeOutcome]:
        return [o for o in self.outcomes if not o.ok]

    @property
    def message(self) -> str:
        if self.failed:
            names = ", ".join(o.source for o in self.failed)
            return f"{len(self.failed)} of {len(self.outcomes)} sources failed: {names}"
        return f"all {len(self.outcomes)} sources refreshed"


def refresh_now(sources: list[str] | None = None, offline: bool = False,
                warehouse: str | None = None, run_id: str | None = None,
                runner: Runner | None = None, wait_s: float = 0.0) -> RefreshResult:
    """The refresh itself, as a plain function: scrape, land, then check the alert rules.

    The `refresh` flow runs exactly this (with a run record in Prefect); the CLI calls it
    directly when no Prefect API is configured, so it answers without starting one.
    `wait_s`: how long to wait for another writer of a DuckDB file (a lake needs no wait:
    its writers take turns at each commit).
    """
    settings = load_settings(warehouse=warehouse, secret_names=secret_names())
    run_id = run_id or f"refresh-{uuid.uuid4().hex}"
    outcomes = run_refresh(settings, source_names=sources, offline=offline, run_id=run_id,
                           runner=runner, lock_wait_s=wait_s)
    result = RefreshResult(run_id, settings.warehouse, outcomes)
    progress_log.info("refresh %s: %s; %d rows stored", run_id, result.message,
                      sum(o.rows_stored for o in outcomes))
    # Alert rules ($GPUPRICES_ALERTS or ./alerts.toml): each new event sent once; never raises.
    alerts_after_refresh(settings.warehouse)
    return result
