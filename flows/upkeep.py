"""Rebuilding the derived tables on demand (`gpuprices market --rebuild`).

Nothing here keeps them up day to day: every append does, in its own transaction
(warehouse.summaries.after_append). A rebuild recomputes every one of them from the stored
observations, e.g. after market.toml changed.
"""

from __future__ import annotations

import duckdb

from warehouse.summaries import rebuild_committed

__all__ = ["rebuild_derived"]


def rebuild_derived(con: duckdb.DuckDBPyConnection) -> int:
    """Recompute every derived table in one transaction; returns the days of market values."""
    rebuild_committed(con)
    row = con.execute("SELECT count(DISTINCT day) FROM market_price").fetchone()
    return int(row[0]) if row else 0
