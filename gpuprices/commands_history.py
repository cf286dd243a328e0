"""History commands: `backfill` (wayback, skypilot, opencomputeprices, ecb, examples), `history`,
`changes`.

Registered on the main app by gpuprices.cli; this module's `backfill` group and `history`
replace the earlier single `backfill` (folder import, kept as `backfill skypilot DIR`) and
`history` commands. Heavy imports happen inside the commands.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from contract.settings import load_settings
from gpuprices.inputs import HISTORY_DAYS, LIMIT
from gpuprices.money import Money
from gpuprices.options import (
    CurrencyOpt,
    FormatOpt,
    GeoOpt,
    GpuOpt,
    PricingOpt,
    ProviderOpt,
    RegionOpt,
    WarehouseOpt,
    day_option,
    fail,
    in_range,
    place,
    writable_warehouse,
)
from gpuprices.output import Format, print_frame

if TYPE_CHECKING:
    import duckdb
    import polars as pl

    from warehouse.frames import Rows

__all__ = ["backfill_app", "changes", "history", "register"]

SinceOpt = Annotated[datetime | None, day_option("--since", "from this UTC day, YYYY-MM-DD")]
UntilOpt = Annotated[datetime | None, day_option("--until", "up to this UTC day, YYYY-MM-DD")]
backfill_app = typer.Typer(help="Import dated price history from public archives (idempotent: "
                           "running again adds nothing; an interrupted run resumes).",
                           no_args_is_help=True)


def _day(value: datetime | None) -> date | None:
    return value.date() if value else None


@contextmanager
def _writable(warehouse: Path | None) -> Iterator[tuple[duckdb.DuckDBPyConnection, Path]]:
    with writable_warehouse(warehouse) as (con, settings):
        yield con, settings.archive_root


@contextmanager
def _progress(label: str, total: int | None = None) -> Iterator[tuple[Callable[..., None],
                                                                       Callable[[int], None]]]:
    """A progress bar: captures done / failed / rows stored; yields (on_progress, set_total)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(stderr=True)
    progress = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.description}"), console=console)
    task = progress.add_task("listing captures ...", total=total)

    def on_progress(state: Any, result: Any) -> None:
        progress.update(task, completed=state.done,
                        description=f"failed {state.failed}, rows {state.rows}; "
                                    f"last {result.key}: {result.status}")
        if result.status in ("failed", "rejected"):
            progress.console.print(f"{result.key}: {result.error}", style="red", markup=False,
                                   highlight=False)

    def set_total(count: int) -> None:
        progress.update(task, total=count, description="")

    with progress:
        yield on_progress, set_total


def _show(results: list[Any], fmt: Format, title: str) -> None:
    import polars as pl

    frame = pl.DataFrame([
        {"capture": r.key, "observed_at": r.observed_at, "status": r.status,
         "rows_stored": r.rows_stored, "capture_id": (r.capture_id or "")[:12],
         "fetched": r.fetched, "error": r.error} for r in results],
        schema_overrides={"error": pl.String})
    print_frame(frame, fmt, title=title, max_rows=60 if fmt is Format.table else None)
    done = sum(r.status != "already stored" for r in results)
    failed = sum(r.status in ("failed", "rejected") for r in results)
    rows = sum(r.rows_stored for r in results)
    typer.echo(f"{len(results)} captures: {done} landed now ({failed} failed), "
               f"{len(results) - done} already stored; {rows} rows stored", err=True)


