"""The nightly `refresh` flow: the refresh's work (flows/refresh_work.py) as Prefect tasks.

A source that fails is recorded and named in the flow's final state; it never stops the others.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.runtime import flow_run
from prefect.states import Completed, Failed, State

from flows.refresh_work import (
    RefreshResult,
    progress_log,
    refresh_now,
    run_refresh,
    scrape_source,
    summary_rows,
)
from warehouse.ingest import ScrapeOutcome

__all__ = ["RefreshResult", "progress_log", "refresh", "refresh_now", "run_refresh"]

scrape_task = task(scrape_source, name="scrape-source", cache_policy=NO_CACHE,
                   task_run_name="scrape-{source_name}")


def _state_result(future: Any) -> tuple[ScrapeOutcome | None, str]:
    state = future.wait() or future.state
    if state.is_completed():
        return future.result(), ""
    return None, state.message or state.name


def run_as_tasks(names: list[str], kwargs: dict[str, Any]) -> Iterable[
        tuple[str, tuple[ScrapeOutcome | None, str]]]:
    """Every source as a Prefect task run (concurrent, visible in the UI)."""
    futures = {name: scrape_task.submit(name, **kwargs) for name in names}
    for name, future in futures.items():
        yield name, _state_result(future)


@flow(name="refresh", log_prints=True)
def refresh(
    sources: list[str] | None = None,
    offline: bool = False,
    warehouse: str | None = None,
) -> State:
    """Scrape every source (or `sources`) into the warehouse; offline replays bundled examples."""
    result = refresh_now(sources, offline, warehouse,
                         run_id=f"refresh-{flow_run.id or uuid.uuid4().hex}",
                         runner=run_as_tasks)
    rows = summary_rows(result.outcomes)
    create_table_artifact(
        key="refresh-summary", table=rows,
        description=f"Refresh {result.run_id} into {Path(result.warehouse).name}: "
                    f"{sum(o.rows_stored for o in result.outcomes)} rows stored",
    )
    if result.failed:
        return Failed(message=result.message, data=rows)
    return Completed(message=result.message, data=rows)
