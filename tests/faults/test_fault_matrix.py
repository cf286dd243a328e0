"""Every source x every fault: a refresh over a warehouse holding one good (72 h old) night.

Each case runs `flows.refresh.run_refresh` (the code path of the Prefect flow) against the
fault server. For speed, one refresh serves a fault to half the sources while the other half
stay healthy (the siblings), then the halves swap; `huge` runs one source at a time so its
memory can be measured. Each case checks that the run finishes in time, the healthy sources
land, the faulty source's run record says what went wrong, nothing stored is changed or lost,
and the latest-price views keep the previous prices, marked stale.
"""

from __future__ import annotations

import hashlib
import itertools
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import psutil
import pytest

from contract import FetchError
from flows.refresh import run_refresh
from scrapers.http import MAX_BACKOFF_S, backoff_s, with_retries
from scrapers.registry import all_sources
from tests.faults.conftest import CLIENT_TIMEOUT_S, SEED_RUN_ID, fault_settings
from tests.faults.server import FAULTS, HUGE_BYTES, RETRY_AFTER_S, FaultServer, Plan, Seen
from warehouse.ingest import ScrapeOutcome

SOURCES = sorted(all_sources())
RUN_BUDGET_S = 20.0  # one refresh of every source, whatever the fault
RSS_GROWTH_LIMIT = 120 * 1024 * 1024  # the huge response would be HUGE_BYTES if buffered


@dataclass(frozen=True, slots=True)
class Expect:
    statuses: tuple[str, ...]
    reasons: tuple[str, ...] = ()  # one of these must appear in the recorded error
    attempts: int | None = None  # None: don't care; -1: settings.retries

    @property
    def ok(self) -> bool:
        return "success" in self.statuses


FAILED_PARSE = ("parse error", "zero rows", "lost more than half")
EXPECT: dict[str, Expect] = {
    "healthy": Expect(("success",), attempts=1),
    "timeout": Expect(("failed",), ("timed out after",), attempts=-1),
    "refused": Expect(("failed",), ("cannot connect",), attempts=-1),
    "http500": Expect(("failed",), ("HTTP 500",), attempts=-1),
    "http502": Expect(("failed",), ("HTTP 502",), attempts=-1),
    "http503": Expect(("failed",), ("HTTP 503",), attempts=-1),
    "flaky503": Expect(("success",), attempts=2),  # at least: a loaded box may time out once
    "retry_after429": Expect(("success",), attempts=2),
    "truncated": Expect(("failed",), ("connection broke mid-response",), attempts=-1),
    "empty": Expect(("failed", "rejected"), FAILED_PARSE, attempts=1),
    "layout": Expect(("failed", "rejected"), FAILED_PARSE, attempts=1),
    "prices_x100": Expect(("rejected",), ("outside the band",), attempts=1),  # the price band
    "garbage": Expect(("failed", "rejected"), FAILED_PARSE, attempts=1),
    "huge": Expect(("failed",), ("byte cap", "stopped reading"), attempts=1),
    "replay": Expect(("success",), attempts=1),
}
assert set(EXPECT) == set(FAULTS)
# Sources that catch a fault earlier than the parser, with their own words for it.
EXTRA_REASONS: dict[tuple[str, str], tuple[str, ...]] = {
    # AWS filters the offer CSV while streaming it: a non-CSV body ends "before the header".
    ("aws", "garbage"): ("response ended before the CSV header",),
    # Paged APIs check each page's shape while paging (fetch needs the next-page link).
    ("azure", "layout"): ("page without Items",),
    ("gcp", "layout"): ("page without a skus list",),
}


# Sources that read a page by its shape and header words, not by class names (div grids):
# the "layout" fault (classes renamed, tables turned into lists) is still a layout they read,
# and it must give exactly the prices of the healthy page, never guessed ones.
READ_BY_SHAPE: frozenset[str] = frozenset({"coreweave", "fluidstack"})


def expectation(source_name: str, fault: str) -> Expect:
    if fault == "layout" and source_name in READ_BY_SHAPE:
        return EXPECT["healthy"]
    return EXPECT[fault]


def halves(names: list[str]) -> tuple[list[str], list[str]]:
    return names[::2], names[1::2]


