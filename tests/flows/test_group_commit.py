"""Landings commit in groups (flows.refresh_work.Writer, warehouse.ingest.land_group): a group
stores exactly what landing each capture alone stores, and one bad capture keeps no other out."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

import flows.refresh_work as work
import warehouse.ingest as ingest
from flows.refresh_work import Writer, source_infos
from scrapers.registry import all_sources
from tests.unit.test_perf_tables import assert_summaries_equal_a_rebuild, table
from warehouse.append import register_sources
from warehouse.connection import REFRESH_THREADS, connect
from warehouse.ingest import Landing, ScrapeOutcome, land, land_group
from warehouse.summaries import SUMMARY_TABLES

DAY_ONE = datetime(2026, 11, 20, 9, tzinfo=UTC)
# direct sources of several providers, and two aggregators (per-provider parts, volume gates)
FIRST = ["lambda", "runpod", "vastai", "skypilot-catalog", "ec2instances"]
SECOND = [*FIRST, "aws", "modal"]  # the first five again (unchanged: re-confirmed) and two new


def _landings(names: list[str], at: datetime) -> list[Landing]:
    sources = all_sources()
    return [Landing(sources[n], sources[n].example_capture(at + timedelta(minutes=i)), None,
                    started_at=at) for i, n in enumerate(names)]


def _warehouse(path: Path) -> duckdb.DuckDBPyConnection:
    con = connect(path)
    register_sources(con, source_infos(all_sources()))
    return con


def _stored(con: duckdb.DuckDBPyConnection) -> dict[str, object]:
    runs = con.execute("SELECT source, status, rows_stored, rows_quarantined, capture_id "
                       "FROM scrape_run ORDER BY ALL").fetchall()
    counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()
              for t in ("observation", "quarantine", "raw_capture", "provider_capture",
                        "screen_market")}
    return {"runs": runs, "counts": counts,
            **{t: table(con, t) for t in SUMMARY_TABLES if t != "market_price"},
            "market_price": table(con, "market_price").drop("computed_at", strict=False)}


def _same(left: dict[str, object], right: dict[str, object]) -> None:
    assert left.keys() == right.keys()
    for key, value in left.items():
        other = right[key]
        assert value.equals(other) if hasattr(value, "equals") else value == other, key


def test_a_group_stores_what_each_capture_landed_alone_stores(tmp_path: Path) -> None:
    grouped, alone = _warehouse(tmp_path / "grouped.duckdb"), _warehouse(tmp_path / "alone.duckdb")
    day_two = DAY_ONE + timedelta(days=1)
    nights = [lambda: _landings(FIRST, DAY_ONE),
              # a night that also brings a capture of the day before (it lands behind)
              lambda: [*_landings(SECOND, day_two), *_landings(["gcp"], DAY_ONE)]]
    for night, landings in enumerate(nights):
        run_id = f"night-{night}"
        together = land_group(grouped, landings(), run_id=run_id, archive_root=tmp_path / "raw")
        one_by_one = [land(alone, x.source, x.raw, None, run_id=run_id,
                           archive_root=tmp_path / "raw", started_at=x.started_at)
                      for x in landings()]
        assert [(o.source, o.status, o.rows_stored) for o in together] == \
            [(o.source, o.status, o.rows_stored) for o in one_by_one]
    assert {o.status for o in together[:len(FIRST)]} == {"unchanged"}
    assert all(o.status == "success" and o.rows_stored for o in together[len(FIRST):])
    _same(_stored(grouped), _stored(alone))
    assert_summaries_equal_a_rebuild(grouped)


def test_a_capture_twice_in_one_group_lands_once(tmp_path: Path) -> None:
    con = _warehouse(tmp_path / "w.duckdb")
    twice = _landings(["lambda"], DAY_ONE) * 2
    outcomes = land_group(con, twice, run_id="r", archive_root=tmp_path / "raw")
    assert [o.status for o in outcomes] == ["success", "unchanged"]
    assert con.execute("SELECT count(*) FROM raw_capture").fetchone() == (1,)
    assert con.execute("SELECT count(*) FROM observation").fetchone() == \
        (outcomes[0].rows_stored,)


def test_a_group_that_fails_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    con = _warehouse(tmp_path / "w.duckdb")
    _break_landing_of("vastai", "disk full", monkeypatch)
    with pytest.raises(RuntimeError, match="disk full"):
        land_group(con, _landings(FIRST, DAY_ONE), run_id="r", archive_root=tmp_path / "raw")
    for name in ("observation", "scrape_run", "raw_capture", *SUMMARY_TABLES):
        assert con.execute(f"SELECT count(*) FROM {name}").fetchone() == (0,), name


def _break_landing_of(name: str, error: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Landing `name`'s capture raises RuntimeError(error); every other lands as usual."""
    real = ingest._land_once

    def breaks(con: duckdb.DuckDBPyConnection, source: object, *args: object,
               **kwargs: object) -> ScrapeOutcome:
        if getattr(source, "name", "") == name:
            raise RuntimeError(error)
        return real(con, source, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ingest, "_land_once", breaks)


