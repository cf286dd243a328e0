"""The suspect-layout guard: a batch that mostly breaks the page's own invariants is rejected
whole. Fixtures are ours: rows as a misreading parser would produce them from a CoreWeave-like
page (GPU count from the model name, memory from the count, a spot price in the on-demand
column), with invented prices."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from contract import RawCapture, rows_frame
from schemas.invariants import broken_invariants, suspect_layout
from schemas.observation import to_observations, validate_guarded
from scrapers.base import EXAMPLES_DIR, SourceDef
from warehouse.connection import connect
from warehouse.ingest import ingest

WHEN = datetime(2026, 6, 1, tzinfo=UTC)


def _row(offering: str, count: float, memory: float | None, price: float,
         pricing: str = "on_demand", region: str = "north-america") -> dict[str, object]:
    return {"provider": "cw", "offering": offering, "gpu_name": offering, "gpu_count": count,
            "gpu_memory_gb": memory, "region": region, "pricing": pricing,
            "price_usd_per_hour": price}


GOOD = [_row("NVIDIA GB200 NVL72", 4, 186, 41.0), _row("NVIDIA L40S", 8, 48, 17.5),
        _row("NVIDIA HGX H100", 8, 80, 48.0), _row("NVIDIA HGX H100", 8, 80, 19.0, "spot"),
        _row("NVIDIA A100", 8, 80, 21.0)]
# The same page read by position after a redesign: the name cell counted as a number cell.
MISREAD = [_row("NVIDIA GB200 NVL72", 200, 4, 10.25), _row("NVIDIA L40S", 40, 8, 2.2),
           _row("NVIDIA HGX H100", 100, 8, 6.0), _row("NVIDIA HGX H100", 100, 8, 19.0),
           _row("NVIDIA A100", 8, 80, 21.0)]


def _observations(rows: list[dict[str, object]], source: str = "cw") -> pl.DataFrame:
    raw = RawCapture(source=source, url="https://cw.test", fetched_at=WHEN,
                     body=json.dumps(rows).encode())
    return to_observations(rows_frame(rows), raw, "t")


def test_an_honest_batch_is_not_suspect() -> None:
    assert suspect_layout(_observations(GOOD)) is None
    assert validate_guarded(_observations(GOOD)).suspect is None


def test_counts_from_model_names_make_the_batch_suspect() -> None:
    flags = broken_invariants(_observations(MISREAD))
    assert flags["count_from_name"].to_list() == [True, True, True, True, False]
    assert flags["memory_not_the_cards"].to_list() == [True, True, True, True, False]
    reason = suspect_layout(_observations(MISREAD))
    assert reason is not None and "4 of 5 rows" in reason and "count_from_name 4" in reason
    batch = validate_guarded(_observations(MISREAD))
    assert batch.good.height == 0 and batch.quarantined.height == 5  # rejected whole
    assert batch.quarantined["failed_check"].str.starts_with("suspect layout").all()


def test_a_minority_of_odd_rows_does_not_reject_the_batch() -> None:
    rows = [*GOOD, _row("NVIDIA L40", 40, 48, 10.0)]  # one odd row of six
    assert suspect_layout(_observations(rows)) is None


def test_conflicting_duplicates_are_suspect_for_a_page_not_for_an_aggregator() -> None:
    rows = [_row("NVIDIA A100", 8, 80, 21.0), _row("NVIDIA A100", 8, 80, 9.5),
            _row("NVIDIA L40S", 8, 48, 17.5), _row("NVIDIA L40S", 8, 48, 7.9)]
    assert suspect_layout(_observations(rows)) is not None
    assert suspect_layout(_observations(rows), duplicates_conflict=False) is None
    # The same offering in two regions or two pricing kinds is no conflict.
    spread = [_row("NVIDIA A100", 8, 80, 21.0), _row("NVIDIA A100", 8, 80, 9.5, "spot"),
              _row("NVIDIA A100", 8, 80, 21.5, region="europe")]
    assert suspect_layout(_observations(spread)) is None


def test_a_per_gpu_price_that_is_not_price_over_count_is_broken() -> None:
    obs = _observations(GOOD).with_columns(
        (pl.col("price_usd_per_gpu_hour") * 8).alias("price_usd_per_gpu_hour"))
    assert broken_invariants(obs)["per_gpu_price_mismatch"].all()
    assert suspect_layout(obs) is not None


def _json_source() -> SourceDef:
    return SourceDef(name="cw", provider="cw", kind="page", url="https://cw.test",
                     example=EXAMPLES_DIR / "coreweave" / "pricing_2026-02-11.html",
                     example_as_of="2026-01-01", fetch_fn=None,
                     parse_fn=lambda raw: rows_frame(json.loads(raw.body)))


def test_ingest_fails_a_suspect_batch_and_keeps_earlier_prices(tmp_path: Path) -> None:
    source = _json_source()
    con = connect(tmp_path / "w.duckdb")
    try:
        first = ingest(con, source, RawCapture("cw", source.url, WHEN, json.dumps(GOOD).encode()),
                       run_id="r1", archive_root=tmp_path / "raw")
        assert first.status == "success" and first.rows_stored == 5
        later = RawCapture("cw", source.url, datetime(2026, 6, 2, tzinfo=UTC),
                           json.dumps(MISREAD).encode())
        second = ingest(con, source, later, run_id="r2", archive_root=tmp_path / "raw")
        assert second.status == "failed" and second.rows_stored == 0
        assert second.error is not None and second.error.startswith("suspect layout")
        stored = con.execute("SELECT offering, gpu_count, price_usd_per_hour FROM observation "
                             "ORDER BY offering, price_usd_per_hour").fetchall()
        assert stored == sorted((r["offering"], r["gpu_count"], r["price_usd_per_hour"])
                                for r in GOOD)
        # The raw capture is archived, so `reparse` can read it again with a fixed parser.
        assert con.execute("SELECT count(*) FROM raw_capture WHERE capture_id = ?",
                           [later.capture_id]).fetchone() == (1,)
    finally:
        con.close()
