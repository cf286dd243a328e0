"""Commands about the data itself: parse, query, sources, refresh, summary."""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from contract import DEFAULT_PRICING
from contract.settings import load_settings
from gpuprices.options import (
    CurrencyOpt,
    FormatOpt,
    GeoOpt,
    PrefectOpt,
    PricingOpt,
    RegionOpt,
    WarehouseOpt,
    fail,
    in_range,
    place,
    prepare_prefect,
    read_warehouse,
    use_prefect,
)
from gpuprices.output import Format, print_frame
from warehouse.sandbox import THREADS, TIMEOUT_S

if TYPE_CHECKING:
    import polars as pl

    from warehouse.frames import Rows
    from warehouse.place import Place

# Words of DuckDB's refusals under the query sandbox (warehouse.connection.SANDBOX).
REFUSED = ("disabled by configuration", "configuration has been locked",
           "disabled through configuration", "permission error")


# A capture's day: from the first web archives of provider pages to tomorrow (UTC).
FIRST_CAPTURE_DAY = datetime(2005, 1, 1, tzinfo=UTC)


def parse(
    source: Annotated[str, typer.Argument(help="source name, e.g. vastai")],
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="saved payload")],
    as_of: Annotated[datetime | None, typer.Option(
        "--as-of", formats=["%Y-%m-%d"], show_default=False,
        help="the capture's day (2005-01-01 .. today): an announced price is in force only "
             "from its date on [default: the file's modification time]")] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Parse one saved payload with SOURCE's parser, screen it, and print the rows that would
    be stored (and, on stderr, the rows the screens would hold). Touches no database."""
    from contract import ParseError, RawCapture
    from schemas.observation import to_observations, validate_guarded
    from scrapers.registry import get_source

    try:
        src = get_source(source)
    except KeyError as exc:
        raise fail(str(exc.args[0]), 2) from None
    if not file.is_file():
        raise fail(f"{file} is not a regular file", 2)
    # The cap a fetch of this source has (a page: GPUPRICES_MAX_PAGE_BYTES): the parser
    # never sees more than it would from the network.
    cap = load_settings().http.for_kind(src.kind).max_bytes
    with file.open("rb") as handle:
        body = handle.read(cap + 1)
    if len(body) > cap:
        setting = "GPUPRICES_MAX_PAGE_BYTES" if src.kind == "page" else "GPUPRICES_MAX_BYTES"
        raise fail(f"{file} is larger than the {cap:,}-byte cap for {src.kind} sources "
                   f"({setting}); not parsed")
    if as_of is not None:
        fetched = as_of.replace(tzinfo=UTC)
        if not FIRST_CAPTURE_DAY <= fetched <= datetime.now(UTC) + timedelta(days=1):
            raise fail(f"--as-of {as_of:%Y-%m-%d} is out of range (2005-01-01 .. today)", 2)
    else:
        fetched = datetime.fromtimestamp(file.stat().st_mtime, UTC)
    raw = RawCapture(source=src.name, url=src.url, fetched_at=fetched, body=body)
    try:
        report = src.parse_report(raw)
        observations = to_observations(report.frame, raw, run_id="parse")
    except ParseError as exc:
        raise fail(f"{source} cannot parse {file}: {exc}") from None
    skipped = f"; skipped: {report.skips.describe()}" if report.skips else ""
    typer.echo(f"read by strategy: {report.strategy} ({report.frame.height} rows){skipped}",
               err=True)
    typer.echo(f"as of {fetched:%Y-%m-%d} (the capture's day: prices announced for later are "
               "not in force)", err=True)
    batch = validate_guarded(observations, aggregator=src.aggregator)
    shown = ["provider", "offering", "gpu_name", "gpu_model", "gpu_count", "gpu_memory_gb",
             "region", "pricing", "term_months", "effective_from", "price_usd_per_hour",
             "price_usd_per_gpu_hour", "available"]
    frame = batch.good if fmt is not Format.table else batch.good.select(shown)
    print_frame(frame, fmt, title=f"{source}: {file.name}")
    if batch.quarantined.height:
        typer.secho(f"{batch.quarantined.height} rows held by the screens or checks (would "
                    "be quarantined):", err=True, fg=typer.colors.YELLOW)
        for row in batch.quarantined.select("offering", "failed_check").head(20).iter_rows():
            typer.echo(f"  {row[0]}: {row[1]}", err=True)


# A table on a terminal shows at most this many rows (csv and json print every row).
TABLE_ROWS = 1_000
_UNITS = {"": 1, "k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}


def _memory_mib(param: typer.CallbackParam, value: str | None) -> int | None:
    """--memory-limit / GPUPRICES_QUERY_MEMORY: a size such as 2GB, 512MB, 1.5GiB (MB when no
    unit), within warehouse.sandbox.MEMORY_MIB and the machine's memory; else exit 2."""
    from warehouse.sandbox import MEMORY_MIB, machine_memory_mib

    if value is None:
        return None
    low, high = MEMORY_MIB[0], min(MEMORY_MIB[1], machine_memory_mib())
    allowed = f"allowed {low}MB to {high // 1024}GB"
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", value, re.I)
    if not match:
        raise fail(f"--memory-limit {value!r} is not a size such as 2GB or 512MB ({allowed})",
                   2)
    mib = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if not (low <= mib <= high):
        raise fail(f"--memory-limit {value} is out of range: {allowed}", 2)
    return int(mib)


