"""The screens where they need the warehouse: the market's band, jump flags, volume gates, and
an aggregator's partial answer that must never wipe a provider (warehouse.ingest.land)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import orjson
import pytest

from contract import RawCapture, rows_frame
from scrapers.base import SourceDef
from scrapers.opencomputeprices import SOURCE as OCP
from scrapers.registry import get_source
from scrapers.skypilot import SOURCE as SKYPILOT
from warehouse.append import SourceInfo, register_sources
from warehouse.connection import connect
from warehouse.ingest import ingest

DAY = datetime(2026, 3, 1, 2, tzinfo=UTC)


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = connect(tmp_path / "w.duckdb")
    yield connection
    connection.close()


def _rows(raw: RawCapture) -> Any:
    rows = json.loads(raw.body)
    for row in rows:  # JSON has no dates
        if row.get("effective_from"):
            row["effective_from"] = date.fromisoformat(row["effective_from"])
    return rows_frame(rows)


def _source(name: str, provider: str) -> SourceDef:
    return SourceDef(name=name, provider=provider, kind="api", url=f"https://{name}.example",
                     example=Path("unused"), example_as_of="2026-03-01", fetch_fn=None,
                     parse_fn=_rows)


def _row(provider: str, offering: str, price: float, **extra: Any) -> dict[str, Any]:
    return {"provider": provider, "offering": offering, "gpu_name": "H100 SXM",
            "gpu_count": 1.0, "region": "global", "pricing": "on_demand",
            "price_usd_per_hour": price, **extra}


def _register(con: duckdb.DuckDBPyConnection, source: SourceDef) -> None:
    register_sources(con, [SourceInfo(source.name, "*" if source.aggregator else source.provider,
                                      source.kind, source.url, source.aggregator)])


def _land(con: duckdb.DuckDBPyConnection, source: SourceDef, rows: list[dict[str, Any]],
          when: datetime, tmp_path: Path) -> Any:
    _register(con, source)
    raw = RawCapture(source.name, source.url, when, json.dumps(rows).encode())
    return ingest(con, source, raw, run_id=f"{source.name}-{when:%m%d%H%M}",
                  archive_root=tmp_path / "raw")


def _market(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    for provider, price in (("alpha", 2.4), ("beta", 2.5), ("gamma", 2.7)):
        outcome = _land(con, _source(provider, provider), [_row(provider, "h100", price)],
                        DAY - timedelta(hours=1), tmp_path)
        assert outcome.status == "success"


def test_the_market_band_catches_a_swapped_cell_in_a_refresh(
        con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    _market(con, tmp_path)
    rows = [_row("lambda", "gpu_8x_h100", 176.0, gpu_count=8.0),  # $22/GPU-h
            _row("lambda", "gpu_1x_h100", 2.99)]
    outcome = _land(con, _source("lambda", "lambda"), rows, DAY, tmp_path)
    assert (outcome.status, outcome.rows_stored, outcome.rows_quarantined) == ("success", 1, 1)
    reason = con.execute("SELECT failed_check FROM quarantine").fetchone()[0]
    assert reason.startswith("suspect: $22.0/GPU-h outside the band") and "H100 SXM" in reason
    note = con.execute("SELECT note FROM scrape_run WHERE source = 'lambda'").fetchone()[0]
    assert "screened: 1 outside the price band" in note


def test_an_unknown_gpu_is_quarantined_counted_and_shown(
        con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    rows = [_row("acme", "b300", 5.0, gpu_name="B300 GPU on Acme"), _row("acme", "h100", 2.5)]
    outcome = _land(con, _source("acme", "acme"), rows, DAY, tmp_path)
    assert (outcome.rows_stored, outcome.rows_quarantined) == (1, 1)
    assert outcome.unknown_gpus == ("B300 GPU on Acme",)
    assert con.execute("SELECT count(*) FROM observation WHERE gpu_model = 'unknown'"
                       ).fetchone() == (0,)
    status = con.execute("SELECT quarantined_last_parse, screened_last_parse, unknown_gpus "
                         "FROM source_status WHERE source = 'acme'").fetchone()
    assert status == (1, "1 unknown GPU", ["B300 GPU on Acme"])


def test_a_jump_is_stored_flagged_then_confirmed_by_the_next_run(
        con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    source = _source("acme", "acme")
    _land(con, source, [_row("acme", "h100", 2.0), _row("acme", "a100", 1.2,
                                                         gpu_name="A100 80GB")], DAY, tmp_path)
    _land(con, source, [_row("acme", "h100", 3.0), _row("acme", "a100", 1.25,
                                                         gpu_name="A100 80GB")],
          DAY + timedelta(days=1), tmp_path)
    flags = dict(con.execute("SELECT offering, screen_flag FROM latest_observation").fetchall())
    assert flags["a100"] is None
    assert flags["h100"].startswith("unconfirmed move 50.0% from $2.0")
    _land(con, source, [_row("acme", "h100", 3.0), _row("acme", "a100", 1.26,
                                                         gpu_name="A100 80GB")],
          DAY + timedelta(days=2), tmp_path)
    assert con.execute("SELECT count(*) FROM latest_observation WHERE screen_flag IS NOT NULL"
                       ).fetchone() == (0,)
    # the flagged row stays in history as it was stored
    assert con.execute("SELECT count(*) FROM observation WHERE screen_flag IS NOT NULL"
                       ).fetchone() == (1,)


def test_a_source_whose_prices_are_all_zero_is_rejected_whole_and_keeps_its_prices(
        con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    source = _source("acme", "acme")
    _land(con, source, [_row("acme", "h100", 2.0), _row("acme", "h200", 3.0)], DAY, tmp_path)
    outcome = _land(con, source, [_row("acme", "h100", 0.0), _row("acme", "h200", 0.0)],
                    DAY + timedelta(days=1), tmp_path)
    assert outcome.status == "rejected" and "every price is zero" in str(outcome.error)
    assert sorted(con.execute("SELECT price_usd_per_hour FROM latest_price").fetchall()) == [
        (2.0,), (3.0,)]
    # kept for reparse: the capture is archived and recorded
    assert con.execute("SELECT count(*) FROM raw_capture").fetchone() == (2,)


def _skypilot(clouds: dict[str, str], when: datetime) -> RawCapture:
    body = orjson.dumps({"format": "gpuprices-skypilot-vms/1", "catalog": "v5",
                         "clouds": clouds, "missing": {}}, option=orjson.OPT_SORT_KEYS)
    return RawCapture(SKYPILOT.name, SKYPILOT.url, when, body, "application/json")


def _providers(con: duckdb.DuckDBPyConnection, view: str) -> set[str]:
    return {r[0] for r in con.execute(f"SELECT DISTINCT provider FROM {view}").fetchall()}


def test_an_aggregator_header_only_file_for_one_cloud_never_wipes_that_provider(
        con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    _register(con, SKYPILOT)
    clouds = json.loads(SKYPILOT.example.read_bytes())["clouds"]
    first = ingest(con, SKYPILOT, _skypilot(clouds, now - timedelta(hours=2)), run_id="r1",
                   archive_root=tmp_path / "raw")
    assert first.status == "success" and "lambda" in _providers(con, "latest_price_all_sources")
    lambda_rows = con.execute("SELECT count(*) FROM latest_price_all_sources "
                              "WHERE provider = 'lambda'").fetchone()
    header_only = {**clouds, "lambda": clouds["lambda"].splitlines()[0] + "\n"}
    second = ingest(con, SKYPILOT, _skypilot(header_only, now - timedelta(hours=1)),
                    run_id="r2", archive_root=tmp_path / "raw")
    assert second.status == "success"
    note = con.execute("SELECT note FROM scrape_run WHERE run_id = 'r2'").fetchone()[0]
    assert "not in this capture (earlier prices kept): lambda" in note
    assert con.execute("SELECT count(*) FROM latest_price_all_sources WHERE provider = 'lambda'"
                       ).fetchone() == lambda_rows
    # an all-zero file for one cloud: that part is gated, the provider keeps its prices
    header, *lines = clouds["runpod"].splitlines()
    columns = header.split(",")
    zeroed = []
    for line in lines:
        cells = line.split(",")
        for name in ("Price", "SpotPrice"):
            if name in columns and cells[columns.index(name)]:
                cells[columns.index(name)] = "0.0"
        zeroed.append(",".join(cells))
    runpod_rows = con.execute("SELECT count(*) FROM latest_price_all_sources "
                              "WHERE provider = 'runpod'").fetchone()
    third = ingest(con, SKYPILOT, _skypilot({**header_only, "runpod": "\n".join(
        [header, *zeroed]) + "\n"}, now), run_id="r3", archive_root=tmp_path / "raw")
    assert third.status == "success", third.error
    assert con.execute("SELECT count(*) FROM latest_price_all_sources WHERE provider = 'runpod'"
                       ).fetchone() == runpod_rows
    note = con.execute("SELECT note FROM scrape_run WHERE run_id = 'r3'").fetchone()[0]
    assert "every price is zero" in note and "earlier prices kept" in note
    assert _providers(con, "latest_price_all_sources") >= {"lambda", "runpod", "aws", "gcp"}


def test_an_aggregator_file_naming_few_providers_never_removes_the_others(
        con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    _register(con, OCP)
    full = OCP.example.read_bytes()
    ingest(con, OCP, RawCapture(OCP.name, OCP.url, now - timedelta(hours=1), full, "text/csv"),
           run_id="r1", archive_root=tmp_path / "raw")
    before = _providers(con, "latest_price")
    assert len(before) >= 5
    header, *lines = full.decode().splitlines()
    first_provider = lines[0].split(",")[header.split(",").index("provider")]
    few = [line for line in lines
           if line.split(",")[header.split(",").index("provider")] == first_provider][:4]
    outcome = ingest(con, OCP, RawCapture(OCP.name, OCP.url, now, "\n".join(
        [header, *few]).encode() + b"\n", "text/csv"), run_id="r2",
        archive_root=tmp_path / "raw")
    assert outcome.status == "success" and 0 < outcome.rows_stored <= len(few)
    assert _providers(con, "latest_price") == before
    # the held providers' rows are the earlier capture's, with their own capture id
    assert con.execute("SELECT count(DISTINCT capture_id) FROM latest_price").fetchone() == (2,)


def test_an_announced_price_is_stored_with_its_date_and_in_force_only_from_it(
        con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    source = _source("nebula", "nebula")
    announced = datetime(2026, 10, 1, tzinfo=UTC).date()
    rows = [_row("nebula", "h200", 3.5), _row("nebula", "h200", 2.95, effective_from=str(
        announced))]
    outcome = _land(con, source, rows, DAY, tmp_path)
    assert (outcome.status, outcome.rows_stored) == ("success", 2)

    def current(day: str) -> list[tuple[float, Any]]:
        return con.execute(
            "SELECT price_usd_per_hour, effective_from FROM current_price_at(CAST(? AS "
            "TIMESTAMPTZ))", [day]).fetchall()

    assert current("2026-03-02 00:00:00+00") == [(3.5, None)]
    assert current("2026-10-01 06:00:00+00") == [(2.95, announced)]  # the latest in force


def test_the_unknown_gpu_view_lists_the_names_of_each_sources_last_parse(
        con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    source = _source("acme", "acme")
    _land(con, source, [_row("acme", "x", 1.0, gpu_name="Acme Q1"), _row("acme", "h", 2.5)],
          DAY, tmp_path)
    assert con.execute("SELECT source, gpu_name, rows FROM unknown_gpu").fetchall() == [
        ("acme", "Acme Q1", 1)]
    _land(con, source, [_row("acme", "h", 2.5), _row("acme", "h2", 2.6)],
          DAY + timedelta(days=1), tmp_path)
    assert con.execute("SELECT count(*) FROM unknown_gpu").fetchone() == (0,)


def test_parse_command_reads_a_capture_as_of_its_day(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gpuprices.cli import app

    runner = CliRunner()
    example = get_source("gcp-page").example
    shown = runner.invoke(app, ["parse", "gcp-page", str(example), "--as-of", "2026-03-01",
                                "--format", "csv"])
    assert shown.exit_code == 0, shown.output
    assert "as of 2026-03-01" in shown.output
    assert "2026-03-01T00:00:00" in shown.output  # observed_at = the day given
    refused = runner.invoke(app, ["parse", "gcp-page", str(example), "--as-of", "1999-01-01"])
    assert refused.exit_code == 2 and "out of range" in refused.output
