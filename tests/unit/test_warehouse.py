"""Warehouse: migrations, idempotent append, the guard against bad batches, views, raw archive."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest

from contract import RawCapture, rows_frame
from schemas.observation import batch_rejection
from scrapers.base import SourceDef
from tests.clock import FakeClock
from warehouse.append import SourceInfo, register_sources
from warehouse.archive import archive_path, read_archived
from warehouse.connection import connect, connect_read_only, migrations
from warehouse.ingest import ScrapeOutcome, ingest

TABLES = {"source", "refresh_run", "raw_capture", "scrape_run", "observation", "quarantine",
          "gpu_catalog", "schema_version", "daily_price", "price_change",
          "daily_cheapest_segment", "daily_source", "daily_move", "market_price",
          "market_provider_price"}
VIEWS = {"capture_seen", "latest_capture", "source_status", "latest_price",
         "latest_price_all_sources", "source_disagreement", "unknown_gpu", "daily_cheapest",
         "price_move"}


def parse_rows(raw: RawCapture) -> Any:
    return rows_frame(json.loads(raw.body)["rows"])


def make_source(name: str, tmp_path: Path, *, aggregator: bool = False) -> SourceDef:
    return SourceDef(name=name, provider="acme", kind="catalog" if aggregator else "api",
                     url=f"https://{name}.example/prices", example=tmp_path / "unused",
                     example_as_of="2025-06-10", fetch_fn=None, parse_fn=parse_rows,
                     aggregator=aggregator)


def offer(offering: str, price: float, *, gpu: str = "H100 SXM", count: float = 1.0,
          gpu_only: bool = False, pricing: str = "on_demand") -> dict[str, Any]:
    return {"provider": "acme", "offering": offering, "gpu_name": gpu, "gpu_count": count,
            "region": "us-east", "pricing": pricing, "price_usd_per_hour": price,
            "gpu_only": gpu_only}


def capture(source: str, day: int, rows: list[dict[str, Any]]) -> RawCapture:
    return RawCapture(source=source, url=f"https://{source}.example/prices",
                      fetched_at=datetime(2025, 6, day, 2, 0, tzinfo=UTC),
                      body=json.dumps({"rows": rows}).encode())


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = connect(tmp_path / "w.duckdb")
    yield connection
    connection.close()


def land(con: duckdb.DuckDBPyConnection, source: SourceDef, raw: RawCapture,
         tmp_path: Path, run: str) -> ScrapeOutcome:
    return ingest(con, source, raw, run_id=run, archive_root=tmp_path / "raw")


def count(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    row = con.execute(sql).fetchone()
    assert row is not None
    return int(row[0])


def test_migrations_create_every_table_and_view_once(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    connect(path).close()
    con = connect(path)  # reopening applies nothing twice
    names = dict(con.execute(
        "SELECT table_name, table_type FROM information_schema.tables").fetchall())
    assert {n for n, t in names.items() if t == "BASE TABLE"} >= TABLES
    assert {n for n, t in names.items() if t == "VIEW"} >= VIEWS
    assert count(con, "SELECT count(*) FROM schema_version") == len(migrations())
    assert count(con, "SELECT count(*) FROM gpu_catalog WHERE gpu_model = 'H100 SXM'") == 1
    con.close()
    reader = connect_read_only(path)
    with pytest.raises(duckdb.Error):
        reader.execute("DELETE FROM observation")
    reader.close()


def test_a_writer_runs_on_the_threads_it_asks_for(tmp_path: Path) -> None:
    """connect(threads=n) sets DuckDB's worker threads of a file's or memory warehouse's
    writer (a refresh asks for REFRESH_THREADS); fewer than one is refused before any open."""
    default = duckdb.connect().execute("SELECT current_setting('threads')").fetchone()
    for path in (tmp_path / "w.duckdb", ":memory:"):
        con = connect(path, threads=1)
        assert con.execute("SELECT current_setting('threads')").fetchone() == (1,)
        con.close()
        con = connect(path)
        assert con.execute("SELECT current_setting('threads')").fetchone() == default
        con.close()
    with pytest.raises(ValueError, match="threads must be at least 1, not 0"):
        connect(tmp_path / "other.duckdb", threads=0)
    assert not (tmp_path / "other.duckdb").exists()


@pytest.mark.parametrize(("roles", "opens"), [
    # a reader for 3 s, then named by DuckDB just as it closes (no lock table shows it any
    # more): looked at again for GONE_HOLDER_WAIT_S from then, although the wait began 3 s ago
    (["reader"] * 15 + [None] * 3, True),
    # a holder no lock table shows, for longer than GONE_HOLDER_WAIT_S: given up
    ([None] * 30, False),
    # another writer, and no wait asked for: given up at once
    (["writer"], False),
])
def test_a_writer_waits_for_the_holder_it_was_told_about(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, roles: list[str | None],
        opens: bool) -> None:
    import warehouse.connection as connection
    from warehouse.errors import WarehouseBusy

    clock, pending, real = FakeClock(now=0.0), iter(roles), connection._open

    def busy_then_open(path: Path, **kwargs: Any) -> duckdb.DuckDBPyConnection:
        role = next(pending, "free")
        if role == "free":
            return real(path, **kwargs)
        raise WarehouseBusy(f"held by a {role}", role)

    monkeypatch.setattr(connection, "time", clock)
    monkeypatch.setattr(connection, "_open", busy_then_open)
    if opens:
        connect(tmp_path / "w.duckdb").close()
        assert clock.now == pytest.approx(0.2 * len(roles))
    else:
        with pytest.raises(WarehouseBusy):
            connect(tmp_path / "w.duckdb")
        assert clock.now <= connection.GONE_HOLDER_WAIT_S + 0.2


def test_the_same_capture_twice_is_unchanged(con: duckdb.DuckDBPyConnection,
                                             tmp_path: Path) -> None:
    source = make_source("acme", tmp_path)
    raw = capture("acme", 10, [offer("h100", 2.5), offer("t4", 0.5, gpu="T4")])
    first = land(con, source, raw, tmp_path, "run-1")
    second = land(con, source, raw, tmp_path, "run-2")
    assert (first.status, first.rows_stored) == ("success", 2)
    assert (second.status, second.rows_stored) == ("unchanged", 0)
    assert count(con, "SELECT count(*) FROM observation") == 2
    assert count(con, "SELECT count(*) FROM raw_capture") == 1
    assert count(con, "SELECT count(*) FROM scrape_run") == 2


def test_batch_guard_rejects_wipe_outs(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    source = make_source("acme", tmp_path)
    ten = [offer(f"h100-{i}", 2.0 + i / 10) for i in range(10)]
    assert land(con, source, capture("acme", 10, ten), tmp_path, "run-1").status == "success"
    four = land(con, source, capture("acme", 11, ten[:4]), tmp_path, "run-2")
    assert four.status == "rejected" and "only 4 rows against 10" in (four.error or "")
    empty = land(con, source, capture("acme", 12, []), tmp_path, "run-3")
    assert empty.status == "rejected" and "zero rows" in (empty.error or "")
    six = land(con, source, capture("acme", 13, ten[:6]), tmp_path, "run-4")
    assert six.status == "success"  # lost fewer than half: a real change, accepted
    assert count(con, "SELECT count(*) FROM observation") == 16
    assert batch_rejection(5, 10) is None and batch_rejection(4, 10) is not None


def test_archive_holds_the_payload_named_by_its_hash(con: duckdb.DuckDBPyConnection,
                                                     tmp_path: Path) -> None:
    raw = capture("acme", 10, [offer("h100", 2.5)])
    land(con, make_source("acme", tmp_path), raw, tmp_path, "run-1")
    stored = con.execute("SELECT archive_path, size_bytes FROM raw_capture").fetchone()
    assert stored is not None
    relative, size = stored
    assert relative == str(archive_path(raw.capture_id))
    assert Path(relative).name == f"{raw.capture_id}.gz"
    assert size == len(raw.body)
    assert read_archived(tmp_path / "raw", relative) == raw.body


def test_views_on_a_two_night_history(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    direct = make_source("acme", tmp_path)
    aggregator = make_source("agg", tmp_path, aggregator=True)
    register_sources(con, [SourceInfo("acme", "acme", "api", direct.url, False),
                           SourceInfo("agg", "*", "catalog", aggregator.url, True)])
    night1 = [offer("h100", 2.5), offer("t4", 0.5, gpu="T4"),
              offer("t4 x1 (GPU only)", 0.2, gpu="T4", gpu_only=True)]
    night2 = [offer("h100", 2.0), offer("t4", 0.5, gpu="T4"),
              offer("t4 x1 (GPU only)", 0.2, gpu="T4", gpu_only=True)]
    land(con, direct, capture("acme", 10, night1), tmp_path, "n1")
    land(con, aggregator, capture("agg", 10, [offer("h100", 9.0)]), tmp_path, "n1")
    land(con, direct, capture("acme", 11, night2), tmp_path, "n2")
    # Night 3 serves night 2's payload again: re-confirmed, nothing added.
    assert land(con, direct, capture("acme", 12, night2), tmp_path, "n3").status == "unchanged"

    latest = dict(con.execute(
        "SELECT offering, price_usd_per_hour FROM latest_price WHERE source = 'acme'").fetchall())
    assert latest == {"h100": 2.0, "t4": 0.5, "t4 x1 (GPU only)": 0.2}
    # The aggregator's acme row is hidden where a direct source covers acme ...
    assert count(con, "SELECT count(*) FROM latest_price WHERE source = 'agg'") == 0
    # ... but kept for cross-checks, where it disagrees with the direct price.
    assert count(con, "SELECT count(*) FROM latest_price_all_sources WHERE source = 'agg'") == 1
    disagreement = con.execute(
        "SELECT direct_usd_per_gpu_hour, aggregator_usd_per_gpu_hour "
        "FROM source_disagreement").fetchall()
    assert disagreement == [(2.0, 9.0)]

    daily = con.execute("SELECT day::VARCHAR, offering, price_usd_per_hour FROM daily_price "
                        "WHERE source = 'acme' ORDER BY day, offering").fetchall()
    assert daily == [("2025-06-10", "h100", 2.5), ("2025-06-10", "t4", 0.5),
                     ("2025-06-10", "t4 x1 (GPU only)", 0.2), ("2025-06-11", "h100", 2.0),
                     ("2025-06-11", "t4", 0.5), ("2025-06-11", "t4 x1 (GPU only)", 0.2)]

    changes = con.execute(
        "SELECT changed_on::VARCHAR, previous_day::VARCHAR, offering, old_price_usd_per_hour, "
        "new_price_usd_per_hour, pct_change FROM price_change").fetchall()
    assert changes == [("2025-06-11", "2025-06-10", "h100", 2.5, 2.0, -20.0)]

    cheapest = con.execute(
        "SELECT day::VARCHAR, gpu_model, price_usd_per_gpu_hour, offering FROM daily_cheapest "
        "ORDER BY day, gpu_model").fetchall()
    # The GPU-only T4 at 0.2 never wins a whole-offering ranking; the aggregator's 9.0 H100
    # loses to the direct 2.5.
    assert cheapest == [("2025-06-10", "H100 SXM", 2.5, "h100"), ("2025-06-10", "T4", 0.5, "t4"),
                        ("2025-06-11", "H100 SXM", 2.0, "h100"), ("2025-06-11", "T4", 0.5, "t4")]

    def price_at(ts: str) -> dict[str, float]:
        return dict(con.execute(
            "SELECT offering, price_usd_per_hour FROM observations_at(TIMESTAMPTZ '" + ts + "') "
            "WHERE source = 'acme' AND NOT gpu_only").fetchall())

    assert price_at("2025-06-10 12:00:00+00") == {"h100": 2.5, "t4": 0.5}
    assert price_at("2025-06-11 12:00:00+00") == {"h100": 2.0, "t4": 0.5}
    assert price_at("2025-06-12 12:00:00+00") == {"h100": 2.0, "t4": 0.5}  # re-confirmed
    assert price_at("2025-06-09 12:00:00+00") == {}
    assert count(con, "SELECT count(*) FROM observation WHERE source = 'acme'") == 6


def test_one_source_speaks_per_provider_gpu_and_pricing(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    """Two direct sources (API and page) of one provider: the API's price wins where both list
    a GPU; the page still shows what only it lists; an aggregator fills in nothing here."""
    api = make_source("acme-api", tmp_path)
    page = SourceDef(name="acme-page", provider="acme", kind="page", url="https://acme/p",
                     example=tmp_path / "unused", example_as_of="2025-06-10", fetch_fn=None,
                     parse_fn=parse_rows)
    agg = make_source("catalog", tmp_path, aggregator=True)
    register_sources(con, [SourceInfo(s.name, "*" if s.aggregator else s.provider, s.kind,
                                      s.url, s.aggregator) for s in (api, page, agg)])
    land(con, api, capture("acme-api", 10, [offer("h100-api", 2.0)]), tmp_path, "r1")
    land(con, page, capture("acme-page", 10, [offer("H100 page", 2.2),
                                              offer("L4 page", 0.5, gpu="L4")]), tmp_path, "r1")
    land(con, agg, capture("catalog", 10, [offer("agg-a100", 1.0, gpu="A100 80GB")]),
         tmp_path, "r1")
    rows = con.execute("SELECT source, offering FROM latest_price ORDER BY offering").fetchall()
    assert rows == [("acme-page", "L4 page"), ("acme-api", "h100-api")]
    everything = count(con, "SELECT count(*) FROM latest_price_all_sources")
    assert everything == 4


def test_reference_tables_resync_only_when_files_or_rows_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reopen reads the reference files again only when they (or the code reading them)
    changed, or when the tables' rows no longer are what the last sync wrote."""
    import schemas.reference
    import warehouse.connection

    path = tmp_path / "w.duckdb"
    con = connect(path)
    shipped = con.execute("SELECT count(*) FROM gpu_catalog").fetchone()[0]
    con.close()

    def must_not_load() -> None:
        raise AssertionError("the reference files were read again")

    with monkeypatch.context() as patched:
        patched.setattr(schemas.reference, "load_plans", must_not_load)
        connect(path).close()  # same files, same rows: nothing re-read or rewritten
    con = connect(path)
    con.execute("DELETE FROM gpu_catalog WHERE gpu_model = 'H100 SXM'")
    con.close()
    con = connect(path)  # a row changed behind the sync's back: written again
    assert con.execute("SELECT count(*) FROM gpu_catalog").fetchone()[0] == shipped
    con.close()
    monkeypatch.setattr(warehouse.connection, "_reference_fingerprint",
                        lambda: "reference data edited")
    monkeypatch.setattr(schemas.reference, "load_plans", must_not_load)
    with pytest.raises(AssertionError, match="read again"):
        connect(path)  # the files changed: they are read again


