"""A local DuckLake (catalog in a DuckDB file, data in a folder), offline: publish and read."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from contract.settings import load_settings
from flows.backfill import backfill_skypilot
from flows.refresh import run_refresh
from gpuprices.cli import app
from tests.ops.snapshots import lambda_csv, write_snapshot
from warehouse.connection import WarehouseError, connect, connect_read_only, open_warehouse
from warehouse.lake import load_ducklake, publish


def latest(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    return con.execute("SELECT source, provider, offering, region, pricing, price_usd_per_hour "
                       "FROM latest_price ORDER BY ALL").fetchall()


def test_refresh_offline_then_query_latest_price_from_the_lake(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh" / "gpu_prices.duckdb"
    settings = load_settings({}, warehouse=warehouse)
    outcomes = run_refresh(settings, offline=True)
    assert outcomes and all(o.ok for o in outcomes)
    lake = f"ducklake:{tmp_path / 'lake' / 'catalog.ducklake'}"
    (tmp_path / "lake").mkdir()

    first = publish(warehouse, lake)
    assert "observation" in first.recreated
    with open_warehouse(warehouse, read_only=True) as con:
        local_latest = latest(con)
        observations = con.execute("SELECT count(*) FROM observation").fetchone()
    assert observations is not None and first.tables["observation"] == observations[0]
    # The Parquet files are in the data folder beside the catalog.
    assert list((tmp_path / "lake" / "catalog.ducklake.files").rglob("*.parquet"))

    # Any reader: the warehouse URL setting, or plain DuckDB with the extension loaded.
    lake_con = connect_read_only(lake)
    try:
        assert latest(lake_con) == local_latest and len(local_latest) > 100
    finally:
        lake_con.close()
    plain = duckdb.connect()
    try:
        load_ducklake(plain)
        plain.execute(f"ATTACH '{lake}' AS lake (READ_ONLY)")
        plain.execute("USE lake")
        assert latest(plain) == local_latest
    finally:
        plain.close()
    runner = CliRunner()
    shown = runner.invoke(app, ["query", "SELECT count(*) AS n FROM latest_price", "-w", lake,
                                "-f", "csv"])
    assert shown.exit_code == 0, shown.output
    assert shown.output.split() == ["n", str(len(local_latest))]
    # The report and its board read the lake as they read a file (the current prices held
    # in a temporary table of the reading connection, beside the attached lake).
    reports = tmp_path / "reports"
    shown = runner.invoke(app, ["report", "-w", lake, "--out", str(reports)])
    assert shown.exit_code == 0, shown.output
    board = (reports / "board" / "index.html").read_text(encoding="utf-8")
    assert "<article class=\"tile\"" in board
    assert list(reports.glob("*.md"))

    # Publishing again copies nothing; new history copies only the new capture.
    again = publish(warehouse, lake)
    assert (again.captures_copied, again.recreated) == (0, ())
    with open_warehouse(warehouse) as con:
        write_snapshot(tmp_path / "hist", "lambda", "2024-02-29", lambda_csv())
        backfill_skypilot(con, tmp_path / "hist", archive_root=settings.archive_root)
    third = publish(warehouse, lake)
    assert third.captures_copied == 1
    assert third.tables["observation"] == observations[0] + 4
    with pytest.raises(WarehouseError, match="is a copy published from a DuckDB warehouse"):
        connect(lake)
