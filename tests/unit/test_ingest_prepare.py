"""`ingest` = `prepare` (parse + validate, no warehouse) then `land`: the split the refresh flow
uses to parse outside the write lock lands exactly what `ingest` lands."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from contract import RawCapture
from scrapers.vastai import SOURCE
from warehouse.connection import connect
from warehouse.ingest import ingest, land, prepare

ROWS_SQL = "SELECT * EXCLUDE (run_id) FROM observation ORDER BY offering, pricing"


def _raw(body: bytes | None = None) -> RawCapture:
    example = SOURCE.example_capture(datetime(2026, 1, 1, tzinfo=UTC))
    return RawCapture("vastai", example.url, example.fetched_at, body or example.body,
                      example.content_type)


def test_prepare_then_land_stores_what_ingest_stores(tmp_path: Path) -> None:
    raw = _raw()
    one, two = connect(tmp_path / "one.duckdb"), connect(tmp_path / "two.duckdb")
    try:
        direct = ingest(one, SOURCE, raw, run_id="r1", archive_root=tmp_path / "a")
        prepared = prepare(SOURCE, raw, "r1")
        assert prepared.batch is not None and prepared.rows_parsed == direct.rows_parsed
        split = land(two, SOURCE, raw, prepared, run_id="r1", archive_root=tmp_path / "b")
        assert split.status == direct.status == "success"
        assert split.rows_stored == direct.rows_stored > 0
        assert one.execute(ROWS_SQL).pl().equals(two.execute(ROWS_SQL).pl())
        # the same payload again: unchanged, whatever was prepared
        again = land(two, SOURCE, raw, prepare(SOURCE, raw, "r2"), run_id="r2",
                     archive_root=tmp_path / "b")
        assert again.status == "unchanged"
        with pytest.raises(ValueError, match="prepared for run"):
            land(two, SOURCE, raw, prepared, run_id="r3", archive_root=tmp_path / "b")
    finally:
        one.close()
        two.close()


def test_a_parse_error_is_prepared_and_recorded(tmp_path: Path) -> None:
    raw = _raw(b'{"offers": null}')
    prepared = prepare(SOURCE, raw, "r1")
    assert prepared.batch is None and prepared.error and "parse error" in prepared.error
    con = connect(tmp_path / "w.duckdb")
    try:
        outcome = land(con, SOURCE, raw, prepared, run_id="r1", archive_root=tmp_path / "a")
        assert outcome.status == "failed" and outcome.error == prepared.error
        assert con.execute("SELECT count(*) FROM raw_capture").fetchone() == (1,)
    finally:
        con.close()


def test_the_parsers_skips_are_kept_in_the_run_note_and_shown_per_source(
        tmp_path: Path) -> None:
    from scrapers import crusoe
    from warehouse.append import SourceInfo, register_sources

    raw = crusoe.SOURCE.example_capture(datetime(2026, 3, 2, tzinfo=UTC))
    expected = crusoe.SOURCE.parse_report(raw).skips
    assert expected["contact sales"] > 0  # the example has "Contact sales" cells
    prepared = prepare(crusoe.SOURCE, raw, "r1")
    assert prepared.skips == expected
    con = connect(tmp_path / "w.duckdb")
    try:
        register_sources(con, [SourceInfo("crusoe", "crusoe", "page", crusoe.URL, False)])
        outcome = land(con, crusoe.SOURCE, raw, prepared, run_id="r1",
                       archive_root=tmp_path / "a", note="replay of the example")
        assert outcome.status == "success"
        note = con.execute("SELECT note FROM scrape_run WHERE run_id = 'r1'").fetchone()
        assert note == (f"replay of the example; skipped: {expected.describe()}",)
        # The same payload again is not parsed: its note says so, and the per-source view
        # still shows what the last parse skipped.
        land(con, crusoe.SOURCE, raw, None, run_id="r2", archive_root=tmp_path / "a")
        shown = con.execute("SELECT last_status, skipped_last_parse FROM source_status "
                            "WHERE source = 'crusoe'").fetchone()
        assert shown == ("unchanged", expected.describe())
    finally:
        con.close()


def test_a_parse_that_skips_nothing_leaves_the_note_alone(tmp_path: Path) -> None:
    prepared = prepare(SOURCE, _raw(), "r1")
    assert not prepared.skips
    con = connect(tmp_path / "w.duckdb")
    try:
        land(con, SOURCE, _raw(), prepared, run_id="r1", archive_root=tmp_path / "a")
        assert con.execute("SELECT note FROM scrape_run").fetchone() == (None,)
    finally:
        con.close()
