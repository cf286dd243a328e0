"""The project's log lines in the Prefect run's logs, however the flow was started.

The project logs on `gpuprices.*` (per-source lines, retries, ALERT lines, summaries). Prefect
sends only its own loggers to the API unless told otherwise (PREFECT_LOGGING_EXTRA_LOGGERS),
and a worker or `prefect.serve` starts flow runs in fresh processes with whatever environment
they have. So each flow attaches Prefect's APILogHandler to `gpuprices` itself, at INFO, for
as long as it runs: the lines reach the flow run's logs (or the task run's, when logged from
a task) on every path: `gpuprices serve`, a process worker, `gpuprices refresh --prefect`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["PROJECT_LOGGER", "project_logs_to_prefect"]

PROJECT_LOGGER = "gpuprices"


def _targets() -> list[logging.Logger]:
    """`gpuprices`, plus any child that does not pass its records up (the CLI's progress
    display turns propagation off on `gpuprices.refresh`)."""
    children = [logging.getLogger(name) for name in list(logging.root.manager.loggerDict)
                if name.startswith(PROJECT_LOGGER + ".")]
    return [logging.getLogger(PROJECT_LOGGER), *(c for c in children if not c.propagate)]


@contextmanager
def project_logs_to_prefect(level: int = logging.INFO) -> Iterator[None]:
    """While the block runs, `gpuprices.*` records at `level` and above go to the run logs."""
    from prefect.logging.handlers import APILogHandler

    handler = APILogHandler(level=level)
    attached: list[tuple[logging.Logger, int]] = []
    for logger in _targets():
        attached.append((logger, logger.level))
        # PREFECT_LOGGING_EXTRA_LOGGERS=gpuprices may have attached one already
        if not any(isinstance(h, APILogHandler) for h in logger.handlers):
            logger.addHandler(handler)
        if logger.getEffectiveLevel() > level:
            logger.setLevel(level)
    try:
        yield
    finally:
        # Send what the block logged before the handler goes: a worker's flow process exits
        # right after the flow, and lines still queued then (the summary, ALERT) were lost.
        handler.flush()
        for logger, old_level in attached:
            if handler in logger.handlers:
                logger.removeHandler(handler)
            logger.setLevel(old_level)
