"""Run inside a subprocess by test_prefect_server.py, with PREFECT_API_URL set to a test server.

What `gpuprices serve` does, in finite form: register the deployments of flows.serve (offline,
temp warehouse) with the server, then for each deployment trigger one run through the API and
let a Runner make one polling pass, which executes that run and returns when it has finished.
Prints {"<flow>/<deployment>": "<flow run id>"} as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys

from prefect.deployments import run_deployment
from prefect.runner import Runner

from flows.serve import build_deployments


def runner_pass(warehouse: str) -> None:
    # Built outside any event loop: Prefect's sync/async dual APIs pick the sync path then.
    runner = Runner(name="gpuprices-test-runner", limit=1, query_seconds=1)
    for deployment in build_deployments(warehouse=warehouse, offline=True):
        runner.add_deployment(deployment)  # (re)registers it with the server
    asyncio.run(runner.start(run_once=True))


def main(warehouse: str) -> None:
    runs: dict[str, str] = {}
    for deployment in build_deployments(warehouse=warehouse, offline=True):
        deployment.apply()
        name = f"{deployment.flow_name}/{deployment.name}"
        # One at a time, as the schedules space them: the report reads the refreshed data.
        runs[name] = str(run_deployment(name, timeout=0).id)
        runner_pass(warehouse)
    print(json.dumps(runs))


if __name__ == "__main__":
    main(sys.argv[1])
