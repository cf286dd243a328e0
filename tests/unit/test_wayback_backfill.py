"""`backfill wayback`: CDX listing, `id_` captures, pacing, retries, idempotency, resumption.

Runs against tests/archive_server.py on 127.0.0.1. Page bodies are our own variations of the
bundled lambda-page example (its layout, our prices) plus a page the parser does not know.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import httpx
import pytest

from contract import HttpSettings
from flows.backfill import backfill_wayback
from scrapers.registry import get_source
from scrapers.wayback import ArchiveClient, ArchivedCapture, Pacer, parse_cdx, pick_every
from tests.archive_server import Archive, Snapshot, serve_archive
from warehouse.connection import open_warehouse

SOURCE = get_source("lambda-page")
OLD_URL = "https://lambdalabs.com/service/gpu-cloud"
NEW_URL = "https://lambda.ai/pricing"
EXAMPLE = SOURCE.example.read_bytes()
# Our own price variation in the page's real layout: 8x H100 SXM at $3.49 instead of $2.99.
OLDER_PRICES = EXAMPLE.replace(b"$2.99", b"$3.49")
UNKNOWN_LAYOUT = (b"<html><body><h1>GPU Cloud</h1><p>Talk to sales for pricing.</p>"
                  b"</body></html>")


def archive_of(**overrides: object) -> Archive:
    archive = Archive(snapshots=[
        Snapshot(OLD_URL, "20240110120000", OLDER_PRICES),
        Snapshot(OLD_URL, "20240112080000", OLDER_PRICES),  # adjacent duplicate: collapsed
        Snapshot(OLD_URL, "20240301090000", UNKNOWN_LAYOUT),
        Snapshot("https://www.lambda.ai/pricing", "20240415101500", EXAMPLE, throttle=1),
        Snapshot(NEW_URL, "20240520000000", OLDER_PRICES),  # a digest seen before
    ])
    for key, value in overrides.items():
        setattr(archive, key, value)
    return archive


def run(base: str, warehouse: Path, *, every: str = "capture", on_progress=None,
        sleeps: list[float] | None = None, **kwargs: object):
    slept = sleeps if sleeps is not None else []
    with httpx.Client() as client, open_warehouse(warehouse) as con:
        archive = ArchiveClient(client, HttpSettings(base_urls={"wayback": base}), retries=3,
                                pacer=Pacer(interval_s=0), sleep=slept.append)
        results = backfill_wayback(con, archive, SOURCE, archive_root=warehouse.parent / "raw",
                                   every=every, on_progress=on_progress, **kwargs)  # type: ignore[arg-type]
        return results, archive.requests


def at(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y%m%d%H%M%S").replace(tzinfo=UTC)


def test_captures_land_at_their_own_times(warehouse_path: Path) -> None:
    archive = archive_of()
    sleeps: list[float] = []
    with serve_archive(archive) as base:
        results, _ = run(base, warehouse_path, sleeps=sleeps)
    assert [(r.key, r.status) for r in results] == [
        ("20240110120000", "success"), ("20240301090000", "failed"),
        ("20240415101500", "success"), ("20240520000000", "unchanged")]
    assert "layout not recognised" in (results[1].error or "")
    assert sleeps == [1.0]  # the 429's Retry-After, honoured once
    fetched = [p for p in archive.requests if p.startswith("/web/")]
    # the repeated digest of 2024-05-20 is read back from the raw archive, never fetched
    assert not any("20240520" in p for p in fetched)
    assert sum("20240415101500id_" in p for p in fetched) == 2  # 429, then the body
    assert all("id_/" in p for p in fetched)
    with open_warehouse(warehouse_path) as con:
        times = {r[0] for r in con.execute(
            "SELECT DISTINCT observed_at FROM observation WHERE source = 'lambda-page'")
            .fetchall()}
        assert times == {at("20240110120000"), at("20240415101500")}
        h100 = "SELECT price_usd_per_gpu_hour FROM observations_at(TIMESTAMPTZ '{}') " \
               "WHERE offering = 'gpu_8x_h100_sxm5'"
        assert con.execute(h100.format("2024-02-01")).fetchone()[0] == pytest.approx(3.49)
        assert con.execute(h100.format("2024-05-01")).fetchone()[0] == pytest.approx(2.99)
        # back to the January page on 2024-05-20: re-confirmed at that time, not stored twice
        assert con.execute(h100.format("2024-06-01")).fetchone()[0] == pytest.approx(3.49)
        failed = con.execute(
            "SELECT s.error, r.archive_path FROM scrape_run s JOIN raw_capture r "
            "USING (capture_id) WHERE s.source = 'lambda-page' AND s.status = 'failed'"
        ).fetchall()
        assert len(failed) == 1 and (warehouse_path.parent / "raw" / failed[0][1]).exists()
        moves = con.execute("SELECT old_price_usd_per_hour, new_price_usd_per_hour FROM "
                            "price_change WHERE offering = 'gpu_8x_h100_sxm5' "
                            "ORDER BY changed_on").fetchall()
        assert moves[0] == (pytest.approx(3.49 * 8), pytest.approx(2.99 * 8))


def test_running_twice_adds_nothing_and_fetches_nothing(warehouse_path: Path) -> None:
    with serve_archive(archive_of()) as base:
        run(base, warehouse_path)
        with open_warehouse(warehouse_path) as con:
            before = con.execute("SELECT count(*) FROM observation").fetchone()
        archive = archive_of()
    with serve_archive(archive) as base:
        results, _ = run(base, warehouse_path)
    assert [r.status for r in results] == ["already stored", "failed", "already stored",
                                           "already stored"]
    assert not any(r.fetched for r in results)  # the failed page is re-read from the archive
    assert [p for p in archive.requests if p.startswith("/web/")] == []
    with open_warehouse(warehouse_path) as con:
        assert con.execute("SELECT count(*) FROM observation").fetchone() == before


def test_an_interrupted_run_resumes(warehouse_path: Path, tmp_path: Path) -> None:
    def stop_after_two(progress, result) -> None:  # type: ignore[no-untyped-def]
        if progress.done == 2:
            raise KeyboardInterrupt  # as a ^C between two captures

    with serve_archive(archive_of()) as base:
        with pytest.raises(KeyboardInterrupt):
            run(base, warehouse_path, on_progress=stop_after_two)
        resumed, _ = run(base, warehouse_path)
        clean_path = tmp_path / "clean" / "gpu_prices.duckdb"
        run(base, clean_path)
    assert [r.status for r in resumed][2:] == ["success", "unchanged"]
    query = ("SELECT observed_at, offering, pricing, price_usd_per_hour FROM observation "
             "ORDER BY ALL")
    with open_warehouse(warehouse_path) as con:
        resumed_rows = con.execute(query).fetchall()
        running = con.execute("SELECT count(*) FROM refresh_run WHERE status = 'running'")
        assert running.fetchone() == (0,)
    with open_warehouse(clean_path) as con:
        assert resumed_rows == con.execute(query).fetchall()


def test_paging_since_until_and_every(warehouse_path: Path) -> None:
    archive = archive_of(page_size=1)
    with serve_archive(archive) as base:
        results, _ = run(base, warehouse_path, every="month", since=date(2024, 3, 1),
                         until=date(2024, 4, 30))
    assert [r.key for r in results] == ["20240301090000", "20240415101500"]
    cdx = [p for p in archive.requests if p.startswith("/cdx/")]
    assert all("from=20240301" in p and "to=20240430" in p for p in cdx)
    assert all("filter=statuscode%3A200" in p and "collapse=digest" in p for p in cdx)
    paged = archive_of(page_size=1)
    with serve_archive(paged) as base:
        results, _ = run(base, warehouse_path.with_name("paged.duckdb"))
    assert len(results) == 4  # every page of both addresses was read
    assert any("resumeKey=1" in p for p in paged.requests)


def test_a_capture_that_keeps_failing_is_retried_next_time(warehouse_path: Path) -> None:
    archive = archive_of(fail_capture={"20240415101500"})
    with serve_archive(archive) as base:
        first, _ = run(base, warehouse_path)
    assert first[2].status == "failed" and "HTTP 503" in (first[2].error or "")
    with serve_archive(archive_of()) as base:
        second, _ = run(base, warehouse_path)
    assert second[2].status == "success" and second[2].fetched


def test_parse_cdx_reads_by_header_and_resume_key() -> None:
    body = (b'[["urlkey","timestamp","original","mimetype","statuscode","digest","length"],'
            b'["ai,lambda)/pricing","20250102030405","https://lambda.ai/pricing","text/html",'
            b'"200","ABC","10"],[],["next-page"]]')
    captures, key = parse_cdx(body)
    assert key == "next-page"
    assert captures[0].observed_at == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert captures[0].raw_path == "/web/20250102030405id_/https://lambda.ai/pricing"


def test_pick_every_keeps_the_first_of_each_period() -> None:
    stamps = ["20250106000000", "20250108000000", "20250114000000", "20250203000000"]
    captures = [ArchivedCapture(s, "u", s) for s in stamps]
    assert [c.timestamp for c in pick_every(captures, "week")] == [stamps[0], stamps[2],
                                                                   stamps[3]]
    assert [c.timestamp for c in pick_every(captures, "month")] == [stamps[0], stamps[3]]


def test_pacer_spaces_requests() -> None:
    now = [0.0]
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    pacer = Pacer(interval_s=1.0, clock=lambda: now[0], sleep=sleep)
    for _ in range(3):
        pacer.wait()
        now[0] += 0.25  # the request itself
    assert waits == [0.75, 0.75]