@backfill_app.command("wayback")
def wayback(
    source: Annotated[str, typer.Argument(help="a page source, e.g. lambda-page")],
    since: SinceOpt = None,
    until: UntilOpt = None,
    every: Annotated[str, typer.Option(help="one capture per week, month, or every capture")]
    = "month",
    interval: Annotated[float, typer.Option(callback=in_range(0.2, 60.0), help="seconds between "
                                            "requests to the archive")] = 1.0,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Page history from the Wayback Machine (GPUPRICES_BASE_URL_WAYBACK for a mirror)."""
    import httpx

    from contract import FetchError, ParseError
    from flows.backfill import backfill_wayback
    from scrapers.registry import all_sources, get_source
    from scrapers.wayback import ArchiveClient, Pacer

    if every not in ("week", "month", "capture"):
        raise fail(f"--every must be week, month or capture, not {every!r}", 2)
    try:
        src = get_source(source)
    except KeyError as exc:
        raise fail(str(exc.args[0]), 2) from None
    if src.kind != "page":
        pages = sorted(s.name for s in all_sources().values() if s.kind == "page")
        raise fail(f"{src.name} is not a page source; page sources: {', '.join(pages)}", 2)
    settings = load_settings(warehouse=warehouse)
    with (_writable(warehouse) as (con, archive_root),
          httpx.Client(follow_redirects=True, timeout=settings.http.timeout_s) as client,
          _progress(f"wayback {src.name}") as (on_progress, set_total)):
        archive = ArchiveClient(client, settings.http, retries=settings.retries,
                                backoff_base_s=settings.backoff_base_s,
                                pacer=Pacer(interval_s=interval))
        try:
            results = backfill_wayback(con, archive, src, archive_root=archive_root,
                                       since=_day(since), until=_day(until),
                                       every=every,  # type: ignore[arg-type]
                                       on_progress=on_progress, on_listed=set_total)
        except (FetchError, ParseError) as exc:  # the index itself could not be read
            raise fail(f"cannot list captures: {exc}") from None
    _show(results, fmt, f"wayback {src.name}: {', '.join(src.archive_urls)}")


@backfill_app.command("skypilot")
def skypilot(
    directory: Annotated[Path | None, typer.Argument(
        exists=True, file_okay=False, help="a folder of <cloud>/<YYYY-MM-DD>_vms.csv "
        "(+ MANIFEST.csv)")] = None,
    git: Annotated[Path | None, typer.Option(
        "--git", exists=True, file_okay=False, help="a local clone of the SkyPilot catalog: "
        "read catalogs/v*/<cloud>/vms.csv across its commits")] = None,
    cloud: Annotated[list[str] | None, typer.Option(help="clouds to read (repeatable; "
                                                    "default: those the live source reads)")]
    = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """SkyPilot catalog history: a clone's git history (--git) or a folder of snapshots."""
    if (directory is None) == (git is None):
        raise fail("give either a snapshot folder or --git PATH", 2)
    if directory is not None:
        _skypilot_folder(directory, warehouse, fmt)
        return
    from flows.backfill import backfill_skypilot_git
    from scrapers.registry import get_source
    from scrapers.skypilot import CLOUDS

    assert git is not None
    clouds = tuple(c.lower() for c in cloud) if cloud else CLOUDS
    with (_writable(warehouse) as (con, archive_root),
          _progress("skypilot git") as (on_progress, _)):
        try:
            results = backfill_skypilot_git(con, git, get_source("skypilot"),
                                            archive_root=archive_root, clouds=clouds,
                                            since=_day(since), until=_day(until),
                                            on_progress=on_progress)
        except RuntimeError as exc:
            raise fail(str(exc)) from None
    _show(results, fmt, f"skypilot catalog history in {git}")


def _skypilot_folder(directory: Path, warehouse: Path | None, fmt: Format) -> None:
    import polars as pl

    from flows.backfill import backfill_skypilot

    with _writable(warehouse) as (con, archive_root):
        try:
            results = backfill_skypilot(con, directory, archive_root=archive_root)
        except FileNotFoundError as exc:
            raise fail(str(exc)) from None
    frame = pl.DataFrame([
        {"snapshot": r.day, "clouds": ", ".join(r.clouds), "status": r.status,
         "rows_stored": r.rows_stored, "rows_quarantined": r.rows_quarantined,
         "capture": r.capture_id[:12], "error": r.error} for r in results])
    print_frame(frame, fmt, title=f"backfill skypilot from {directory}")
    if any(r.status in ("failed", "rejected") for r in results):
        raise fail("some snapshots did not land (see error column)")


@backfill_app.command("opencomputeprices")
def opencomputeprices(
    inputs: Annotated[list[str], typer.Argument(help="archive files or URLs (CSV, .csv.gz, "
                                                "tar.gz)")],
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """OpenComputePrices archive files: each snapshot_date lands at its own time."""
    import httpx

    from contract import FetchError, ParseError
    from flows.backfill import backfill_ocp_archives
    from scrapers.http import request, with_retries
    from scrapers.registry import get_source

    for item in inputs:
        if not item.startswith(("http://", "https://")) and not Path(item).is_file():
            raise fail(f"no such file: {item}", 2)
    settings = load_settings(warehouse=warehouse)
    with (_writable(warehouse) as (con, archive_root),
          httpx.Client(follow_redirects=True, timeout=settings.http.timeout_s) as client,
          _progress("opencomputeprices") as (on_progress, _)):
        def download(url: str) -> bytes:
            return with_retries(lambda: request(client, settings.http, "opencomputeprices",
                                                "GET", url).body,
                                attempts=settings.retries, base_s=settings.backoff_base_s)

        try:
            results = backfill_ocp_archives(con, inputs, get_source("opencomputeprices"),
                                            archive_root=archive_root, download=download,
                                            on_progress=on_progress)
        except (FetchError, ParseError, OSError) as exc:
            raise fail(str(exc)) from None
    _show(results, fmt, "opencomputeprices archives")


@backfill_app.command("ecb")
def ecb_rates(
    source: Annotated[str | None, typer.Argument(
        help="a rates file (.zip, .csv or .xml in the ECB's formats) or URL; default: the "
        "ECB's eurofxref-hist.zip", show_default=False)] = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """ECB euro reference rates since 1999, to convert prices quoted in other currencies."""
    import httpx
    import polars as pl

    from flows.fx_rates import backfill_rates, held_for_rates

    settings = load_settings(warehouse=warehouse)
    with (_writable(warehouse) as (con, _),
          httpx.Client(follow_redirects=True, timeout=settings.http.timeout_s) as client):
        result = backfill_rates(con, client, settings, source)
        held = held_for_rates(con)
    if result.stored is None:
        raise fail(result.message)
    stored = result.stored
    print_frame(pl.DataFrame([{
        "file": result.url, "rates_in_file": stored.rates_in_file,
        "rates_added": stored.rates_added, "first_day": stored.first_day,
        "last_day": stored.last_day, "capture": stored.capture_id[:12]}]),
        fmt, title="backfill ecb: euro reference rates")
    if held:
        typer.echo(f"{held} price rows wait in quarantine for a rate: `gpuprices reparse` "
                   "lands those the new rates cover", err=True)


@backfill_app.command("examples")
def examples(warehouse: WarehouseOpt = None, fmt: FormatOpt = Format.table) -> None:
    """Replay the demo's bundled dated snapshots (scrapers/examples/HISTORY.toml)."""
    from flows.backfill import replay_examples
    from scrapers.registry import all_sources

    with _writable(warehouse) as (con, archive_root):
        results = replay_examples(con, all_sources(), archive_root=archive_root,
                                  today=datetime.now(UTC).date())
    _show(results, fmt, "demo history: bundled snapshots replayed before today")


def history(
    gpu: Annotated[str, typer.Argument(help="GPU model or family, e.g. H100 or 'RTX 4090'")],
    days: Annotated[int, typer.Option(callback=in_range(*HISTORY_DAYS),
                                      help="days of history")] = 90,
    provider: ProviderOpt = None,
    pricing: PricingOpt = None,
    region: RegionOpt = None,
    geo: GeoOpt = None,
    currency: CurrencyOpt = None,
    plot: Annotated[Path | None, typer.Option(help="write a PNG chart to this file")] = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Cheapest comparable offer per day for GPU, with the source and capture of every point
    (today's point is what `cheapest` answers now; --currency: each day at its own rate)."""
    from gpuprices import api
    from reports.charts import plot_daily, sparkline
    from warehouse.frames import Rows

    where, money = place(region, geo), Money.of(currency)
    points: pl.DataFrame | Rows
    if fmt is Format.table and not money.converting and plot is None:
        # the same question as api.history, its rows printed as DuckDB's (no polars)
        points = api.history_table(gpu, days=days, provider=provider, pricing=pricing,
                                   region=where.regions, geo=where.geos, warehouse=warehouse)
    else:
        points = money.seen(api.history(gpu, days=days, provider=provider, pricing=pricing,
                                        region=where.regions, geo=where.geos,
                                        currency=money.code, warehouse=warehouse),
                            day_column="day")
    shown = ", ".join([*(pricing or ()), *([where.describe()] if not where.everywhere else [])])
    money.show(points, fmt, title=f"cheapest {gpu} per day ({shown})")
    if isinstance(points, Rows):
        at = points.columns.index(POINT)
        values = [row[at] for row in points.rows if row[at] is not None]
    else:
        values = points[money.label(POINT)].drop_nulls().to_list()
    if fmt is Format.table and values:
        typer.echo(money.label(f"{sparkline(values)}  ${min(values):.2f} .. ${max(values):.2f} "
                               "per GPU-hour"))
    if plot is not None and not isinstance(points, Rows):
        import polars as pl

        series = points.select(pl.lit(gpu).alias("series"), "day",
                               pl.col(money.label(POINT)).alias("usd_per_gpu_hour"))  # plot_daily
        plot_daily(series, plot, title=money.label(f"Cheapest {gpu} $/GPU-hour per day"))
        typer.echo(f"chart: {plot}", err=True)


# The price column of a history point (the naming rule: <what>_usd_per_gpu_hour).
POINT = "price_usd_per_gpu_hour"


def changes(
    since: Annotated[datetime, day_option("--since", "moves on or after this UTC day, "
                                          "YYYY-MM-DD")],
    gpu: GpuOpt = None,
    provider: ProviderOpt = None,
    pricing: PricingOpt = None,
    region: RegionOpt = None,
    geo: GeoOpt = None,
    currency: CurrencyOpt = None,
    limit: Annotated[int, typer.Option(callback=in_range(*LIMIT), help="rows to show")] = 50,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Moves of current prices since a day (the source that speaks for each offering): old ->
    new, %, date, provider, offering (newest first; --currency: at the rate of the move's
    day)."""
    from gpuprices import api
    from warehouse.frames import held_query, relation_table

    where, money = place(region, geo), Money.of(currency)
    columns = ("changed_on", "provider", "offering", "region", "pricing", "gpu_model",
               *(money.label(c) for c in MOVE_COLUMNS), "pct_change", "previous_day")
    if fmt is Format.table and where.everywhere and not money.converting:
        # the same question as api.changes, its first rows printed as DuckDB's (no polars)
        with api.move_table(since.date(), gpu=gpu, provider=provider, pricing=pricing,
                            warehouse=warehouse) as table:
            height = int(held_query(table, "SELECT count(*) FROM {rows}").fetchall()[0][0])
            shown: pl.DataFrame | Rows = relation_table(held_query(
                table, f"SELECT {', '.join(columns)} FROM {{rows}} LIMIT {int(limit)}"))
    else:
        moves = money.seen(api.changes(
            since.date(), gpu=gpu, provider=provider, pricing=pricing, region=where.regions,
            geo=where.geos, currency=money.code, limit=None, warehouse=warehouse),
            day_column="changed_on")
        height = moves.height
        shown = (moves if fmt is not Format.table else moves.select(*columns)).head(limit)
    money.show(shown, fmt,
               title=f"price moves since {since.date()} ({height} in all"
               + (f", {where.describe()}" if not where.everywhere else "") + ")",
               priority=("changed_on", "provider", *MOVE_COLUMNS, "pct_change", "gpu_model",
                         "offering"))


# A move's old and new price per GPU-hour (price_move view).
MOVE_COLUMNS = ("old_usd_per_gpu_hour", "new_usd_per_gpu_hour")


def register(app: typer.Typer) -> None:
    """Add the backfill group, history and changes."""
    app.add_typer(backfill_app, name="backfill")
    app.command()(history)
    app.command()(changes)
