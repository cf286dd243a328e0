"""`backfill opencomputeprices`: monthly archive files split by snapshot_date, each day landed
through the live parser at its own time. The archive is written here (our own rows)."""

from __future__ import annotations

import gzip
import io
import tarfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from flows.backfill import backfill_ocp_archives
from scrapers.registry import get_source
from warehouse.connection import open_warehouse

SOURCE = get_source("opencomputeprices")
HEADER = SOURCE.example.read_text().splitlines()[0]  # their 31-column header


def row(day: str, provider: str, instance: str, gpu: str, price: float) -> str:
    values = dict.fromkeys(HEADER.split(","), "")
    values.update(snapshot_date=day, snapshot_ts=f"{day}T06:30:00Z", source=provider,
                  provider=provider, instance_type=instance, gpu_name=gpu, gpu_memory_gb="24",
                  gpu_count="1", region="US", pricing_type="on_demand",
                  price_per_hour=str(price), price_per_gpu_hour=str(price), currency="USD",
                  price_unit="hour", available="True")
    return ",".join(values[c] for c in HEADER.split(","))


MONTH = "\n".join([HEADER,
                   row("2026-01-05", "tensordock", "rtx4090-a", "RTX 4090", 0.45),
                   row("2026-01-05", "vultr", "vcg-l4", "L4", 0.70),
                   row("2026-01-12", "tensordock", "rtx4090-a", "RTX 4090", 0.41),
                   row("2026-01-12", "vultr", "vcg-l4", "L4", 0.70),
                   row("2026-01-19", "tensordock", "rtx4090-a", "RTX 4090", 0.39)]) + "\n"


@pytest.fixture
def archive_file(tmp_path: Path) -> Path:
    path = tmp_path / "ocp_2026-01.csv.gz"
    path.write_bytes(gzip.compress(MONTH.encode()))
    return path


def test_each_day_lands_at_its_snapshot_time(archive_file: Path, warehouse_path: Path) -> None:
    root = warehouse_path.parent / "raw"
    with open_warehouse(warehouse_path) as con:
        results = backfill_ocp_archives(con, [str(archive_file)], SOURCE, archive_root=root)
        assert [(r.key, r.status, r.rows_stored) for r in results] == [
            ("2026-01-05", "success", 2), ("2026-01-12", "success", 2),
            ("2026-01-19", "success", 1)]
        stamps = con.execute("SELECT DISTINCT observed_at FROM observation ORDER BY 1").fetchall()
        assert [s[0] for s in stamps] == [
            datetime(2026, 1, d, 6, 30, tzinfo=UTC) for d in (5, 12, 19)]
        moves = con.execute("SELECT changed_on, provider, old_price_usd_per_hour, "
                            "new_price_usd_per_hour FROM price_change ORDER BY 1").fetchall()
        assert [(str(m[0]), m[1], m[2], m[3]) for m in moves] == [
            ("2026-01-12", "tensordock", 0.45, 0.41), ("2026-01-19", "tensordock", 0.41, 0.39)]
        count = con.execute("SELECT count(*) FROM observation").fetchone()
        again = backfill_ocp_archives(con, [str(archive_file)], SOURCE, archive_root=root)
        assert {r.status for r in again} == {"already stored"}
        assert con.execute("SELECT count(*) FROM observation").fetchone() == count


def test_plain_csv_tarball_and_url_inputs_read_the_same(tmp_path: Path,
                                                        warehouse_path: Path) -> None:
    plain = tmp_path / "month.csv"
    plain.write_text(MONTH)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        data = MONTH.encode()
        info = tarfile.TarInfo("data/tensordock.csv")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    served = {"https://example.org/data.tar.gz": buffer.getvalue()}
    keys = []
    for i, inputs in enumerate(([str(plain)], ["https://example.org/data.tar.gz"])):
        with open_warehouse(warehouse_path.with_name(f"w{i}.duckdb")) as con:
            results = backfill_ocp_archives(con, inputs, SOURCE, archive_root=tmp_path / "raw",
                                            download=served.__getitem__)
            keys.append([(r.key, r.rows_stored) for r in results])
    assert keys[0] == keys[1] == [("2026-01-05", 2), ("2026-01-12", 2), ("2026-01-19", 1)]