@dataclass(frozen=True, slots=True)
class Snapshot:
    latest: frozenset[tuple[object, ...]]  # (offering, region, pricing, price) in the views
    headline: frozenset[tuple[object, ...]]  # the same from latest_price (the headline view)
    stale: frozenset[bool]


@dataclass(frozen=True, slots=True)
class State:
    seed_hash: str  # every observation of the good night, hashed
    observations: int
    raw_captures: int
    sources: dict[str, Snapshot]


def read_state(con: duckdb.DuckDBPyConnection) -> State:
    rows = con.execute("SELECT * FROM observation WHERE run_id = ? ORDER BY ALL",
                       [SEED_RUN_ID]).fetchall()
    digest = hashlib.sha256(repr(rows).encode()).hexdigest()
    counts = con.execute("SELECT (SELECT count(*) FROM observation), "
                         "(SELECT count(*) FROM raw_capture)").fetchone()
    latest: dict[str, set[tuple[object, ...]]] = {}
    stale: dict[str, set[bool]] = {}
    for source, *key, is_stale in con.execute(
            "SELECT source, offering, region, pricing, price_usd_per_hour, stale "
            "FROM latest_price_all_sources").fetchall():
        latest.setdefault(source, set()).add(tuple(key))
        stale.setdefault(source, set()).add(bool(is_stale))
    headline: dict[str, set[tuple[object, ...]]] = {}
    for source, *key in con.execute("SELECT source, offering, region, pricing, "
                                    "price_usd_per_hour FROM latest_price").fetchall():
        headline.setdefault(source, set()).add(tuple(key))
    snaps = {s: Snapshot(frozenset(latest.get(s, ())), frozenset(headline.get(s, ())),
                         frozenset(stale.get(s, ()))) for s in SOURCES}
    return State(digest, int(counts[0]) if counts else 0, int(counts[1]) if counts else 0,
                 snaps)


def state_of(path: Path) -> State:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return read_state(con)
    finally:
        con.close()


@contextmanager
def peak_rss_growth() -> Iterator[list[int]]:
    """Sample this process's RSS every 5 ms; yields [peak growth in bytes], filled on exit."""
    process = psutil.Process()
    start = process.memory_info().rss
    peak = [start]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.005):
            peak[0] = max(peak[0], process.memory_info().rss)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    growth = [0]
    try:
        yield growth
    finally:
        done.set()
        sampler.join()
        growth[0] = peak[0] - start


@dataclass
class Batch:
    """One refresh: `faulty` sources get the fault, `healthy` ones are served their example."""

    fault: str
    faulty: list[str]
    healthy: list[str]
    run_id: str
    outcomes: dict[str, ScrapeOutcome]
    records: dict[str, tuple[object, ...]]  # source -> (status, error, attempts, rows_stored)
    run_row: tuple[object, ...]
    after: State
    new_rows: dict[str, int]
    quarantine_checks: dict[str, list[str]]
    seen: dict[str, list[Seen]]
    plans: dict[str, Plan]
    elapsed: float
    rss_growth: int
    plan_errors: dict[str, str]
    again: dict[str, ScrapeOutcome] = field(default_factory=dict)  # replay: the second run
    after_again: State | None = None
    before_again: State | None = None


