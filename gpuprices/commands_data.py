"""Commands about the data itself: parse, query, sources, refresh, summary."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from contract import DEFAULT_PRICING
from contract.settings import load_settings
from gpuprices.options import (
    FormatOpt,
    PrefectOpt,
    PricingOpt,
    WarehouseOpt,
    fail,
    prepare_prefect,
    prices,
    read_warehouse,
    use_prefect,
)
from gpuprices.output import Format, print_frame

# Words of DuckDB's refusals under the query sandbox (warehouse.connection.SANDBOX).
REFUSED = ("disabled by configuration", "configuration has been locked",
           "disabled through configuration", "permission error")


def parse(
    source: Annotated[str, typer.Argument(help="source name, e.g. vastai")],
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="saved payload")],
    fmt: FormatOpt = Format.table,
) -> None:
    """Parse one saved payload with SOURCE's parser and print the rows. Touches no database."""
    from contract import ParseError, RawCapture
    from schemas.observation import to_observations, validate_guarded
    from scrapers.registry import get_source

    try:
        src = get_source(source)
    except KeyError as exc:
        raise fail(str(exc.args[0]), 2) from None
    fetched = datetime.fromtimestamp(file.stat().st_mtime, UTC)
    raw = RawCapture(source=src.name, url=src.url, fetched_at=fetched, body=file.read_bytes())
    try:
        report = src.parse_report(raw)
        observations = to_observations(report.frame, raw, run_id="parse")
    except ParseError as exc:
        raise fail(f"{source} cannot parse {file}: {exc}") from None
    skipped = f"; skipped: {report.skips.describe()}" if report.skips else ""
    typer.echo(f"read by strategy: {report.strategy} ({report.frame.height} rows){skipped}",
               err=True)
    batch = validate_guarded(observations, aggregator=src.aggregator)
    shown = ["provider", "offering", "gpu_name", "gpu_model", "gpu_count", "gpu_memory_gb",
             "region", "pricing", "price_usd_per_hour", "price_usd_per_gpu_hour", "available"]
    frame = batch.good if fmt is not Format.table else batch.good.select(shown)
    print_frame(frame, fmt, title=f"{source}: {file.name}")
    if batch.quarantined.height:
        typer.secho(f"{batch.quarantined.height} rows fail validation (would be quarantined):",
                    err=True, fg=typer.colors.YELLOW)
        for row in batch.quarantined.select("offering", "failed_check").head(20).iter_rows():
            typer.echo(f"  {row[0]}: {row[1]}", err=True)


