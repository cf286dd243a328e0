"""The Parquet history: read back with pyarrow and compared with the warehouse (rows per day
and provider, column types, provenance that joins to the captures), the manifest's digests,
and a second export that writes only the day that is new."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import warehouse.export as export_module
from tests.reports.conftest import Builder, offer
from warehouse.connection import connect_read_only, open_warehouse
from warehouse.export import MANIFEST, TABLES, export

PROVENANCE = ("observed_at", "run_id", "capture_id", "source", "source_url")


def observations(folder: Path) -> pa.Table:
    return ds.dataset(folder / "observations", format="parquet", partitioning="hive").to_table()


def run_export(warehouse: Path, out: Path) -> object:
    con = connect_read_only(warehouse)
    try:
        return export(con, out)
    finally:
        con.close()


@pytest.fixture
def copy(demo: Path, tmp_path: Path) -> Path:
    shutil.copytree(demo.parent, tmp_path / "wh")
    return tmp_path / "wh" / demo.name


def test_export_reads_back_like_the_warehouse(copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    result = run_export(copy, out)
    table = observations(out)
    con = duckdb.connect(str(copy), read_only=True)
    try:
        parts = con.execute(
            "SELECT strftime(utc_day(observed_at), '%Y-%m-%d') AS day, provider, count(*) "
            "FROM observation GROUP BY ALL ORDER BY ALL").fetchall()
        types = dict(con.execute("SELECT column_name, data_type FROM duckdb_columns() "
                                 "WHERE table_name = 'observation'").fetchall())
        captures = {r[0] for r in con.execute("SELECT capture_id FROM raw_capture").fetchall()}
        moves = con.execute("SELECT count(*) FROM price_move").fetchone()[0]
    finally:
        con.close()
    frame = pl.from_arrow(table)
    assert table.num_rows == result.observations == sum(n for _, _, n in parts)  # type: ignore[attr-defined]
    assert sorted(frame.group_by("day", "provider").len().rows()) == parts
    schema = table.schema
    assert schema.field("observed_at").type == pa.timestamp("us", tz="UTC")
    assert pa.types.is_float64(schema.field("price_usd_per_gpu_hour").type)
    assert pa.types.is_float64(schema.field("price_usd_per_hour").type)
    assert pa.types.is_boolean(schema.field("gpu_only").type)
    assert set(types) <= set(schema.names)  # every warehouse column is exported
    for column in PROVENANCE:  # every price keeps its provenance, and it joins to a capture
        assert frame[column].null_count() == 0
    assert set(frame["capture_id"].unique()) <= captures
    exported_captures = pl.read_parquet(out / "raw_capture.parquet")
    assert set(frame["capture_id"].unique()) <= set(exported_captures["capture_id"])
    assert pl.read_parquet(out / "price_move.parquet").height == moves
    market = pl.read_parquet(out / "market_price.parquet")
    assert "market_usd_per_gpu_hour" in market.columns and market.height > 0
    # latest_price is as of the export: no frozen `stale`, the input to compute it instead
    latest = pl.read_parquet(out / "latest_price.parquet")
    assert "stale" not in latest.columns and latest["last_success_at"].null_count() == 0
    assert latest["as_of"].n_unique() == 1


def test_the_manifest_describes_every_file(copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    run_export(copy, out)
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["file_format"] == "parquet" and manifest["stale_after_hours"] == 48
    files = {path: entry for day in manifest["observations"]["days"].values()
             for path, entry in day["files"].items()}
    assert files and set(files) == {str(p.relative_to(out)) for p in
                                    (out / "observations").rglob("*.parquet")}
    for path, entry in files.items():
        data = (out / path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"]
        assert pq.read_metadata(out / path).num_rows == entry["rows"]
    assert set(manifest["tables"]) == set(TABLES)
    for entry in manifest["tables"].values():
        assert hashlib.sha256((out / entry["file"]).read_bytes()).hexdigest() == entry["sha256"]
        assert entry["comment"]  # every exported table and view says what it is
    observation = manifest["observations"]["columns"]
    assert all(c["comment"] for c in observation.values())
    assert observation["price_usd_per_gpu_hour"]["type"] == "DOUBLE"
    market = manifest["tables"]["market_price"]["columns"]
    assert all(c["comment"] for c in market.values())


def test_days_are_written_in_copies_of_at_most_open_files(
        copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DuckDB keeps OPEN_FILES partition files open in one COPY and gives a part a second file
    past it (whose rows the manifest cannot give), and one COPY of a long history held them
    all in memory: the export writes batches of days of at most OPEN_FILES files. With 3, the
    demo takes several COPYs, and every part is still one file with its rows, as in one COPY."""
    run_export(copy, tmp_path / "whole")
    whole = json.loads((tmp_path / "whole" / MANIFEST).read_text())
    copies: list[list[str]] = []  # the days of each COPY of observations
    real = export_module._copy

    def counting(con: duckdb.DuckDBPyConnection, select: str, params: dict[str, object],
                 *rest: object) -> None:
        if "FROM observation WHERE" in select:
            copies.append(list(params["days"]))  # type: ignore[call-overload]
        real(con, select, params, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(export_module, "OPEN_FILES", 3)
    monkeypatch.setattr(export_module, "_copy", counting)
    out = tmp_path / "batched"
    run_export(copy, out)
    batched = json.loads((out / MANIFEST).read_text())
    days = batched["observations"]["days"]
    files = [(path, entry) for day in days.values() for path, entry in day["files"].items()]
    assert len(copies) > 1 and sorted(d for batch in copies for d in batch) == sorted(days)
    for batch in copies:
        assert len(batch) == 1 or sum(len(days[d]["files"]) for d in batch) <= 3
    for path, entry in files:
        assert path.endswith("/data_0.parquet") and entry["rows"] > 0
        assert pq.read_metadata(out / path).num_rows == entry["rows"]
    assert {d: (e["content"], e["rows"], sorted(e["files"])) for d, e in days.items()} == {
        d: (e["content"], e["rows"], sorted(e["files"]))
        for d, e in whole["observations"]["days"].items()}
    assert pl.from_arrow(observations(out)).sort(pl.all()).equals(
        pl.from_arrow(observations(tmp_path / "whole")).sort(pl.all()))


def test_batches_of_days_hold_at_most_open_files_unless_one_day_has_more(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(export_module, "OPEN_FILES", 4)
    sizes = {"d1": 2, "d2": 2, "d3": 1, "d4": 5, "d5": 1, "d6": 3}
    parts = {day: {f"p{i}": (1, "x") for i in range(n)} for day, n in sizes.items()}
    assert list(export_module._batches(list(sizes), parts)) == [
        ["d1", "d2"], ["d3"], ["d4"], ["d5", "d6"]]


def test_a_second_export_writes_only_the_new_day(copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    first = run_export(copy, out)
    before = {p: p.stat().st_mtime_ns for p in (out / "observations").rglob("*.parquet")}
    again = run_export(copy, out)
    assert again.days_written == [] and again.days_unchanged == len(first.days_written)  # type: ignore[attr-defined]
    # a backfill lands a capture of a day the export does not have yet
    new_day = datetime(2020, 3, 4, 12, tzinfo=UTC)
    with open_warehouse(copy) as con:
        build = Builder(con)
        build.source("lambda", "lambda")
        build.capture("lambda", new_day, [offer("lambda", "gpu_1x_h100_pcie", "H100 PCIe", 2.49),
                                          offer("lambda", "gpu_1x_a10", "A10", 0.75)])
    third = run_export(copy, out)
    assert third.days_written == ["2020-03-04"]  # type: ignore[attr-defined]
    after = {p: p.stat().st_mtime_ns for p in (out / "observations").rglob("*.parquet")}
    assert {p: t for p, t in after.items() if p in before} == before  # old days untouched
    added = sorted(str(p.relative_to(out)) for p in set(after) - set(before))
    assert added == ["observations/day=2020-03-04/provider=lambda/data_0.parquet"]
    assert observations(out).num_rows == third.observations == first.observations + 2  # type: ignore[attr-defined]
    days = json.loads((out / MANIFEST).read_text())["observations"]["days"]
    assert days["2020-03-04"]["rows"] == 2


def test_a_changed_day_is_written_again(copy: Path, tmp_path: Path) -> None:
    """A reparse or a late capture that changes a day already exported: that day only."""
    out = tmp_path / "export"
    run_export(copy, out)
    con = duckdb.connect(str(copy), read_only=True)
    try:
        day = con.execute("SELECT max(utc_day(observed_at)) FROM observation").fetchone()[0]
    finally:
        con.close()
    at = datetime.combine(day, datetime.min.time(), UTC) + timedelta(hours=1)
    with open_warehouse(copy) as con:
        build = Builder(con)
        build.source("latecomer", "latecomer")
        build.capture("latecomer", at, [offer("latecomer", "x1", "L4", 0.5)])
    result = run_export(copy, out)
    assert result.days_written == [day.isoformat()]  # type: ignore[attr-defined]
    assert (out / "observations" / f"day={day}" / "provider=latecomer" / "data_0.parquet"
            ).exists()
