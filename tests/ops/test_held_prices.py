"""A read snapshot's held current prices (warehouse.held_prices): the rows its publisher
stored answer exactly as `current_price_at` would over the same file, at every moment of
their span, and only from a snapshot whose seal holds; outside the span, or from any other
file, the macro answers. Over the demo warehouse (`backfill examples` + `refresh --offline`),
which has aggregators, held provider parts and prices announced for 2030-07-01."""

from __future__ import annotations

import logging
import shutil
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

import warehouse.snapshot
from tests.reports.test_demo_history import demo_warehouse
from warehouse import held_prices
from warehouse.connection import open_warehouse, reading
from warehouse.held_prices import TABLE, held_current_prices
from warehouse.semantic import Prices, offers_query
from warehouse.snapshot import read_path

MICRO = timedelta(microseconds=1)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("held-prices") / "gpu_prices.duckdb"
    demo_warehouse(path, datetime.now(UTC))
    return path


def _span(con: duckdb.DuckDBPyConnection) -> tuple[datetime, datetime | None]:
    span = held_prices._span_of(con)
    assert span is not None
    return span


def _refuse(con: duckdb.DuckDBPyConnection) -> None:
    raise duckdb.IOException("disk full")


def _macro(con: duckdb.DuckDBPyConnection, as_of: datetime) -> list[tuple[object, ...]]:
    return con.execute("SELECT * FROM current_price_at($as_of) ORDER BY ALL",
                       {"as_of": as_of}).fetchall()


def _held(con: duckdb.DuckDBPyConnection, as_of: datetime) -> list[tuple[object, ...]]:
    sql = held_current_prices(con, as_of)
    assert sql is not None, as_of
    return con.execute(f"SELECT * FROM {sql} ORDER BY ALL", {"as_of": as_of}).fetchall()


def test_the_held_rows_are_the_macros_at_every_moment_of_their_span(demo: Path) -> None:
    with reading(demo) as con:
        taken_at, until = _span(con)
        assert taken_at == con.execute(
            "SELECT max(observed_at) FROM scrape_run").fetchone()[0]  # nothing stamped later
        assert until == datetime(2030, 7, 1, tzinfo=UTC)  # nebius's announced prices
        columns = [c[0] for c in con.execute(
            "DESCRIBE SELECT * FROM current_price_at(now())").fetchall()]
        stale = columns.index("stale")
        moments = [taken_at, taken_at + timedelta(hours=1), taken_at + timedelta(hours=47),
                   taken_at + timedelta(hours=49), taken_at + timedelta(days=400), until - MICRO]
        for as_of in moments:
            rows = _held(con, as_of)
            assert rows == _macro(con, as_of) and len(rows) > 300, as_of
        # the two columns of the moment are computed again: fresh, then every row stale
        assert not any(r[stale] for r in _held(con, taken_at))
        assert all(r[stale] for r in _held(con, taken_at + timedelta(hours=49)))


def test_outside_the_span_the_macro_answers(demo: Path) -> None:
    with reading(demo) as con:
        taken_at, until = _span(con)
        assert until is not None
        assert held_current_prices(con, taken_at - MICRO) is None  # an earlier moment
        assert held_current_prices(con, until) is None  # the announced prices in force
        assert held_current_prices(con, taken_at.replace(tzinfo=None)) is None
        before, after = (
            dict(con.execute("SELECT offering, price_usd_per_hour FROM current_price_at($t) "
                             "WHERE provider = 'nebius'", {"t": t}).fetchall())
            for t in (until - MICRO, until))
        assert before != after and after["NVIDIA HGX H100"] == 3.4


def test_only_a_sealed_snapshot_is_read_from_its_table(demo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(read_path(demo), copy)
    now = datetime.now(UTC)
    with duckdb.connect(str(copy)) as con:  # its held rows changed: they must never answer
        con.execute(f"UPDATE {TABLE} SET price_usd_per_hour = 0.01")
    with reading(copy) as con:  # the file itself, no snapshot: not sealed
        assert con.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0] > 300
        assert held_current_prices(con, now) is None
        sql, params = offers_query(con, now)
        assert "current_price_at" in sql
        assert con.execute(f"SELECT min(price_usd_per_hour) FROM ({sql})",
                           params).fetchone()[0] > 0.01
    with duckdb.connect(str(read_path(demo)), read_only=True) as con:  # not opened by us
        assert held_current_prices(con, now) is None


