"""History backfill from SkyPilot catalog snapshot folders: dated, deduplicated, idempotent."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import duckdb
import pytest

from flows.backfill import backfill_skypilot
from scrapers.skypilot_history import find_snapshots
from tests.conftest import shared_file
from tests.ops.snapshots import lambda_csv, moving_history, runpod_csv, write_snapshot
from warehouse.connection import open_warehouse


def counts(con: duckdb.DuckDBPyConnection) -> tuple[int, ...]:
    row = con.execute(
        "SELECT (SELECT count(*) FROM observation), (SELECT count(*) FROM scrape_run), "
        "(SELECT count(*) FROM refresh_run), (SELECT count(*) FROM raw_capture)").fetchone()
    assert row is not None
    return tuple(int(v) for v in row)


def test_price_moves_are_dated_and_shown_by_price_change(tmp_path: Path,
                                                         warehouse_path: Path) -> None:
    history = moving_history(tmp_path / "skypilot")
    with open_warehouse(warehouse_path) as con:
        results = backfill_skypilot(con, history, archive_root=tmp_path / "raw")
        assert [(r.day, r.status, r.rows_stored) for r in results] == [
            (date(2024, 1, 1), "success", 8),
            (date(2024, 2, 1), "success", 8),  # runpod's January file carried forward
            (date(2024, 3, 1), "success", 8),  # lambda's February file carried forward
        ]
        changes = con.execute(
            "SELECT changed_on, previous_day, provider, offering, region, "
            "old_price_usd_per_hour, new_price_usd_per_hour, pct_change FROM price_change "
            "ORDER BY changed_on, region").fetchall()
        assert changes == [
            (date(2024, 2, 1), date(2024, 1, 1), "lambda", "gpu_1x_h100_pcie", "us-east-1",
             2.49, 1.99, -20.08),
            (date(2024, 2, 1), date(2024, 1, 1), "lambda", "gpu_1x_h100_pcie", "us-west-1",
             2.49, 1.99, -20.08),
            (date(2024, 3, 1), date(2024, 2, 1), "runpod", "1x_A100-80GB_SECURE", "CA",
             1.99, 1.79, -10.05),
            (date(2024, 3, 1), date(2024, 2, 1), "runpod", "1x_A100-80GB_SECURE", "US",
             1.99, 1.79, -10.05),
        ]
        # Dated at the manifest's commit time, and the newest state has both clouds.
        observed = con.execute("SELECT DISTINCT observed_at::VARCHAR FROM observation "
                               "ORDER BY 1").fetchall()
        assert [o[0] for o in observed] == ["2024-01-01 21:00:00+00", "2024-02-01 21:00:00+00",
                                            "2024-03-01 21:00:00+00"]
        latest = con.execute("SELECT provider, offering, min(price_usd_per_hour) "
                             "FROM latest_price GROUP BY ALL ORDER BY ALL").fetchall()
        assert latest == [("lambda", "gpu_1x_h100_pcie", 1.99),
                          ("lambda", "gpu_8x_a100_80gb_sxm4", 14.32),
                          ("runpod", "1x_A100-80GB_SECURE", 1.79),
                          ("runpod", "1x_RTX4090_SECURE", 0.74)]
        # Point in time: the H100 price as it stood mid-January.
        jan = con.execute(
            "SELECT DISTINCT price_usd_per_hour FROM observations_at(TIMESTAMPTZ "
            "'2024-01-15 00:00:00+00') WHERE offering = 'gpu_1x_h100_pcie'").fetchall()
        assert jan == [(2.49,)]
        before = counts(con)
        again = backfill_skypilot(con, history, archive_root=tmp_path / "raw")
        assert {r.status for r in again} == {"already stored"}
        assert counts(con) == before


def test_identical_snapshots_store_prices_once(tmp_path: Path, warehouse_path: Path) -> None:
    root = tmp_path / "skypilot"
    for day in ("2024-01-31", "2024-02-29", "2024-03-31"):
        write_snapshot(root, "runpod", day, runpod_csv())  # no manifest: dated 00:00 UTC
    with open_warehouse(warehouse_path) as con:
        results = backfill_skypilot(con, root, archive_root=tmp_path / "raw")
        assert [r.status for r in results] == ["success", "unchanged", "unchanged"]
        assert len({r.capture_id for r in results}) == 1
        assert con.execute("SELECT count(*), count(DISTINCT observed_at) FROM observation"
                           ).fetchone() == (4, 1)
        assert con.execute("SELECT count(*) FROM price_change").fetchone() == (0,)
        # The unchanged runs still re-confirm the prices on their dates.
        seen = con.execute("SELECT last_seen_at::VARCHAR FROM capture_seen").fetchone()
        assert seen == ("2024-03-31 00:00:00+00",)


def test_snapshot_discovery_accepts_the_history_folder(tmp_path: Path) -> None:
    write_snapshot(tmp_path / "skypilot", "lambda", "2024-02-29", lambda_csv())
    snapshots = find_snapshots(tmp_path)
    assert [(s.day, list(s.files)) for s in snapshots] == [(date(2024, 2, 29), ["lambda"])]
    with pytest.raises(FileNotFoundError, match=r"no <cloud>/<YYYY-MM-DD>_vms\.csv"):
        find_snapshots(tmp_path / "skypilot" / "lambda")


@pytest.mark.conformance
def test_shared_history_sample(tmp_path: Path, warehouse_path: Path) -> None:
    """The shared sample: 3 identical monthly snapshots of lambda (182 rows) and runpod (480)."""
    root = shared_file("history", "skypilot", "MANIFEST.csv").parent
    with open_warehouse(warehouse_path) as con:
        results = backfill_skypilot(con, root.parent, archive_root=tmp_path / "raw")
        assert [(str(r.day), r.status) for r in results] == [
            ("2024-02-29", "success"), ("2024-03-31", "unchanged"), ("2024-04-23", "unchanged")]
        # 182 lambda rows; runpod's 480 rows give 480 on-demand + 160 spot prices.
        assert results[0].rows_stored == 822 and results[0].rows_quarantined == 0
        per = con.execute("SELECT provider, pricing, count(*) FROM observation GROUP BY ALL "
                          "ORDER BY ALL").fetchall()
        assert per == [("lambda", "on_demand", 182), ("runpod", "on_demand", 480),
                       ("runpod", "spot", 160)]
        # Upstream did not change either file in this window: no moves, correctly.
        assert con.execute("SELECT count(*) FROM price_change").fetchone() == (0,)
        h100 = con.execute(
            "SELECT min(price_usd_per_gpu_hour) FROM "
            "observations_at(TIMESTAMPTZ '2024-04-30 00:00:00+00') "
            "WHERE offering = 'gpu_1x_h100_pcie'").fetchone()
        assert h100 == (2.49,)
        before = counts(con)
        assert {r.status for r in backfill_skypilot(con, root, archive_root=tmp_path / "raw")} \
            == {"already stored"}
        assert counts(con) == before


def test_history_behind_newer_live_data(tmp_path: Path, warehouse_path: Path) -> None:
    """A small old snapshot lands after a big live capture; current prices stay the live ones."""
    from scrapers.registry import get_source
    from warehouse.ingest import ingest

    skypilot = get_source("skypilot")
    live = skypilot.example_capture()
    root = tmp_path / "skypilot"
    write_snapshot(root, "lambda", "2024-02-29", lambda_csv())
    with open_warehouse(warehouse_path) as con:
        con.execute("INSERT INTO source VALUES ('skypilot-catalog', '*', 'catalog', 'x', true)")
        night = ingest(con, skypilot, live, run_id="night", archive_root=tmp_path / "raw")
        assert night.status == "success" and night.rows_stored > 2 * 4
        results = backfill_skypilot(con, root, archive_root=tmp_path / "raw")
        # Not mistaken for a broken response although it has far fewer rows than last night.
        assert [(r.status, r.rows_stored) for r in results] == [("success", 4)]
        assert con.execute("SELECT capture_id FROM latest_capture WHERE source = 'skypilot-catalog'"
                           ).fetchone() == (live.capture_id,)
        old = con.execute("SELECT count(*) FROM "
                          "observations_at(TIMESTAMPTZ '2024-03-01 00:00:00+00')"
                          ).fetchone()
        assert old == (4,)
