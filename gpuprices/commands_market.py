"""Commands on the market price (issue 14): market, market-moves, explain, value, cluster,
rent-vs-buy. Registered on the main app by gpuprices.cli; heavy imports inside the commands.
Every number comes from reports.market (on the semantic layer): the same as the report's and
the board's.
"""

from __future__ import annotations

from datetime import UTC, datetime, time
from pathlib import Path
from typing import Annotated

import typer

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
    models,
    place,
    prices,
    read_warehouse,
    the_day,
    writable_warehouse,
)
from gpuprices.output import Format

__all__ = ["register"]


def _segment(segment: str | None) -> str | None:
    from reports.market.values import segments

    known = segments()
    if segment is not None and segment not in known:
        raise fail(f"unknown segment {segment!r}; one of {', '.join(known)}", 2)
    return segment


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
    import polars as pl

    from reports.market.values import market_by_geo, market_of

    gpu_models, chosen_day, chosen_segment = models(gpu), the_day(day), _segment(segment)
    where, money = place(region, geo), Money.of(currency)
    if rebuild:
        from flows.upkeep import rebuild_derived

        with writable_warehouse(warehouse) as (con, _):
            days = rebuild_derived(con)
        typer.echo(f"derived tables rebuilt: {days} days", err=True)
    with read_warehouse(warehouse) as con:
        if per_geo:
            frame, stored = market_by_geo(con, chosen_day, gpu_models=gpu_models,
                                          segment=chosen_segment, now=datetime.now(UTC),
                                          place=where), False
        else:
            frame, stored = market_of(con, chosen_day, gpu_models=gpu_models,
                                      segment=chosen_segment, now=datetime.now(UTC),
                                      place=where)
        frame = money.convert(con, frame, day=chosen_day)
    if per_geo or not where.everywhere:
        typer.echo(f"(the market {'per geography' if per_geo else 'of ' + where.describe()}: "
                   "computed from the offers placed there as prices stood at the end of "
                   f"{chosen_day})", err=True)
    elif not stored:
        typer.echo(f"(no stored market values for {chosen_day}: computed from the prices as "
                   "they stood at the end of that day)", err=True)
    if fmt is Format.table and frame.height:
        frame = frame.select(
            *(["geo"] if per_geo else []), "day", pl.col("gpu_model").alias("gpu"), "segment",
            pl.col("usd_per_gpu_hour").round(3).alias("market"),
            pl.col("min_usd").round(3).alias("min"), pl.col("p25_usd").round(3).alias("p25"),
            pl.col("p75_usd").round(3).alias("p75"), "providers", "offers",
            pl.col("dispersion").round(2), pl.col("carried_providers").alias("carried"),
            pl.col("withheld_reason").alias("withheld"))
    shown = f" ({where.describe()})" if not where.everywhere else ""
    money.show(frame, fmt, title=f"market $/GPU-hour on {chosen_day}{shown}")


