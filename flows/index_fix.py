"""The index after each write that can touch it (no Prefect here; the flows call these).

- after a full refresh: `fix_after_refresh` fixes every unfixed day up to today (today's
  fixing is taken then) and checks published days for revisions;
- after a backfill or a reparse: `revise_after_history` only checks published days (history
  landing later never makes a new fixing in the past: it writes revision records).
A failure here is logged and never fails the refresh: the prices are stored either way, and
`gpuprices index fix` can be run again.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import duckdb

from scrapers.base import Source
from warehouse.index.publish import FixResult, check_revisions, fix_index

__all__ = ["fix_after_refresh", "revise_after_history"]

log = logging.getLogger("gpuprices.refresh")


def _said(result: FixResult) -> None:
    if result.fixed:
        log.info("index: fixed %d day(s) up to %s (%d fixings)", len(result.fixed),
                 result.fixed[-1], result.fixings)
    for fixing_id, number, why in result.revisions:
        log.warning("index: revision %d of %s (the fixing stands): %s", number, fixing_id, why)


def fix_after_refresh(con: duckdb.DuckDBPyConnection,
                      sources: Mapping[str, Source]) -> FixResult | None:
    try:
        result = fix_index(con, sources=sources)
    except Exception as exc:  # the refresh stored its prices; the index waits for a fix
        log.error("index: not fixed: %s", str(exc).splitlines()[0] if str(exc) else exc)
        return None
    _said(result)
    return result


def revise_after_history(con: duckdb.DuckDBPyConnection) -> FixResult | None:
    try:
        result = check_revisions(con)
    except Exception as exc:
        log.error("index: revisions not checked: %s",
                  str(exc).splitlines()[0] if str(exc) else exc)
        return None
    _said(result)
    return result
