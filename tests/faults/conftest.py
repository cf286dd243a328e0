"""Fixtures for the fault tests: the fault server, a warehouse holding one good night, settings
pointed at the server, and the sources x faults matrix printed at the end of the session."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from contract import HttpSettings
from contract.settings import Settings
from scrapers.base import SourceDef
from scrapers.registry import all_sources, secret_names
from tests.faults.server import FAULTS, FaultServer, running

SEED_AGE = timedelta(hours=72)  # older than the 48 h stale threshold
MAX_BYTES = 4 * 1024 * 1024  # the cap in tests; every bundled example is far smaller
CLIENT_TIMEOUT_S = 1.0  # 18 sources share one loaded process; 0.4 s flaked
SEED_RUN_ID = "seed-night"


def dummy_secrets(token: str = "dummy-key-0000") -> dict[str, str]:
    return {name: f"{token}-{name.lower()}" for name in secret_names()}


def fault_settings(server: FaultServer, warehouse: Path, *, secrets: dict[str, str] | None = None,
                   retries: int = 3) -> Settings:
    """Settings that send every source to the fault server, with small timeouts and backoff."""
    http = HttpSettings(
        timeout_s=CLIENT_TIMEOUT_S, max_bytes=MAX_BYTES,
        # the ECB rates too ("ecb"): the refresh fetches them first, never from the internet
        base_urls={name: server.url(name) for name in [*all_sources(), "ecb"]},
        secrets=secrets if secrets is not None else dummy_secrets(),
    )
    return Settings(warehouse=warehouse, archive_dir=warehouse.parent / "raw", retries=retries,
                    backoff_base_s=0.01, http=http)


def ecb_rates_today(directory: Path) -> SourceDef:
    """The ECB daily file dated today, for the server to serve as "ecb": prices in euros need a
    rate published within 7 days of the day they are seen."""
    from scrapers import ecb

    today = datetime.now(UTC).date().isoformat()
    path = directory / "eurofxref-daily.xml"
    path.write_bytes(re.sub(rb"time='[0-9-]+'", f"time='{today}'".encode(),
                            ecb.EXAMPLE.read_bytes()))
    return SourceDef(name=ecb.NAME, provider=ecb.NAME, kind="api", url=ecb.DAILY_URL,
                     example=path, example_as_of=today, fetch_fn=None, parse_fn=None)


@pytest.fixture(scope="session")
def fault_server() -> Iterator[FaultServer]:
    with running() as server:
        yield server


@pytest.fixture
def server(fault_server: FaultServer) -> Iterator[FaultServer]:
    fault_server.reset()
    yield fault_server
    fault_server.reset()


def age_warehouse(path: Path, age: timedelta) -> None:
    """Move every recorded time back by `age`, as if the night had been scraped that long ago."""
    hours = int(age.total_seconds() // 3600)
    shift = f"INTERVAL {hours} HOUR"
    from warehouse.connection import connect

    con = connect(path)
    try:
        con.execute(f"UPDATE scrape_run SET started_at = started_at - {shift}, "
                    f"finished_at = finished_at - {shift}, observed_at = observed_at - {shift}")
        con.execute(f"UPDATE observation SET observed_at = observed_at - {shift}")
        con.execute(f"UPDATE quarantine SET observed_at = observed_at - {shift}")
        con.execute(f"UPDATE raw_capture SET fetched_at = fetched_at - {shift}")
        con.execute(f"UPDATE refresh_run SET started_at = started_at - {shift}, "
                    f"finished_at = finished_at - {shift}")
        rebuild_summaries(con)
    finally:
        con.close()


def rebuild_summaries(con: object) -> None:
    """Derived tables (latest_observation ...) follow the aged base tables."""
    try:
        from warehouse import summaries
    except ImportError:  # a warehouse without summary tables
        return
    summaries.rebuild(con)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def seeded_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One good night of every source (offline replay of the bundled examples), 72 h old."""
    from flows.refresh import run_refresh
    from warehouse.connection import connect

    path = tmp_path_factory.mktemp("seed") / "gpu_prices.duckdb"
    settings = Settings(warehouse=path)
    outcomes = run_refresh(settings, offline=True, run_id=SEED_RUN_ID)
    bad = [o for o in outcomes if not o.ok or o.rows_stored == 0]
    assert not bad, f"the seed night must land every source: {bad}"
    age_warehouse(path, SEED_AGE)
    connect(path).close()  # checkpoint so a plain file copy is the whole warehouse
    return path


@pytest.fixture
def night_copy(seeded_warehouse: Path, tmp_path: Path) -> Path:
    target = tmp_path / "wh" / "gpu_prices.duckdb"
    target.parent.mkdir(parents=True)
    shutil.copyfile(seeded_warehouse, target)
    return target


# --- the printed matrix ---------------------------------------------------------------------

_MATRIX: dict[tuple[str, str], str] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    callspec = getattr(item, "callspec", None)
    if callspec is None or "fault" not in callspec.params or "source_name" not in callspec.params:
        return
    key = (callspec.params["source_name"], callspec.params["fault"])
    if report.when == "call" or (report.when == "setup" and not report.passed):
        cell = "pass" if report.passed else ("n/a" if report.skipped else "FAIL")
        _MATRIX[key] = cell


def format_matrix(matrix: dict[tuple[str, str], str]) -> str:
    sources = sorted({s for s, _ in matrix})
    faults = [f for f in FAULTS if any(f == g for _, g in matrix)]
    width = max([len(s) for s in sources] + [6])
    cols = [max(len(f), 4) for f in faults]
    lines = [" ".join(["source".ljust(width), *(f.ljust(c) for f, c in zip(faults, cols,
                                                                           strict=True))])]
    for source in sources:
        cells = [matrix.get((source, f), "-").ljust(c) for f, c in zip(faults, cols, strict=True)]
        lines.append(" ".join([source.ljust(width), *cells]))
    return "\n".join(lines)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _MATRIX:
        return
    terminalreporter.section("fault matrix (sources x faults)")
    terminalreporter.write_line(format_matrix(_MATRIX))
    failed = sum(1 for v in _MATRIX.values() if v == "FAIL")
    terminalreporter.write_line(f"{len(_MATRIX)} cells, {failed} failed")


__all__ = ["FAULTS", "MAX_BYTES", "dummy_secrets", "fault_settings"]
