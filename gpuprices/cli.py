"""`gpuprices`: a thin command line over the same functions the flows use.

Commands that only read (parse, query, sources, ...) never import Prefect, so they start fast.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpuprices.output import Format, print_frame
from gpuprices.settings import load_settings

if TYPE_CHECKING:
    import duckdb

app = typer.Typer(
    name="gpuprices",
    help="Where GPU compute is cheapest today: scrape, store, compare.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

WarehouseOpt = Annotated[
    Path | None,
    typer.Option("--warehouse", "-w", help="DuckDB file (default: $GPUPRICES_WAREHOUSE or "
                 "data/gpu_prices.duckdb)", show_default=False),
]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="table, csv or json")]


def fail(message: str, code: int = 1) -> typer.Exit:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code)


@contextmanager
def read_warehouse(warehouse: Path | None) -> Iterator[duckdb.DuckDBPyConnection]:
    """The warehouse opened read-only for one command; a clear error (exit 1) when it cannot be."""
    from warehouse.connection import WarehouseError, connect_read_only

    settings = load_settings(warehouse=warehouse)
    try:
        con = connect_read_only(settings.warehouse)
    except WarehouseError as exc:
        raise fail(str(exc)) from None
    try:
        yield con
    finally:
        con.close()


def prepare_prefect(warehouse: Path) -> None:
    """Keep Prefect local and quiet unless the user configured otherwise."""
    os.environ.setdefault("PREFECT_HOME", str(warehouse.parent.resolve() / ".prefect"))
    Path(os.environ["PREFECT_HOME"]).mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    # A first start creates Prefect's database; on a busy 2-core machine that can pass 20 s.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")


@app.command()
def parse(
    source: Annotated[str, typer.Argument(help="source name, e.g. vastai")],
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="saved payload")],
    fmt: FormatOpt = Format.table,
) -> None:
    """Parse one saved payload with SOURCE's parser and print the rows. Touches no database."""
    from schemas.observation import to_observations, validate
    from scrapers.base import ParseError, RawCapture
    from scrapers.registry import get_source

    try:
        src = get_source(source)
    except KeyError as exc:
        raise fail(str(exc.args[0]), 2) from None
    fetched = datetime.fromtimestamp(file.stat().st_mtime, UTC)
    raw = RawCapture(source=src.name, url=src.url, fetched_at=fetched, body=file.read_bytes())
    try:
        observations = to_observations(src.parse(raw), raw, run_id="parse")
    except ParseError as exc:
        raise fail(f"{source} cannot parse {file}: {exc}") from None
    batch = validate(observations)
    shown = ["provider", "offering", "gpu_name", "gpu_model", "gpu_count", "gpu_memory_gb",
             "region", "pricing", "price_usd_per_hour", "price_usd_per_gpu_hour", "available"]
    frame = batch.good if fmt is not Format.table else batch.good.select(shown)
    print_frame(frame, fmt, title=f"{source}: {file.name}")
    if batch.quarantined.height:
        typer.secho(f"{batch.quarantined.height} rows fail validation (would be quarantined):",
                    err=True, fg=typer.colors.YELLOW)
        for row in batch.quarantined.select("offering", "failed_check").head(20).iter_rows():
            typer.echo(f"  {row[0]}: {row[1]}", err=True)


@app.command()
def query(
    sql: Annotated[str, typer.Argument(help="SQL to run (read-only)")],
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Run read-only SQL against the warehouse. Statements that write are refused."""
    import duckdb

    with read_warehouse(warehouse) as con:
        try:
            result = con.sql(sql)
            if result is None:
                raise fail("the statement returned no rows")
            frame = result.pl()
        except duckdb.Error as exc:
            message = str(exc).splitlines()[0]
            if "read-only" in message.lower() or "read only" in message.lower():
                message = f"the warehouse is opened read-only: {message}"
            raise fail(message) from None
    print_frame(frame, fmt)


@app.command()
def sources(warehouse: WarehouseOpt = None, fmt: FormatOpt = Format.table) -> None:
    """Every source: provider, kind, URL, last success, rows last run, status."""
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
                "last_status, stale, unknown_gpus, last_error FROM source_status").pl()
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


@app.command()
def refresh(
    source: Annotated[list[str] | None, typer.Option("--source", "-s",
                      help="only this source (repeatable)")] = None,
    offline: Annotated[bool, typer.Option(help="replay the bundled example snapshots")] = False,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Run the Prefect `refresh` flow: scrape sources into the warehouse and print a summary."""
    settings = load_settings(warehouse=warehouse)
    prepare_prefect(settings.warehouse)
    from flows.refresh import progress_log
    from flows.refresh import refresh as refresh_flow
    from scrapers.registry import all_sources
    from warehouse.connection import WarehouseError

    names = source or list(all_sources())
    handler, progress = _progress_handler(len(names))
    progress_log.addHandler(handler)
    progress_log.setLevel(logging.INFO)
    progress_log.propagate = False
    try:
        with progress:  # type: ignore[attr-defined]
            state = refresh_flow(sources=source, offline=offline,
                                 warehouse=str(settings.warehouse), return_state=True)
    except (KeyError, WarehouseError) as exc:
        raise fail(str(exc.args[0] if isinstance(exc, KeyError) else exc)) from None
    finally:
        progress_log.removeHandler(handler)
    result = state.result(raise_on_failure=False)
    if isinstance(result, BaseException):
        raise fail(f"refresh did not run: {result}")
    print_summary(settings.warehouse, fmt)
    if not state.is_completed():
        raise fail(state.message or "some sources failed")


def print_summary(warehouse: Path, fmt: Format = Format.table) -> None:
    """Rows per source in the last run, unknown GPU names, the cheapest offer per tier."""
    from reports.queries import cheapest_per_tier, rows_per_source, unknown_gpus

    with read_warehouse(warehouse) as con:
        print_frame(rows_per_source(con), fmt, title="rows per source (last refresh)")
        unknown = unknown_gpus(con)
        if unknown.height or fmt is not Format.table:
            print_frame(unknown, fmt, title="GPU names not in the catalog (kept as 'unknown')")
        else:
            typer.echo("GPU names not in the catalog: none")
        print_frame(cheapest_per_tier(con), fmt, title="cheapest on-demand offer per GPU tier")


@app.command()
def summary(warehouse: WarehouseOpt = None, fmt: FormatOpt = Format.table) -> None:
    """Print the refresh summary again from the warehouse (no scraping)."""
    settings = load_settings(warehouse=warehouse)
    print_summary(settings.warehouse, fmt)


from gpuprices import commands_reports  # noqa: E402  (registers report, cheapest, history ...)

commands_reports.register(app)

from gpuprices import commands_ops  # noqa: E402  (serve, backfill, reparse, export, alerts)

commands_ops.register(app)

from gpuprices import commands_board  # noqa: E402  (board)

commands_board.register(app)


def main() -> None:
    try:
        app()
    except BrokenPipeError:  # `gpuprices query ... | head`
        sys.stderr.close()
        sys.exit(0)


if __name__ == "__main__":
    main()
