"""Issue 27.2: a process work pool whose workers share the refresh, into one lake.

A real Prefect server, `prefect deploy --all` from prefect.yaml, two `prefect worker start`
processes, and a real PostgreSQL catalog (data in a folder): a `refresh-fanout` run splits the
sources into `refresh-batch` runs, the two workers take them, and every capture lands once.
Slow (a Prefect server and two workers: a few minutes on this machine).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.lake_servers import PostgresServer, ServerUnavailable, postgres_server
from tests.ops.test_lake_scale import integrity
from tests.ops.test_prefect_server import (
    REPO,
    PrefectServer,
    prefect_cli,
    start,
    stop,
    tail,
)
from tests.ops.test_prefect_server import prefect_server as prefect_server  # the fixture

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
SOURCES = ["lambda", "vastai", "runpod", "modal", "digitalocean", "hyperstack"]

FANOUT = textwrap.dedent("""
    import json, sys
    from prefect.deployments import run_deployment
    run = run_deployment("refresh-fanout/refresh-fanout", timeout=600, parameters={
        "sources": json.loads(sys.argv[1]), "offline": True, "batch_size": 2})
    print(json.dumps({"state": run.state.type.value, "message": run.state.message}))
""")


@pytest.fixture(scope="module")
def pg() -> Iterator[PostgresServer]:
    try:
        with postgres_server() as server:
            yield server
    except ServerUnavailable as exc:
        pytest.skip(str(exc))


def test_two_workers_share_the_batches_of_a_fanout(
        prefect_server: PrefectServer, pg: PostgresServer, tmp_path: Path) -> None:
    lake = f"ducklake:postgres:{pg.dsn(pg.create_database())}"
    lake_env = {"GPUPRICES_WAREHOUSE": lake, "GPUPRICES_LAKE_DATA_PATH": str(tmp_path / "data"),
                "GPUPRICES_ARCHIVE": str(tmp_path / "raw"), "GPUPRICES_WORKERS": "2"}
    env = prefect_server.env(**lake_env)
    prefect_cli(["work-pool", "create", "gpuprices", "--type", "process", "--overwrite"], env)
    prefect_cli(["deploy", "--all"], env)
    workers = [start([sys.executable, "-m", "prefect", "worker", "start", "--pool",
                      "gpuprices", "--name", f"worker-{n}"], env, tmp_path / f"worker{n}.log")
               for n in (1, 2)]
    try:
        done = subprocess.run([sys.executable, "-c", FANOUT, json.dumps(SOURCES)], cwd=REPO,
                              env=env, capture_output=True, text=True, timeout=700,
                              check=False)
    finally:
        for worker in workers:
            stop(worker)
    logs = "\n".join(tail(tmp_path / f"worker{n}.log", 3000) for n in (1, 2))
    assert done.returncode == 0, f"{done.stderr[-3000:]}\n{logs}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["state"] == "COMPLETED", f"{result}\n{logs}"
    # three batch runs taken by the workers: every source's capture landed exactly once
    assert integrity(lake)["captures"] == len(SOURCES), logs
