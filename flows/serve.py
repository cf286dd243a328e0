"""Run the flows on Prefect's own schedules: `refresh` nightly, `weekly_report` weekly.

`serve()` builds two deployments with cron schedules (UTC) and hands them to `prefect.serve`,
which registers them with the Prefect API (a `prefect server start` or Prefect Cloud) and runs
each scheduled flow run in a subprocess. No scheduling loop of ours: the server owns the
calendar, the UI shows every run, and runs can also be triggered by hand from the UI or
`prefect deployment run refresh/refresh-nightly`.

`prefect.yaml` at the repo root describes the same two deployments for `prefect deploy --all`
with a process work pool, for setups where workers on other machines pick up the runs.
"""

from __future__ import annotations

import importlib
import inspect
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prefect import Flow
    from prefect.deployments.runner import RunnerDeployment

DEFAULT_REFRESH_CRON = "0 2 * * *"  # every night at 02:00 UTC
DEFAULT_REPORT_CRON = "0 6 * * 1"  # Mondays at 06:00 UTC
TIMEZONE = "UTC"
REFRESH_DEPLOYMENT = "refresh-nightly"
REPORT_DEPLOYMENT = "weekly-report"


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

    prefect_serve(*build_deployments(refresh_cron, report_cron, warehouse, offline=offline),
                  limit=limit)


if __name__ == "__main__":
    serve()
