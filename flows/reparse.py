"""Re-parse wiring: the warehouse's re-parse with the parsers of this code's source registry.

No Prefect here: `gpuprices reparse` calls it directly. Every derived table (the market price
included) is kept up by the append each re-parsed capture goes through.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import duckdb

from scrapers.registry import all_sources, get_source
from warehouse.reparse import ReparseResult, reparse_captures

__all__ = ["reparse"]


def reparse(con: duckdb.DuckDBPyConnection, *, archive_root: Path, source: str | None = None,
            since: date | None = None, include_failed: bool = True) -> list[ReparseResult]:
    """Re-parse the stored captures of `source` (all by default) observed on/after `since`,
    and (`include_failed`) its failed/rejected captures kept for reparse.

    KeyError when `source` names no registered source (an alias such as skypilot is fine).
    """
    name = get_source(source).name if source is not None else None
    return reparse_captures(con, all_sources(), archive_root=archive_root, source=name,
                            since=since, include_failed=include_failed)