def explain(
    what: Annotated[str, typer.Argument(help="market, cheapest or scenario")],
    name: Annotated[str, typer.Argument(help="GPU model or family (market, cheapest), or a "
                                        "scenario name from reports/market/scenarios.toml")],
    day: DayOpt = None,
    pricing: PricingOpt = None,
    region: RegionOpt = None,
    geo: GeoOpt = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """How a number was made: the offers that counted (source, capture, time), the ones left
    out and why, and the arithmetic. E.g. `explain market H100 --date 2026-11-20` (in USD,
    the currency prices are compared in)."""
    from reports.market.explain import explain_cheapest, explain_market, explain_scenario
    from reports.queries import reference_table

    if what not in ("market", "cheapest", "scenario"):
        raise fail(f"explain market, cheapest or scenario, not {what!r}", 2)
    now = datetime.now(UTC)
    as_of = min(datetime.combine(the_day(day), time.max, UTC), now) if day else now
    if what == "scenario":
        from reports.market.scenarios import load_scenarios

        scenarios = {s.name: s for s in load_scenarios()}
        if name not in scenarios:
            raise fail(f"no scenario {name!r}; known: {', '.join(scenarios)}", 2)
    gpu_models = models([name]) if what != "scenario" else None
    where = place(region, geo)
    with prices(warehouse, pricing, as_of, where) as then:  # type: ignore[arg-type]
        if what == "market":
            lines = explain_market(then.con, gpu_models or [], the_day(day), now=now,
                                   place=where)
        elif what == "cheapest":
            lines = explain_cheapest(then, gpu_models or [])
        else:
            lines = explain_scenario(then, scenarios[name], reference_table(then.con, "plan"))
    typer.echo("\n".join(lines))


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
    from reports.market.moves import PERIOD_DAYS, week_moves

    if period not in PERIOD_DAYS:
        raise fail(f"--period is week or month, not {period!r}", 2)
    gpu_models = models(gpu)
    where, money = place(region, geo), Money.of(currency)
    with read_warehouse(warehouse) as con:
        moves = week_moves(con, the_day(day), period=period, gpu_models=gpu_models,
                           place=where, now=datetime.now(UTC))
        moved = money.convert(con, moves.moves, day=moves.new_day)
        coverage = money.convert(con, moves.coverage, day=moves.new_day)
    shown = f" ({where.describe()})" if not where.everywhere else ""
    money.show(moved, fmt, title=f"market moves {moves.old_day} -> {moves.new_day} over "
               f"matched providers{shown}")
    money.show(coverage, fmt, title="coverage changes (not price moves)")


def value(
    metric: Annotated[str, typer.Option(help="pflop ($/PFLOP-hour, dense BF16), vram "
                                        "($/GB-VRAM-hour) or bandwidth ($/(TB/s)-hour)")]
    = "pflop",
    gpu: GpuOpt = None,
    limit: Annotated[int, typer.Option(help="rows to show",
                                       callback=in_range(1, 10_000))] = 20,
    pricing: PricingOpt = None,
    region: RegionOpt = None,
    geo: GeoOpt = None,
    currency: CurrencyOpt = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Price-performance ranking of comparable offers: $ per PFLOP, GB or TB/s an hour."""
    from reports.market.value import METRICS, price_performance

    if metric not in METRICS:
        raise fail(f"--metric is one of {', '.join(METRICS)}, not {metric!r}", 2)
    gpu_models = models(gpu)
    where, money = place(region, geo), Money.of(currency)
    with prices(warehouse, pricing, where=where) as now:  # type: ignore[arg-type]
        ranked = money.convert(now.con, price_performance(now, metric, gpu_models), day=now.day)
    money.show(ranked.head(limit), fmt,
               title=f"best {METRICS[metric][1]} ({ranked.height} offers)")


def cluster(
    gpu: GpuOpt = None,
    gpus: Annotated[int, typer.Option(help="GPUs in the cluster",
                                      callback=in_range(1, 1_000_000))] = 512,
    days: Annotated[int, typer.Option(help="days of use", callback=in_range(1, 3660))] = 90,
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

    from reports.market.cluster import cluster_quotes
    from reports.market.values import market_of

    gpu_models = models(gpu)
    if not gpu_models:
        raise fail("give the GPU: --gpu NAME", 2)
    where, money = place(region, geo), Money.of(currency)
    with prices(warehouse, pricing, where=where) as now:  # type: ignore[arg-type]
        market_rows, _ = market_of(now.con, now.day, now=now.as_of, place=where)
        quotes = cluster_quotes(now, market_rows, gpu_models, gpus=gpus, days=days)
        if quotes.height:
            quotes = money.convert(now.con, quotes, day=now.day)
    if quotes.height == 0:
        raise fail(f"no comparable {', '.join(gpu or [])} offers stand now")
    if fmt is Format.table:
        quotes = quotes.select(
            "provider", "segment", pl.col("gpu_model").alias("gpu"), "offering",
            pl.col("node_gpus").alias("GPUs/node"), "nodes",
            pl.col("hourly_usd").round(0).alias("$/hour"),
            pl.col("total_usd").round(0).alias("total $"),
            pl.col("vs_market_pct").alias("vs market %"),
            pl.col("reserved_offering").alias("reserved"),
            pl.col("reserved_total_usd").round(0).alias("reserved total $"),
            pl.col("reserved_term").alias("term"),
            pl.when(pl.col("market_withheld").is_not_null()).then(pl.lit("market withheld"))
            .alias("note"))
    money.show(quotes, fmt, title=f"{gpus} x {', '.join(gpu or [])} for {days} days (list "
               "prices; capacity at this size is not checked)")


def rent_vs_buy(
    gpu: GpuOpt = None,
    utilization: Annotated[float | None, typer.Option(help="share of hours used",
                                                     callback=in_range(0.01, 1.0))] = None,
    years: Annotated[float | None, typer.Option(help="depreciation years",
                                               callback=in_range(1.0, 15.0))] = None,
    cost_of_capital: Annotated[float | None, typer.Option(help="annual rate",
                                                         callback=in_range(0.0, 0.5))] = None,
    usd_per_kwh: Annotated[float | None, typer.Option(help="electricity $/kWh",
                                                     callback=in_range(0.0, 2.0))] = None,
    pue: Annotated[float | None, typer.Option(help="power usage effectiveness",
                                             callback=in_range(1.0, 3.0))] = None,
    colo: Annotated[float | None, typer.Option(help="colocation $/kW-month",
                                              callback=in_range(0.0, 2000.0))] = None,
    ops_share: Annotated[float | None, typer.Option(help="operations a year as a share of the "
                                                    "server price",
                                                    callback=in_range(0.0, 1.0))] = None,
    idle_power: Annotated[float | None, typer.Option(help="idle power share",
                                                    callback=in_range(0.0, 1.0))] = None,
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

    from reports.market.rent_vs_buy import break_even
    from reports.market.tco import (
        TCO_TOML,
        load_assumptions,
        load_servers,
        rental_yardsticks,
        tco_rows,
        tco_sheet,
    )
    from reports.market.values import market_of
    from reports.queries import reference_table

    gpu_models = models(gpu)
    try:
        chosen = load_assumptions(assumptions or TCO_TOML).with_overrides(
            utilization=utilization, depreciation_years=years, cost_of_capital=cost_of_capital,
            usd_per_kwh=usd_per_kwh, pue=pue, colocation_usd_per_kw_month=colo,
            operations_share=ops_share, idle_power_share=idle_power)
        server_rows = load_servers(servers) if servers else load_servers()
    except (ValueError, OSError) as exc:
        raise fail(str(exc), 2) from None
    if gpu_models:
        server_rows = server_rows.filter(pl.col("gpu_model").is_in(gpu_models))
    where, money = place(region, geo), Money.of(currency)
    with prices(warehouse, pricing, where=where) as now:  # type: ignore[arg-type]
        market_rows, _ = market_of(now.con, now.day, now=now.as_of, place=where)
        market_usd, cheapest = rental_yardsticks(now, market_rows)
        ownership = reference_table(now.con, "gpu_ownership")
        cards = break_even(ownership, now) if ownership is not None and ownership.height \
            else None
        rows = money.convert(now.con, tco_rows(server_rows, chosen, market_usd, cheapest),
                             day=now.day)
        if cards is not None:
            cards = money.convert(now.con, cards, day=now.day)
    money.show(rows, fmt, title="full cost of ownership vs renting")
    if fmt is Format.table and gpu_models and money.converting:
        typer.echo("(the arithmetic sheets are in USD: run without --currency to see them)",
                   err=True)
    elif fmt is Format.table and gpu_models:
        from rich.console import Console
        from rich.table import Table

        for server in server_rows.to_dicts():
            sheet = Table(title=f"{server['gpus']} x {server['gpu_model']}: the arithmetic")
            for column in ("item", "formula", "value"):
                sheet.add_column(column)
            rent = market_usd.get(server["gpu_model"]) or cheapest.get(
                server["gpu_model"], (None, ""))[0]
            for line in tco_sheet(server, chosen, rent):
                sheet.add_row(*line)
            Console(width=200).print(sheet)
    if cards is not None:
        if gpu_models:
            cards = cards.filter(pl.col("gpu_model").is_in(gpu_models))
        money.show(cards, fmt, title="the card alone: purchase / (cheapest rental - power)")


def register(app: typer.Typer) -> None:
    app.command("rent-vs-buy")(rent_vs_buy)
    for command in (market, market_moves, explain, value, cluster):
        app.command()(command)