def query(
    sql: Annotated[str, typer.Argument(help="SQL to run (read-only)")],
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
    memory_limit: Annotated[str | None, typer.Option(
        "--memory-limit", envvar="GPUPRICES_QUERY_MEMORY", callback=_memory_mib,
        help="most memory the query may use, e.g. 2GB (64MB to the machine's memory; "
        "default a quarter of it, at most 4GB)", show_default=False)] = None,
    threads: Annotated[int | None, typer.Option(
        envvar="GPUPRICES_QUERY_THREADS", callback=in_range(*THREADS),
        help="threads the query may use (1 to 256; default up to 4)",
        show_default=False)] = None,
    timeout: Annotated[float | None, typer.Option(
        envvar="GPUPRICES_QUERY_TIMEOUT_S", callback=in_range(*TIMEOUT_S),
        help="seconds before the query is stopped (0.1 to 86,400; default 60)",
        show_default=False)] = None,
) -> None:
    """Run one read-only SELECT against the warehouse. Statements that write, read or write
    other files, install or load extensions, change settings or run pragmas are refused, and
    the query runs within a memory limit, a thread limit and a time limit."""
    from dataclasses import replace

    from warehouse.connection import WarehouseError
    from warehouse.sandbox import check_statement, default_limits, run

    limits = default_limits()
    limits = replace(limits, memory_mib=memory_limit or limits.memory_mib,
                     threads=threads or limits.threads, timeout_s=timeout or limits.timeout_s)
    table = fmt is Format.table
    with read_warehouse(warehouse, sandboxed=True, limits=limits) as con:
        try:
            statement = check_statement(con, sql)
            # a table of plain columns prints DuckDB's rows as they come: no polars
            frame = run(con, statement, timeout_s=limits.timeout_s, nested=fmt is Format.json,
                        preview=table, max_rows=TABLE_ROWS + 1 if table else None, plain=table)
        except WarehouseError as exc:
            message = str(exc)
            lowered = message.lower()
            if message.startswith("refused"):
                pass
            elif "read-only" in lowered or "read only" in lowered:
                message = f"refused: the warehouse is opened read-only: {message}"
            elif any(word in lowered for word in REFUSED):
                message = ("refused: `gpuprices query` reads the warehouse only (no files, "
                           "extensions or settings; `gpuprices export` writes files): "
                           + message)
            raise fail(message) from None
    if table and frame.height > TABLE_ROWS:
        print_frame(frame.head(TABLE_ROWS), fmt)
        typer.echo(f"(the first {TABLE_ROWS} rows; --format csv or json prints them all)",
                   err=True)
        return
    print_frame(frame, fmt)


def migrate(warehouse: WarehouseOpt = None) -> None:
    """Upgrade the warehouse to this version's schema and publish its read snapshot (read
    commands never migrate: they ask for this, or any write command, first)."""
    from warehouse.connection import (
        WarehouseError,
        check_warehouse_file,
        open_warehouse,
        schema_version,
    )
    from warehouse.dialect import is_lake_url
    from warehouse.lake import redact
    from warehouse.snapshot import read_path

    settings = load_settings(warehouse=warehouse)

    if not is_lake_url(settings.warehouse) and not settings.warehouse.exists():
        raise fail(f"no warehouse at {settings.warehouse}: nothing to migrate")
    try:
        check_warehouse_file(settings.warehouse)
        with open_warehouse(settings.warehouse, command="migrate") as con:
            version = schema_version(con)
    except WarehouseError as exc:
        raise fail(str(exc)) from None
    readers = "it directly" if is_lake_url(settings.warehouse) else read_path(settings.warehouse)
    typer.echo(f"{redact(str(settings.warehouse))}: schema version {version}; readers open "
               f"{readers}")


# The table `sources` prints on a terminal: column, header.
_SOURCES_TABLE = (("source", "source"), ("last_status", "status"), ("stale", "stale"),
                  ("latest_rows", "rows"), ("last_success_at", "last success"),
                  ("quarantined_last_parse", "quarantined"), ("skipped_last_parse", "skipped"),
                  ("last_error", "last_error"), ("kind", "kind"), ("url", "url"))