def _land_in_threads(writer: Writer, landings: list[Landing]) -> dict[str, object]:
    """Every landing from its own thread, queued while another write holds the writer's turn
    (so they meet in one group); each thread's outcome or exception."""
    results: dict[str, object] = {}

    def one(landing: Landing) -> None:
        try:
            results[landing.source.name] = writer.land(landing)
        except Exception as exc:
            results[landing.source.name] = exc

    threads = [threading.Thread(target=one, args=(x,)) for x in landings]
    with writer.alone():  # another source's write is under way
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while writer.waiting() < len(landings) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert writer.waiting() == len(landings)
    for thread in threads:
        thread.join(timeout=60)
    return results


def test_landings_that_wait_for_the_writer_commit_together(tmp_path: Path) -> None:
    con = _warehouse(tmp_path / "w.duckdb")
    writer = Writer(con, run_id="r", archive_root=tmp_path / "raw")
    results = _land_in_threads(writer, _landings(FIRST, DAY_ONE))
    assert writer.commits == 1  # one group, one commit
    assert {n: o.status for n, o in results.items()} == dict.fromkeys(FIRST, "success")
    stored = dict(con.execute("SELECT source, sum(rows_stored) FROM scrape_run "
                              "GROUP BY source").fetchall())
    assert stored == {n: o.rows_stored for n, o in results.items()}
    assert_summaries_equal_a_rebuild(con)


def test_one_bad_landing_keeps_no_other_out(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    con = _warehouse(tmp_path / "w.duckdb")
    _break_landing_of("vastai", "vastai: a bug in its landing", monkeypatch)
    writer = Writer(con, run_id="r", archive_root=tmp_path / "raw")
    results = _land_in_threads(writer, _landings(FIRST, DAY_ONE))
    assert writer.commits == 0  # the group failed; each landed alone
    assert isinstance(results.pop("vastai"), RuntimeError)  # its own thread's error
    assert {n: o.status for n, o in results.items()} == \
        {n: "success" for n in FIRST if n != "vastai"}
    landed = {s for (s,) in con.execute("SELECT DISTINCT source FROM observation").fetchall()}
    assert "vastai" not in landed
    assert {"lambda", "runpod"} <= landed
    assert_summaries_equal_a_rebuild(con)


def test_a_refresh_lands_every_source_through_the_writer(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The plain refresh path: each source's outcome is its own, whichever thread landed it;
    the writer's DuckDB runs on REFRESH_THREADS threads."""
    from contract.settings import load_settings

    groups: list[int] = []
    threads: set[int] = set()
    real = work.land_group

    def counting(con: duckdb.DuckDBPyConnection, landings: list[Landing],
                 **kwargs: object) -> list[ScrapeOutcome]:
        groups.append(len(landings))
        threads.add(con.execute("SELECT current_setting('threads')").fetchone()[0])
        return real(con, landings, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(work, "land_group", counting)
    monkeypatch.setenv("GPUPRICES_ARCHIVE", str(tmp_path / "raw"))
    settings = load_settings(warehouse=tmp_path / "w.duckdb")
    outcomes = work.run_refresh(settings, source_names=FIRST, offline=True)
    assert [o.source for o in outcomes] == FIRST
    assert all(o.status == "success" for o in outcomes)
    con = connect(tmp_path / "w.duckdb")
    assert sum(groups) <= len(FIRST)
    assert threads == {REFRESH_THREADS} == {1}
    assert con.execute("SELECT count(DISTINCT source) FROM observation").fetchone() == \
        (len(FIRST),)
    assert_summaries_equal_a_rebuild(con)
