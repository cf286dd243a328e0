"""Every source x every fault: a refresh over a warehouse holding one good (72 h old) night.

Each case runs `flows.refresh.run_refresh` (the code path of the Prefect flow) for the faulty
source plus one healthy sibling, against the fault server, and checks that the run finishes,
the sibling lands, the faulty source's run record says what went wrong, nothing stored is
changed or lost, and the latest-price views keep the previous prices, marked stale.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import psutil
import pytest

from flows.refresh import run_refresh
from scrapers.base import FetchError
from scrapers.http import MAX_BACKOFF_S, backoff_s, with_retries
from scrapers.registry import all_sources
from tests.faults.conftest import MAX_BYTES, SEED_RUN_ID, fault_settings
from tests.faults.server import FAULTS, HUGE_BYTES, RETRY_AFTER_S, FaultServer

SOURCES = sorted(all_sources())
RUN_BUDGET_S = 15.0  # one refresh of two sources, whatever the fault
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
    "flaky503": Expect(("success",), attempts=2),
    "retry_after429": Expect(("success",), attempts=2),
    "truncated": Expect(("failed",), ("connection broke mid-response",), attempts=-1),
    "empty": Expect(("failed", "rejected"), FAILED_PARSE, attempts=1),
    "layout": Expect(("failed", "rejected"), FAILED_PARSE, attempts=1),
    "prices_x100": Expect(("rejected",), ("price_in_plausible_band_for_gpu",), attempts=1),
    "garbage": Expect(("failed", "rejected"), FAILED_PARSE, attempts=1),
    "huge": Expect(("failed",), ("byte cap",), attempts=1),
    "replay": Expect(("success",), attempts=1),
}
assert set(EXPECT) == set(FAULTS)


def sibling_of(name: str) -> str | None:
    """A healthy source to run beside the faulty one (the next in name order)."""
    others = [s for s in SOURCES if s != name]
    if not others:
        return None
    later = [s for s in others if s > name]
    return (later or others)[0]


@dataclass(frozen=True, slots=True)
class Snapshot:
    seed_hash: str  # every observation of the good night
    observations: int
    raw_captures: int
    latest: frozenset[tuple[object, ...]]  # (offering, region, pricing, price) of the source
    latest_headline: frozenset[tuple[object, ...]]
    stale: frozenset[bool]


def snapshot(path: Path, source: str) -> Snapshot:
    con = duckdb.connect(str(path), read_only=True)
    try:
        rows = con.execute("SELECT * FROM observation WHERE run_id = ? ORDER BY ALL",
                           [SEED_RUN_ID]).fetchall()
        digest = hashlib.sha256(repr(rows).encode()).hexdigest()
        count = con.execute("SELECT count(*) FROM observation").fetchone()
        captures = con.execute("SELECT count(*) FROM raw_capture").fetchone()
        latest = con.execute(
            "SELECT offering, region, pricing, price_usd_per_hour, stale "
            "FROM latest_price_all_sources WHERE source = ?", [source]).fetchall()
        headline = con.execute(
            "SELECT offering, region, pricing, price_usd_per_hour FROM latest_price "
            "WHERE source = ?", [source]).fetchall()
    finally:
        con.close()
    return Snapshot(digest, int(count[0]) if count else 0, int(captures[0]) if captures else 0,
                    frozenset(r[:4] for r in latest), frozenset(headline),
                    frozenset(bool(r[4]) for r in latest))


def query(path: Path, sql: str, params: list[object]) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def rss() -> int:
    return int(psutil.Process().memory_info().rss)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("source_name", SOURCES)
def test_fault(source_name: str, fault: str, server: FaultServer, night_copy: Path) -> None:
    sources = all_sources()
    source = sources[source_name]
    sibling = sibling_of(source_name)
    server.plan(source, fault)
    if sibling:
        server.plan(sources[sibling], "healthy")
    settings = fault_settings(server, night_copy)
    expect = EXPECT[fault]
    before = snapshot(night_copy, source_name)
    assert before.latest and before.stale == {True}, "the seed night is there and already stale"
    names = [source_name, *([sibling] if sibling else [])]

    rss_before = rss()
    started = time.monotonic()
    run_id = f"fault-{source_name}-{fault}"
    outcomes = {o.source: o for o in run_refresh(settings, source_names=names, run_id=run_id)}
    elapsed = time.monotonic() - started
    rss_growth = rss() - rss_before

    if fault != "refused" and not server.requests_of(source_name):
        if source.kind == "static":
            pytest.skip(f"{source_name} is static: its fetch makes no HTTP request")
        pytest.fail(f"{source_name}'s fetch never reached its base URL: it must build its URL "
                    f"from settings.base_url({source_name!r}, ...)")

    # The run finishes in time, the sibling lands.
    assert elapsed < RUN_BUDGET_S, f"refresh took {elapsed:.1f} s"
    assert set(outcomes) == set(names)
    if sibling:
        sib = outcomes[sibling]
        assert sib.status == "success" and sib.rows_stored > 0, sib
        sib_stale = query(night_copy, "SELECT DISTINCT stale FROM latest_price_all_sources "
                          "WHERE source = ?", [sibling])
        assert sib_stale == [(False,)], "the sibling's fresh prices are current"

    # The faulty source's record says what happened, in words.
    outcome = outcomes[source_name]
    assert outcome.status in expect.statuses, outcome
    record = query(night_copy, "SELECT status, error, attempts, rows_stored FROM scrape_run "
                   "WHERE run_id = ? AND source = ?", [run_id, source_name])
    assert len(record) == 1
    status, error, attempts, stored = record[0]
    assert status == outcome.status
    if expect.attempts is not None:
        assert attempts == (settings.retries if expect.attempts == -1 else expect.attempts)
    run_row = query(night_copy, "SELECT status, note FROM refresh_run WHERE run_id = ?", [run_id])
    assert run_row and run_row[0][0] in ("completed", "partial", "failed")

    after = snapshot(night_copy, source_name)
    assert after.seed_hash == before.seed_hash, "a stored observation changed or vanished"

    if expect.ok:
        assert error is None and stored > 0
        assert after.stale == {False}
        assert after.latest == before.latest, "same prices served again"
    else:
        assert isinstance(error, str) and "\n" not in error and "Traceback" not in error
        assert any(reason in error for reason in expect.reasons), error
        assert source_name in (run_row[0][1] or ""), "the run record names the failed source"
        assert stored == 0
        new_rows = query(night_copy, "SELECT count(*) FROM observation WHERE run_id = ? "
                         "AND source = ?", [run_id, source_name])
        assert new_rows == [(0,)], "nothing from a failed or rejected batch is stored"
        assert after.latest == before.latest, "latest prices are still the good night's"
        assert after.latest_headline == before.latest_headline
        assert after.stale == {True}, "and they are marked stale"

    if fault == "prices_x100":
        checks = query(night_copy, "SELECT DISTINCT failed_check FROM quarantine "
                       "WHERE run_id = ? AND source = ?", [run_id, source_name])
        assert any("price_in_plausible_band_for_gpu" in str(c[0]) for c in checks), checks
    if fault == "retry_after429":
        seen = server.requests_of(source_name)
        assert seen[0].status == 429
        waited = seen[1].at - seen[0].at
        assert RETRY_AFTER_S - 0.05 <= waited < RETRY_AFTER_S + 2, waited
    if fault in ("http503", "timeout", "truncated"):
        seen = server.requests_of(source_name)
        gaps = [b.at - a.at for a, b in itertools.pairwise(seen)]
        assert all(gap < 3 * settings.http.timeout_s + 1 for gap in gaps), gaps
    if fault == "huge":
        plan = server.plans[source_name]
        assert MAX_BYTES <= plan.sent_bytes < HUGE_BYTES, "the client stopped at its cap"
        assert rss_growth < RSS_GROWTH_LIMIT, f"RSS grew by {rss_growth / 2**20:.0f} MiB"
    if fault == "replay":
        first = snapshot(night_copy, source_name)
        again = run_refresh(settings, source_names=[source_name], run_id=f"{run_id}-again")
        assert [o.status for o in again] == ["unchanged"], again
        second = snapshot(night_copy, source_name)
        assert second.observations == first.observations, "a replayed capture adds nothing"
        assert second.raw_captures == first.raw_captures
        assert second.stale == {False}


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
