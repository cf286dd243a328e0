"""The GPU price index (issue 24): `index` (the fixings of a day), `index fix`, `index impact`,
`index backtest`, and `reproduce index GPU DAY`. Registered on the main app by gpuprices.cli;
heavy imports inside the commands. Every number is warehouse/index's."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpuprices.money import Money
from gpuprices.options import (
    CurrencyOpt,
    DayOpt,
    FormatOpt,
    GpuOpt,
    WarehouseOpt,
    day_option,
    fail,
    models,
    read_warehouse,
    the_day,
    writable_warehouse,
)
from gpuprices.output import Format, Section, print_frame, print_frames

if TYPE_CHECKING:
    from warehouse.fx import Unit

__all__ = ["register"]

KINDS = ("on_demand", "spot", "reserved", "all")
index_app = typer.Typer(
    help="The GPU price index: daily fixings per GPU model, kind (on-demand, spot, reserved "
         "by term), provider segment and geography; screened, banded, never revised "
         "(docs/index-methodology.md). Without a subcommand: the fixings of a day.",
    invoke_without_command=True)
reproduce_app = typer.Typer(help="Recompute published numbers from the archived raw captures.",
                            no_args_is_help=True)

SinceOpt = Annotated[datetime | None, day_option("--since", "first UTC day, YYYY-MM-DD")]
UntilOpt = Annotated[datetime | None, day_option("--until", "last UTC day, YYYY-MM-DD")]
ParamsOpt = Annotated[Path | None, typer.Option(
    "--params", help="index parameters file (default warehouse/index/params.toml)")]


def _params(path: Path | None):  # type: ignore[no-untyped-def]  # IndexParams, imported late
    from warehouse.index.params import ParamsError, default_params, load_params

    try:
        return load_params(path) if path else default_params()
    except ParamsError as exc:
        raise fail(str(exc), 2) from None


def _choice(name: str, value: str | None, allowed: tuple[str, ...] | list[str]) -> str | None:
    if value is not None and value not in allowed:
        raise fail(f"--{name} is one of {', '.join(allowed)}, not {value!r}", 2)
    return value


@index_app.callback()
def index(
    ctx: typer.Context,
    gpu: GpuOpt = None,
    day: DayOpt = None,
    kind: Annotated[str, typer.Option(help="on_demand, spot, reserved or all")] = "on_demand",
    segment: Annotated[str, typer.Option(help="all (every provider), or one segment: "
                                         "hyperscaler, neocloud, marketplace, serverless")]
    = "all",
    geo: Annotated[str, typer.Option(help="all, or one geography: US, Canada, EU, UK, APAC, "
                                     "LATAM, MEA, global")] = "all",
    scopes: Annotated[bool, typer.Option(help="every segment and geography")] = False,
    votes: Annotated[bool, typer.Option(help="also every vote of the fixings shown")] = False,
    terms: Annotated[bool, typer.Option(help="the term curve per GPU: on-demand, spot and "
                                        "each reserved term")] = False,
    revisions: Annotated[bool, typer.Option(help="the revision records of the day")] = False,
    currency: CurrencyOpt = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """The index fixings of a day (published, or indicative for a day not fixed yet);
    --currency EUR: the values, bands and votes at the ECB rate of that day (the index is
    fixed in USD)."""
    if ctx.invoked_subcommand:
        return
    from schemas.regions import GEOGRAPHIES

    _choice("kind", kind, KINDS)
    if geo != "all":
        _choice("geo", geo, list(GEOGRAPHIES))
    gpu_models, chosen = models(gpu), the_day(day)
    series = {"kind": None if kind == "all" or terms else kind,
              "segment": None if scopes else segment, "geo": None if scopes else geo}
    if (fmt is Format.table and not Money.of(currency).converting
            and not (terms or votes or revisions)
            and _published_table(warehouse, chosen, gpu_models, series)):
        return
    from gpuprices.api import unit_on
    from reports.index.tables import (
        INDEX_AMOUNTS,
        VOTE_AMOUNTS,
        fixings_table,
        term_curve,
        votes_table,
    )
    from warehouse.index.read import fixings_of
    from warehouse.index.store import read_revisions

    with read_warehouse(warehouse) as con:
        frame, vote_rows, published = fixings_of(con, chosen, now=datetime.now(UTC),
                                                 gpu_models=gpu_models, **series)
        changed = read_revisions(con, chosen) if revisions else None
        unit = unit_on(con, currency, chosen)
    frame = unit.convert(frame, INDEX_AMOUNTS)
    vote_rows = unit.convert(vote_rows, VOTE_AMOUNTS)
    money = f"{unit.currency}/GPU-hour" if unit.converting else "$/GPU-hour"
    if not published:
        typer.echo(f"(index not fixed for {chosen}: indicative values, computed now from the "
                   "published record; `gpuprices index fix` publishes)", err=True)
    if terms:
        print_frame(term_curve(frame), fmt, title=f"term curve {money} on {chosen}")
        _rate_note(unit, fmt)
        return
    shown = fixings_table(frame) if fmt is Format.table else frame
    title = _title(money, chosen, published)
    if not votes and changed is None:
        print_frame(shown, fmt, title=title)
        _rate_note(unit, fmt)
        return
    sections: list[Section] = [("fixings", title, shown)]
    if votes and fmt is not Format.table:
        sections.append(("votes", "votes", vote_rows))
    elif votes:
        for fixing_id in frame["fixing_id"].to_list():
            mine = vote_rows.filter(vote_rows["fixing_id"] == fixing_id)
            sections.append((fixing_id, f"votes of {fixing_id}", votes_table(mine)))
    if changed is not None:
        sections.append(("revisions", f"revision records of {chosen} (the fixings stand)",
                         changed))
    print_frames(sections, fmt)
    _rate_note(unit, fmt)


def _title(money: str, day: date, published: bool) -> str:
    return f"GPU price index {money} on {day}" + ("" if published else " (indicative)")


def _published_table(warehouse: Path | None, day: date, gpu_models: list[str] | None,
                     series: dict[str, str | None]) -> bool:
    """Print the fixings of a fixed `day` in USD as DuckDB's rows (no polars: start-up,
    issue 23), the table fixings_table makes (FIXINGS_TABLE); False, printing nothing, for a
    day not fixed yet (computed, indicative)."""
    from reports.index.tables import FIXINGS_TABLE
    from warehouse.frames import sql_table
    from warehouse.index.store import day_record, fixings_query

    with read_warehouse(warehouse) as con:
        if day_record(con, day) is None:
            return False
        sql, params = fixings_query(days=[day], gpu_models=gpu_models, **series)
        shown = sql_table(con, FIXINGS_TABLE.format(fixings=sql), params)
    print_frame(shown, Format.table, title=_title("$/GPU-hour", day, True))
    return True


def _rate_note(unit: Unit, fmt: Format) -> None:
    """Under a table: the rate the amounts were converted at (csv and json carry fx_rate)."""
    if unit.converting and fmt is Format.table:
        typer.echo(unit.describe())


@index_app.command("fix")
def fix(
    since: SinceOpt = None,
    through: Annotated[datetime | None, day_option("--through", "last UTC day to fix "
                                                   "(default today)")] = None,
    params: ParamsOpt = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """Check published days for revisions, then fix every day after the last fixed one up to
    today (past days as of their end, today as of now). Writes; never rewrites a fixing."""
    from scrapers.registry import all_sources
    from warehouse.index.publish import IndexParamsChanged, fix_index

    chosen = _params(params)
    with writable_warehouse(warehouse) as (con, _):
        try:
            result = fix_index(con, params=chosen, sources=all_sources(),
                               since=since.date() if since else None,
                               through=through.date() if through else None)
        except IndexParamsChanged as exc:
            raise fail(str(exc), 2) from None
        except ValueError as exc:
            raise fail(str(exc), 2) from None
    days = (f"{result.fixed[0]} .. {result.fixed[-1]}" if len(result.fixed) > 1
            else str(result.fixed[0]) if result.fixed else "none")
    typer.echo(f"fixed {len(result.fixed)} day(s) ({days}): {result.fixings} fixings; "
               f"{len(result.checked)} published day(s) re-checked, "
               f"{len(result.revisions)} revision record(s) written")
    for fixing_id, number, why in result.revisions:
        typer.echo(f"  revision {number} of {fixing_id}: {why}")


@index_app.command("impact")
def impact(
    params: Annotated[Path, typer.Option("--params", help="the proposed parameters file "
                                         "(a new version)")],
    gpu: GpuOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """What a methodology change would have done to the stored history: every published day
    recomputed under PARAMS (nothing written), per series: days compared, days changed, mean
    and largest change, fixings that would be withheld or published instead."""
    from reports.index.impact import impact_report

    proposed = _params(params)
    with read_warehouse(warehouse) as con:
        summary, changes = impact_report(con, proposed, gpu_models=models(gpu),
                                         since=since.date() if since else None,
                                         until=until.date() if until else None)
    print_frames([("summary", f"impact of parameters {proposed.version} "
                   f"({proposed.digest[:12]}) on the published history", summary),
                  ("changes", "largest changes",
                   changes.head(40) if fmt is Format.table else changes)], fmt)


@index_app.command("backtest")
def backtest(
    gpu: GpuOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    simulate: Annotated[bool, typer.Option(help="also the simulation on the latest real "
                                           "panels (quiet days, glitches, real moves)")] = True,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Each aggregate over the warehouse's history (and simulated stress days built on its real
    panels) against the old two-stage median: how often each moved, how far, how fast it
    followed a real move, and the days they disagree."""
    from reports.index.backtest import backtest_tables

    with read_warehouse(warehouse) as con:
        tables = backtest_tables(con, gpu_models=models(gpu),
                                 since=since.date() if since else None,
                                 until=until.date() if until else None,
                                 with_simulation=simulate)
    keys = ["history", "history_disagreements", "held", "held_disagreements", "simulation"]
    print_frames([(keys[i] if i < len(keys) else f"table_{i}", title, frame)
                  for i, (title, frame) in enumerate(tables)], fmt)


