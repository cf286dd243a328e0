"""Run inside a subprocess by test_prefect_server.py, with PREFECT_API_URL set to a test server.

`register`: apply the deployments of flows.serve (offline, temp warehouse) to the server.
`execute`: serve them with a Runner for one polling pass, i.e. run every flow run that is due
(the test triggers those through the API in between) and exit when they have finished.
"""

from __future__ import annotations

import asyncio
import json
import sys

from prefect.runner import Runner

from flows.serve import build_deployments


def main(action: str, warehouse: str) -> None:
    # Built outside any event loop: Prefect's sync/async dual APIs pick the sync path then.
    deployments = build_deployments(warehouse=warehouse, offline=True)
    if action == "register":
        ids = [str(d.apply()) for d in deployments]
        print(json.dumps({"deployments": [d.name for d in deployments], "ids": ids}))
        return
    # What prefect.serve does, but one polling pass instead of forever.
    runner = Runner(name="gpuprices-test-runner", limit=1, query_seconds=1)
    for deployment in deployments:
        runner.add_deployment(deployment)
    asyncio.run(runner.start(run_once=True))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
