"""The nightly `refresh` flow: one Prefect task per source, whose state is the truth.

Each source is a `scrape-<source>` task run: Completed when it landed (or was skipped for a
missing key), Failed when it did not, with the reason in that task run's logs. A failed
source never stops the others. The flow's final state follows one rule:

- no source failed: Completed, "all N sources refreshed";
- some failed, the rest landed: Completed, "K of N sources failed: a, b" (the operator finds
  the red task runs; the warehouse keeps serving the failed sources' earlier prices);
- every source failed: Failed, "N of N sources failed: ...".

Prefect-level control: tags `source:<name>` and `provider:<name>` on each task run (so a tag
concurrency limit works: `prefect concurrency-limit create provider:aws 1`) and at most
GPUPRICES_WORKERS sources at once (a bounded ThreadPoolTaskRunner). Two policies live below
Prefect, in refresh_work/scrapers.http, so that the plain CLI path has them too:
- retries (the tasks have retries=0): `with_retries` is the one retry layer, because only it
  sees Retry-After and it retries the fetch alone, never the parse or the warehouse write;
- the per-source timeout (GPUPRICES_SOURCE_TIMEOUT_S): the fetch stops at its deadline, its
  requests' timeouts cut to fit. Prefect's task `timeout_seconds` is not used: in a worker
  thread it cannot interrupt network I/O (Prefect warns so on every task run), and where it
  does fire it injects an exception at an arbitrary instruction, e.g. mid-write.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb
import httpx
from prefect import flow, task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.futures import PrefectFuture
from prefect.runtime import flow_run
from prefect.states import Completed, Failed, State
from prefect.task_runners import ThreadPoolTaskRunner

from contract.settings import Settings
from flows.refresh_work import (
    RefreshResult,
    Writer,
    progress_log,
    refresh_now,
    run_refresh,
    scrape_source,
    summary_rows,
)
from flows.run_logs import project_logs_to_prefect
from scrapers.base import Source
from scrapers.registry import all_sources
from warehouse.ingest import ScrapeOutcome

__all__ = [
    "AllSourcesFailed", "RefreshResult", "SourceFailed", "failure_message", "final_state",
    "progress_log", "refresh", "refresh_now", "run_refresh", "source_tags",
]


class SourceFailed(Exception):
    """Raised by a source's task when the source did not land (already recorded in the
    warehouse): it makes the task run Failed and carries the outcome back to the flow."""

    def __init__(self, outcome: ScrapeOutcome) -> None:
        error = str(outcome.error).removeprefix(f"{outcome.source}: ")
        super().__init__(f"{outcome.source} {outcome.status}: {error}")
        self.outcome = outcome

    def __reduce__(self) -> tuple[Any, ...]:
        return (SourceFailed, (self.outcome,))


class AllSourcesFailed(RuntimeError):
    """The Failed refresh's result: nothing landed."""


def scrape_or_fail(
    source_name: str,
    *,
    settings: Settings,
    con: duckdb.DuckDBPyConnection,
    client: httpx.Client | None,
    writer: Writer,
    run_id: str,
    offline: bool,
) -> ScrapeOutcome:
    """One source's work as a task body: its outcome, or SourceFailed when it did not land."""
    outcome = scrape_source(source_name, settings=settings, con=con, client=client,
                            writer=writer, run_id=run_id, offline=offline)
    if not outcome.ok:
        raise SourceFailed(outcome)
    return outcome


scrape_task = task(scrape_or_fail, name="scrape-source", cache_policy=NO_CACHE, retries=0)


def source_tags(source: Source) -> set[str]:
    """`source:<name>` and `provider:<name>` (an aggregator of many providers: its own name)."""
    provider = source.name if source.provider == "*" else source.provider
    return {f"source:{source.name}", f"provider:{provider}"}


def _outcome_of(future: PrefectFuture[ScrapeOutcome]) -> tuple[ScrapeOutcome | None, str]:
    future.wait()
    state = future.state
    if state.is_completed():
        return future.result(), ""
    error = future.result(raise_on_failure=False)
    if isinstance(error, SourceFailed):
        return error.outcome, ""
    return None, f"{state.name}: {state.message or error}"  # crashed: not recorded yet


def run_as_tasks(names: list[str], kwargs: dict[str, Any]) -> Iterable[
        tuple[str, tuple[ScrapeOutcome | None, str]]]:
    """Every source as its own Prefect task run, at most `settings.max_workers` at once."""
    settings: Settings = kwargs["settings"]
    sources = all_sources()
    with ThreadPoolTaskRunner(max_workers=settings.max_workers) as runner:
        futures = {
            name: runner.submit(
                scrape_task.with_options(task_run_name=f"scrape-{name}",
                                         tags=source_tags(sources[name])),
                {"source_name": name, **kwargs})
            for name in names
        }
        for name, future in futures.items():
            yield name, _outcome_of(future)


def final_state(result: RefreshResult) -> State:
    """The documented rule: Failed only when no source landed."""
    summary = {"run_id": result.run_id, "message": result.message,
               "failed": [o.source for o in result.failed],
               "outcomes": summary_rows(result.outcomes)}
    if result.outcomes and len(result.failed) == len(result.outcomes):
        return Failed(message=result.message, data=AllSourcesFailed(result.message))
    return Completed(message=result.message, data=summary)


def failure_message(state: State) -> str | None:
    """What a refresh flow run means for `gpuprices refresh --prefect`: None when every source
    refreshed, else the message naming the failed sources. RuntimeError when it did not run."""
    result = state.result(raise_on_failure=False)
    if isinstance(result, AllSourcesFailed):
        return str(result)
    if isinstance(result, BaseException) or not isinstance(result, dict):
        raise RuntimeError(f"refresh did not run: {result}")
    return str(result["message"]) if result["failed"] else None


@flow(name="refresh")
def refresh(
    sources: list[str] | None = None,
    offline: bool = False,
    warehouse: str | None = None,
    wait_s: float = 0.0,
) -> State:
    """Scrape every source (or `sources`) into the warehouse; offline replays bundled examples.
    `wait_s`: wait that long for another writer of a DuckDB file (flows.fanout's batches)."""
    with project_logs_to_prefect():
        result = refresh_now(sources, offline, warehouse,
                             run_id=f"refresh-{flow_run.id or uuid.uuid4().hex}",
                             runner=run_as_tasks, wait_s=max(0.0, min(wait_s, 86_400.0)))
        create_table_artifact(
            key="refresh-summary", table=summary_rows(result.outcomes),
            description=f"Refresh {result.run_id} into {Path(result.warehouse).name}: "
                        f"{sum(o.rows_stored for o in result.outcomes)} rows stored; "
                        f"{result.message}",
        )
    return final_state(result)
