"""A real `prefect server start` on 127.0.0.1: deployments, schedules, one triggered run each.

Slow (a server start is ~20 s on this machine): run with `pytest -m slow tests/ops`.
The server, and everything it started, is stopped in `finally` whatever happens.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import httpx
import pytest

from flows.serve import (
    DEFAULT_REFRESH_CRON,
    DEFAULT_REPORT_CRON,
    REFRESH_DEPLOYMENT,
    REPORT_DEPLOYMENT,
    weekly_report_flow,
)
from tests.ops.receiver import http_receiver

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prefect_env(home: Path, api_url: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PREFECT_", "GPUPRICES_"))}
    env.update({
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PREFECT_SERVER_UI_ENABLED": "false",
    })
    if api_url:
        env["PREFECT_API_URL"] = api_url
    return env


def wait_healthy(api_url: str, server: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"prefect server exited early with code {server.returncode}")
        try:
            if httpx.get(f"{api_url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"prefect server not healthy after {timeout_s} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group (server + its uvicorn children), SIGKILL if it lingers."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def run_driver(warehouse: Path, env: dict[str, str]) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.ops.prefect_driver", str(warehouse)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=240, check=False,
    )
    assert done.returncode == 0, f"driver failed:\n{done.stdout}\n{done.stderr}"
    runs: dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])
    return runs


async def read_deployments(api_url: str, runs: dict[str, str]) -> dict[str, Any]:
    from prefect.client.orchestration import PrefectClient

    async with PrefectClient(api_url) as client:
        return {name: {"deployment": await client.read_deployment_by_name(name),
                       "run_id": uuid.UUID(run_id)} for name, run_id in runs.items()}


async def api_checks_and_trigger(api_url: str, names: list[str],
                                 parameters: dict[str, dict[str, Any]] | None = None
                                 ) -> dict[str, Any]:
    """Read the deployments back through Prefect's client and start one run of each."""
    from prefect.client.orchestration import PrefectClient

    found: dict[str, Any] = {}
    async with PrefectClient(api_url) as client:
        for full_name in names:
            deployment = await client.read_deployment_by_name(full_name)
            run = await client.create_flow_run_from_deployment(
                deployment.id, parameters=(parameters or {}).get(full_name))
            found[full_name] = {"deployment": deployment, "run_id": run.id}
    return found


async def final_states(api_url: str, run_ids: list[Any], timeout_s: float) -> dict[Any, Any]:
    from prefect.client.orchestration import PrefectClient

    async with PrefectClient(api_url) as client:
        deadline = time.monotonic() + timeout_s
        while True:
            runs = {rid: await client.read_flow_run(rid) for rid in run_ids}
            if all(r.state and r.state.is_final() for r in runs.values()):
                return {rid: r.state for rid, r in runs.items()}
            if time.monotonic() > deadline:
                return {rid: r.state for rid, r in runs.items()}
            await asyncio.sleep(1)


@dataclass(frozen=True)
class PrefectServer:
    api_url: str
    home: Path
    ready_s: float

    def env(self, **extra: str) -> dict[str, str]:
        return {**prefect_env(self.home, self.api_url), **extra}


@pytest.fixture(scope="module")
def prefect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrefectServer]:
    """`prefect server start` on a free 127.0.0.1 port with its own PREFECT_HOME."""
    started = time.monotonic()
    root = tmp_path_factory.mktemp("prefect-server")
    home = root / "home"
    home.mkdir()
    port = free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    log = (root / "server.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1",
         "--port", str(port), "--no-ui", "--analytics-off"],
        env=prefect_env(home), stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        wait_healthy(api_url, server, timeout_s=120)
        yield PrefectServer(api_url, home, time.monotonic() - started)
    finally:
        stop(server)
        log.close()
        print(f"\nprefect server up for {time.monotonic() - started:.1f} s, stopped "
              f"(exit code {server.returncode})")
    assert server.returncode is not None


def check_schedules(found: dict[str, Any], names: list[str]) -> None:
    """Both deployments carry Prefect cron schedules in UTC (checked through the API client)."""
    expected = [DEFAULT_REFRESH_CRON, DEFAULT_REPORT_CRON]
    for name, cron in zip(names, expected, strict=True):
        schedules = found[name]["deployment"].schedules
        assert [(s.schedule.cron, s.schedule.timezone, s.active) for s in schedules] == [
            (cron, "UTC", True)], name


def assert_completed(api_url: str, found: dict[str, Any], names: list[str]) -> list[str]:
    run_ids = [found[n]["run_id"] for n in names]
    states = asyncio.run(final_states(api_url, run_ids, timeout_s=60))
    for name in names:
        state = states[found[name]["run_id"]]
        assert state is not None and state.is_completed(), f"{name}: {state}"
    return [str(states[r].name) for r in run_ids]


