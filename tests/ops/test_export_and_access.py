"""Exports read back by DuckDB and polars; readers during a write read the snapshot, or get
WarehouseBusy naming the writer, never a hang."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

from flows.backfill import backfill_skypilot
from gpuprices.cli import app
from tests.ops.snapshots import moving_history
from warehouse.connection import WarehouseBusy, connect_read_only, open_warehouse
from warehouse.export import export
from warehouse.snapshot import read_dir

PARTITIONS = [("2024-01-01", "lambda", 4), ("2024-01-01", "runpod", 4),
              ("2024-02-01", "lambda", 4), ("2024-02-01", "runpod", 4),
              ("2024-03-01", "lambda", 4), ("2024-03-01", "runpod", 4)]


@pytest.fixture
def history_warehouse(tmp_path: Path, warehouse_path: Path) -> Path:
    with open_warehouse(warehouse_path) as con:
        backfill_skypilot(con, moving_history(tmp_path / "skypilot"),
                          archive_root=tmp_path / "raw")
    return warehouse_path


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_export_reads_back_in_duckdb_and_polars(history_warehouse: Path, tmp_path: Path,
                                                fmt: str) -> None:
    out = tmp_path / "export"
    con = connect_read_only(history_warehouse)  # exporting needs no write lock
    try:
        result = export(con, out, fmt)  # type: ignore[arg-type]
        export(con, out, fmt)  # type: ignore[arg-type]  # again: overwrites, never doubles
        total = con.execute("SELECT sum(price_usd_per_hour) FROM observation").fetchone()
    finally:
        con.close()
    assert (result.observations, result.partitions) == (24, 6)
    assert result.files["observations/"] == 24 and result.files[f"latest_price.{fmt}"] == 8
    assert result.files[f"daily_cheapest.{fmt}"] == 9
    assert (out / "observations" / "day=2024-02-01" / "provider=lambda" / f"data_0.{fmt}"
            ).exists()

    reader = "read_parquet" if fmt == "parquet" else "read_csv"
    glob = str(out / "observations" / "**" / f"*.{fmt}")
    rows = duckdb.sql(f"SELECT day::VARCHAR, provider, count(*) FROM {reader}('{glob}', "
                      "hive_partitioning = true) GROUP BY ALL ORDER BY ALL").fetchall()
    assert rows == PARTITIONS

    if fmt == "parquet":
        frame = pl.read_parquet(out / "observations", hive_partitioning=True)
    else:
        frame = pl.read_csv(glob, try_parse_dates=True)  # polars reads every file of the glob
        assert "day" not in frame.columns  # the folder names carry day and provider
    assert frame.height == 24
    assert total is not None
    assert frame["price_usd_per_hour"].sum() == pytest.approx(total[0])
    latest = pl.read_parquet(out / "latest_price.parquet") if fmt == "parquet" else \
        pl.read_csv(out / "latest_price.csv")
    h100 = latest.filter(pl.col("offering") == "gpu_1x_h100_pcie")["price_usd_per_hour"]
    assert h100.to_list() == [1.99, 1.99]


WRITER = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
con.execute("BEGIN TRANSACTION")
con.execute("INSERT INTO refresh_run VALUES ('w', 'refresh', now(), NULL, false, 'running', NULL)")
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
"""


def test_readers_read_the_snapshot_while_another_program_writes(history_warehouse: Path
                                                               ) -> None:
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(history_warehouse), "60"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "holding"
        started = time.monotonic()
        con = connect_read_only(history_warehouse)  # the read snapshot: no wait, no error
        try:
            assert con.execute("SELECT count(*) FROM refresh_run WHERE run_id = 'w'"
                               ).fetchone() == (0,)
        finally:
            con.close()
        cli = CliRunner().invoke(app, ["query", "SELECT count(*) AS n FROM observation", "-w",
                                       str(history_warehouse), "-f", "csv"])
        assert cli.exit_code == 0, cli.output
        assert cli.output.splitlines()[-1] == "24"
        assert time.monotonic() - started < 10

        # Without a snapshot the reader needs the file: one line naming the writer's PID.
        shutil.rmtree(read_dir(history_warehouse))
        with pytest.raises(WarehouseBusy, match=re.escape(
                f"is being written by a writer outside gpuprices (pid {writer.pid}, ")):
            connect_read_only(history_warehouse)
        cli = CliRunner().invoke(app, ["query", "SELECT 1", "-w", str(history_warehouse)])
        assert cli.exit_code == 1
        assert f"(pid {writer.pid}, " in cli.output and len(cli.output.splitlines()) == 1
    finally:
        writer.kill()
        writer.wait(timeout=10)
    # Once the writer is gone, readers get in (and its uncommitted row never landed).
    con = connect_read_only(history_warehouse)
    try:
        assert con.execute("SELECT count(*) FROM refresh_run WHERE run_id = 'w'").fetchone() \
            == (0,)
    finally:
        con.close()
