"""The Prefect `refresh` flow, offline, into a temporary warehouse (one Prefect API per session)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import duckdb
import pytest

import scrapers.modal
from flows.refresh import refresh

SPINE = ["vastai", "modal", "skypilot"]  # as typed on the command line (alias of skypilot-catalog)
# Rows each bundled example yields (checked by hand in the unit tests):
# vastai 10 offers on demand + 9 with a min_bid; modal 9 GPUs; skypilot 63 over six clouds.
EXPECTED_ROWS = {"vastai": 19, "modal": 9, "skypilot-catalog": 63}


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("GPUPRICES_WAREHOUSE", "GPUPRICES_ARCHIVE", "GPUPRICES_ALERTS",
                 "GPUPRICES_ALERT_URLS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no ./alerts.toml here: alerts stay off
    return tmp_path / "wh" / "gpu_prices.duckdb"


def query(path: Path, sql: str) -> list[tuple[object, ...]]:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(sql).fetchall()


@pytest.mark.slow
def test_offline_refresh_lands_every_spine_source_idempotently(
        prefect_harness: None, isolated: Path) -> None:
    state = refresh(sources=SPINE, offline=True, warehouse=str(isolated), return_state=True)
    assert state.is_completed(), state.message
    rows = dict(query(isolated, "SELECT source, count(*) FROM observation GROUP BY source"))
    assert rows == EXPECTED_ROWS
    runs = query(isolated, "SELECT source, status, rows_stored FROM scrape_run ORDER BY source")
    assert runs == [("modal", "success", 9), ("skypilot-catalog", "success", 63),
                    ("vastai", "success", 19)]
    providers = {p for (p,) in query(isolated, "SELECT DISTINCT provider FROM observation")}
    assert providers == {"vastai", "modal", "lambda", "runpod", "aws", "azure", "gcp",
                         "paperspace"}
    assert query(isolated, "SELECT count(*) FROM quarantine") == [(0,)]
    archived = list((isolated.parent / "raw").rglob("*.gz"))
    assert len(archived) == 3 + 1  # + the ECB daily rates file, replayed first

    again = refresh(sources=SPINE, offline=True, warehouse=str(isolated), return_state=True)
    assert again.is_completed(), again.message
    assert query(isolated, "SELECT count(*) FROM observation") == [(91,)]
    statuses = query(isolated, "SELECT status, count(*) FROM scrape_run GROUP BY status "
                               "ORDER BY status")
    assert statuses == [("success", 3), ("unchanged", 3)]
    assert query(isolated, "SELECT count(*), count(DISTINCT status) FROM refresh_run") == [(2, 1)]


@pytest.mark.slow
def test_a_failing_source_does_not_stop_the_others(
        prefect_harness: None, isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    garbage = isolated.parent.parent / "modal_garbage.html"
    garbage.write_text("<html><body><h1>We moved!</h1></body></html>")
    broken = dataclasses.replace(scrapers.modal.SOURCE, example=garbage)
    monkeypatch.setattr(scrapers.modal, "SOURCE", broken)

    state = refresh(sources=SPINE, offline=True, warehouse=str(isolated), return_state=True)
    assert state.is_failed()
    assert "modal" in (state.message or "") and "1 of 3" in (state.message or "")
    runs = dict(query(isolated, "SELECT source, status FROM scrape_run"))
    assert runs == {"modal": "failed", "vastai": "success", "skypilot-catalog": "success"}
    error = query(isolated, "SELECT error FROM scrape_run WHERE source = 'modal'")[0][0]
    assert "parse error" in str(error) and "layout not recognised" in str(error)
    rows = dict(query(isolated, "SELECT source, count(*) FROM observation GROUP BY source"))
    assert rows == {"vastai": 19, "skypilot-catalog": 63}
    assert query(isolated, "SELECT status, note FROM refresh_run") == [
        ("partial", "failed: modal")]
