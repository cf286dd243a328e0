"""SkyPilot parser over every snapshot in ../shared/history/skypilot (skips without it).

Checked by hand against the CSVs and ../shared/history/README.md:
- lambda: 182 rows = 14 instance types x 13 regions, SpotPrice empty -> 182 on-demand rows.
- runpod: 480 rows = 60 instance types x 8 country codes, all _SECURE. Unlike the README's
  note, 160 rows (20 types: A40, L40, RTX4090, RTXA4500, RTXA6000 x 1/2/4/8) DO carry a
  SpotPrice, e.g. 1x_RTX4090_SECURE 0.49 -> 480 on-demand + 160 spot rows.
- the three snapshots of each cloud are byte-identical.
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from contract import RawCapture
from schemas.observation import to_observations, validate
from scrapers.skypilot import SOURCE, parse_vms_csv
from tests.conftest import HISTORY, shared_file
from warehouse.connection import connect
from warehouse.ingest import ingest

pytestmark = pytest.mark.conformance
FILES = sorted((HISTORY / "skypilot").glob("*/*_vms.csv")) or [
    HISTORY / "skypilot" / "lambda" / "missing_vms.csv"]
EXPECTED = {"lambda": {"on_demand": 182}, "runpod": {"on_demand": 480, "spot": 160}}


def capture(path: Path) -> RawCapture:
    day = datetime.strptime(path.name[:10], "%Y-%m-%d").replace(tzinfo=UTC)
    return RawCapture(source="skypilot", url=SOURCE.url, fetched_at=day, body=path.read_bytes())


def observations(path: Path) -> pl.DataFrame:
    raw = capture(path)
    batch = validate(to_observations(SOURCE.parse(raw), raw, "conformance"))
    assert batch.quarantined.height == 0, batch.quarantined["failed_check"].to_list()
    return batch.good


def manifest_rows() -> dict[tuple[str, str], int]:
    path = shared_file("history", "skypilot", "MANIFEST.csv")
    with path.open(newline="") as handle:
        return {(r["cloud"], r["snapshot_date"]): int(r["rows"]) for r in csv.DictReader(handle)}


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_snapshot_parses_to_the_expected_rows(path: Path) -> None:
    shared_file("history", "skypilot", path.parent.name, path.name)
    cloud = path.parent.name
    text = path.read_text(encoding="utf-8")
    with path.open(newline="") as handle:
        data_rows = sum(1 for _ in csv.DictReader(handle))
    assert data_rows == manifest_rows()[(cloud, path.name[:10])]
    frame = observations(path)
    assert set(frame["provider"]) == {cloud}  # recognised from the content alone
    assert dict(frame.group_by("pricing").len().iter_rows()) == EXPECTED[cloud]
    assert "unknown" not in frame["gpu_model"].to_list()
    assert not frame["gpu_only"].any()
    # The backfill's entry point gives the same rows as the plain-file parse.
    assert parse_vms_csv(text, cloud).equals(SOURCE.parse(capture(path)))


def _one(frame: pl.DataFrame, offering: str, pricing: str = "on_demand") -> dict[str, object]:
    rows = frame.filter((pl.col("offering") == offering) & (pl.col("pricing") == pricing))
    assert rows["price_usd_per_hour"].n_unique() == 1  # same price in every region
    return rows.row(0, named=True)


def test_lambda_prices_and_names_2024_04_23() -> None:
    frame = observations(shared_file("history", "skypilot", "lambda", "2024-04-23_vms.csv"))
    assert frame["region"].n_unique() == 13
    assert _one(frame, "gpu_1x_h100_pcie")["price_usd_per_hour"] == 2.49
    a100 = _one(frame, "gpu_8x_a100_80gb_sxm4")
    assert (a100["price_usd_per_hour"], a100["gpu_count"]) == (14.32, 8)
    assert a100["price_usd_per_gpu_hour"] == pytest.approx(1.79)
    assert _one(frame, "gpu_1x_a100")["price_usd_per_hour"] == 1.29
    assert _one(frame, "gpu_8x_h100_sxm5")["price_usd_per_gpu_hour"] == pytest.approx(3.49)
    models = dict(frame.select("offering", "gpu_model").unique().iter_rows())
    assert models == {
        "gpu_8x_v100": "V100 16GB", "gpu_4x_a6000": "RTX A6000", "gpu_2x_a6000": "RTX A6000",
        "gpu_1x_a6000": "RTX A6000", "gpu_8x_a100": "A100 40GB", "gpu_4x_a100": "A100 40GB",
        "gpu_2x_a100": "A100 40GB", "gpu_1x_a100_sxm4": "A100 40GB", "gpu_1x_a100": "A100 40GB",
        "gpu_1x_rtx6000": "Quadro RTX 6000", "gpu_1x_a10": "A10",
        "gpu_8x_a100_80gb_sxm4": "A100 80GB", "gpu_1x_h100_pcie": "H100 PCIe",
        "gpu_8x_h100_sxm5": "H100 SXM",
    }
    # GpuInfo's SizeInMiB is per GPU in this file (8x V100: 16384 MiB).
    assert _one(frame, "gpu_8x_v100")["gpu_memory_gb"] == 16.0
    assert set(frame["billing_increment_s"]) == {60}


def test_runpod_prices_and_names_2024_04_23() -> None:
    frame = observations(shared_file("history", "skypilot", "runpod", "2024-04-23_vms.csv"))
    assert sorted(frame["region"].unique()) == ["CA", "CZ", "IS", "NL", "NO", "RO", "SE", "US"]
    assert _one(frame, "1x_A100-80GB_SECURE")["price_usd_per_hour"] == 1.99
    assert _one(frame, "1x_RTX4090_SECURE")["price_usd_per_hour"] == 0.74
    assert _one(frame, "1x_RTX4090_SECURE", "spot")["price_usd_per_hour"] == 0.49
    assert _one(frame, "1x_L4_SECURE")["price_usd_per_hour"] == 0.44
    assert _one(frame, "8x_H100-SXM_SECURE")["price_usd_per_hour"] == 37.52
    models = dict(frame.select("gpu_name", "gpu_model").unique().iter_rows())
    assert models == {
        "A100-80GB": "A100 80GB", "A100-80GB-SXM": "A100 80GB", "A40": "A40",
        "H100": "H100 PCIe", "H100-SXM": "H100 SXM", "L40": "L40", "L4": "L4",
        "RTX3090": "RTX 3090", "RTX4000-Ada": "RTX 4000 Ada", "RTX4090": "RTX 4090",
        "RTX6000-Ada": "RTX 6000 Ada", "RTXA4000": "RTX A4000", "RTXA4500": "RTX A4500",
        "RTXA5000": "RTX A5000", "RTXA6000": "RTX A6000",
    }


def test_identical_monthly_snapshots_are_stored_once(tmp_path: Path) -> None:
    paths = sorted((shared_file("history", "skypilot", "lambda")).glob("*_vms.csv"))
    assert len(paths) == 3
    con = connect(tmp_path / "w.duckdb")
    try:
        statuses = [ingest(con, SOURCE, capture(p), run_id=f"backfill-{p.name[:10]}",
                           archive_root=tmp_path / "raw").status for p in paths]
        assert statuses == ["success", "unchanged", "unchanged"]
        assert con.execute("SELECT count(*) FROM observation").fetchone() == (182,)
    finally:
        con.close()