def warehouse_facts(warehouse: Path) -> tuple[list[tuple[Any, ...]], int]:
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        runs = con.execute("SELECT flow, status, offline FROM refresh_run").fetchall()
        row = con.execute("SELECT count(*) FROM latest_price").fetchone()
    finally:
        con.close()
    return runs, int(row[0]) if row else 0


def test_serve_deployments_run_on_a_real_server(prefect_server: PrefectServer,
                                                tmp_path: Path) -> None:
    """The `gpuprices serve` path: RunnerDeployments, run by a Runner (as prefect.serve does).

    The refresh's alert hook runs too: its webhook lands on a receiver in this test.
    """
    started = time.monotonic()
    api_url = prefect_server.api_url
    warehouse = tmp_path / "wh" / "gpu_prices.duckdb"
    rules = tmp_path / "alerts.toml"
    rules.write_text('[[rule]]\nname = "any-h100"\nkind = "cheapest_below"\ngpu = "H100"\n'
                     "below_usd_per_gpu_hour = 100.0\n", encoding="utf-8")
    report_dir = tmp_path / "reports"
    with http_receiver() as (host, received):
        env = prefect_server.env(GPUPRICES_ALERTS=str(rules), GPUPRICES_REPORTS=str(report_dir),
                                 GPUPRICES_ALERT_URLS=f"json://{host}/hook")
        runs = run_driver(warehouse, env)
    report = weekly_report_flow()
    assert report is not None, "flows/weekly_report.py should provide weekly_report"
    names = ["refresh/" + REFRESH_DEPLOYMENT, f"{report.name}/{REPORT_DEPLOYMENT}"]
    assert list(runs) == names
    found = asyncio.run(read_deployments(api_url, runs))
    check_schedules(found, names)
    assert found[names[0]]["deployment"].parameters == {"warehouse": str(warehouse),
                                                         "offline": True}
    states = assert_completed(api_url, found, names)
    runs, latest = warehouse_facts(warehouse)
    assert ("refresh", "completed", True) in runs
    assert latest > 0
    assert list(report_dir.glob("*.md")), "the weekly report wrote no markdown file"
    assert [r["path"] for r in received] == ["/hook"]  # one alert event, sent once
    assert received[0]["json"]["title"] == "H100 below $100.00/GPU-h"
    print(f"\nserve path: server ready in {prefect_server.ready_s:.1f} s, test "
          f"{time.monotonic() - started:.1f} s; {latest} latest prices; runs {states}; "
          f"alert: {received[0]['json']['message']}")


async def create_process_pool(api_url: str, name: str) -> None:
    from prefect.client.orchestration import PrefectClient
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.workers.process import ProcessWorker

    template = ProcessWorker.get_default_base_job_template()  # what the CLI would use
    async with PrefectClient(api_url) as client:
        await client.create_work_pool(WorkPoolCreate(name=name, type="process",
                                                     base_job_template=template))


def prefect_cli(args: list[str], env: dict[str, str], timeout: float = 120) -> str:
    done = subprocess.run([sys.executable, "-m", "prefect", "--no-prompt", *args], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"prefect {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_prefect_yaml_deploys_to_a_process_work_pool(prefect_server: PrefectServer,
                                                     tmp_path: Path) -> None:
    """The `prefect deploy --all` path: prefect.yaml, a process pool, one worker pass."""
    started = time.monotonic()
    warehouse = tmp_path / "wh" / "gpu_prices.duckdb"
    env = prefect_server.env(GPUPRICES_WAREHOUSE=str(warehouse),
                             GPUPRICES_REPORTS=str(tmp_path / "reports"))
    asyncio.run(create_process_pool(prefect_server.api_url, "gpuprices"))
    prefect_cli(["deploy", "--all"], env)
    names = ["refresh/refresh-nightly", "weekly-report/weekly-report"]
    # Trigger the refresh through the API; a worker polls once, runs it, exits when done.
    # (The report's execution is covered by the serve test; here its deployment is checked.)
    found = asyncio.run(api_checks_and_trigger(prefect_server.api_url, names[:1],
                                               parameters={names[0]: {"offline": True}}))
    found |= asyncio.run(read_deployments(prefect_server.api_url,
                                          {names[1]: str(uuid.uuid4())}))
    prefect_cli(["worker", "start", "--pool", "gpuprices", "--run-once"], env, timeout=240)
    check_schedules(found, names)
    assert {found[n]["deployment"].work_pool_name for n in names} == {"gpuprices"}
    assert [found[n]["deployment"].entrypoint for n in names] == [
        "flows/refresh.py:refresh", "flows/weekly_report.py:weekly_report"]
    states = assert_completed(prefect_server.api_url, found, names[:1])
    runs, latest = warehouse_facts(warehouse)
    assert ("refresh", "completed", True) in runs and latest > 0
    print(f"\nwork-pool path: {time.monotonic() - started:.1f} s; runs {states}")
