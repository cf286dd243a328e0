"""Commands that answer users' questions: report, cheapest, history, scenario, fit.

Registered on the main app by gpuprices.cli. Heavy imports (polars, duckdb, Prefect) happen
inside the commands so `gpuprices --help` stays fast.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from contract.settings import load_settings
from gpuprices.money import Money
from gpuprices.options import (
    CurrencyOpt,
    FormatOpt,
    GeoOpt,
    GpuOpt,
    PrefectOpt,
    PricingOpt,
    ProviderOpt,
    RegionOpt,
    WarehouseOpt,
    fail,
    in_range,
    models,
    place,
    prepare_prefect,
    prices,
    use_prefect,
    warehouse_errors,
)
from gpuprices.output import Format

if TYPE_CHECKING:
    from collections.abc import Callable

    import polars as pl

    from warehouse.place import Place
    from warehouse.semantic import Prices

# Model sizes `fit --params` accepts, in billions: 1M .. 100T parameters.
MIN_PARAMS_B = 0.001
MAX_PARAMS_B = 100_000.0


def _answer(warehouse: Path | None, pricing: tuple[str, ...],
            question: Callable[[Prices], pl.DataFrame], where: Place | None = None,
            money: Money | None = None) -> pl.DataFrame:
    """Ask `question` of the prices as they stand now, in the chosen pricing set and place;
    its amounts in `money`'s currency at the rate of today."""
    with prices(warehouse, pricing, where=where) as now:
        answer = question(now)
        return money.convert(now.con, answer, day=now.day) if money else answer


def report(
    week: Annotated[str | None, typer.Option(help="ISO week, e.g. 2026-W47 (default: this "
                                             "week so far)")] = None,
    out: Annotated[Path | None, typer.Option(help="output folder (default: reports/ beside "
                                             "the warehouse)")] = None,
    board: Annotated[bool, typer.Option(help="also write the HTML price board in board/ "
                                        "beside the report")] = True,
    warehouse: WarehouseOpt = None,
    prefect: PrefectOpt = False,
) -> None:
    """Write the weekly markdown report (with its chart) and the HTML price board beside it;
    the Prefect `weekly_report` flow with --prefect or when PREFECT_API_URL is set."""
    settings = load_settings(warehouse=warehouse)
    if not settings.warehouse.exists():
        raise fail(f"no warehouse at {settings.warehouse}: run `gpuprices refresh` first")
    if week is not None:
        from reports.weekly.report import report_as_of

        try:
            report_as_of(week, datetime.now(UTC))
        except ValueError as exc:
            raise fail(str(exc), 2) from None
    started = time.perf_counter()
    out_dir = str(out) if out else None
    with warehouse_errors():  # e.g. a refresh holds the file
        if use_prefect(prefect):
            prepare_prefect(settings.warehouse)
            from flows.weekly_report import weekly_report

            path = weekly_report(week=week, out_dir=out_dir, warehouse=str(settings.warehouse))
        else:
            from flows.report_work import write_weekly_report

            path, _, page = write_weekly_report(week, out_dir, str(settings.warehouse),
                                                now=datetime.now(UTC), with_board=board)
            if page is not None:
                typer.echo(f"board: {page}")
    typer.echo(f"report: {path} ({time.perf_counter() - started:.1f} s)")


