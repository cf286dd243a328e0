"""Keep the market tables (reports/market.sql) up after a backfill or reparse changed past days.

The refresh keeps them up for the newest days (reports.market_store.update_market_after_refresh);
history written behind it would otherwise wait for `gpuprices market --rebuild`. Called here, in
the flows layer, because the warehouse layer must not import reports.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, date, datetime

import duckdb

from reports.market_store import update_market_from

__all__ = ["CHANGED", "market_after_history"]

log = logging.getLogger("gpuprices.market")

# Result statuses that changed what a past day's prices were: new rows, a re-confirmation
# (it moves which capture is current, and the carry-forward), rows replaced or recovered.
CHANGED = frozenset({"success", "unchanged", "reparsed", "landed"})


def _day(moment: object) -> date | None:
    if isinstance(moment, datetime):
        return moment.astimezone(UTC).date()
    return moment if isinstance(moment, date) else None


def market_after_history(con: duckdb.DuckDBPyConnection,
                         changed: Iterable[tuple[str, object]]) -> list[date]:
    """Recompute the market from the earliest changed day on; `changed` holds (status, day or
    observed time) pairs of what a backfill/reparse did. Never raises: the prices are already
    committed, so a failure is logged loudly (`gpuprices market --rebuild` repairs it)."""
    days = [day for status, moment in changed
            if status in CHANGED and (day := _day(moment)) is not None]
    if not days:
        return []
    try:
        return update_market_from(con, min(days))
    except Exception:
        log.exception("market price update after %s failed", min(days))
        return []
