"""No flow keeps the market tables up: every append does, in its own transaction, from the
first day it changed on, so backfills and re-parses of past days keep them equal to a rebuild."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import duckdb

from flows.backfill import backfill_skypilot
from flows.reparse import reparse
from tests.ops.snapshots import lambda_csv, moving_history, runpod_csv, write_snapshot
from warehouse.connection import open_warehouse
from warehouse.summaries import rebuild_committed

MARKET = ("SELECT * EXCLUDE (computed_at) FROM market_price ORDER BY day, gpu_model, segment")


def stored(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    return con.execute(MARKET).fetchall()


def h100_min(con: duckdb.DuckDBPyConnection, day: str) -> object:
    row = con.execute("SELECT min_usd_per_gpu_hour FROM market_price WHERE gpu_model = 'H100 PCIe' "
                      "AND segment = 'all' AND day = ?", [date.fromisoformat(day)]).fetchone()
    return row[0] if row else None


def test_a_backfill_of_past_days_fills_the_market_table(tmp_path: Path,
                                                        warehouse_path: Path) -> None:
    history = moving_history(tmp_path / "skypilot")
    with open_warehouse(warehouse_path) as con:
        backfill_skypilot(con, history, archive_root=tmp_path / "raw")
        # Snapshots are dated 21:00: their prices are fresh (seen within 48 h) at the end of
        # that day and of the next; later every price is stale and no value is made.
        assert {row[0] for row in stored(con)} == {
            date(2024, month, day) for month in (1, 2, 3) for day in (1, 2)}
        assert (h100_min(con, "2024-01-02"), h100_min(con, "2024-02-01")) == (2.49, 1.99)
        # (each snapshot is the whole catalog: lambda's February file carried into March's)
        assert h100_min(con, "2024-03-01") == 1.99

        # History older than anything stored: its days appear, later ones are recomputed.
        write_snapshot(history, "lambda", "2023-12-01", lambda_csv(h100=2.99),
                       "2023-12-01T21:00:00Z")
        write_snapshot(history, "runpod", "2023-12-01", runpod_csv(), "2023-12-01T21:00:00Z")
        backfill_skypilot(con, history, archive_root=tmp_path / "raw")
        assert h100_min(con, "2023-12-02") == 2.99  # carried forward
        assert h100_min(con, "2023-12-03") is None  # stale
        assert h100_min(con, "2024-02-01") == 1.99
        upkept = stored(con)
        rebuild_committed(con)  # exactly what a full rebuild stores
        assert stored(con) == upkept

        # Re-parsing every stored capture lands each through the append: the same table.
        assert reparse(con, archive_root=tmp_path / "raw")
        assert stored(con) == upkept
        # Nothing new (all already stored): nothing changes.
        assert backfill_skypilot(con, history, archive_root=tmp_path / "raw")
        assert stored(con) == upkept


def test_an_append_recomputes_from_the_day_it_changed_only(tmp_path: Path,
                                                           warehouse_path: Path) -> None:
    history = moving_history(tmp_path / "s")
    with open_warehouse(warehouse_path) as con:
        backfill_skypilot(con, history, archive_root=tmp_path / "raw")
        before = dict(con.execute("SELECT day, max(computed_at) FROM market_price GROUP BY day"
                                  ).fetchall())
        write_snapshot(history, "lambda", "2024-02-20", lambda_csv(h100=1.89),
                       "2024-02-20T21:00:00Z")
        backfill_skypilot(con, history, archive_root=tmp_path / "raw")
        after = dict(con.execute("SELECT day, max(computed_at) FROM market_price GROUP BY day"
                                 ).fetchall())
        assert all(after[d] == before[d] for d in before if d < date(2024, 2, 20))
        assert all(after[d] > before[d] for d in before if d >= date(2024, 2, 20))
        assert {date(2024, 2, 20), date(2024, 2, 21)} <= set(after)
        assert h100_min(con, "2024-02-21") == 1.89