def cheapest(
    gpu: GpuOpt = None,
    min_vram: Annotated[float | None, typer.Option("--min-vram", help="per-GPU memory, GB",
                                                   callback=in_range(1, 2048))] = None,
    tier: Annotated[str | None, typer.Option(help="VRAM tier name from schemas/tiers.toml")]
    = None,
    pricing: PricingOpt = None,
    provider: ProviderOpt = None,
    limit: Annotated[int, typer.Option(help="rows to show",
                                       callback=in_range(1, 10_000))] = 20,
    include_unavailable: Annotated[bool, typer.Option(help="also list offers left out only "
                                                      "for being unavailable (after the "
                                                      "rest)")] = False,
    in_stock: Annotated[bool, typer.Option("--in-stock", help="only offers a source says can "
                                           "be rented now (stock available or low)")] = False,
    region: RegionOpt = None,
    geo: GeoOpt = None,
    currency: CurrencyOpt = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """The cheapest comparable offers ($/GPU-hour): available, fresh, whole GPUs, no
    outliers; the first of each GPU is the cheapest every view names. `stock` is each offer's
    stock state (? where its source does not say)."""
    from reports.market.rankings import cheapest_offers, tiers_by_name

    chosen_tier = None
    if tier is not None:
        tiers = tiers_by_name()
        if tier not in tiers:
            raise fail(f"unknown tier {tier!r}; tiers: {', '.join(tiers)}", 2)
        chosen_tier = tiers[tier]
    gpu_models = models(gpu)
    where, money = place(region, geo), Money.of(currency)
    frame = _answer(warehouse, pricing, lambda now: cheapest_offers(  # type: ignore[arg-type]
        now, gpu_models=gpu_models, min_vram_gb=min_vram, tier=chosen_tier,
        providers=provider, include_unavailable=include_unavailable, in_stock=in_stock),
        where, money)
    if fmt is Format.table:  # `stock` says it for a terminal; csv and json keep all three
        frame = frame.drop("available", "gpus_available")
    money.show(frame.head(limit), fmt, title=f"cheapest offers ({frame.height} match"
               + (f", {where.describe()}" if not where.everywhere else "")
               + (", in stock" if in_stock else "") + ")")


def scenario(
    name: Annotated[str | None, typer.Argument(help="scenario from reports/market/scenarios.toml")]
    = None,
    gpu_hours: Annotated[float | None, typer.Option("--gpu-hours", help="ad hoc: GPU-hours",
                                                    callback=in_range(0.01, 10_000_000))]
    = None,
    gpu: GpuOpt = None,
    pricing: PricingOpt = None,
    region: RegionOpt = None,
    geo: GeoOpt = None,
    currency: CurrencyOpt = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """What a job costs on each platform: a named scenario, or --gpu-hours H --gpu NAME."""
    from reports.market.scenarios import Scenario, evaluate, load_scenarios
    from reports.queries import reference_table

    scenarios = {s.name: s for s in load_scenarios()}
    if name is not None:
        if name not in scenarios:
            raise fail(f"no scenario {name!r}; known: {', '.join(scenarios)}", 2)
        chosen = scenarios[name]
    elif gpu_hours is not None and gpu:
        models(gpu)
        chosen = Scenario(name="custom", title=f"{gpu_hours:g} GPU-hours of {', '.join(gpu)}",
                          hours=gpu_hours, gpus=tuple(gpu))
    else:
        raise fail("give a scenario name (" + ", ".join(scenarios) + ") or --gpu-hours H "
                   "--gpu NAME", 2)
    where, money = place(region, geo), Money.of(currency)
    with prices(warehouse, pricing, where=where) as now:  # type: ignore[arg-type]
        rows = money.convert(now.con, evaluate(now, chosen, reference_table(now.con, "plan")),
                             day=now.day)
    money.show(rows, fmt, title=chosen.title)


def fit(
    params: Annotated[str | None, typer.Option(help="model size, e.g. 70B, 7B, 124M")] = None,
    method: Annotated[str | None, typer.Option(help="full, lora, qlora or inference")] = None,
    limit: Annotated[int, typer.Option(help="offers to show",
                                       callback=in_range(1, 10_000))] = 10,
    pricing: PricingOpt = None,
    region: RegionOpt = None,
    geo: GeoOpt = None,
    currency: CurrencyOpt = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Which GPU fits a model: VRAM needed, and the cheapest comparable offers with that much."""
    from reports.market.fit import (
        GB_PER_BILLION,
        MODEL_SIZES_B,
        fit_matrix,
        fitting_offers,
        vram_needed_gb,
    )
    from reports.market.fit import parse_params as read_params

    if method is not None and method not in GB_PER_BILLION:
        raise fail(f"unknown method {method!r}; one of {', '.join(GB_PER_BILLION)}", 2)
    try:
        size = read_params(params) if params else None
    except ValueError as exc:
        raise fail(str(exc), 2) from None
    if size is not None and not (MIN_PARAMS_B <= size <= MAX_PARAMS_B):
        raise fail(f"--params {params} is out of range: allowed {MIN_PARAMS_B * 1000:g}M to "
                   f"{MAX_PARAMS_B:g}B", 2)
    where, money = place(region, geo), Money.of(currency)
    if size is not None and method is not None:
        needed = vram_needed_gb(size, method)
        offers = _answer(warehouse, pricing,  # type: ignore[arg-type]
                         lambda now: fitting_offers(now, needed), where, money)
        money.show(offers.head(limit), fmt,
                   title=f"{params} {method}: needs {needed:g} GB; cheapest comparable offers")
        return
    sizes = (size,) if size is not None else MODEL_SIZES_B
    methods = (method,) if method is not None else tuple(GB_PER_BILLION)
    matrix = _answer(warehouse, pricing,  # type: ignore[arg-type]
                     lambda now: fit_matrix(now, sizes, methods), where, money)
    money.show(matrix, fmt, title="cheapest comparable offer that fits")


def register(app: typer.Typer) -> None:
    for command in (report, cheapest, scenario, fit):
        app.command()(command)
