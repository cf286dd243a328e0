"""A real `prefect server start` on 127.0.0.1: deployments, schedules, one triggered run each.

Slow (a server start is ~20 s on this machine): run with `pytest -m slow tests/ops`.
The server, and everything it started, is stopped in `finally` whatever happens.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
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

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prefect_env(home: Path, api_url: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
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


def run_driver(action: str, warehouse: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tests.ops.prefect_driver", action, str(warehouse)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=180, check=False,
    )
    assert done.returncode == 0, f"driver {action} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


async def api_checks_and_trigger(api_url: str, names: list[str]) -> dict[str, Any]:
    """Read the deployments back through Prefect's client and start one run of each."""
    from prefect.client.orchestration import PrefectClient

    found: dict[str, Any] = {}
    async with PrefectClient(api_url) as client:
        for full_name in names:
            deployment = await client.read_deployment_by_name(full_name)
            run = await client.create_flow_run_from_deployment(deployment.id)
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


def test_deployments_on_a_real_server(tmp_path: Path) -> None:
    started = time.monotonic()
    port = free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    home = tmp_path / "prefect-home"
    home.mkdir()
    warehouse = tmp_path / "wh" / "gpu_prices.duckdb"
    log = (tmp_path / "server.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1",
         "--port", str(port), "--no-ui", "--analytics-off"],
        env=prefect_env(home), stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        wait_healthy(api_url, server, timeout_s=120)
        ready_s = time.monotonic() - started
        client_env = prefect_env(home, api_url)

        run_driver("register", warehouse, client_env)
        names = ["refresh/" + REFRESH_DEPLOYMENT]
        report = weekly_report_flow()
        if report is not None:
            names.append(f"{report.name}/{REPORT_DEPLOYMENT}")
        found = asyncio.run(api_checks_and_trigger(api_url, names))

        # The schedules are Prefect's own cron schedules, in UTC.
        refresh_dep = found[names[0]]["deployment"]
        crons = [(s.schedule.cron, s.schedule.timezone) for s in refresh_dep.schedules]
        assert crons == [(DEFAULT_REFRESH_CRON, "UTC")]
        assert refresh_dep.parameters == {"warehouse": str(warehouse), "offline": True}
        if report is not None:
            report_dep = found[names[1]]["deployment"]
            assert [(s.schedule.cron, s.schedule.timezone) for s in report_dep.schedules] == [
                (DEFAULT_REPORT_CRON, "UTC")]

        # A Runner (what `gpuprices serve` runs) picks the triggered runs up and executes them.
        run_driver("execute", warehouse, client_env)
        run_ids = [found[n]["run_id"] for n in names]
        states = asyncio.run(final_states(api_url, run_ids, timeout_s=60))
        for name in names:
            state = states[found[name]["run_id"]]
            assert state is not None and state.is_completed(), f"{name}: {state}"

        con = duckdb.connect(str(warehouse), read_only=True)
        try:
            runs = con.execute("SELECT flow, status, offline FROM refresh_run").fetchall()
            rows = con.execute("SELECT count(*) FROM latest_price").fetchone()
        finally:
            con.close()
        assert ("refresh", "completed", True) in runs
        assert rows is not None and rows[0] > 0
        elapsed = time.monotonic() - started
        print(f"\nprefect server ready in {ready_s:.1f} s; whole test {elapsed:.1f} s; "
              f"{rows[0]} latest prices; runs {[str(states[r].name) for r in run_ids]}")
    finally:
        stop(server)
        log.close()
    assert server.returncode is not None