def run_batch(server: FaultServer, seed: Path, workdir: Path, fault: str, faulty: list[str],
              healthy: list[str]) -> Batch:
    sources = all_sources()
    warehouse = workdir / f"{fault}-{faulty[0]}-{uuid.uuid4().hex[:6]}" / "gpu_prices.duckdb"
    warehouse.parent.mkdir(parents=True)
    shutil.copyfile(seed, warehouse)
    server.reset()
    plan_errors: dict[str, str] = {}
    for name in faulty:
        try:
            server.plan(sources[name], fault)
        except AssertionError as gap:  # the harness cannot make this fault for this source
            plan_errors[name] = str(gap)
            server.plan(sources[name], "healthy")
    for name in healthy:
        server.plan(sources[name], "healthy")
    settings = fault_settings(server, warehouse)
    run_id = f"fault-{fault}-{faulty[0]}"
    with peak_rss_growth() as growth:
        started = time.monotonic()
        outcomes = {o.source: o for o in run_refresh(settings, source_names=faulty + healthy,
                                                     run_id=run_id)}
        elapsed = time.monotonic() - started
    rss_growth = growth[0]
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        records = {r[0]: r[1:] for r in con.execute(
            "SELECT source, status, error, attempts, rows_stored FROM scrape_run "
            "WHERE run_id = ?", [run_id]).fetchall()}
        run_row = con.execute("SELECT status, note FROM refresh_run WHERE run_id = ?",
                              [run_id]).fetchone() or ()
        new_rows = dict(con.execute("SELECT source, count(*) FROM observation WHERE run_id = ? "
                                    "GROUP BY source", [run_id]).fetchall())
        checks: dict[str, list[str]] = {}
        for source, check in con.execute("SELECT DISTINCT source, failed_check FROM quarantine "
                                         "WHERE run_id = ?", [run_id]).fetchall():
            checks.setdefault(source, []).append(str(check))
        after = read_state(con)
    finally:
        con.close()
    batch = Batch(fault, faulty, healthy, run_id, outcomes, records, run_row, after, new_rows,
                  checks, {n: server.requests_of(n) for n in faulty + healthy},
                  dict(server.plans), elapsed, rss_growth, plan_errors)
    if fault == "replay":
        again = run_refresh(settings, source_names=faulty, run_id=f"{run_id}-again")
        batch.again = {o.source: o for o in again}
        batch.before_again = after
        batch.after_again = state_of(warehouse)
    return batch


@pytest.fixture(scope="module")
def batches(fault_server: FaultServer, seeded_warehouse: Path,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, ...], Batch]]:
    """Refreshes run so far, by (fault, *faulty sources); each case reuses its group's run."""
    cache: dict[tuple[str, ...], Batch] = {}
    cache[("workdir",)] = tmp_path_factory.mktemp("fault-runs")  # type: ignore[assignment]
    yield cache
    fault_server.reset()


@pytest.fixture(scope="session")
def seed_state(seeded_warehouse: Path) -> State:
    return state_of(seeded_warehouse)


def batch_for(cache: dict[tuple[str, ...], Batch], server: FaultServer, seed: Path,
              source: str, fault: str) -> Batch:
    """Half the sources faulty, the other half healthy; `huge` runs one source at a time so
    that its memory use can be measured."""
    if fault == "huge":
        faulty = [source]
        healthy = [next(s for s in SOURCES if s != source)] if len(SOURCES) > 1 else []
    else:
        first, second = halves(SOURCES)
        faulty, healthy = (first, second) if source in first else (second, first)
    key = (fault, *faulty)
    if key not in cache:
        workdir = cache[("workdir",)]
        cache[key] = run_batch(server, seed, workdir, fault, faulty, healthy)  # type: ignore[arg-type]
    return cache[key]


