"""The refresh's run policy on both ways of running: one retry layer that stops at the source's
deadline, a bounded number of sources at once, tags per source and provider, settings with
ranges. (The Prefect side of the same policy: test_refresh_flow.py.)"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

import flows.refresh_work as work
from contract import FetchError
from contract.settings import Settings, SettingsError, load_settings
from flows.refresh import source_tags
from gpuprices.cli import app
from scrapers.http import with_retries
from scrapers.registry import all_sources
from tests.clock import FakeClock
from tests.faults.conftest import fault_settings
from tests.faults.server import HANG_S, FaultServer, running
from warehouse.ingest import ScrapeOutcome


def failing(errors: list[FetchError]) -> Any:
    calls = iter(errors)

    def call() -> str:
        error = next(calls, None)
        if error:
            raise error
        return "ok"
    return call


def busy(reason: str = "HTTP 503", retry_after_s: float | None = None) -> FetchError:
    return FetchError("s", "https://example.test/", reason, transient=True,
                      retry_after_s=retry_after_s)


def test_retries_honour_retry_after_and_report_each_wait() -> None:
    clock, told = FakeClock(), []
    call = failing([busy("HTTP 429", retry_after_s=7), busy()])
    assert with_retries(call, attempts=3, base_s=0.5, sleep=clock.sleep, clock=clock,
                        on_retry=lambda n, e, w: told.append((n, e.reason, w))) == "ok"
    assert told == [(1, "HTTP 429", 7.0), (2, "HTTP 503", 1.0)]
    assert clock.now == 108.0


def test_no_retry_waits_past_the_deadline() -> None:
    clock, told = FakeClock(), []
    call = failing([busy(), busy("HTTP 429", retry_after_s=20), busy()])
    with pytest.raises(FetchError, match="HTTP 429"):
        with_retries(call, attempts=5, base_s=1.0, sleep=clock.sleep, clock=clock,
                     deadline=clock.now + 10, on_retry=lambda n, e, w: told.append(w))
    assert told == [1.0], "the 20 s Retry-After would end past the deadline: no second wait"
    assert clock.now == 101.0


@pytest.fixture(scope="module")
def fault_server() -> Iterator[FaultServer]:
    with running() as server:
        yield server


def test_a_hanging_source_gives_up_at_its_timeout(fault_server: FaultServer,
                                                  tmp_path: Path) -> None:
    """The server hangs for HANG_S; the source's 1 s timeout cuts its request short and
    leaves no time for a retry; the error says which limit ended it."""
    fault_server.reset()
    source = all_sources()["vastai"]
    fault_server.plan(source, "timeout")
    settings = dataclasses.replace(fault_settings(fault_server, tmp_path / "w.duckdb"),
                                   source_timeout_s=1.0)
    settings = dataclasses.replace(settings, http=dataclasses.replace(settings.http,
                                                                      timeout_s=30.0))
    started = time.monotonic()
    with httpx.Client() as client, pytest.raises(FetchError) as raised:
        work._fetch(source, client, settings)
    took = time.monotonic() - started
    assert took < HANG_S - 1, f"took {took:.1f} s: the 30 s read timeout was not cut"
    assert "gave up at the source timeout (1 s, GPUPRICES_SOURCE_TIMEOUT_S)" in str(
        raised.value)
    assert raised.value.attempts == 1  # type: ignore[attr-defined]
    assert len(fault_server.requests_of("vastai")) == 1


def test_the_plain_path_runs_at_most_max_workers_sources_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    running_now, peak, lock = 0, 0, threading.Lock()

    def scrape(name: str, **_: Any) -> ScrapeOutcome:
        nonlocal running_now, peak
        with lock:
            running_now += 1
            peak = max(peak, running_now)
        time.sleep(0.05)
        with lock:
            running_now -= 1
        return ScrapeOutcome(name, "success", 1, 1, 0, (), None, None, 1, "u")

    monkeypatch.setattr(work, "scrape_source", scrape)
    names = list(all_sources())[:9]
    done = list(work.run_in_threads(names, {"settings": Settings(max_workers=3)}))
    assert [name for name, _ in done] == names
    assert peak == 3


def test_tags_name_the_source_and_who_is_asked() -> None:
    sources = all_sources()
    assert source_tags(sources["aws-spot"]) == {"source:aws-spot", "provider:aws"}
    # an aggregator of every provider is asked as itself
    assert source_tags(sources["opencomputeprices"]) == {"source:opencomputeprices",
                                                         "provider:opencomputeprices"}


@pytest.mark.parametrize(("env", "message"), [
    ({"GPUPRICES_WORKERS": "0"}, "GPUPRICES_WORKERS=0 is out of range: allowed 1 to 64"),
    ({"GPUPRICES_WORKERS": "2.5"},
     "GPUPRICES_WORKERS='2.5' is not a whole number: allowed 1 to 64"),
    ({"GPUPRICES_SOURCE_TIMEOUT_S": "nan"},
     "GPUPRICES_SOURCE_TIMEOUT_S=nan is out of range: allowed 1 to 7,200"),
    ({"GPUPRICES_BOARD_URL": "file:///srv/board"},
     "GPUPRICES_BOARD_URL='file:///srv/board' must be an http:// or https:// URL"),
])
def test_run_settings_have_ranges(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError) as raised:
        load_settings(env)
    assert str(raised.value) == message


def test_settings_defaults_and_values() -> None:
    assert (load_settings({}).max_workers, load_settings({}).source_timeout_s) == (8, 600.0)
    got = load_settings({"GPUPRICES_WORKERS": "64", "GPUPRICES_SOURCE_TIMEOUT_S": "1",
                         "GPUPRICES_BOARD_URL": "https://gpu.example/board/"})
    assert (got.max_workers, got.source_timeout_s, got.board_url) == (
        64, 1.0, "https://gpu.example/board/")


def test_refresh_cli_rejects_an_out_of_range_setting_in_one_line(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GPUPRICES_WORKERS", "100")
    result = CliRunner().invoke(app, ["refresh", "--offline", "-w", str(tmp_path / "w.duckdb")])
    assert result.exit_code == 2
    assert result.output.strip() == ("error: GPUPRICES_WORKERS=100 is out of range: "
                                     "allowed 1 to 64")
