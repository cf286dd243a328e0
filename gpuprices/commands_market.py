"""Commands on the market price (issue 14): market, market-moves, explain, value, cluster,
rent-vs-buy. Registered on the main app by gpuprices.cli; heavy imports inside the commands.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpuprices.options import FormatOpt, WarehouseOpt, fail, in_range, read_warehouse
from gpuprices.output import Format, print_frame
from gpuprices.settings import load_settings

if TYPE_CHECKING:
    import polars as pl

__all__ = ["register"]

GpuOpt = Annotated[str | None, typer.Option("--gpu", help="GPU model or family, e.g. H100")]
DateOpt = Annotated[str | None, typer.Option("--date", help="UTC day, YYYY-MM-DD (default: "
                                             "today)")]


def _day(text: str | None) -> date:
    if text is None:
        return datetime.now(UTC).date()
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise fail(f"--date must look like 2026-11-20, not {text!r}", 2) from None


def _models(name: str | None) -> list[str] | None:
    if name is None:
        return None
    from reports.names import resolve_gpus

    try:
        return resolve_gpus([name])
    except ValueError as exc:
        raise fail(str(exc), 2) from None


def _segment(segment: str | None) -> str | None:
    from reports.market import ALL, UNCLASSIFIED, load_segments

    known = sorted({ALL, UNCLASSIFIED, *load_segments().values()})
    if segment is not None and segment not in known:
        raise fail(f"unknown segment {segment!r}; one of {', '.join(known)}", 2)
    return segment


def _market_frame(con: object, day: date, models: list[str] | None,
                  segment: str | None) -> tuple[pl.DataFrame, bool]:
    """(market rows of `day`, stored?): the stored table, else computed from the prices."""
    import polars as pl

    from reports.market import day_end, market_at
    from reports.market_store import read_market

    stored = read_market(con, gpu_models=models, since=day, until=day,  # type: ignore[arg-type]
                         segment=segment)
    if stored is not None and stored.height:
        return stored, True
    _, market = market_at(con, day_end(day, datetime.now(UTC)))  # type: ignore[arg-type]
    if models:
        market = market.filter(pl.col("gpu_model").is_in(models))
    if segment:
        market = market.filter(pl.col("segment") == segment)
    return market, False


def market(
    gpu: GpuOpt = None,
    day: DateOpt = None,
    segment: Annotated[str | None, typer.Option(help="all, hyperscaler, neocloud, marketplace, "
                                                "serverless, unclassified")] = None,
    rebuild: Annotated[bool, typer.Option(help="recompute the stored market table from every "
                                          "stored price (writes)")] = False,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """The market price per GPU model and day: median of per-provider medians, with spread."""
    import polars as pl

    models, chosen_day, chosen_segment = _models(gpu), _day(day), _segment(segment)
    if rebuild:
        from reports.market_store import rebuild_market
        from warehouse.connection import WarehouseError, open_warehouse

        try:
            with open_warehouse(load_settings(warehouse=warehouse).warehouse) as con:
                days = rebuild_market(con)
        except WarehouseError as exc:
            raise fail(str(exc)) from None
        typer.echo(f"market table rebuilt: {len(days)} days", err=True)
    with read_warehouse(warehouse) as con:
        frame, stored = _market_frame(con, chosen_day, models, chosen_segment)
    if not stored:
        typer.echo(f"(no stored market values for {chosen_day}: computed from the prices as "
                   "they stood at the end of that day)", err=True)
    if fmt is Format.table:
        frame = frame.select(
            "day", pl.col("gpu_model").alias("gpu"), "segment",
            pl.col("usd_per_gpu_hour").round(3).alias("market"),
            pl.col("min_usd").round(3).alias("min"), pl.col("p25_usd").round(3).alias("p25"),
            pl.col("p75_usd").round(3).alias("p75"), "providers", "offers",
            pl.col("dispersion").round(2), pl.col("carried_providers").alias("carried"),
            pl.col("withheld_reason").alias("withheld"))
    print_frame(frame, fmt, title=f"market $/GPU-hour on {chosen_day}")


def explain(
    what: Annotated[str, typer.Argument(help="market, cheapest or scenario")],
    name: Annotated[str, typer.Argument(help="GPU model or family (market, cheapest), or a "
                                        "scenario name from reports/scenarios.toml")],
    day: DateOpt = None,
    warehouse: WarehouseOpt = None,
) -> None:
    """How a number was made: the offers that counted (source, capture, time), the ones left
    out and why, and the arithmetic. E.g. `explain market H100 --date 2026-11-20`."""
    from reports.explain import explain_cheapest, explain_market, explain_scenario
    from reports.market import day_end

    now = datetime.now(UTC)
    as_of = day_end(_day(day), now) if day else now
    with read_warehouse(warehouse) as con:
        if what == "market":
            lines = explain_market(con, _models(name) or [], _day(day), now=now)
        elif what == "cheapest":
            lines = explain_cheapest(con, _models(name) or [], as_of)
        elif what == "scenario":
            from reports.scenarios import load_scenarios

            scenarios = {s.name: s for s in load_scenarios()}
            if name not in scenarios:
                raise fail(f"no scenario {name!r}; known: {', '.join(scenarios)}", 2)
            lines = explain_scenario(con, scenarios[name], as_of)
        else:
            raise fail(f"explain market, cheapest or scenario, not {what!r}", 2)
    typer.echo("\n".join(lines))


def market_moves(
    gpu: GpuOpt = None,
    day: DateOpt = None,
    period: Annotated[str, typer.Option(help="week or month (7 or 30 days back)")] = "week",
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Market moves over providers present in both periods; coverage changes apart."""
    from datetime import timedelta

    import polars as pl

    from reports.market import day_end, market_at
    from reports.market_changes import coverage_changes, matched_moves

    if period not in ("week", "month"):
        raise fail(f"--period is week or month, not {period!r}", 2)
    models, end = _models(gpu), _day(day)
    start = end - timedelta(days=7 if period == "week" else 30)
    now = datetime.now(UTC)
    with read_warehouse(warehouse) as con:
        old, new = market_at(con, day_end(start, now))[0], market_at(con, day_end(end, now))[0]
    if models:
        old, new = (f.filter(pl.col("gpu_model").is_in(models)) for f in (old, new))
    print_frame(matched_moves(old, new), fmt,
                title=f"market moves {start} -> {end} over matched providers")
    print_frame(coverage_changes(old, new), fmt, title="coverage changes (not price moves)")


