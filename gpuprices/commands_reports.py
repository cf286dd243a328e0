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
from gpuprices.options import (
    FormatOpt,
    PrefectOpt,
    WarehouseOpt,
    fail,
    in_range,
    prepare_prefect,
    read_warehouse,
    use_prefect,
)
from gpuprices.output import Format, print_frame

if TYPE_CHECKING:
    import polars as pl

PricingOpt = Annotated[list[str] | None, typer.Option(
    "--pricing", help="pricing to include (repeatable; default on_demand, community, "
    "serverless)")]
# Model sizes `fit --params` accepts, in billions: 1M .. 100T parameters.
MIN_PARAMS_B = 0.001
MAX_PARAMS_B = 100_000.0
ProviderOpt = Annotated[list[str] | None, typer.Option("--provider", help="only this provider "
                                                       "(repeatable)")]


def _current_prices(warehouse: Path | None) -> pl.DataFrame:
    from reports.queries import current_prices_at

    with read_warehouse(warehouse) as con:
        return current_prices_at(con, datetime.now(UTC))


def _models(names: list[str]) -> list[str]:
    from reports.names import resolve_gpus

    try:
        return resolve_gpus(names)
    except ValueError as exc:
        raise fail(str(exc), 2) from None


def _pricing(pricing: list[str] | None) -> tuple[str, ...]:
    from contract import PRICING
    from reports.offers import STEADY_PRICING

    chosen = tuple(pricing or STEADY_PRICING)
    unknown = [p for p in chosen if p not in PRICING]
    if unknown:
        raise fail(f"unknown pricing {', '.join(unknown)}; one of {', '.join(PRICING)}", 2)
    return chosen


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
    from warehouse.dialect import is_lake_url

    if not is_lake_url(settings.warehouse) and not settings.warehouse.exists():
        raise fail(f"no warehouse at {settings.warehouse}: run `gpuprices refresh` first")
    if week is not None:
        from reports.weekly import report_as_of

        try:
            report_as_of(week, datetime.now(UTC))
        except ValueError as exc:
            raise fail(str(exc), 2) from None
    from warehouse.connection import WarehouseError

    started = time.perf_counter()
    out_dir = str(out) if out else None
    try:
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
    except WarehouseError as exc:  # e.g. a refresh holds the file
        raise fail(str(exc)) from None
    typer.echo(f"report: {path} ({time.perf_counter() - started:.1f} s)")


def cheapest(
    gpu: Annotated[list[str] | None, typer.Option("--gpu", help="GPU model or family, e.g. "
                                                  "'H100' or 'A100 80GB' (repeatable)")] = None,
    min_vram: Annotated[float | None, typer.Option("--min-vram", help="per-GPU memory, GB",
                                                   callback=in_range(1, 2048))] = None,
    tier: Annotated[str | None, typer.Option(help="VRAM tier name from schemas/tiers.toml")]
    = None,
    pricing: PricingOpt = None,
    provider: ProviderOpt = None,
    limit: Annotated[int, typer.Option(help="rows to show",
                                       callback=in_range(1, 10_000))] = 20,
    include_unavailable: Annotated[bool, typer.Option(help="also list offers marked "
                                                      "unavailable (after the rest)")] = False,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """The cheapest current offers ($/GPU-hour): available first, live prices before stale."""
    from reports.rankings import cheapest_offers
    from schemas.tiers import load_tiers

    chosen_tier = None
    if tier is not None:
        tiers = {t.name: t for t in load_tiers()}
        if tier not in tiers:
            raise fail(f"unknown tier {tier!r}; tiers: {', '.join(tiers)}", 2)
        chosen_tier = tiers[tier]
    models = _models(gpu) if gpu else None
    frame = cheapest_offers(_current_prices(warehouse), gpu_models=models, min_vram_gb=min_vram,
                            tier=chosen_tier, pricing=_pricing(pricing), providers=provider,
                            include_unavailable=include_unavailable)
    print_frame(frame.head(limit), fmt, title=f"cheapest offers ({frame.height} match)")


def scenario(
    name: Annotated[str | None, typer.Argument(help="scenario from reports/scenarios.toml")]
    = None,
    gpu_hours: Annotated[float | None, typer.Option("--gpu-hours", help="ad hoc: GPU-hours",
                                                    callback=in_range(0.01, 10_000_000))]
    = None,
    gpu: Annotated[str | None, typer.Option(help="ad hoc: GPU model or family")] = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """What a job costs on each platform: a named scenario, or --gpu-hours H --gpu NAME."""
    from reports.queries import current_prices_at, reference_table
    from reports.scenarios import Scenario, evaluate, load_scenarios

    scenarios = {s.name: s for s in load_scenarios()}
    if name is not None:
        if name not in scenarios:
            raise fail(f"no scenario {name!r}; known: {', '.join(scenarios)}", 2)
        chosen = scenarios[name]
    elif gpu_hours is not None and gpu is not None:
        _models([gpu])
        chosen = Scenario(name="custom", title=f"{gpu_hours:g} GPU-hours of {gpu}",
                          hours=gpu_hours, gpus=(gpu,))
    else:
        raise fail("give a scenario name (" + ", ".join(scenarios) + ") or --gpu-hours H "
                   "--gpu NAME", 2)
    with read_warehouse(warehouse) as con:
        prices = current_prices_at(con, datetime.now(UTC))
        plans = reference_table(con, "plan")
    print_frame(evaluate(prices, chosen, plans), fmt, title=chosen.title)


def fit(
    params: Annotated[str | None, typer.Option(help="model size, e.g. 70B, 7B, 124M")] = None,
    method: Annotated[str | None, typer.Option(help="full, lora, qlora or inference")] = None,
    limit: Annotated[int, typer.Option(help="offers to show",
                                       callback=in_range(1, 10_000))] = 10,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Which GPU fits a model: VRAM needed, and the cheapest live offers with that much."""
    from reports.fit import (
        GB_PER_BILLION,
        MODEL_SIZES_B,
        fit_matrix,
        fitting_offers,
        vram_needed_gb,
    )
    from reports.fit import parse_params as read_params

    if method is not None and method not in GB_PER_BILLION:
        raise fail(f"unknown method {method!r}; one of {', '.join(GB_PER_BILLION)}", 2)
    try:
        size = read_params(params) if params else None
    except ValueError as exc:
        raise fail(str(exc), 2) from None
    if size is not None and not (MIN_PARAMS_B <= size <= MAX_PARAMS_B):
        raise fail(f"--params {params} is out of range: allowed {MIN_PARAMS_B * 1000:g}M to "
                   f"{MAX_PARAMS_B:g}B", 2)
    prices = _current_prices(warehouse)
    if size is not None and method is not None:
        needed = vram_needed_gb(size, method)
        print_frame(fitting_offers(prices, needed).head(limit), fmt,
                    title=f"{params} {method}: needs {needed:g} GB; cheapest live offers")
        return
    sizes = (size,) if size is not None else MODEL_SIZES_B
    methods = (method,) if method is not None else tuple(GB_PER_BILLION)
    print_frame(fit_matrix(prices, sizes, methods), fmt, title="cheapest live offer that fits")


def register(app: typer.Typer) -> None:
    for command in (report, cheapest, scenario, fit):
        app.command()(command)
