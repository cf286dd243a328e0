"""Commands that operate the tracker: serve, backfill, reparse, export, publish, alerts.

Registered on the main app by gpuprices.cli. Heavy imports (Prefect, polars, duckdb) happen
inside the commands, so importing this module stays light.
"""

from __future__ import annotations

from datetime import date, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from contract.settings import load_settings
from gpuprices.options import (
    FormatOpt,
    WarehouseOpt,
    day_option,
    fail,
    in_range,
    prepare_prefect,
    read_warehouse,
    writable_warehouse,
)
from gpuprices.output import Format, print_frame


class ExportFormat(StrEnum):
    parquet = "parquet"
    csv = "csv"


def serve(
    refresh_cron: Annotated[str, typer.Option(help="cron (UTC) of the nightly refresh")]
    = "0 2 * * *",
    report_cron: Annotated[str, typer.Option(help="cron (UTC) of the weekly report")]
    = "0 6 * * 1",
    offline: Annotated[bool, typer.Option(help="scheduled refreshes replay the bundled "
                                          "examples (demo)")] = False,
    warehouse: WarehouseOpt = None,
) -> None:
    """Serve `refresh` nightly and `weekly_report` weekly on Prefect's own schedules.

    Needs a Prefect API: `prefect server start` and PREFECT_API_URL, or Prefect Cloud.
    Runs until interrupted; runs show in the Prefect UI under Deployments and Flow Runs.
    Deployments of the same names bound to a work pool (`prefect deploy`) are taken over.
    """
    import os

    try:
        settings = load_settings(warehouse=warehouse)
    except ValueError as exc:  # a GPUPRICES_* setting out of its range
        raise fail(str(exc), 2) from None
    # A long-running service: its runs' INFO lines (per source, ALERT, summaries) belong in
    # the run logs and on this console (prepare_prefect would quiet them to WARNING).
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO")
    prepare_prefect(settings.warehouse)
    from flows.serve import serve as serve_flows
    from warehouse.dialect import is_lake_url

    where = settings.warehouse if is_lake_url(settings.warehouse) else settings.warehouse.resolve()
    serve_flows(refresh_cron, report_cron, str(where), offline=offline)