def query(
    sql: Annotated[str, typer.Argument(help="SQL to run (read-only)")],
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Run read-only SQL against the warehouse. Statements that write, read or write other
    files, install or load extensions, or change settings are refused."""
    import duckdb

    with read_warehouse(warehouse, sandboxed=True) as con:
        try:
            result = con.sql(sql)
            if result is None:
                raise fail("the statement returned no rows")
            frame = result.pl()
        except duckdb.Error as exc:
            message = str(exc).splitlines()[0]
            lowered = message.lower()
            if "read-only" in lowered or "read only" in lowered:
                message = f"refused: the warehouse is opened read-only: {message}"
            elif any(word in lowered for word in REFUSED):
                message = ("refused: `gpuprices query` reads the warehouse only (no files, "
                           "extensions or settings; `gpuprices export` writes files): "
                           + message)
            raise fail(message) from None
    print_frame(frame, fmt)


def sources(warehouse: WarehouseOpt = None, fmt: FormatOpt = Format.table) -> None:
    """Every source: provider, kind, URL, last success, rows last run, status, and the rows
    its last successful parse skipped, by reason ("12 contact sales, 3 hidden row")."""
    import polars as pl

    from scrapers.registry import all_sources

    registry = pl.DataFrame(
        [{"source": s.name, "provider": "*" if s.aggregator else s.provider, "kind": s.kind,
          "url": s.url} for s in all_sources().values()]
    )
    settings = load_settings(warehouse=warehouse)
    status = None
    if settings.warehouse.exists():
        with read_warehouse(settings.warehouse) as con:
            status = con.execute(
                "SELECT source, last_success_at, prices_as_of, latest_rows, rows_last_run, "
                "last_status, stale, unknown_gpus, skipped_last_parse, last_error "
                "FROM source_status").pl()
    if status is None or status.height == 0:
        frame = registry.with_columns(pl.lit("never run").alias("last_status"))
    else:
        frame = registry.join(status, on="source", how="left").with_columns(
            pl.col("last_status").fill_null("never run"))
    print_frame(frame, fmt, title="sources")


def _progress_handler(total: int) -> tuple[logging.Handler, object]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    progress = Progress(TextColumn("refresh"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.description}"), transient=False)
    task_id = progress.add_task("", total=total)

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            outcome = getattr(record, "outcome", None)
            if outcome is None:
                return
            mark = "ok" if outcome.ok else "FAILED"
            progress.advance(task_id)
            progress.update(task_id, description=f"last: {outcome.source} {mark}")
            if not outcome.ok:  # one line: source, URL, reason
                error = str(outcome.error)
                if not error.startswith(f"{outcome.source}: "):
                    error = f"{outcome.source}: {outcome.url}: {error}"
                progress.console.print(error, style="red", markup=False, highlight=False)

    return Handler(), progress


def refresh(
    source: Annotated[list[str] | None, typer.Option("--source", "-s",
                      help="only this source (repeatable)")] = None,
    offline: Annotated[bool, typer.Option(help="replay the bundled example snapshots")] = False,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
    prefect: PrefectOpt = False,
) -> None:
    """Scrape sources into the warehouse and print a summary (the `refresh` flow's work;
    a Prefect flow run with --prefect or when PREFECT_API_URL is set)."""
    settings = load_settings(warehouse=warehouse)
    from flows.refresh_work import progress_log, refresh_now
    from scrapers.registry import all_sources
    from warehouse.connection import WarehouseError, check_warehouse_file

    try:
        check_warehouse_file(settings.warehouse)
    except WarehouseError as exc:
        raise fail(str(exc)) from None
    names = source or list(all_sources())
    handler, progress = _progress_handler(len(names))
    progress_log.addHandler(handler)
    progress_log.setLevel(logging.INFO)
    progress_log.propagate = False
    try:
        with progress:  # type: ignore[attr-defined]
            if use_prefect(prefect):
                message = _refresh_flow(source, offline, settings.warehouse)
            else:
                message = refresh_now(source, offline, str(settings.warehouse)).message
                message = None if message.startswith("all ") else message
    except (KeyError, WarehouseError) as exc:
        raise fail(str(exc.args[0] if isinstance(exc, KeyError) else exc)) from None
    finally:
        progress_log.removeHandler(handler)
    print_summary(settings.warehouse, fmt)
    if message:
        raise fail(message)


def _refresh_flow(source: list[str] | None, offline: bool, warehouse: Path) -> str | None:
    """Run the Prefect flow (a run record); None when every source refreshed."""
    prepare_prefect(warehouse)
    from flows.refresh import refresh as refresh_flow

    state = refresh_flow(sources=source, offline=offline, warehouse=str(warehouse),
                         return_state=True)
    result = state.result(raise_on_failure=False)
    if isinstance(result, BaseException):
        raise fail(f"refresh did not run: {result}")
    return None if state.is_completed() else (state.message or "some sources failed")


def print_summary(warehouse: Path, fmt: Format = Format.table,
                  pricing: tuple[str, ...] | None = None) -> None:
    """Rows per source in the last run, unknown GPU names, the cheapest offer per tier."""
    from reports.market.rankings import top_per_tier
    from reports.queries import rows_per_source, unknown_gpus

    with prices(warehouse, pricing or DEFAULT_PRICING) as now:
        print_frame(rows_per_source(now.con), fmt, title="rows per source (last refresh)")
        unknown = unknown_gpus(now.con)
        if unknown.height or fmt is not Format.table:
            print_frame(unknown, fmt, title="GPU names not in the catalog (kept as 'unknown')")
        else:
            typer.echo("GPU names not in the catalog: none")
        ranked = top_per_tier(now, per_tier=1).drop("rank")
    print_frame(ranked, fmt, title=f"cheapest comparable offer per GPU tier "
                f"({', '.join(now.pricing)})")


def summary(pricing: PricingOpt = None, warehouse: WarehouseOpt = None,
            fmt: FormatOpt = Format.table) -> None:
    """Print the refresh summary again from the warehouse (no scraping)."""
    settings = load_settings(warehouse=warehouse)
    print_summary(settings.warehouse, fmt, pricing)  # type: ignore[arg-type]


def register(app: typer.Typer) -> None:
    for command in (parse, query, sources, refresh, summary):
        app.command()(command)
