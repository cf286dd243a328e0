"""Commands on the market price (issue 14): market, market-moves, explain, value, cluster,
rent-vs-buy. Registered on the main app by gpuprices.cli; heavy imports inside the commands.
Every number comes from reports.market (on the semantic layer): the same as the report's and
the board's.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpuprices.inputs import CLUSTER_DAYS, CLUSTER_GPUS, LIMIT, PERIODS
from gpuprices.money import Money
from gpuprices.options import (
    CurrencyOpt,
    DayOpt,
    FormatOpt,
    GeoOpt,
    GpuOpt,
    PricingOpt,
    RegionOpt,
    WarehouseOpt,
    fail,
    in_range,
    place,
    the_day,
    writable_warehouse,
)
from gpuprices.output import Format

if TYPE_CHECKING:
    import polars as pl

    from warehouse.frames import Rows

__all__ = ["register"]

# What `rent-vs-buy` shows on a terminal (--format csv or json: every column).
RENT_VS_BUY_TABLE = {
    "gpu_model": "gpu", "gpus": "GPUs", "server_usd": "server $",
    "usd_per_useful_gpu_hour": "own $/GPU-h", "market_usd_per_gpu_hour": "market $/GPU-h",
    "break_even_util_vs_market": "break-even vs market",
    "payback_month_vs_market": "payback month", "cheapest_rental_usd": "cheapest $/GPU-h",
    "cheapest_provider": "cheapest at", "break_even_util_vs_cheapest": "break-even vs cheapest",
}


def _tco(name: str) -> Callable[[typer.CallbackParam, float | None], float | None]:
    """The range of one rent-vs-buy assumption (reports.market.tco.RANGES, read when the
    option is given: the module is not imported at start) as an option callback."""
    def check(param: typer.CallbackParam, value: float | None) -> float | None:
        from reports.market.tco import RANGES

        return in_range(*RANGES[name])(param, value)
    return check


def market(
    gpu: GpuOpt = None,
    day: DayOpt = None,
    segment: Annotated[str | None, typer.Option(help="all, hyperscaler, neocloud, marketplace, "
                                                "serverless, unclassified")] = None,
    rebuild: Annotated[bool, typer.Option(help="recompute every derived table (the market "
                                          "price included) from every stored price "
                                          "(writes)")] = False,
    region: RegionOpt = None,
    geo: GeoOpt = None,
    per_geo: Annotated[bool, typer.Option("--per-geo", help="one market per geography (those "
                                          "--geo names, else every one)")] = False,
    currency: CurrencyOpt = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """The market price per GPU model and day: median of per-provider medians, with spread;
    of the offers in a region or geography with --region / --geo, per geography with
    --per-geo."""
    from gpuprices import api

    chosen_day = the_day(day)
    where, money = place(region, geo), Money.of(currency)
    if rebuild:
        from flows.upkeep import rebuild_derived

        with writable_warehouse(warehouse) as (con, _):
            days = rebuild_derived(con)
        typer.echo(f"derived tables rebuilt: {days} days", err=True)
    title = f"market $/GPU-hour on {chosen_day}"
    if fmt is Format.table and where.everywhere and not (per_geo or money.converting):
        # a fixed day's stored view, printed as DuckDB's rows (no polars)
        shown = api.market_table(gpu, day=chosen_day, segment=segment, warehouse=warehouse)
        if shown is not None:
            money.show(shown, fmt, title=title, priority=MARKET_PRIORITY)
            return

    frame, stored = api.market_stored(gpu, day=chosen_day, segment=segment,
                                      region=where.regions, geo=where.geos, per_geo=per_geo,
                                      currency=money.code, warehouse=warehouse)
    frame = money.seen(frame, day=chosen_day)
    if per_geo or not where.everywhere:
        typer.echo(f"(the market {'per geography' if per_geo else 'of ' + where.describe()}: "
                   "computed from the offers placed there as prices stood at the end of "
                   f"{chosen_day})", err=True)
    elif not stored:
        typer.echo(f"(no stored market values for {chosen_day}: computed from the prices as "
                   "they stood at the end of that day)", err=True)
    if fmt is Format.table and frame.height:
        from warehouse.index.view import market_table

        frame = market_table(frame, money.label, per_geo)
    shown = f" ({where.describe()})" if not where.everywhere else ""
    money.show(frame, fmt, title=f"{title}{shown}", priority=MARKET_PRIORITY)


# What a narrow terminal keeps of `market` (the rest: --wide).
MARKET_PRIORITY = ("gpu", "market", "segment", "min", "p25", "p75", "providers")


def explain(
    what: Annotated[str, typer.Argument(help="market, cheapest or scenario")],
    name: Annotated[str, typer.Argument(help="GPU model or family (market, cheapest), or a "
                                        "scenario name from reports/market/scenarios.toml")],
    day: DayOpt = None,
    pricing: PricingOpt = None,
    region: RegionOpt = None,
    geo: GeoOpt = None,
    currency: CurrencyOpt = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """How a number was made: the offers that counted (source, capture, time), the ones left
    out and why, and the arithmetic. E.g. `explain market H100 --date 2026-11-20` (in USD,
    the currency prices are compared in; --currency EUR: every amount at the ECB rate of
    the day explained, so the arithmetic still adds up)."""
    from gpuprices import api

    typer.echo(api.explain(what, name, day=day, pricing=pricing, region=region, geo=geo,
                           currency=currency, warehouse=warehouse))


def market_moves(
    gpu: GpuOpt = None,
    day: DayOpt = None,
    period: Annotated[str, typer.Option(help="week or month (7 or 30 days back)")] = "week",
    region: RegionOpt = None,
    geo: GeoOpt = None,
    currency: CurrencyOpt = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Market moves over providers present on both days; coverage changes apart (amounts in
    --currency at the rate of the later day)."""
    from gpuprices import api

    if period not in PERIODS:
        raise fail(f"--period is week or month, not {period!r}", 2)
    where, money = place(region, geo), Money.of(currency)
    moves = api.market_moves(gpu, day=the_day(day), period=period, region=where.regions,
                             geo=where.geos, currency=money.code, warehouse=warehouse)
    shown = f" ({where.describe()})" if not where.everywhere else ""
    money.show_frames([
        ("moves", f"market moves {moves.old_day} -> {moves.new_day} over matched providers"
         f"{shown}", money.seen(moves.moves, day=moves.new_day)),
        ("coverage", "coverage changes (not price moves)",
         money.seen(moves.coverage, day=moves.new_day))], fmt)