@reproduce_app.command("index")
def reproduce_index(
    gpu: Annotated[str, typer.Argument(help="GPU model or family (e.g. H100), or all")],
    day: Annotated[datetime | None, typer.Argument(
        formats=["%Y-%m-%d"], help="UTC day YYYY-MM-DD (default: every fixed day)",
        show_default=False)] = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """Recompute published fixings from the archived raw captures (re-parsed with the current
    parsers, screened, aggregated) and print SAME, or each difference. Exit 1 on any."""
    from contract.settings import load_settings
    from reports.index.tables import reproduce_lines
    from scrapers.registry import all_sources
    from warehouse.index.reproduce import reproduce_days
    from warehouse.index.store import fixed_days

    gpu_models = None if gpu.lower() == "all" else models([gpu])
    settings = load_settings(warehouse=warehouse)
    with read_warehouse(warehouse) as con:
        days: list[date] = [day.date()] if day else fixed_days(con)
        if not days:
            raise fail("no published fixing: run `gpuprices index fix` (or a refresh) first")
        results = reproduce_days(con, all_sources(), settings.archive_root, days,
                                 gpu_models=gpu_models)
    label = ", ".join(gpu_models) if gpu_models else "every GPU"
    typer.echo("\n".join(reproduce_lines(results, label)))
    if not all(r.ok for r in results):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(index_app, name="index")
    app.add_typer(reproduce_app, name="reproduce")
