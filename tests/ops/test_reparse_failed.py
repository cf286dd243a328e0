"""Failed captures are kept for reparse: a fixed parser lands them at their own time, once."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

import flows.reparse
from contract import RawCapture
from gpuprices.cli import app
from scrapers.base import SourceDef
from scrapers.registry import all_sources, get_source
from warehouse.connection import open_warehouse
from warehouse.ingest import ingest
from warehouse.reparse import failed_captures, reparse_captures

VASTAI = get_source("vastai")
JUNE = [datetime(2025, 6, day, 3, 0, tzinfo=UTC) for day in range(1, 6)]


def offer(offer_id: int, gpu: str, price: float, bid: float) -> dict[str, object]:
    return {"id": offer_id, "gpu_name": gpu, "num_gpus": 1, "gpu_ram": 24576,
            "dph_base": price, "dph_total": price, "min_bid": bid, "geolocation": "Oslo, NO",
            "rentable": True, "rented": False, "cpu_cores_effective": 8.0, "cpu_ram": 32768}


def offers(*items: dict[str, object]) -> list[dict[str, object]]:
    return list(items)


KNOWN = json.dumps({"offers": offers(offer(11, "RTX 4090", 0.41, 0.22),
                                     offer(12, "RTX 3090", 0.23, 0.12))}).encode()
# The API's next shape: offers moved under data.bundles (the parser of the day rejects it).
NEW_SHAPE = json.dumps({"data": {"bundles": offers(offer(11, "RTX 4090", 0.39, 0.21),
                                                   offer(12, "RTX 3090", 0.22, 0.11),
                                                   offer(13, "RTX 4090", 0.44, 0.25))}}).encode()
# Read by a parser that stored the bid as a second on-demand price: a suspect layout.
MISREAD = json.dumps({"offers": offers(offer(11, "RTX 4090", 0.37, 0.20),
                                       offer(12, "RTX 3090", 0.21, 0.10))}).encode()
UNREADABLE = b"<html><body>maintenance</body></html>"


def reads_new_shape(raw: RawCapture) -> pl.DataFrame:
    """The parser fix: accept data.bundles as well."""
    payload = json.loads(raw.body)
    if isinstance(payload, dict) and "data" in payload:
        raw = replace(raw, body=json.dumps({"offers": payload["data"]["bundles"]}).encode())
    return VASTAI.parse(raw)


def bid_as_on_demand(raw: RawCapture) -> pl.DataFrame:
    frame = VASTAI.parse(raw)
    return frame.with_columns(pl.lit("on_demand").alias("pricing"))


FIXED = replace(VASTAI, parse_fn=reads_new_shape)


def night(con: duckdb.DuckDBPyConnection, source: SourceDef, body: bytes, at: datetime,
          archive: Path) -> str:
    raw = RawCapture(source="vastai", url=VASTAI.url, fetched_at=at, body=body,
                     content_type="application/json")
    outcome = ingest(con, source, raw, run_id=f"night-{at:%d}", archive_root=archive)
    # As if the run happened that night: its times, not the test's clock.
    con.execute("UPDATE scrape_run SET started_at = ?, finished_at = ? WHERE run_id = ?",
                [at, at + timedelta(minutes=1), f"night-{at:%d}"])
    return outcome.status


def history(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    return con.execute("SELECT observed_at, count(*), round(min(price_usd_per_hour), 2) "
                       "FROM observation GROUP BY ALL ORDER BY ALL").fetchall()


def test_failed_and_suspect_captures_land_at_their_own_time(tmp_path: Path,
                                                            warehouse_path: Path) -> None:
    archive = tmp_path / "raw"
    with open_warehouse(warehouse_path) as con:
        con.execute("INSERT INTO source VALUES ('vastai', 'vastai', 'api', 'x', false)")
        assert night(con, VASTAI, KNOWN, JUNE[0], archive) == "success"
        assert night(con, VASTAI, NEW_SHAPE, JUNE[1], archive) == "failed"  # unknown shape
        assert night(con, VASTAI, NEW_SHAPE, JUNE[2], archive) == "failed"  # same payload
        misread = replace(VASTAI, parse_fn=bid_as_on_demand)
        assert night(con, misread, MISREAD, JUNE[3], archive) == "failed"  # suspect layout
        assert night(con, VASTAI, UNREADABLE, JUNE[4], archive) == "failed"
        suspect = con.execute("SELECT count(*) FROM quarantine WHERE observed_at = ?",
                              [JUNE[3]]).fetchone()
        assert suspect == (4,)
        kept = failed_captures(con, "vastai")
        assert [(c.status, len(c.runs)) for c in kept] == [("failed", 2), ("failed", 1),
                                                           ("failed", 1)]
        assert history(con) == [(JUNE[0], 4, 0.12)]

        results = reparse_captures(con, {"vastai": FIXED}, archive_root=archive)
        assert [(r.was, r.status, r.observed_at, r.rows_before, r.rows_after)
                for r in results] == [
            ("stored", "reparsed", JUNE[0], 4, 4),
            ("failed", "landed", JUNE[1], 0, 6),
            ("failed", "landed", JUNE[3], 0, 4),
            ("failed", "still_failed", JUNE[4], 0, 0),
        ]
        assert results[1].note == "failed capture landed: 6 rows (+1 later runs re-confirmed)"
        assert results[3].note.startswith("parse error: vastai: ") and not results[3].problem
        # Each capture's rows sit at its own night: the fixed reading of the misread night
        # has its bids as interruptible rows (0.10), not as a second on-demand price.
        assert history(con) == [(JUNE[0], 4, 0.12), (JUNE[1], 6, 0.11), (JUNE[3], 4, 0.1)]
        assert con.execute("SELECT count(*) FROM quarantine WHERE observed_at = ?",
                           [JUNE[3]]).fetchone() == (0,)
        # June 3 re-confirmed June 2's payload; the source's current capture is June 4's.
        at_june_3 = con.execute("SELECT observed_at FROM capture_at(?)",
                                [JUNE[2] + timedelta(hours=1)]).fetchone()
        assert at_june_3 == (JUNE[1],)
        assert con.execute("SELECT observed_at FROM latest_capture").fetchone() == (JUNE[3],)
        # Freshness is that of the night the payload was taken, not of the reparse.
        status = con.execute("SELECT last_success_at, stale FROM source_status").fetchone()
        assert status is not None and status[1] is True
        assert JUNE[3] < status[0] < JUNE[3] + timedelta(minutes=2)

        # A second reparse adds nothing: the landed captures are stored ones now.
        rows = con.execute("SELECT count(*) FROM observation").fetchone()
        again = reparse_captures(con, {"vastai": FIXED}, archive_root=archive)
        assert [(r.was, r.status, r.rows_before, r.rows_after) for r in again] == [
            ("stored", "reparsed", 4, 4), ("stored", "reparsed", 6, 6),
            ("stored", "reparsed", 4, 4), ("failed", "still_failed", 0, 0)]
        assert con.execute("SELECT count(*) FROM observation").fetchone() == rows
        # Without the fix nothing is recovered, and nothing is written for it.
        runs = con.execute("SELECT count(*) FROM scrape_run WHERE capture_id = ?",
                           [kept[2].capture_id]).fetchone()
        assert runs == (1,)


def test_reparse_command_lands_a_failed_capture(tmp_path: Path, warehouse_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from contract.settings import load_settings

    archive = load_settings(warehouse=warehouse_path).archive_root
    with open_warehouse(warehouse_path) as con:
        con.execute("INSERT INTO source VALUES ('vastai', 'vastai', 'api', 'x', false)")
        night(con, VASTAI, KNOWN, JUNE[0], archive)
        night(con, VASTAI, NEW_SHAPE, JUNE[1], archive)
    wh = ["-w", str(warehouse_path), "-f", "csv"]
    runner = CliRunner()
    stored_only = runner.invoke(app, ["reparse", "vastai", "--no-failed", *wh])
    assert stored_only.exit_code == 0, stored_only.output
    assert ",failed," not in stored_only.output

    monkeypatch.setattr(flows.reparse, "all_sources", lambda: {**all_sources(),
                                                              "vastai": FIXED})
    fixed = runner.invoke(app, ["reparse", "vastai", *wh])
    assert fixed.exit_code == 0, fixed.output
    assert ",failed,landed,0,6,0,failed capture landed: 6 rows" in fixed.output
    with open_warehouse(warehouse_path) as con:
        assert history(con) == [(JUNE[0], 4, 0.12), (JUNE[1], 6, 0.11)]
        # The market tables were brought up for the landed day (by the landing append itself).
        market = con.execute("SELECT day, min_usd_per_gpu_hour FROM market_price "
                             "WHERE segment = 'all' AND gpu_model = 'RTX 4090' ORDER BY day"
                             ).fetchall()
        # (min: the lowest counted offer, 0.39 of 0.39 and 0.44 on June 2)
        assert market[:2] == [(JUNE[0].date(), pytest.approx(0.41)),
                              (JUNE[1].date(), pytest.approx(0.39))]
