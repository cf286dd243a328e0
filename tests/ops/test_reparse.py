"""Re-parse after a parser fix: a capture's rows are swapped in place, history stays dated."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl

from contract import RawCapture
from flows.reparse import reparse
from schemas.observation import to_observations, validate
from scrapers.registry import get_source
from warehouse.connection import open_warehouse
from warehouse.ingest import ingest

OBSERVED = datetime(2025, 6, 12, 8, 0, tzinfo=UTC)


def buggy_parse(raw: RawCapture) -> pl.DataFrame:
    """The bug being fixed: prices read 10x too high."""
    good = get_source("vastai").parse(raw)
    return good.with_columns(pl.col("price_usd_per_hour") * 10)


def test_reparse_swaps_a_capture_in_place(tmp_path: Path, warehouse_path: Path) -> None:
    vastai = get_source("vastai")
    raw = vastai.example_capture(fetched_at=OBSERVED)
    expected = vastai.parse(raw)
    archive = tmp_path / "raw"
    with open_warehouse(warehouse_path) as con:
        con.execute("INSERT INTO source VALUES ('vastai', 'vastai', 'api', 'x', false)")
        outcome = ingest(con, replace(vastai, parse_fn=buggy_parse), raw, run_id="night-1",
                         archive_root=archive)
        assert outcome.status == "success"
        stored_before = con.execute("SELECT count(*) FROM observation").fetchone()
        # The 10x prices fail the plausible-price band: fewer good rows than the fixed parser.
        assert stored_before is not None and stored_before[0] < expected.height

        results = reparse(con, archive_root=archive, source="vastai")
        assert [(r.status, r.rows_before, r.rows_after) for r in results] == [
            ("reparsed", stored_before[0], results[0].rows_after)]
        fixed = con.execute("SELECT offering, pricing, price_usd_per_hour, observed_at, run_id "
                            "FROM observation ORDER BY ALL").pl()
        want = validate(to_observations(expected, raw, "check")).good
        assert sorted(fixed["price_usd_per_hour"].to_list()) == sorted(
            want["price_usd_per_hour"].to_list())
        assert set(fixed["observed_at"].to_list()) == {OBSERVED}  # same place in history
        assert fixed["run_id"].str.starts_with("reparse-").all()
        assert con.execute("SELECT count(*) FROM quarantine").fetchone() == (
            results[0].rows_quarantined,)
        # Views still use that capture; its run now counts the rows actually stored.
        latest = con.execute("SELECT capture_id, latest_rows, observed_at FROM latest_capture "
                             "WHERE source = 'vastai'").fetchone()
        assert latest == (raw.capture_id, fixed.height, OBSERVED)
        assert con.execute("SELECT count(*) FROM latest_price").fetchone() == (fixed.height,)
        recorded = con.execute(
            "SELECT r.flow, r.status, s.status, s.note FROM refresh_run r JOIN scrape_run s "
            "ON s.run_id LIKE r.run_id || ':%' WHERE r.flow = 'reparse'").fetchall()
        assert recorded == [("reparse", "completed", "reparsed",
                             f"reparse of {raw.capture_id}: {stored_before[0]} -> "
                             f"{fixed.height} rows")]
        # Freshness is not faked by a re-parse: last_success_at is still the night's run.
        status = con.execute("SELECT last_status FROM source_status WHERE source = 'vastai'"
                             ).fetchone()
        assert status == ("reparsed",)

        # Filters: nothing observed since a later date; a second re-parse changes nothing.
        assert reparse(con, archive_root=archive, since=date(2025, 6, 13)) == []
        again = reparse(con, archive_root=archive, source="vastai")
        assert [(r.rows_before, r.rows_after) for r in again] == [(fixed.height,
                                                                   fixed.height)]