def test_an_upgrade_rebuilds_derived_tables_only_when_a_migration_changes_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import warehouse.connection as connection
    import warehouse.schema as schema
    import warehouse.summaries as summaries

    every = migrations()
    rebuilds: list[int] = []  # the DuckDB threads each rebuild ran on
    monkeypatch.setattr(summaries, "rebuild_committed", lambda con: rebuilds.append(
        con.execute("SELECT current_setting('threads')").fetchone()[0]))
    default = duckdb.connect().execute("SELECT current_setting('threads')").fetchone()[0]

    def upgrade_from(last: int) -> int:
        """A warehouse made at schema version `last`, then opened by this version's refresh
        (one DuckDB thread): a rebuild of the history runs on every thread all the same. The
        older file has no views (this version's read tables it does not have yet)."""
        path = tmp_path / f"at-{last}.duckdb"
        older = [(v, p) for v, p in every if v <= last]
        with monkeypatch.context() as m:
            m.setattr(schema, "migrations", lambda: older)
            m.setattr(connection, "migrations", lambda: older)
            m.setattr(connection, "refresh_views", lambda con: None)
            connect(path).close()
        rebuilds.clear()
        con = connect(path, threads=1)
        assert con.execute("SELECT current_setting('threads')").fetchone() == (1,)
        con.close()
        assert set(rebuilds) <= {default}
        return len(rebuilds)

    keeps = [v for v, p in every if "-- derived tables: unchanged"
             in p.read_text(encoding="utf-8").splitlines()]
    assert {14, 15, 16} <= set(keeps)
    assert upgrade_from(15) == 0  # 016 fills daily_move from the tables it is made of
    assert upgrade_from(13) == 0  # 014 drops a key: the rows stand
    assert upgrade_from(12) == 1  # 013 adds the index tables
    assert schema.needs_rebuild([12, 14]) and not schema.needs_rebuild([14])