def value(
    metric: Annotated[str, typer.Option(help="pflop ($/PFLOP-hour, dense BF16), vram "
                                        "($/GB-VRAM-hour) or bandwidth ($/(TB/s)-hour)")]
    = "pflop",
    gpu: GpuOpt = None,
    limit: Annotated[int, typer.Option(help="rows to show",
                                       callback=in_range(1, 10_000))] = 20,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Price-performance ranking of comparable offers: $ per PFLOP, GB or TB/s an hour."""
    import polars as pl

    from reports.market import market_offers
    from reports.value import METRICS, price_performance

    if metric not in METRICS:
        raise fail(f"--metric is one of {', '.join(METRICS)}, not {metric!r}", 2)
    models = _models(gpu)
    with read_warehouse(warehouse) as con:
        offers = market_offers(con, datetime.now(UTC))
    if models:
        offers = offers.filter(pl.col("gpu_model").is_in(models))
    ranked = price_performance(offers, metric)
    print_frame(ranked.head(limit), fmt,
                title=f"best {METRICS[metric][1]} ({ranked.height} offers)")


def cluster(
    gpu: Annotated[str, typer.Option("--gpu", help="GPU model or family, e.g. H100")],
    gpus: Annotated[int, typer.Option(help="GPUs in the cluster",
                                      callback=in_range(1, 1_000_000))] = 512,
    days: Annotated[int, typer.Option(help="days of use", callback=in_range(1, 3660))] = 90,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """What GPUS GPUs for DAYS cost at each provider, in its largest nodes, vs the market."""
    import polars as pl

    from reports.cluster import cluster_quotes
    from reports.market import market_offers, market_values

    models = _models(gpu) or []
    with read_warehouse(warehouse) as con:
        offers = market_offers(con, datetime.now(UTC))
    _, market = market_values(offers)
    quotes = cluster_quotes(offers.filter(pl.col("gpu_model").is_in(models)), market,
                            gpus=gpus, days=days)
    if quotes.height == 0:
        raise fail(f"no comparable {gpu} offers stand now")
    if fmt is Format.table:
        quotes = quotes.select(
            "provider", "segment", pl.col("gpu_model").alias("gpu"), "offering",
            pl.col("node_gpus").alias("GPUs/node"), "nodes",
            pl.col("hourly_usd").round(0).alias("$/hour"),
            pl.col("total_usd").round(0).alias("total $"),
            pl.col("vs_market_pct").alias("vs market %"),
            pl.format("{} ({})", pl.col("reserved_total_usd").round(0),
                      pl.col("reserved_term")).alias("reserved total $ (term)"),
            pl.when(pl.col("market_withheld").is_not_null()).then(pl.lit("market withheld"))
            .alias("note"))
    print_frame(quotes, fmt, title=f"{gpus} x {gpu} for {days} days (list prices; capacity "
                "at this size is not checked)")


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
                                                     "reports/tco.toml)")] = None,
    servers: Annotated[Path | None, typer.Option(help="CSV of server prices (default "
                                                 "schemas/server_prices.csv)")] = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Build vs rent: full cost of ownership per useful GPU-hour, break-even utilization and
    payback month against the market price and the cheapest rental; the card-only figure."""
    import polars as pl

    from reports.market import market_offers, market_values
    from reports.queries import current_prices_at, reference_table
    from reports.rent_vs_buy import break_even
    from reports.tco import (
        TCO_TOML,
        load_assumptions,
        load_servers,
        rental_yardsticks,
        tco_rows,
        tco_sheet,
    )

    models = _models(gpu)
    try:
        chosen = load_assumptions(assumptions or TCO_TOML).with_overrides(
            utilization=utilization, depreciation_years=years, cost_of_capital=cost_of_capital,
            usd_per_kwh=usd_per_kwh, pue=pue, colocation_usd_per_kw_month=colo,
            operations_share=ops_share, idle_power_share=idle_power)
        server_rows = load_servers(servers) if servers else load_servers()
    except (ValueError, OSError) as exc:
        raise fail(str(exc), 2) from None
    if models:
        server_rows = server_rows.filter(pl.col("gpu_model").is_in(models))
    now = datetime.now(UTC)
    with read_warehouse(warehouse) as con:
        offers = market_offers(con, now)
        prices = current_prices_at(con, now)
        ownership = reference_table(con, "gpu_ownership")
    market_rows = market_values(offers)[1]
    market_usd, cheapest = rental_yardsticks(offers, market_rows)
    rows = tco_rows(server_rows, chosen, market_usd, cheapest)
    print_frame(rows, fmt, title="full cost of ownership vs renting")
    if fmt is Format.table and models:
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
    if ownership is not None and ownership.height:
        cards = break_even(ownership, prices)
        if models:
            cards = cards.filter(pl.col("gpu_model").is_in(models))
        print_frame(cards, fmt, title="the card alone: purchase / (cheapest rental - power)")


def register(app: typer.Typer) -> None:
    app.command("rent-vs-buy")(rent_vs_buy)
    for command in (market, market_moves, explain, value, cluster):
        app.command()(command)