def value(
    metric: Annotated[str, typer.Option(help="pflop ($/PFLOP-hour, dense BF16), vram "
                                        "($/GB-VRAM-hour) or bandwidth ($/(TB/s)-hour)")]
    = "pflop",
    gpu: GpuOpt = None,
    limit: Annotated[int, typer.Option(help="rows to show", callback=in_range(*LIMIT))] = 20,
    pricing: PricingOpt = None,
    region: RegionOpt = None,
    geo: GeoOpt = None,
    currency: CurrencyOpt = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Price-performance ranking of comparable offers: $ per PFLOP, GB or TB/s an hour."""
    from gpuprices import api
    from reports.market.value import METRICS
    from warehouse.frames import held_query, relation_table

    if metric not in METRICS:
        raise fail(f"--metric is one of {', '.join(METRICS)}, not {metric!r}", 2)
    where, money = place(region, geo), Money.of(currency)
    shown: pl.DataFrame | Rows
    if fmt is Format.table and where.everywhere and not money.converting:
        # the same question as api.value, its first rows printed as DuckDB's (no polars)
        with api.value_table(metric, gpu, pricing=pricing, warehouse=warehouse) as ranked:
            height = int(held_query(ranked, "SELECT count(*) FROM {rows}").fetchall()[0][0])
            shown = relation_table(held_query(ranked,
                                              f"SELECT * FROM {{rows}} LIMIT {int(limit)}"))
    else:
        frame = api.value(metric, gpu, limit=None, pricing=pricing, region=where.regions,
                          geo=where.geos, currency=money.code, warehouse=warehouse)
        height, shown = frame.height, money.seen(frame.head(limit),
                                                 day=datetime.now(UTC).date())
    money.show(shown, fmt, title=f"best {METRICS[metric][1]} ({height} offers)")


def cluster(
    gpu: GpuOpt = None,
    gpus: Annotated[int, typer.Option(help="GPUs in the cluster",
                                      callback=in_range(*CLUSTER_GPUS))] = 512,
    days: Annotated[int, typer.Option(help="days of use",
                                      callback=in_range(*CLUSTER_DAYS))] = 90,
    pricing: PricingOpt = None,
    region: RegionOpt = None,
    geo: GeoOpt = None,
    currency: CurrencyOpt = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """What GPUS GPUs for DAYS cost at each provider, in its largest nodes, vs the market (of
    the same place with --region / --geo)."""
    import polars as pl

    from gpuprices import api

    if not gpu:
        raise fail("give the GPU: --gpu NAME", 2)
    where, money = place(region, geo), Money.of(currency)
    quotes = money.seen(api.cluster(gpu, gpus=gpus, days=days, pricing=pricing,
                                    region=where.regions, geo=where.geos, currency=money.code,
                                    warehouse=warehouse), day=datetime.now(UTC).date())
    usd = money.label
    if fmt is Format.table:
        quotes = quotes.select(
            "provider", "segment", pl.col("gpu_model").alias("gpu"), "offering",
            pl.col("node_gpus").alias("GPUs/node"), "nodes",
            pl.col(usd("hourly_usd")).round(0).alias("$/hour"),
            pl.col(usd("total_usd")).round(0).alias("total $"),
            pl.col("vs_market_pct").alias("vs market %"),
            pl.col("reserved_offering").alias("reserved"),
            pl.col(usd("reserved_total_usd")).round(0).alias("reserved total $"),
            pl.col("reserved_term").alias("term"),
            pl.when(pl.col("market_withheld").is_not_null()).then(pl.lit("market withheld"))
            .alias("note"))
    money.show(quotes, fmt, title=f"{gpus} x {', '.join(gpu or [])} for {days} days (list "
               "prices; capacity at this size is not checked)",
               priority=("provider", "total $", "gpu", "$/hour", "vs market %", "nodes"))


def rent_vs_buy(
    gpu: GpuOpt = None,
    utilization: Annotated[float | None, typer.Option(help="share of hours used",
                                                     callback=_tco("utilization"))] = None,
    years: Annotated[float | None, typer.Option(help="depreciation years",
                                               callback=_tco("depreciation_years"))] = None,
    cost_of_capital: Annotated[float | None, typer.Option(help="annual rate",
                                                         callback=_tco("cost_of_capital"))]
    = None,
    usd_per_kwh: Annotated[float | None, typer.Option(help="electricity $/kWh",
                                                     callback=_tco("usd_per_kwh"))] = None,
    pue: Annotated[float | None, typer.Option(help="power usage effectiveness",
                                             callback=_tco("pue"))] = None,
    colo: Annotated[float | None, typer.Option(
        help="colocation $/kW-month", callback=_tco("colocation_usd_per_kw_month"))] = None,
    ops_share: Annotated[float | None, typer.Option(help="operations a year as a share of the "
                                                    "server price",
                                                    callback=_tco("operations_share"))] = None,
    idle_power: Annotated[float | None, typer.Option(help="idle power share",
                                                    callback=_tco("idle_power_share"))] = None,
    assumptions: Annotated[Path | None, typer.Option(help="TOML of assumptions (default "
                                                     "reports/market/tco.toml)")] = None,
    servers: Annotated[Path | None, typer.Option(help="CSV of server prices (default "
                                                 "schemas/server_prices.csv)")] = None,
    pricing: PricingOpt = None,
    region: RegionOpt = None,
    geo: GeoOpt = None,
    currency: CurrencyOpt = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Build vs rent: full cost of ownership per useful GPU-hour, break-even utilization and
    payback month against the market price and the cheapest rental; the card-only figure."""
    import polars as pl

    from gpuprices import api

    where, money = place(region, geo), Money.of(currency)
    found = api.rent_vs_buy_detail(
        gpu, utilization=utilization, years=years, cost_of_capital=cost_of_capital,
        usd_per_kwh=usd_per_kwh, pue=pue, colo=colo, ops_share=ops_share,
        idle_power=idle_power, assumptions=assumptions, servers=servers, pricing=pricing,
        region=where.regions, geo=where.geos, currency=money.code, warehouse=warehouse)
    today = datetime.now(UTC).date()
    sections = [("servers", "full cost of ownership vs renting",
                 money.seen(found.servers, day=today))]
    if found.cards is not None:
        sections.append(("cards", "the card alone: purchase / (cheapest rental - power)",
                         money.seen(found.cards, day=today)))
    if fmt is not Format.table:
        money.show_frames(sections, fmt)
        return
    rows = found.servers
    columns = {money.label(c): name for c, name in RENT_VS_BUY_TABLE.items()}
    shown = rows.select(pl.col(c).alias(columns[c]) for c in columns
                        if c in rows.columns).with_columns(pl.col(pl.Float64).round(2))
    money.show(shown, fmt, title=f"{sections[0][1]} (--format csv: every column)")
    if gpu and money.converting:
        typer.echo("(the arithmetic sheets are in USD: run without --currency to see them)",
                   err=True)
    elif gpu:
        from rich.console import Console
        from rich.table import Table

        from gpuprices.output import table_width

        for server, lines in found.sheets:
            sheet = Table(title=f"{server['gpus']} x {server['gpu_model']}: the arithmetic")
            for column in ("item", "formula", "value"):
                sheet.add_column(column)
            for line in lines:
                sheet.add_row(*line)
            Console(width=table_width()).print(sheet)
    if found.cards is not None:
        money.show(found.cards, fmt, title=sections[1][1])


def register(app: typer.Typer) -> None:
    app.command("rent-vs-buy")(rent_vs_buy)
    for command in (market, market_moves, explain, value, cluster):
        app.command()(command)