def reparse(
    source_arg: Annotated[str | None, typer.Argument(metavar="[SOURCE]",
                                                     help="only this source")] = None,
    source: Annotated[str | None, typer.Option("--source", "-s", help="only this source "
                                               "(same as SOURCE)")] = None,
    since: Annotated[datetime | None, day_option("--since", "only captures observed on/after "
                                                            "this UTC day, YYYY-MM-DD")] = None,
    failed: Annotated[bool, typer.Option(help="also re-parse archived captures of failed or "
                                         "rejected runs (kept for reparse)")] = True,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Re-parse archived raw captures with the current parsers: stored captures' rows are
    replaced in place; failed captures the parser now reads land at their own time."""
    import polars as pl

    from flows.reparse import reparse as reparse_captures

    if source_arg and source and source_arg != source:
        raise fail(f"two sources given: {source_arg} and --source {source}", 2)
    since_day: date | None = since.date() if since else None
    try:
        with writable_warehouse(warehouse) as (con, settings):
            results = reparse_captures(con, archive_root=settings.archive_root,
                                       source=source_arg or source, since=since_day,
                                       include_failed=failed)
    except KeyError as exc:
        raise fail(str(exc.args[0]), 2) from None
    if not results:
        typer.echo("no stored captures match")
        return
    frame = pl.DataFrame([
        {"source": r.source, "capture": r.capture_id[:12], "observed_at": r.observed_at,
         "was": r.was, "status": r.status, "rows_before": r.rows_before,
         "rows_after": r.rows_after, "quarantined": r.rows_quarantined,
         "note": None if r.status == "reparsed" else r.note} for r in results])
    print_frame(frame, fmt, title="reparse")
    if any(r.problem for r in results):
        raise fail("some stored captures were kept as they were (see note column)")


def export(
    directory: Annotated[Path, typer.Argument(file_okay=False, help="output folder")],
    fmt: Annotated[ExportFormat, typer.Option("--format", "-f", help="parquet or csv")]
    = ExportFormat.parquet,
    warehouse: WarehouseOpt = None,
) -> None:
    """Export the history with its provenance (docs/export.md): observations by UTC day and
    provider (only the days that are new or changed since the last export into DIR), the
    market, price-change, run and capture tables, and manifest.json (rows, sha256, columns)."""
    from gpuprices import api

    result = api.export(directory, fmt=fmt.value, warehouse=warehouse)
    typer.echo(f"{result.observations} observations in {result.partitions} partitions "
               f"-> {directory / 'observations'} ({len(result.days_written)} days written, "
               f"{result.days_unchanged} unchanged"
               + (f", {len(result.days_removed)} removed" if result.days_removed else "") + ")")
    for name, rows in result.files.items():
        typer.echo(f"  {name}: {rows} rows")
    typer.echo(f"  manifest: {directory / 'manifest.json'}")


def publish(
    lake: Annotated[str | None, typer.Option(help="DuckLake URL, e.g. ducklake:/srv/gpu/"
                                             "catalog.ducklake (default: $GPUPRICES_LAKE)")]
    = None,
    data_path: Annotated[str | None, typer.Option(help="lake data folder (default: "
                                                  "$GPUPRICES_LAKE_DATA_PATH or "
                                                  "<catalog>.files/)")] = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """Copy the warehouse's tables and views into a DuckLake catalog for other readers."""
    import os

    from warehouse.connection import WarehouseError, read_source
    from warehouse.lake import lake_settings, lake_target, redact
    from warehouse.lake import publish as publish_lake

    configured = lake_settings(os.environ)
    url = lake or (configured[0] if configured else None)
    if not url:
        raise fail("no lake: pass --lake ducklake:<catalog> or set GPUPRICES_LAKE", 2)
    data = data_path or (configured[1] if configured else None)
    settings = load_settings(warehouse=warehouse)
    try:
        lake_target(url, data)  # a bad lake URL or data path is said before anything is read
        # the read snapshot (checked, current schema): publishing never holds up a refresh
        result = publish_lake(read_source(settings.warehouse), url, data)
    except (WarehouseError, ValueError, RuntimeError) as exc:
        raise fail(str(exc)) from None
    typer.echo(f"published to {redact(url)}: {result.tables.get('observation', 0)} observations "
               f"({result.captures_copied} captures copied), {len(result.tables)} tables"
               + (f"; recreated {', '.join(result.recreated)}" if result.recreated else ""))


def upkeep(
    lake: Annotated[str | None, typer.Option(help="the lake (default: --warehouse when it is "
                                             "a lake, else $GPUPRICES_LAKE)")] = None,
    keep_hours: Annotated[float, typer.Option(help="keep snapshots this recent (time travel "
                                              "reaches back that far)",
                                              callback=in_range(0, 24 * 365))] = 168.0,
    warehouse: WarehouseOpt = None,
) -> None:
    """Bound a DuckLake's growth: rewrite mostly-deleted files, merge small files, expire old
    snapshots, delete the files no snapshot needs (the `lake-upkeep` deployment runs it hourly)."""
    import os
    from datetime import timedelta

    from warehouse.connection import WarehouseError
    from warehouse.dialect import is_lake_url
    from warehouse.lake import lake_settings, redact, upkeep_lake

    settings = load_settings(warehouse=warehouse)
    configured = lake_settings(os.environ)
    url = lake or (str(settings.warehouse) if is_lake_url(settings.warehouse) else None) \
        or (configured[0] if configured else None)
    if not url:
        raise fail("no lake: pass --lake, a -w ducklake:... warehouse, or set GPUPRICES_LAKE", 2)
    try:
        result = upkeep_lake(url, keep=timedelta(hours=keep_hours))
    except WarehouseError as exc:
        raise fail(str(exc)) from None
    typer.echo(f"{redact(url)}: snapshots {result.snapshots_before} -> "
               f"{result.snapshots_after}, data files {result.files_before} -> "
               f"{result.files_after} ({result.files_deleted} deleted)")


alerts_app = typer.Typer(help="Price alert rules ($GPUPRICES_ALERTS or ./alerts.toml).",
                         no_args_is_help=True)


@alerts_app.command("check")
def alerts_check(
    rules: Annotated[Path | None, typer.Option(help="rules file (default: $GPUPRICES_ALERTS "
                                               "or ./alerts.toml)")] = None,
    dry_run: Annotated[bool, typer.Option(help="show new events without sending or "
                                          "recording them")] = False,
    warehouse: WarehouseOpt = None,
) -> None:
    """Check the rules now; send and record the events not sent before."""
    from reports.alerts import AlertConfigError, check_alerts, load_config, rules_path

    path = rules or rules_path()
    if path is None or not path.exists():
        raise fail("no alert rules: pass --rules FILE or set GPUPRICES_ALERTS", 2)
    try:
        config = load_config(path)
    except AlertConfigError as exc:
        raise fail(str(exc), 2) from None
    if dry_run:  # reads only: a read-only connection, usable while a refresh writes
        with read_warehouse(warehouse) as con:
            events = check_alerts(con, config, send=False)
    else:
        with writable_warehouse(warehouse) as (con, _):
            events = check_alerts(con, config)
    if dry_run:
        for event in events:
            typer.echo(f"would send [{event.rule}] {event.message}")
    typer.echo(f"{len(events)} new alert event(s) from {len(config.rules)} rule(s)")


@alerts_app.command("list")
def alerts_list(warehouse: WarehouseOpt = None, fmt: FormatOpt = Format.table) -> None:
    """Alert events already sent (newest first)."""
    from warehouse.frames import sql_frame

    with read_warehouse(warehouse) as con:
        frame = sql_frame(con, "SELECT fired_at, rule, kind, message, delivered FROM alert_event "
                          "ORDER BY fired_at DESC")
    print_frame(frame, fmt, title="alert events")


def register(app: typer.Typer) -> None:
    for command in (serve, reparse, export, publish, upkeep):
        app.command()(command)
    app.add_typer(alerts_app, name="alerts")
