"""`sources`, `changes`, `cheapest` and `value` print their terminal tables from DuckDB's
rows (no polars: issue 23's start-up); each table is the one the API's frame gives: for
`sources` whatever the warehouse holds (runs, none, no file), for the others whatever is
asked."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner, Result

from contract import DEFAULT_PRICING
from gpuprices import api
from gpuprices.cli import app
from gpuprices.errors import NoAnswer
from gpuprices.output import Format, print_frame
from warehouse.connection import open_warehouse

# The frame's columns as the table shows them (the former polars path of the command).
_SHOWN = {"source": "source", "last_status": "status", "stale": "stale",
          "latest_rows": "rows", "last_success_at": "last success",
          "quarantined_last_parse": "quarantined", "skipped_last_parse": "skipped",
          "last_error": "last_error", "kind": "kind", "url": "url"}
_PRIORITY = ("source", "status", "stale", "rows", "last success", "quarantined", "skipped",
             "last_error")


def _from_the_frame(warehouse: Path, capsys: pytest.CaptureFixture[str]) -> str:
    frame = api.sources(warehouse)
    frame = frame.select(pl.col(name).alias(label) for name, label in _SHOWN.items()
                         if name in frame.columns)
    capsys.readouterr()
    print_frame(frame, Format.table, title="sources", priority=_PRIORITY)
    return capsys.readouterr().out


def _given(asked: list[str], *flags: str) -> dict[str, list[str]]:
    """Each flag's values in the command line `asked` (a flag given twice: both)."""
    return {flag: [asked[i + 1] for i, f in enumerate(asked) if f == flag] for flag in flags}