@pytest.mark.timeout(180)
@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("source_name", SOURCES)
def test_fault(source_name: str, fault: str, fault_server: FaultServer, seeded_warehouse: Path,
               seed_state: State, batches: dict[tuple[str, ...], Batch]) -> None:
    source = all_sources()[source_name]
    batch = batch_for(batches, fault_server, seeded_warehouse, source_name, fault)
    expect = expectation(source_name, fault)
    before = seed_state.sources[source_name]
    assert before.latest and before.stale == {True}, "the seed night is there and already stale"

    assert source_name not in batch.plan_errors, batch.plan_errors.get(source_name)
    if fault != "refused" and not batch.seen.get(source_name):
        if source.kind == "static":
            pytest.skip(f"{source_name} is static: its fetch makes no HTTP request")
        pytest.fail(f"{source_name}'s fetch never reached its base URL: it must build its URL "
                    f"from settings.base_url({source_name!r}, ...)")

    # The run finishes in time and the healthy sources land.
    assert batch.elapsed < RUN_BUDGET_S, f"refresh took {batch.elapsed:.1f} s"
    assert set(batch.outcomes) == set(batch.faulty + batch.healthy)
    unwell = {s for s in SOURCES  # sources that fail even when healthy: their own cells say so
              if batch_for(batches, fault_server, seeded_warehouse, s, "healthy")
              .outcomes[s].status != "success"}
    for sibling in set(batch.healthy) - unwell:
        sib = batch.outcomes[sibling]
        assert sib.status == "success" and sib.rows_stored > 0, sib
        assert batch.after.sources[sibling].stale == {False}, f"{sibling}'s prices are current"

    # The faulty source's record says what happened, in words.
    outcome = batch.outcomes[source_name]
    assert outcome.status in expect.statuses, outcome
    status, error, attempts, stored = batch.records[source_name]
    assert status == outcome.status
    if expect.attempts == -1:
        assert attempts == 3, outcome
    elif expect.attempts is not None and expect.ok:
        assert expect.attempts <= int(attempts) <= 3, outcome  # type: ignore[call-overload]
    elif expect.attempts is not None:
        assert attempts == expect.attempts, outcome
    assert batch.run_row and batch.run_row[0] in ("completed", "partial", "failed")

    after = batch.after.sources[source_name]
    assert batch.after.seed_hash == seed_state.seed_hash, "a stored observation changed"

    if expect.ok:
        assert error is None and isinstance(stored, int) and stored > 0
        assert after.stale == {False}
        assert after.latest == before.latest, "same prices served again"
    else:
        assert isinstance(error, str) and "\n" not in error and "Traceback" not in error
        reasons = expect.reasons + EXTRA_REASONS.get((source_name, fault), ())
        assert any(reason in error for reason in reasons), error
        assert source_name in str(batch.run_row[1] or ""), "the run record names the source"
        assert stored == 0
        assert batch.new_rows.get(source_name, 0) == 0, "nothing of a failed batch is stored"
        assert after.latest == before.latest, "latest prices are still the good night's"
        assert after.headline == before.headline
        assert after.stale == {True}, "and they are marked stale"

    seen = batch.seen[source_name]
    if fault == "prices_x100":
        checks = batch.quarantine_checks.get(source_name, [])
        assert any("outside the band" in c for c in checks), checks
    if fault == "retry_after429":
        assert seen[0].status == 429
        waited = seen[1].at - seen[0].at
        assert RETRY_AFTER_S - 0.05 <= waited < RETRY_AFTER_S + 2, waited
    if fault in ("http503", "timeout", "truncated"):
        gaps = [b.at - a.at for a, b in itertools.pairwise(seen)]
        assert all(gap < 3 * CLIENT_TIMEOUT_S + 1 for gap in gaps), gaps
    if fault == "huge":
        plan = batch.plans[source_name]
        assert plan.sent_bytes < HUGE_BYTES / 4, "the client stopped early, near its cap"
        growth = batch.rss_growth
        assert growth < RSS_GROWTH_LIMIT, f"RSS grew by {growth / 2**20:.0f} MiB"
    if fault == "replay":
        assert batch.again[source_name].status == "unchanged", batch.again[source_name]
        first, second = batch.before_again, batch.after_again
        assert first and second
        assert second.observations == first.observations, "a replayed capture adds nothing"
        assert second.raw_captures == first.raw_captures
        assert second.sources[source_name].stale == {False}


def test_backoff_is_bounded_and_obeys_retry_after() -> None:
    slept: list[float] = []
    calls = iter([
        FetchError("s", "u", "HTTP 429", transient=True, retry_after_s=3600.0),
        FetchError("s", "u", "HTTP 503", transient=True),
    ])

    def flaky() -> str:
        error = next(calls, None)
        if error:
            raise error
        return "ok"

    assert with_retries(flaky, attempts=3, base_s=0.5, sleep=slept.append) == "ok"
    assert slept == [MAX_BACKOFF_S, 1.0], "Retry-After wins but is capped; then 0.5 * 2"
    assert backoff_s(10, FetchError("s", "u", "x", transient=True), 1.0) == MAX_BACKOFF_S
    with pytest.raises(FetchError, match="HTTP 404"):
        with_retries(lambda: (_ for _ in ()).throw(FetchError("s", "u", "HTTP 404")),
                     sleep=slept.append)
    assert len(slept) == 2, "a permanent error is not retried"
