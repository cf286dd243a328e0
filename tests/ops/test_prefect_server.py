"""A real `prefect server start` on 127.0.0.1, the project's deployments registered the
documented ways, the server's scheduler creating their runs, and the documented runners
(`gpuprices serve`, a process worker) executing them to Completed.

Slow (a server start is ~20 s on this machine; the module takes a few minutes); part of
`make test`. The server, and every process the tests start, is stopped in `finally`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
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
from scrapers.registry import all_sources
from tests.faults.conftest import dummy_secrets, ecb_rates_today
from tests.faults.server import FaultServer
from tests.faults.server import running as fault_server_running
from tests.ops.receiver import http_receiver

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prefect_env(home: Path, api_url: str | None = None) -> dict[str, str]:
    """A clean environment: no PREFECT_*/GPUPRICES_* of the caller, Prefect's default INFO
    logging (what operators run with), no analytics, no UI."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PREFECT_", "GPUPRICES_"))}
    env.update({
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "DO_NOT_TRACK": "1",
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
    log: Path

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
        env={**prefect_env(home), "PREFECT_LOGGING_LEVEL": "WARNING",
             # the scheduler's main loop (60 s by default) picks up added schedules
             "PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS": "10"}, stdout=log,
        stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        wait_healthy(api_url, server, timeout_s=120)
        yield PrefectServer(api_url, home, time.monotonic() - started, root / "server.log")
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
    messages = [(log.level, log.message)
                for log in logs_once_in(api_url, found[names[0]]["run_id"], "ALERT [any-h100] ",
                                        "modal: success")]
    assert any(level == logging.INFO and m.startswith("ALERT [any-h100] ")
               for level, m in messages), "the ALERT line reaches the run logs at INFO"
    assert any(m.startswith("modal: success, 9 rows stored") for _, m in messages), messages
    runs, latest = warehouse_facts(warehouse)
    assert ("refresh", "completed", True) in runs
    assert latest > 0
    assert list(report_dir.glob("*.md")), "the weekly report wrote no markdown file"
    assert [r["path"] for r in received] == ["/hook"]  # one alert event, sent once
    assert received[0]["json"]["title"] == "H100 below $100.00/GPU-h"
    print(f"\nserve path: server ready in {prefect_server.ready_s:.1f} s, test "
          f"{time.monotonic() - started:.1f} s; {latest} latest prices; runs {states}; "
          f"alert: {received[0]['json']['message']}")


async def run_logs(api_url: str, flow_run_id: Any) -> list[Any]:
    """Every log line of a flow run and its task runs, oldest first (through the API)."""
    from prefect.client.orchestration import PrefectClient
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId

    async with PrefectClient(api_url) as client:
        return await client.read_logs(log_filter=LogFilter(
            flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])))


def logs_once_in(api_url: str, flow_run_id: Any, *starts: str,
                 timeout_s: float = 180) -> list[Any]:
    """The run's logs, once a line starting with each of `starts` is there: the server
    stores log lines a little after the run ends, the last ones (summary, ALERT) last."""
    def complete() -> list[Any] | None:
        logs = asyncio.run(run_logs(api_url, flow_run_id))
        seen = [log.message for log in logs]
        return logs if all(any(m.startswith(s) for m in seen) for s in starts) else None
    try:
        found: list[Any] = wait_for(f"log lines starting {starts}", complete, timeout_s)
    except AssertionError as missing:
        lines = [log.message[:120] for log in asyncio.run(run_logs(api_url, flow_run_id))]
        raise AssertionError(f"{missing}; the run logged: {lines}") from None
    return found


async def task_runs(api_url: str, flow_run_id: Any) -> dict[str, Any]:
    from prefect.client.orchestration import PrefectClient
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    async with PrefectClient(api_url) as client:
        runs = await client.read_task_runs(flow_run_filter=FlowRunFilter(
            id=FlowRunFilterId(any_=[flow_run_id])))
    return {r.name: r for r in runs}


