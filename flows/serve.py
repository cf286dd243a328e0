"""Run the flows on Prefect's own schedules: `refresh` nightly, `weekly_report` weekly.

`serve()` builds two deployments with cron schedules (UTC) and hands them to `prefect.serve`,
which registers them with the Prefect API (a `prefect server start` or Prefect Cloud) and runs
each scheduled flow run in a subprocess. No scheduling loop of ours: the server owns the
calendar, the UI shows every run, and runs can also be triggered by hand from the UI or
`prefect deployment run refresh/refresh-nightly`.

`prefect.yaml` at the repo root describes the same two deployments for `prefect deploy --all`
with a process work pool, for setups where workers on other machines pick up the runs.

Switching from that to `serve` keeps the deployment names, so `serve` first deletes the
work-pool ones and registers them afresh: registered over, they keep their pool binding and
storage fields, and their runs crash (a worker picks them up, or the runner cannot load them).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prefect import Flow
    from prefect.deployments.runner import RunnerDeployment

DEFAULT_REFRESH_CRON = "0 2 * * *"  # every night at 02:00 UTC
DEFAULT_REPORT_CRON = "0 6 * * 1"  # Mondays at 06:00 UTC
TIMEZONE = "UTC"
REFRESH_DEPLOYMENT = "refresh-nightly"
REPORT_DEPLOYMENT = "weekly-report"

log = logging.getLogger("gpuprices.serve")


def weekly_report_flow() -> Flow[..., Any] | None:
    """The weekly report flow, or None while flows/weekly_report.py is not installed."""
    try:
        module = importlib.import_module("flows.weekly_report")
    except ModuleNotFoundError as exc:
        if exc.name != "flows.weekly_report":
            raise  # the module exists but something it imports is missing: say so
        return None
    found: Flow[..., Any] | None = getattr(module, "weekly_report", None)
    return found


def accepted_parameters(flow: Flow[..., Any], wanted: dict[str, Any]) -> dict[str, Any]:
    """Keep the parameters the flow takes (and drop None, so the flow's defaults apply)."""
    names = inspect.signature(flow.fn).parameters
    return {k: v for k, v in wanted.items() if k in names and v is not None}


def build_deployments(
    refresh_cron: str = DEFAULT_REFRESH_CRON,
    report_cron: str = DEFAULT_REPORT_CRON,
    warehouse: str | None = None,
    *,
    offline: bool = False,
) -> list[RunnerDeployment]:
    """The nightly refresh deployment, plus the weekly report one when that flow exists."""
    from prefect.schedules import Cron

    from flows.refresh import refresh

    deployments = [
        refresh.to_deployment(
            name=REFRESH_DEPLOYMENT,
            schedules=[Cron(refresh_cron, timezone=TIMEZONE)],
            parameters=accepted_parameters(refresh, {"warehouse": warehouse,
                                                     "offline": offline or None}),
            description="Scrape every source into the warehouse",
            tags=["gpuprices"],
        )
    ]
    report = weekly_report_flow()
    if report is not None:
        deployments.append(
            report.to_deployment(
                name=REPORT_DEPLOYMENT,
                schedules=[Cron(report_cron, timezone=TIMEZONE)],
                parameters=accepted_parameters(report, {"warehouse": warehouse}),
                description="Write the weekly GPU price report",
                tags=["gpuprices"],
            )
        )
    return deployments


async def take_over_from_work_pools(names: list[str]) -> list[str]:
    """Delete those of these deployments (`flow/deployment`) that a `prefect deploy` bound to
    a work pool, so that `serve` registers them afresh; returns them as "name (pool)".

    Re-registering over them is not enough: the server keeps the pool binding unless told,
    and, told, still keeps their storage fields, from which served runs then fail to load
    (FileNotFoundError). Their past runs stay in the UI under the flow.
    """
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    taken = []
    async with get_client() as client:
        for name in names:
            try:
                found = await client.read_deployment_by_name(name)
            except ObjectNotFound:
                continue
            if found.work_pool_name:
                await client.delete_deployment(found.id)
                taken.append(f"{name} ({found.work_pool_name})")
    return taken


def serve(
    refresh_cron: str = DEFAULT_REFRESH_CRON,
    report_cron: str = DEFAULT_REPORT_CRON,
    warehouse: str | None = None,
    *,
    offline: bool = False,
    limit: int | None = 1,
) -> None:
    """Register the deployments and run their scheduled flow runs until interrupted.

    `limit=1`: one flow run at a time, since a refresh and a report share one DuckDB file.
    """
    from prefect import serve as prefect_serve

    deployments = build_deployments(refresh_cron, report_cron, warehouse, offline=offline)
    names = [f"{d.flow_name}/{d.name}" for d in deployments]
    for name in asyncio.run(take_over_from_work_pools(names)):
        log.warning("%s was a work-pool deployment: re-registered to be served here; that "
                    "pool's workers no longer get its runs", name)
    prefect_serve(*deployments, limit=limit)


if __name__ == "__main__":
    serve()
