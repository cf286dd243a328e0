"""Sources refreshed by several Prefect workers at once, and the lake's upkeep on a schedule.

`refresh_fanout` splits the sources into batches and creates one flow run of the
`refresh/refresh-batch` deployment per batch (prefect.yaml). The batch runs wait in the work
pool; each of its N process workers (`prefect worker start --pool gpuprices`, on any machine)
takes the next one, so N batches scrape at once. Each batch run is an ordinary `refresh` of
its sources (one task per source, its own run id) writing straight into the warehouse:
- a lake (`ducklake:postgres:...`): every landing commits on its own through the catalog,
  serial at commit time (warehouse.transaction: a conflict runs that landing again, checks
  included), so two workers landing at once both land, and a worker killed mid-write leaves nothing;
- a DuckDB file: one writer at a time, so a batch waits for the file (`wait_s`) instead of
  failing; the fetching still overlaps only within a batch.
A batch run that crashes (its worker died) is re-run by hand or by the next schedule: what it
had not committed is not in the warehouse, what it had is kept, and a replay adds nothing
(landings are idempotent by capture id).

`lake_upkeep` (the `lake-upkeep` deployment, hourly): expire old snapshots, merge small files,
delete unreferenced ones (warehouse.lake.upkeep).
"""

from __future__ import annotations

import time
from typing import Any

from prefect import flow, get_run_logger

from scrapers.registry import all_sources, resolve_names

__all__ = ["BATCH_DEPLOYMENT", "batches", "lake_upkeep", "refresh_fanout"]

BATCH_DEPLOYMENT = "refresh/refresh-batch"
_FINAL = ("COMPLETED", "FAILED", "CRASHED", "CANCELLED")


def batches(names: list[str], size: int) -> list[list[str]]:
    """`names` in batches of at most `size` (1..1000), in order."""
    if not 1 <= size <= 1000:
        raise ValueError(f"batch size {size} is out of range: allowed 1 to 1,000")
    return [names[i:i + size] for i in range(0, len(names), size)]


@flow(name="refresh-fanout")
def refresh_fanout(
    sources: list[str] | None = None,
    batch_size: int = 4,
    offline: bool = False,
    warehouse: str | None = None,
    wait: bool = True,
    wait_s: float = 3600.0,
) -> dict[str, Any]:
    """One `refresh-batch` flow run per batch of sources, for the pool's workers to share.

    `wait`: follow the batch runs until they end (the result lists their states); `wait_s`:
    how long a batch waits for a DuckDB file another batch is writing."""
    from prefect.deployments import run_deployment

    logger = get_run_logger()
    names = resolve_names(sources) if sources else list(all_sources())
    runs = []
    for number, batch in enumerate(batches(names, batch_size), start=1):
        runs.append(run_deployment(
            BATCH_DEPLOYMENT, timeout=0, as_subflow=True,
            flow_run_name=f"batch-{number}: {', '.join(batch)}"[:120],
            parameters={"sources": batch, "offline": offline, "warehouse": warehouse,
                        "wait_s": wait_s}))
    logger.info("%d sources in %d batch runs of %s", len(names), len(runs), BATCH_DEPLOYMENT)
    states = {str(run.name): str(run.state_type.value if run.state_type else "?")
              for run in runs}
    if wait:
        states = _follow([run.id for run in runs])
        logger.info("batch runs: %s", ", ".join(f"{n} {s}" for n, s in sorted(states.items())))
    return {"batches": len(runs), "sources": len(names), "states": states}


def _follow(ids: list[Any], poll_s: float = 2.0) -> dict[str, str]:
    """Poll the batch runs until each is in a final state; name -> state type."""
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        while True:
            runs = [client.read_flow_run(run_id) for run_id in ids]
            states = {str(r.name): str(r.state_type.value if r.state_type else "?")
                      for r in runs}
            if all(state in _FINAL for state in states.values()):
                return states
            time.sleep(poll_s)


@flow(name="lake-upkeep")
def lake_upkeep(warehouse: str | None = None, keep_hours: float = 168.0) -> dict[str, int]:
    """Expire snapshots older than `keep_hours`, merge small files, delete unneeded ones."""
    from datetime import timedelta

    from contract.settings import load_settings
    from warehouse.dialect import is_lake_url
    from warehouse.lake import upkeep_lake

    settings = load_settings(warehouse=warehouse)
    if not is_lake_url(settings.warehouse):
        raise ValueError(f"{settings.warehouse} is a DuckDB file: upkeep is for a lake")
    result = upkeep_lake(str(settings.warehouse),
                         keep=timedelta(hours=max(0.0, min(keep_hours, 24 * 365.0))))
    get_run_logger().info("upkeep: %s", result)
    return {"snapshots_before": result.snapshots_before,
            "snapshots_after": result.snapshots_after, "files_before": result.files_before,
            "files_after": result.files_after, "files_deleted": result.files_deleted}