async def deployment_runs(api_url: str, name: str) -> tuple[Any, list[Any]]:
    """A deployment and every flow run the server has for it."""
    from prefect.client.orchestration import PrefectClient
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId

    async with PrefectClient(api_url) as client:
        deployment = await client.read_deployment_by_name(name)
        runs = await client.read_flow_runs(deployment_filter=DeploymentFilter(
            id=DeploymentFilterId(any_=[deployment.id])), limit=200)
    return deployment, runs


def wait_for(what: str, check: Any, timeout_s: float, every_s: float = 1.0) -> Any:
    """Poll `check()` until it returns something truthy; fail naming `what`."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {timeout_s:g} s waiting for {what}")
        time.sleep(every_s)


def start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """A long-running command (worker, serve) in its own process group, output to `log`."""
    with log.open("ab") as out:
        return subprocess.Popen(args, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def tail(log: Path, chars: int = 4000) -> str:
    """The end of a process's log, for failure messages."""
    return log.read_text(errors="replace")[-chars:] if log.exists() else f"({log} missing)"


def prefect_cli(args: list[str], env: dict[str, str], timeout: float = 120) -> str:
    done = subprocess.run([sys.executable, "-m", "prefect", "--no-prompt", *args], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"prefect {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def scheduled_by_cron(api_url: str, name: str, cron_hour: int, weekday: int | None) -> list[Any]:
    """The runs the server's scheduler created from a deployment's cron (all in the future,
    at the cron's hour, minute 0, UTC, on the cron's weekday if any)."""
    _, runs = asyncio.run(deployment_runs(api_url, name))
    found = [r for r in runs if r.state_type and r.state_type.value == "SCHEDULED"
             and r.auto_scheduled and r.expected_start_time.hour == cron_hour]
    for run in found:
        assert run.expected_start_time.minute == 0 and run.expected_start_time.utcoffset() \
            is not None and run.expected_start_time.utcoffset().total_seconds() == 0, run
        assert weekday is None or run.expected_start_time.weekday() == weekday, run
    return found


def one_run_soon(api_url: str, name: str, in_s: float = 15.0) -> datetime:
    """Give a deployment an extra schedule, every minute from `in_s` seconds on (the test's
    short override; its cron schedules stay as registered). What `prefect deployment schedule
    create NAME --interval 60 --anchor-date ...` does, through the API to spare a CLI start.
    The scheduler picks a new schedule up on its next loop (10 s on the test server) and never
    creates a run in the past, so the first run may be the second slot."""
    from prefect.client.orchestration import PrefectClient
    from prefect.client.schemas.schedules import IntervalSchedule

    anchor = (datetime.now(UTC) + timedelta(seconds=in_s)).replace(microsecond=0)

    async def create() -> None:
        async with PrefectClient(api_url) as client:
            deployment = await client.read_deployment_by_name(name)
            await client.create_deployment_schedules(deployment.id, [(IntervalSchedule(
                interval=timedelta(seconds=60), anchor_date=anchor), True)])
    asyncio.run(create())
    return anchor


def first_final_run(api_url: str, name: str, anchor: datetime, timeout_s: float) -> Any:
    """The first run the scheduler made from the schedule of `one_run_soon` to finish."""
    def done() -> Any:
        _, runs = asyncio.run(deployment_runs(api_url, name))
        ours = [r for r in runs if r.auto_scheduled and r.expected_start_time >= anchor
                and (r.expected_start_time - anchor).total_seconds() % 60 == 0]
        final = [r for r in ours if r.state and r.state.is_final()]
        return min(final, key=lambda r: r.expected_start_time) if final else None
    return wait_for(f"a run of {name} scheduled every minute from {anchor} to finish", done,
                    timeout_s)


REFRESH = f"refresh/{REFRESH_DEPLOYMENT}"
REPORT = f"weekly-report/{REPORT_DEPLOYMENT}"


def online_env(server: FaultServer, failing: str, folder: Path) -> dict[str, str]:
    """Every source sent to a local fault server, `failing` answering HTTP 503; the ECB rates
    (fetched first: euro prices need today's rate) from it too."""
    env = {f"GPUPRICES_BASE_URL_{name.upper().replace('-', '_')}": server.url(name)
           for name in [*all_sources(), "ecb"]}
    for source in all_sources().values():
        server.plan(source, "http503" if source.name == failing else "healthy")
    server.plan(ecb_rates_today(folder), "healthy")
    # a generous read timeout: on a loaded machine a healthy local answer can take seconds
    return {**env, **dummy_secrets(), "GPUPRICES_TIMEOUT_S": "30", "GPUPRICES_RETRIES": "2",
            "GPUPRICES_BACKOFF_S": "0.01"}


def test_deploy_and_a_worker_run_what_the_scheduler_creates(
        prefect_server: PrefectServer, tmp_path: Path) -> None:
    """The `prefect deploy --all` path, as the README says: a process pool, both deployments
    from prefect.yaml, a worker. The scheduler creates the cron runs; an extra schedule due in
    seconds gives a run the worker executes: an online refresh against a local server in
    which one source answers 503, so exactly that task run is Failed, with its error in its
    logs, and the flow Completed by the documented rule."""
    started = time.monotonic()
    api = prefect_server.api_url
    warehouse = tmp_path / "wh" / "gpu_prices.duckdb"
    rules = tmp_path / "alerts.toml"
    rules.write_text('[[rule]]\nname = "any-h100"\nkind = "cheapest_below"\ngpu = "H100"\n'
                     "below_usd_per_gpu_hour = 100.0\n", encoding="utf-8")
    env = prefect_server.env()
    prefect_cli(["work-pool", "create", "gpuprices", "--type", "process", "--overwrite"], env)
    prefect_cli(["deploy", "--all"], env)
    for name in (REFRESH, REPORT):
        deployment, _ = asyncio.run(deployment_runs(api, name))
        assert deployment.work_pool_name == "gpuprices", name
    check_schedules({n: {"deployment": asyncio.run(deployment_runs(api, n))[0]}
                     for n in (REFRESH, REPORT)}, [REFRESH, REPORT])
    nightly = wait_for("the scheduler's 02:00 runs", lambda: scheduled_by_cron(
        api, REFRESH, 2, None), 60)
    weekly = wait_for("the scheduler's Monday 06:00 runs", lambda: scheduled_by_cron(
        api, REPORT, 6, 0), 60)

    with fault_server_running() as server:
        worker_env = prefect_server.env(GPUPRICES_WAREHOUSE=str(warehouse),
                                        GPUPRICES_ALERTS=str(rules),
                                        **online_env(server, "vastai", tmp_path))
        due = one_run_soon(api, REFRESH)
        worker = start([sys.executable, "-m", "prefect", "worker", "start", "--pool",
                        "gpuprices"], worker_env, tmp_path / "worker.log")
        try:
            run = first_final_run(api, REFRESH, due, timeout_s=300)
        except AssertionError as waited:
            raise AssertionError(f"{waited}\n{tail(tmp_path / 'worker.log')}") from None
        finally:
            stop(worker)
    worker_log = tail(tmp_path / "worker.log")
    assert run.state.is_completed(), f"{run.state}\n{worker_log}"
    assert run.state.message == f"1 of {len(all_sources())} sources failed: vastai"
    tasks = asyncio.run(task_runs(api, run.id))
    assert len(tasks) == len(all_sources())
    assert {n for n, t in tasks.items() if not t.state.is_completed()} == {"scrape-vastai"}
    assert tasks["scrape-vastai"].state.is_failed()
    assert sorted(tasks["scrape-vastai"].tags) == ["provider:vastai", "source:vastai"]
    logs = logs_once_in(api, run.id, "ALERT [any-h100] cheapest H100", "refresh refresh-",
                        "vastai: failed (", "modal: success")
    vastai = [(log.level, log.message) for log in logs
              if log.task_run_id == tasks["scrape-vastai"].id]
    assert any(level == logging.ERROR and message.startswith("vastai: failed (")
               and "HTTP 503" in message for level, message in vastai), vastai
    assert any(message.startswith("vastai: attempt 1 of 2 failed (HTTP 503); retrying")
               for _, message in vastai), vastai
    messages = [log.message for log in logs]
    assert any(m.startswith("modal: success") for m in messages)
    assert any(m.startswith("ALERT [any-h100] cheapest H100") for m in messages), messages
    assert any(m.startswith("refresh refresh-") and
               f"1 of {len(all_sources())} sources failed: vastai;" in m for m in messages)
    print(f"\nwork-pool path: {time.monotonic() - started:.1f} s; scheduler made "
          f"{len(nightly)} nightly and {len(weekly)} weekly runs; the run due at "
          f"{run.expected_start_time} "
          f"ended {run.state.name}: {run.state.message}")


def test_switching_to_serve_takes_the_deployments_over_from_the_pool(
        prefect_server: PrefectServer, tmp_path: Path) -> None:
    """After `prefect deploy`, `gpuprices serve --offline` registers the same names: they
    leave the work pool, so a worker still polling it gets nothing, and serve's runner
    executes the scheduled run to Completed (no crash). Its logs arrive at INFO."""
    started = time.monotonic()
    api = prefect_server.api_url
    warehouse = tmp_path / "wh" / "gpu_prices.duckdb"
    env = prefect_server.env()
    prefect_cli(["work-pool", "create", "gpuprices", "--type", "process", "--overwrite"], env)
    prefect_cli(["deploy", "--all"], env)
    assert asyncio.run(deployment_runs(api, REFRESH))[0].work_pool_name == "gpuprices"
    worker = start([sys.executable, "-m", "prefect", "worker", "start", "--pool", "gpuprices"],
                   prefect_server.env(GPUPRICES_WAREHOUSE=str(tmp_path / "not-here.duckdb")),
                   tmp_path / "worker.log")
    serve = start([str(Path(sys.executable).with_name("gpuprices")), "serve", "--offline",
                   "-w", str(warehouse)], env, tmp_path / "serve.log")
    try:
        def served() -> bool:
            from prefect.exceptions import ObjectNotFound

            try:  # between serve's delete and its registration: not found
                refresh, _ = asyncio.run(deployment_runs(api, REFRESH))
                report, _ = asyncio.run(deployment_runs(api, REPORT))
            except ObjectNotFound:
                return False
            return refresh.work_pool_name is None and report.work_pool_name is None \
                and refresh.parameters == {"warehouse": str(warehouse.resolve()),
                                           "offline": True}
        wait_for("serve to register both deployments outside the pool", served, 90)
        wait_for("the scheduler's 02:00 runs after serve", lambda: scheduled_by_cron(
            api, REFRESH, 2, None), 60)
        due = one_run_soon(api, REFRESH)
        run = first_final_run(api, REFRESH, due, timeout_s=300)
    except AssertionError as waited:
        raise AssertionError(f"{waited}\n{tail(tmp_path / 'serve.log')}") from None
    finally:
        stop(serve)
        stop(worker)
    serve_log = (tmp_path / "serve.log").read_text(errors="replace")
    assert run.state.is_completed(), f"{run.state}\n{serve_log[-3000:]}"
    assert run.work_pool_name is None
    assert "was a work-pool deployment: re-registered to be served here" in serve_log
    _, runs = asyncio.run(deployment_runs(api, REFRESH))
    assert not [r for r in runs if r.state_type and r.state_type.value == "CRASHED"]
    assert str(run.id) not in (tmp_path / "worker.log").read_text(errors="replace")
    messages = [log.message for log in logs_once_in(api, run.id, "vastai: ", "refresh refresh-")]
    assert any(m.startswith("vastai: success") or m.startswith("vastai: unchanged")
               for m in messages), messages
    runs_db, latest = warehouse_facts(warehouse)
    assert ("refresh", "completed", True) in runs_db and latest > 0
    print(f"\nswitch to serve: {time.monotonic() - started:.1f} s; run due at "
          f"{run.expected_start_time} ended "
          f"{run.state.name}: {run.state.message}")
