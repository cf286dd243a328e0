"""Read-only questions about the runs and reference tables, as small functions returning polars
frames. Prices are not read here: every price question reads the semantic layer
(warehouse.semantic). Every value that comes from a user is a bound parameter."""

from __future__ import annotations

from typing import TYPE_CHECKING

from warehouse.frames import sql_frame

if TYPE_CHECKING:  # the frames' type: `summary` prints these rows without polars
    import duckdb
    import polars as pl

__all__ = ["UNKNOWN_GPUS", "reference_table", "refresh_runs", "rows_per_source",
           "rows_per_source_query", "table_exists", "unknown_gpus"]

UNKNOWN_GPUS = "SELECT * FROM unknown_gpu ORDER BY rows DESC, gpu_name"


def rows_per_source_query(con: duckdb.DuckDBPyConnection,
                          run_id: str | None = None) -> tuple[str, list[object]]:
    """The SQL and parameters of what each source did in one run (the latest refresh when
    run_id is None)."""
    if run_id is None:
        row = con.execute(
            "SELECT run_id FROM refresh_run WHERE flow = 'refresh' ORDER BY started_at DESC LIMIT 1"
        ).fetchone()
        run_id = row[0] if row else ""
    return ("SELECT source, status, rows_parsed, rows_stored, rows_quarantined, attempts, "
            "coalesce(error, note) AS detail FROM scrape_run WHERE run_id = ? ORDER BY source",
            [run_id])


def rows_per_source(con: duckdb.DuckDBPyConnection, run_id: str | None = None) -> pl.DataFrame:
    """What each source did in one run (the latest refresh when run_id is None)."""
    return sql_frame(con, *rows_per_source_query(con, run_id))


def unknown_gpus(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    return sql_frame(con, UNKNOWN_GPUS)


def table_exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]
    ).fetchone()
    return bool(row and row[0])


def reference_table(con: duckdb.DuckDBPyConnection, name: str) -> pl.DataFrame | None:
    """A reference table (plan, gpu_ownership) or None when this warehouse has none yet."""
    if name not in ("plan", "gpu_ownership") or not table_exists(con, name):
        return None
    return sql_frame(con, f"SELECT * FROM {name}")


def refresh_runs(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> pl.DataFrame:
    return sql_frame(
        con, "SELECT run_id, flow, started_at, finished_at, offline, status FROM refresh_run "
        "WHERE list_contains(?, run_id) ORDER BY started_at",
        [run_ids],
    )