def sources(warehouse: WarehouseOpt = None, fmt: FormatOpt = Format.table) -> None:
    """Every source: provider, kind, URL, last success, rows last run, status, the rows its
    last run quarantined (and why, by screen: "3 unknown GPU"), and the rows its last
    successful parse skipped, by reason ("12 contact sales, 3 hidden row")."""
    from gpuprices import api
    from warehouse.frames import relation_frame, relation_table

    with api.source_table(warehouse) as table:
        if fmt is not Format.table:  # csv and json keep every column
            print_frame(relation_frame(table), fmt, title="sources")
            return
        # what fits a terminal, as DuckDB's rows (no polars)
        shown = [(name, label) for name, label in _SOURCES_TABLE if name in table.columns]
        answer = relation_table(table.project(
            ", ".join(f'{name} AS "{label}"' for name, label in shown)))
    print_frame(answer, fmt, title="sources", priority=(
        "source", "status", "stale", "rows", "last success", "quarantined", "skipped",
        "last_error"))


def _progress_handler(total: int) -> tuple[logging.Handler, object]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    # stderr: stdout holds the summary only (one JSON document with -f json)
    progress = Progress(TextColumn("refresh"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.description}"), transient=False,
                        console=Console(stderr=True))
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
    currency: CurrencyOpt = None,
) -> None:
    """Scrape sources into the warehouse and print a summary (the `refresh` flow's work;
    a Prefect flow run with --prefect or when PREFECT_API_URL is set); --currency: the
    summary's prices in that currency at today's rate."""
    try:
        settings = load_settings(warehouse=warehouse)
    except ValueError as exc:  # a GPUPRICES_* setting out of its range
        raise fail(str(exc), 2) from None
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
    print_summary(settings.warehouse, fmt, currency=currency)
    if message:
        raise fail(message)


def _refresh_flow(source: list[str] | None, offline: bool, warehouse: Path) -> str | None:
    """Run the Prefect flow (a run record); None when every source refreshed."""
    prepare_prefect(warehouse)
    from flows.refresh import failure_message
    from flows.refresh import refresh as refresh_flow

    state = refresh_flow(sources=source, offline=offline, warehouse=str(warehouse),
                         return_state=True)
    try:
        return failure_message(state)
    except RuntimeError as exc:
        raise fail(str(exc)) from None


def print_summary(warehouse: Path, fmt: Format = Format.table,
                  pricing: tuple[str, ...] | None = None, where: Place | None = None,
                  currency: str | None = None) -> None:
    """Rows per source in the last run, unknown GPU names, the cheapest offer per tier (in
    `where`, amounts in `currency`; one JSON object with a key for each, with -f json)."""
    from gpuprices import api
    from gpuprices.money import Money

    chosen, money = pricing or DEFAULT_PRICING, Money.of(currency)
    tables: dict[str, pl.DataFrame | Rows]
    if fmt is Format.table and (where is None or where.everywhere) and not money.converting:
        tables = api.summary_table(chosen, warehouse)  # DuckDB's rows: no polars
    else:
        tables = api.summary(chosen, warehouse, region=where.regions if where else None,
                             geo=where.geos if where else None, currency=money.code)
    unknown = tables["unknown_gpus"]
    sections = [("rows_per_source", "rows per source (last refresh)",
                 tables["rows_per_source"])]
    if unknown.height or fmt is not Format.table:
        sections.append(("unknown_gpus", "GPU names not in the catalog (rows quarantined)",
                         unknown))
    shown = ", ".join(chosen) + (f"; {where.describe()}" if where and not where.everywhere
                                 else "")
    sections.append(("cheapest_per_tier", f"cheapest comparable offer per GPU tier ({shown})",
                     money.seen(tables["cheapest_per_tier"], day=datetime.now(UTC).date())))
    if fmt is Format.table and not unknown.height:
        typer.echo("GPU names not in the catalog: none")
    money.show_frames(sections, fmt)


def summary(pricing: PricingOpt = None, region: RegionOpt = None, geo: GeoOpt = None,
            currency: CurrencyOpt = None, warehouse: WarehouseOpt = None,
            fmt: FormatOpt = Format.table) -> None:
    """Print the refresh summary again from the warehouse (no scraping)."""
    settings = load_settings(warehouse=warehouse)
    print_summary(settings.warehouse, fmt, pricing, place(region, geo),  # type: ignore[arg-type]
                  currency)


def register(app: typer.Typer) -> None:
    for command in (parse, query, sources, refresh, summary, migrate):
        app.command()(command)