@pytest.fixture(autouse=True)
def _terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 200-column terminal for the command and for the table it is compared with (a test
    may ask for another width)."""
    monkeypatch.setenv("COLUMNS", "200")


def _run(command: str, asked: list[str], demo: Path, *, answers: bool = True) -> Result:
    """`command` with `asked` on the demo warehouse; exit 0 unless it may have no answer."""
    printed = CliRunner().invoke(app, [command, *asked, "-w", str(demo)])
    if answers:
        assert printed.exit_code == 0, printed.output
    return printed


@pytest.mark.parametrize("held", ["runs", "no run", "no file"])
def test_the_sources_table_is_its_frame(demo: Path, tmp_path: Path, held: str,
                                        monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    warehouse = {"runs": demo, "no run": tmp_path / "empty.duckdb",
                 "no file": tmp_path / "none.duckdb"}[held]
    if held == "no run":
        with open_warehouse(warehouse):
            pass
    monkeypatch.setenv("COLUMNS", "160")
    printed = CliRunner().invoke(app, ["sources", "-w", str(warehouse)])
    assert printed.exit_code == 0, printed.output
    expected = _from_the_frame(warehouse, capsys)
    assert printed.output == expected
    statuses = set(api.sources(warehouse)["last_status"])
    if held == "runs":
        assert "success" in statuses
    else:
        assert statuses == {"never run"}


# `changes`' table as the frame of gpuprices.api.changes gives it (the command's polars path,
# which --region, --geo and --currency still take).
_MOVE_COLUMNS = ("changed_on", "provider", "offering", "region", "pricing", "gpu_model",
                 "old_usd_per_gpu_hour", "new_usd_per_gpu_hour", "pct_change", "previous_day")


@pytest.mark.parametrize("asked", [
    {}, {"gpu": "H100 PCIe"}, {"limit": 2}, {"provider": "runpod"},
    {"pricing": ["on_demand", "community"]}, {"pricing": ["spot"]}, {"since": "2099-01-01"},
])
def test_the_changes_table_is_its_frame(demo: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str],
                                        asked: dict[str, object]) -> None:
    since, limit = str(asked.get("since", "2020-01-01")), int(str(asked.get("limit", 50)))
    args = ["changes", "--since", since, "--limit", str(limit), "-w", str(demo)]
    if "gpu" in asked:
        args += ["--gpu", str(asked["gpu"])]
    if "provider" in asked:
        args += ["--provider", str(asked["provider"])]
    for kind in asked.get("pricing", []):  # type: ignore[attr-defined]
        args += ["--pricing", kind]
    monkeypatch.setenv("COLUMNS", "160")
    printed = CliRunner().invoke(app, args)
    assert printed.exit_code == 0, printed.output
    moves = api.changes(since, gpu=asked.get("gpu"), provider=asked.get("provider"),  # type: ignore[arg-type]
                        pricing=asked.get("pricing"), limit=None, warehouse=demo)  # type: ignore[arg-type]
    capsys.readouterr()
    print_frame(moves.select(_MOVE_COLUMNS).head(limit), Format.table,
                title=f"price moves since {since} ({moves.height} in all)",
                priority=("changed_on", "provider", "old_usd_per_gpu_hour",
                          "new_usd_per_gpu_hour", "pct_change", "gpu_model", "offering"))
    assert printed.output == capsys.readouterr().out
    if not asked:
        assert moves.height >= 3  # the demo's moves: rows are compared, not empty tables


# `cheapest`'s table as the frame of gpuprices.api.cheapest gives it (the command's polars path,
# which --region, --geo, --currency, csv and json still take).
@pytest.mark.parametrize("asked", [
    [], ["--limit", "3"], ["--gpu", "H100"], ["--gpu", "H100", "--gpu", "A100 80GB"],
    ["--provider", "runpod"], ["--include-unavailable", "--limit", "100"], ["--in-stock"],
    ["--min-vram", "48"], ["--tier", "80 GB"], ["--pricing", "spot", "--pricing", "on_demand"],
    ["--gpu", "B200"],
])
def test_the_cheapest_table_is_its_frame(demo: Path, capsys: pytest.CaptureFixture[str],
                                         asked: list[str]) -> None:
    from gpuprices.commands_reports import CHEAPEST_PRIORITY

    printed = _run("cheapest", asked, demo)
    values = _given(asked, "--gpu", "--provider", "--pricing", "--limit", "--min-vram", "--tier")
    options = {flag: found[0] for flag, found in values.items() if found}
    limit = int(options.get("--limit", 20))
    offers = api.cheapest(values["--gpu"] or None, provider=values["--provider"] or None,
                          pricing=values["--pricing"] or None, limit=None,
                          min_vram=float(options["--min-vram"]) if "--min-vram" in options
                          else None, tier=options.get("--tier"),
                          include_unavailable="--include-unavailable" in asked,
                          in_stock="--in-stock" in asked, warehouse=demo)
    capsys.readouterr()
    print_frame(offers.head(limit), Format.table,
                title=f"cheapest offers ({offers.height} match"
                + (", in stock" if "--in-stock" in asked else "") + ")",
                priority=CHEAPEST_PRIORITY)
    assert printed.output == capsys.readouterr().out
    if not asked:
        assert offers.height >= 10  # the demo's offers: rows are compared, not empty tables


# `value`'s table as the frame of gpuprices.api.value gives it (the command's polars path,
# which --region, --geo, --currency, csv and json still take).
@pytest.mark.parametrize("asked", [
    [], ["--metric", "vram"], ["--metric", "bandwidth", "--limit", "100"], ["--gpu", "H100"],
    ["--gpu", "H100", "--gpu", "A100 80GB", "--metric", "vram"], ["--limit", "1"],
    ["--pricing", "spot", "--pricing", "on_demand"], ["--gpu", "B200", "--limit", "2"],
])
def test_the_value_table_is_its_frame(demo: Path, capsys: pytest.CaptureFixture[str],
                                      asked: list[str]) -> None:
    from reports.market.value import METRICS

    printed = _run("value", asked, demo)
    values = _given(asked, "--gpu", "--pricing", "--limit", "--metric")
    metric = (values["--metric"] or ["pflop"])[0]
    limit = int((values["--limit"] or [20])[0])
    ranked = api.value(metric, values["--gpu"] or None, pricing=values["--pricing"] or None,
                       limit=None, warehouse=demo)
    capsys.readouterr()
    print_frame(ranked.head(limit), Format.table,
                title=f"best {METRICS[metric][1]} ({ranked.height} offers)")
    assert printed.output == capsys.readouterr().out
    if not asked:
        assert ranked.height >= 10  # the demo's offers: rows are compared, not empty tables


# `history`'s table and sparkline as the frame of gpuprices.api.history gives them (the
# command's polars path, which --currency, --plot, csv and json still take).
@pytest.mark.parametrize("asked", [
    ["H100"], ["RTX 4090", "--days", "3"], ["A100 80GB", "--provider", "runpod"],
    ["H100", "--pricing", "spot", "--pricing", "on_demand"], ["L4", "--geo", "EU"],
    ["RTX 4090", "--region", "us-east-1"], ["H100 SXM", "--days", "1"],
])
def test_the_history_table_is_its_frame(demo: Path, capsys: pytest.CaptureFixture[str],
                                        asked: list[str]) -> None:
    from reports.charts import sparkline

    printed = _run("history", asked, demo, answers=False)
    values = _given(asked, "--provider", "--pricing", "--days", "--region", "--geo")
    try:
        points = api.history(asked[0], days=int((values["--days"] or [90])[0]),
                             provider=values["--provider"] or None,
                             pricing=values["--pricing"] or None,
                             region=values["--region"] or None, geo=values["--geo"] or None,
                             warehouse=demo)
    except NoAnswer as exc:  # the same answer: none, said the same way
        assert printed.exit_code != 0 and str(exc) in printed.output
        return
    assert printed.exit_code == 0, printed.output
    capsys.readouterr()
    where = ", ".join([*(values["--pricing"] or DEFAULT_PRICING),
                       *[f"region {r}" for r in values["--region"]],
                       *[f"geography {g}" for g in values["--geo"]]])
    print_frame(points, Format.table, title=f"cheapest {asked[0]} per day ({where})")
    prices = points["price_usd_per_gpu_hour"].drop_nulls().to_list()
    print(f"{sparkline(prices)}  ${min(prices):.2f} .. ${max(prices):.2f} per GPU-hour")
    assert printed.output == capsys.readouterr().out
    if asked == ["H100"]:
        assert points.height >= 3  # the demo's days: rows are compared, not empty tables


# `index`'s table of a fixed day as its frame gives it (reports.index.tables.fixings_table
# over the stored fixings: the command's path for a day not fixed yet, --currency, csv, json).
@pytest.mark.parametrize("asked", [
    [], ["--gpu", "H100"], ["--kind", "all"], ["--scopes"], ["--kind", "spot", "--geo", "EU"],
    ["--segment", "neocloud"], ["--kind", "reserved", "--scopes"], ["--gpu", "B300"],
])
def test_the_index_table_is_its_frame(demo: Path, capsys: pytest.CaptureFixture[str],
                                      asked: list[str]) -> None:
    from datetime import UTC, datetime

    from reports.index.tables import fixings_table
    from schemas.names import resolve_gpus
    from warehouse.connection import connect_read_only
    from warehouse.index.store import read_fixings

    printed = _run("index", asked, demo)
    values = _given(asked, "--gpu", "--kind", "--segment", "--geo")
    kind = (values["--kind"] or ["on_demand"])[0]
    scopes = "--scopes" in asked
    today = datetime.now(UTC).date()
    con = connect_read_only(demo)
    try:
        fixings = read_fixings(
            con, days=[today], gpu_models=resolve_gpus(values["--gpu"]) if values["--gpu"]
            else None, kind=None if kind == "all" else kind,
            segment=None if scopes else (values["--segment"] or ["all"])[0],
            geo=None if scopes else (values["--geo"] or ["all"])[0])
    finally:
        con.close()
    capsys.readouterr()
    print_frame(fixings_table(fixings), Format.table,
                title=f"GPU price index $/GPU-hour on {today}")
    assert printed.output == capsys.readouterr().out
    if not asked:
        assert fixings.height >= 10  # the demo's fixings: rows are compared, not empty tables


# `market`'s table of a fixed day as polars shaped the frame of gpuprices.api.market (the
# command's path for a day computed now, a place, per geography, another currency).
@pytest.mark.parametrize("asked", [
    [], ["--gpu", "H100"], ["--segment", "all"], ["--segment", "neocloud", "--gpu", "A100"],
    ["--gpu", "B300"], ["--gpu", "L4", "--gpu", "RTX 4090"],
])
def test_the_market_table_is_its_frame(demo: Path, capsys: pytest.CaptureFixture[str],
                                       asked: list[str]) -> None:
    from datetime import UTC, datetime

    printed = _run("market", asked, demo)
    values = _given(asked, "--gpu", "--segment")
    frame = api.market(values["--gpu"] or None, segment=(values["--segment"] or [None])[0],
                       warehouse=demo)
    shown = frame.select(
        "day", pl.col("gpu_model").alias("gpu"), "segment",
        pl.col("market_usd_per_gpu_hour").round(3).alias("market"),
        pl.col("min_usd_per_gpu_hour").round(3).alias("min"),
        pl.col("p25_usd_per_gpu_hour").round(3).alias("p25"),
        pl.col("p75_usd_per_gpu_hour").round(3).alias("p75"), "providers", "offers",
        pl.col("dispersion").round(2), pl.col("carried_providers").alias("carried"),
        pl.col("withheld_reason").alias("withheld")) if frame.height else frame
    capsys.readouterr()
    print_frame(shown, Format.table, title=f"market $/GPU-hour on {datetime.now(UTC).date()}",
                priority=("gpu", "market", "segment", "min", "p25", "p75", "providers"))
    assert printed.output == capsys.readouterr().out
    if frame.height:  # the frame path's table (warehouse.index.view.market_table) too
        from warehouse.index.view import market_table

        assert market_table(frame).equals(shown)
    if not asked:
        assert frame.height >= 20  # the demo's market: rows are compared, not empty tables


# `summary`'s tables as the frames of gpuprices.api.summary give them (the command's polars
# path, which --region, --geo, --currency, csv and json still take).
@pytest.mark.parametrize("pricing", [[], ["spot", "on_demand"]])
def test_the_summary_tables_are_their_frames(demo: Path, capsys: pytest.CaptureFixture[str],
                                             pricing: list[str]) -> None:
    from gpuprices.output import print_frames

    printed = _run("summary", [a for p in pricing for a in ("--pricing", p)], demo)
    tables = api.summary(pricing or None, demo)
    capsys.readouterr()
    sections = [("rows_per_source", "rows per source (last refresh)",
                 tables["rows_per_source"])]
    if tables["unknown_gpus"].height:
        sections.append(("unknown_gpus", "GPU names not in the catalog (rows quarantined)",
                         tables["unknown_gpus"]))
    else:
        print("GPU names not in the catalog: none")
    sections.append(("cheapest_per_tier", "cheapest comparable offer per GPU tier "
                     f"({', '.join(pricing or DEFAULT_PRICING)})", tables["cheapest_per_tier"]))
    print_frames(sections, Format.table)
    assert printed.output == capsys.readouterr().out
    assert tables["rows_per_source"].height >= 20 and tables["cheapest_per_tier"].height >= 4


# `availability`'s table as polars shaped the frame of gpuprices.api.availability_detail (the
# command's path for csv and json).
@pytest.mark.parametrize("asked", [
    ["H100"], ["RTX 4090", "--days", "30"], ["A100", "--geo", "EU"],
    ["L4", "--region", "us-east-1"], ["T4", "--pricing", "spot", "--pricing", "on_demand"],
    ["B300"], ["H100 NVL", "--geo", "APAC"],
])
def test_the_availability_table_is_its_frame(demo: Path, capsys: pytest.CaptureFixture[str],
                                             asked: list[str]) -> None:
    printed = _run("availability", asked, demo, answers=False)
    values = _given(asked, "--days", "--region", "--geo", "--pricing")
    days = int((values["--days"] or [7])[0])
    try:
        found = api.availability_detail(asked[0], days=days, region=values["--region"] or None,
                                        geo=values["--geo"] or None,
                                        pricing=values["--pricing"] or None, warehouse=demo)
    except NoAnswer as exc:  # the same answer: none, said the same way
        assert printed.exit_code != 0 and str(exc) in printed.output
        return
    assert printed.exit_code == 0, printed.output
    shown = found.stock.select(
        pl.col("gpu_model").alias("gpu"), "provider", "region", "geo",
        pl.format("{}/{}", "in_stock_observations", "observations").alias("runs in stock"),
        (pl.col("share_in_stock") * 100).round(0).alias("% in stock"),
        pl.col("last_in_stock").dt.strftime("%Y-%m-%d %H:%M").alias("last in stock"),
        pl.col("state").alias("now"), pl.col("gpus_free").alias("GPUs free"), "source")
    where = [*(f"region {r}" for r in values["--region"]),
             *(f"geography {g}" for g in values["--geo"])]
    capsys.readouterr()
    print_frame(shown, Format.table, title=f"{asked[0]} availability, last {days} days"
                + (f" ({', '.join(where)})" if where else ""))
    assert printed.stdout == capsys.readouterr().out
    if found.silent:
        assert printed.stderr == ("quoted now without stock information: "
                                  f"{', '.join(found.silent)}\n")
    if asked == ["H100"]:
        assert shown.height >= 3  # the demo's stock: rows are compared, not empty tables