def test_the_offers_and_a_held_set_read_the_same_rows_either_way(demo: Path,
                                                                  tmp_path: Path) -> None:
    now = datetime.now(UTC)
    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(read_path(demo), copy)
    with reading(demo) as held, reading(copy) as asked:
        sql, _ = offers_query(held, now)
        assert TABLE in sql and "current_price_at" not in sql
        prices = Prices(held, now, hold_current=True)
        other = Prices(asked, now, hold_current=True)
        for pricing in (("on_demand",), ("spot", "community"), ("on_demand", "reserved")):
            assert prices.offers(pricing).equals(other.offers(pricing)), pricing
        assert held.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary"
                            ).fetchone() == (0,)  # nothing held again
        assert asked.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary"
                             ).fetchone() == (1,)


def test_a_span_that_cannot_be_read_is_not_trusted(demo: Path, tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    copy = tmp_path / "copy.duckdb"
    shutil.copyfile(read_path(demo), copy)
    with duckdb.connect(str(copy)) as con:
        con.execute(f"COMMENT ON TABLE {TABLE} IS '{{\"taken_at\": \"yesterday\"}}'")
    with duckdb.connect(str(copy), read_only=True) as con, caplog.at_level(logging.WARNING):
        held_prices.trust(con)
        assert held_current_prices(con, datetime.now(UTC)) is None
    assert "held current prices of this snapshot are not read" in caplog.text


def test_a_snapshot_that_cannot_hold_them_is_published_as_copied(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "w.duckdb"
    monkeypatch.setattr(warehouse.snapshot, "store_current_prices", _refuse)
    with caplog.at_level(logging.WARNING), open_warehouse(path) as con:
        con.execute("SELECT 1")
    assert "the snapshot g000001.duckdb holds no current prices: disk full" in caplog.text
    assert not Path(f"{read_path(path)}.wal").exists()
    with reading(path) as con:
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?",
                           [TABLE]).fetchone() == (0,)
        assert held_current_prices(con, datetime.now(UTC)) is None
        assert con.execute("SELECT count(*) FROM current_price_at(now())").fetchone() == (0,)


def test_a_warehouse_made_from_a_snapshot_never_publishes_its_held_rows(
        demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "w.duckdb"
    shutil.copyfile(read_path(demo), path)  # someone's warehouse, from a copy of a snapshot
    with duckdb.connect(str(path)) as con:
        con.execute(f"UPDATE {TABLE} SET price_usd_per_hour = 0.01")
    monkeypatch.setattr(warehouse.snapshot, "store_current_prices", _refuse)
    with open_warehouse(path) as con:  # a write, whose snapshot cannot hold its own rows
        con.execute("SELECT 1")
    with reading(path) as con:
        assert held_current_prices(con, datetime.now(UTC)) is None
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?",
                           [TABLE]).fetchone() == (0,)
    with duckdb.connect(str(path), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?",
                           [TABLE]).fetchone() == (0,)


def test_an_empty_warehouse_holds_nothing_and_reads_the_macro(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    with open_warehouse(path) as con:
        con.execute("SELECT 1")
    with reading(path) as con:
        assert held_current_prices(con, datetime.combine(date.today(), datetime.min.time(),
                                                         UTC)) is None



def test_a_lake_published_from_the_snapshot_gets_no_held_prices(demo: Path,
                                                                tmp_path: Path) -> None:
    from warehouse.lake import publish

    catalog = f"ducklake:{tmp_path / 'cat.ducklake'}"
    with reading(demo) as con:
        assert con.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0] > 300
    published = publish(read_path(demo), catalog)
    assert published.tables["observation"] > 0 and TABLE not in published.tables
    with reading(catalog) as con:
        assert held_current_prices(con, datetime.now(UTC)) is None
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?",
                           [TABLE]).fetchone() == (0,)
