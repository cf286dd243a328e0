"""The Prefect `refresh` flow, offline, into a temporary warehouse (one Prefect API per session)."""

from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import Path
from typing import Any
from uuid import UUID

import duckdb
import pytest

import scrapers.modal
from flows.refresh import failure_message, refresh

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


def broken(monkeypatch: pytest.MonkeyPatch, module: object, workdir: Path) -> None:
    """Make `module.SOURCE` replay a page whose layout its parser does not know."""
    source = module.SOURCE  # type: ignore[attr-defined]
    garbage = workdir / f"{source.name}_garbage.html"
    garbage.write_text("<html><body><h1>We moved!</h1></body></html>")
    monkeypatch.setattr(module, "SOURCE", dataclasses.replace(source, example=garbage))


def task_runs_and_logs(flow_run_id: UUID) -> tuple[dict[str, Any], dict[str, list[Any]],
                                                   list[Any]]:
    """Through the Prefect API: the flow run's task runs by name, each one's logs, and the
    flow run's own log lines (those of no task)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterId,
        LogFilter,
        LogFilterFlowRunId,
    )
    from prefect.logging.handlers import APILogHandler

    APILogHandler().flush()  # logs are sent in batches, and stored a little later
    deadline = time.monotonic() + 30
    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(flow_run_filter=FlowRunFilter(
            id=FlowRunFilterId(any_=[flow_run_id])))
        while True:  # the flow's summary line is its last
            logs = client.read_logs(log_filter=LogFilter(
                flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])))
            if any(log.message.startswith("refresh refresh-") for log in logs) \
                    or time.monotonic() > deadline:
                break
            time.sleep(0.5)
    by_task: dict[str, list[Any]] = {r.name: [] for r in runs}
    names = {r.id: r.name for r in runs}
    flow_logs = []
    for log in logs:
        if log.task_run_id in names:
            by_task[names[log.task_run_id]].append(log)
        else:
            flow_logs.append(log)
    return {r.name: r for r in runs}, by_task, flow_logs


@pytest.mark.slow
def test_a_failing_source_is_a_failed_task_and_the_flow_completes(
        prefect_harness: None, isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken(monkeypatch, scrapers.modal, isolated.parent.parent)

    state = refresh(sources=SPINE, offline=True, warehouse=str(isolated), return_state=True)
    assert state.is_completed()  # the rule: Completed while some sources landed
    assert state.message == "1 of 3 sources failed: modal"
    assert failure_message(state) == "1 of 3 sources failed: modal"

    runs, logs, flow_logs = task_runs_and_logs(state.state_details.flow_run_id)
    assert {name: run.state.type.value for name, run in runs.items()} == {
        "scrape-modal": "FAILED", "scrape-vastai": "COMPLETED",
        "scrape-skypilot-catalog": "COMPLETED"}
    assert sorted(runs["scrape-modal"].tags) == ["provider:modal", "source:modal"]
    assert sorted(runs["scrape-skypilot-catalog"].tags) == ["provider:skypilot",
                                                            "source:skypilot-catalog"]
    assert "layout not recognised" in (runs["scrape-modal"].state.message or "")
    modal = [(log.level, log.message) for log in logs["scrape-modal"]]
    assert any(level == logging.ERROR and message.startswith("modal: failed (")
               and "layout not recognised" in message for level, message in modal), modal
    vastai = [log.message for log in logs["scrape-vastai"]]
    assert any(m.startswith("vastai: success, 19 rows stored") for m in vastai), vastai
    summary = [log.message for log in flow_logs if log.message.startswith("refresh ")]
    assert summary and summary[0].endswith("1 of 3 sources failed: modal; 82 rows stored")
    assert not any("TypeError" in log.message for log in flow_logs)

    runs_db = dict(query(isolated, "SELECT source, status FROM scrape_run"))
    assert runs_db == {"modal": "failed", "vastai": "success", "skypilot-catalog": "success"}
    error = query(isolated, "SELECT error FROM scrape_run WHERE source = 'modal'")[0][0]
    assert "parse error" in str(error) and "layout not recognised" in str(error)
    rows = dict(query(isolated, "SELECT source, count(*) FROM observation GROUP BY source"))
    assert rows == {"vastai": 19, "skypilot-catalog": 63}
    assert query(isolated, "SELECT status, note FROM refresh_run") == [
        ("partial", "failed: modal")]


@pytest.mark.slow
def test_every_source_failing_fails_the_flow_with_its_message(
        prefect_harness: None, isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken(monkeypatch, scrapers.modal, isolated.parent.parent)
    state = refresh(sources=["modal"], offline=True, warehouse=str(isolated), return_state=True)
    assert state.is_failed()
    assert state.message == "1 of 1 sources failed: modal"
    assert failure_message(state) == "1 of 1 sources failed: modal"
    runs, _, flow_logs = task_runs_and_logs(state.state_details.flow_run_id)
    assert [r.state.type.value for r in runs.values()] == ["FAILED"]
    assert not any("TypeError" in log.message for log in flow_logs)
    assert query(isolated, "SELECT status FROM refresh_run") == [("failed",)]


@pytest.mark.slow
def test_the_cli_prints_the_same_outcome_with_and_without_prefect(
        prefect_harness: None, isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from gpuprices.cli import app

    broken(monkeypatch, scrapers.modal, isolated.parent.parent)
    args = ["refresh", "--offline", "-s", "vastai", "-s", "modal", "-s", "skypilot",
            "-f", "csv"]
    results = {}
    for way, extra in (("plain", []), ("prefect", ["--prefect"])):
        warehouse = isolated.parent.parent / way / "gpu_prices.duckdb"
        results[way] = CliRunner().invoke(app, [*args, *extra, "-w", str(warehouse)])
    for way, result in results.items():
        assert result.exit_code == 1, (way, result.output)
        lines = result.output.splitlines()
        assert "error: 1 of 3 sources failed: modal" in lines, (way, result.output)
        assert any(line.startswith("modal: https://modal.com/pricing: parse error: modal: "
                                   "layout not recognised") for line in lines), result.output
        assert any(line.startswith("vastai,success,19,19,0,") for line in lines), result.output
