"""Backfills and reparse keep the market tables up for the past days they change."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import duckdb

from flows.backfill import backfill_skypilot
from flows.market_upkeep import market_after_history
from reports.market_store import rebuild_market, store_market_day
from tests.ops.snapshots import lambda_csv, moving_history, runpod_csv, write_snapshot
from warehouse.connection import open_warehouse

MARKET = ("SELECT * EXCLUDE (computed_at) FROM market_price ORDER BY day, gpu_model, segment")


def stored(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    return con.execute(MARKET).fetchall()


def h100_min(con: duckdb.DuckDBPyConnection, day: str) -> object:
    row = con.execute("SELECT min_usd FROM market_price WHERE gpu_model = 'H100 PCIe' "
                      "AND segment = 'all' AND day = ?", [date.fromisoformat(day)]).fetchone()
    return row[0] if row else None


def test_a_backfill_of_past_days_fills_the_market_table(tmp_path: Path,
                                                        warehouse_path: Path) -> None:
    history = moving_history(tmp_path / "skypilot")
    with open_warehouse(warehouse_path) as con:
        backfill_skypilot(con, history, archive_root=tmp_path / "raw")
        # Each snapshot's day and the carry_forward_days (3) after it; between, the prices
        # are stale and no value is made.
        assert {row[0] for row in stored(con)} == {
            date(2024, month, day) for month in (1, 2, 3) for day in range(1, 5)}
        assert (h100_min(con, "2024-01-04"), h100_min(con, "2024-02-01")) == (2.49, 1.99)

        # History older than anything stored: its days appear, later ones are recomputed.
        write_snapshot(history, "lambda", "2023-12-01", lambda_csv(h100=2.99),
                       "2023-12-01T21:00:00Z")
        write_snapshot(history, "runpod", "2023-12-01", runpod_csv(), "2023-12-01T21:00:00Z")
        backfill_skypilot(con, history, archive_root=tmp_path / "raw")
        assert h100_min(con, "2023-12-01") == 2.99
        assert h100_min(con, "2023-12-04") == 2.99  # carried forward
        assert h100_min(con, "2023-12-05") is None  # stale after carry_forward_days
        assert h100_min(con, "2024-02-01") == 1.99
        # Exactly what a full rebuild stores.
        upkept = stored(con)
        assert rebuild_market(con) and stored(con) == upkept

        # The days left out as silent (every source's prices stale) have no values indeed.
        for silent in ("2023-12-05", "2024-01-05", "2024-01-20", "2024-02-05"):
            assert store_market_day(con, date.fromisoformat(silent)) == 0
        assert con.execute("SELECT count(*) FROM market_provider_price WHERE day NOT IN "
                           "(SELECT day FROM market_price)").fetchone() == (0,)
        assert stored(con) == upkept

        # Nothing changed (all already stored): nothing recomputed.
        assert backfill_skypilot(con, history, archive_root=tmp_path / "raw")
        assert stored(con) == upkept


def test_upkeep_recomputes_from_the_earliest_changed_day_only(tmp_path: Path,
                                                              warehouse_path: Path) -> None:
    with open_warehouse(warehouse_path) as con:
        backfill_skypilot(con, moving_history(tmp_path / "s"), archive_root=tmp_path / "raw")
        before = dict(con.execute("SELECT day, max(computed_at) FROM market_price GROUP BY day"
                                  ).fetchall())
        recomputed = market_after_history(con, [("failed", date(2024, 1, 5)),
                                                ("success", date(2024, 2, 20)),
                                                ("already stored", date(2024, 1, 2))])
        assert recomputed[0] == date(2024, 2, 20) and recomputed[-1] == date(2024, 3, 4)
        after = dict(con.execute("SELECT day, max(computed_at) FROM market_price GROUP BY day"
                                 ).fetchall())
        assert all(after[d] == before[d] for d in before if d < date(2024, 2, 20))
        assert all(after[d] > before[d] for d in before if d >= date(2024, 2, 20))
        assert market_after_history(con, [("failed", date(2024, 1, 5))]) == []
        assert len(recomputed) == (date(2024, 3, 4) - date(2024, 2, 20)).days + 1
