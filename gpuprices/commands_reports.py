"""Commands that answer users' questions: report, cheapest, history, scenario, fit.

Registered on the main app by gpuprices.cli. Heavy imports (polars, duckdb, Prefect) happen
inside the commands so `gpuprices --help` stays fast.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from contract.settings import load_settings
from gpuprices.inputs import GPU_HOURS, LIMIT, MIN_VRAM_GB
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
    place,
    prepare_prefect,
    use_prefect,
    warehouse_errors,
)
from gpuprices.output import Format

if TYPE_CHECKING:
    import polars as pl

    from warehouse.frames import Rows


def report(
    week: Annotated[str | None, typer.Option(help="ISO week, e.g. 2026-W47 (default: this "
                                             "week so far)")] = None,
    out: Annotated[Path | None, typer.Option(help="output folder (default: reports/ beside "
                                             "the warehouse)")] = None,
    board: Annotated[bool, typer.Option(help="also write the HTML price board in board/ "
                                        "beside the report")] = True,
    currency: CurrencyOpt = None,
    warehouse: WarehouseOpt = None,
    prefect: PrefectOpt = False,
) -> None:
    """Write the weekly markdown report (with its chart) and the HTML price board beside it;
    the Prefect `weekly_report` flow with --prefect or when PREFECT_API_URL is set.
    --currency EUR: every amount in euros at the ECB rate of its own day, written beside the
    USD files (<week>.EUR.md and its chart, board/EUR/), never over them."""
    settings = load_settings(warehouse=warehouse)
    from warehouse.dialect import is_lake_url

    if not is_lake_url(settings.warehouse) and not settings.warehouse.exists():
        raise fail(f"no warehouse at {settings.warehouse}: run `gpuprices refresh` first")
    if week is not None:
        from reports.weekly.report import report_as_of

        try:
            report_as_of(week, datetime.now(UTC))
        except ValueError as exc:
            raise fail(str(exc), 2) from None
    started = time.perf_counter()
    out_dir = str(out) if out else None
    with warehouse_errors(), _no_rate():  # e.g. a refresh holds the file
        if use_prefect(prefect):
            prepare_prefect(settings.warehouse)
            from flows.weekly_report import weekly_report

            path = weekly_report(week=week, out_dir=out_dir, warehouse=str(settings.warehouse),
                                 currency=currency)
        else:
            from flows.report_work import write_weekly_report

            path, _, page = write_weekly_report(week, out_dir, str(settings.warehouse),
                                                now=datetime.now(UTC), with_board=board,
                                                currency=currency)
            if page is not None:
                typer.echo(f"board: {page}")
    typer.echo(f"report: {path} ({time.perf_counter() - started:.1f} s)")


@contextmanager
def _no_rate() -> Iterator[None]:
    """A report asked in a currency its day has no rate for: exit 1 with the reason."""
    from reports.weekly.report import NoRateError

    try:
        yield
    except NoRateError as exc:
        raise fail(str(exc)) from None


def cheapest(
    gpu: GpuOpt = None,
    min_vram: Annotated[float | None, typer.Option("--min-vram", help="per-GPU memory, GB",
                                                   callback=in_range(*MIN_VRAM_GB))] = None,
    tier: Annotated[str | None, typer.Option(help="VRAM tier name from schemas/tiers.toml")]
    = None,
    pricing: PricingOpt = None,
    provider: ProviderOpt = None,
    limit: Annotated[int, typer.Option(help="rows to show", callback=in_range(*LIMIT))] = 20,
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
    from gpuprices import api
    from warehouse.frames import held_query, relation_table

    where, money = place(region, geo), Money.of(currency)
    shown: pl.DataFrame | Rows
    if fmt is Format.table and where.everywhere and not money.converting:
        # the same question as api.cheapest, its first rows printed as DuckDB's (no polars)
        with api.offer_table(gpu, min_vram=min_vram, tier=tier, pricing=pricing,
                             provider=provider, include_unavailable=include_unavailable,
                             in_stock=in_stock, warehouse=warehouse) as offers:
            height = int(held_query(offers, "SELECT count(*) FROM {rows}").fetchall()[0][0])
            shown = relation_table(held_query(offers,
                                              f"SELECT * FROM {{rows}} LIMIT {int(limit)}"))
    else:
        frame = money.seen(api.cheapest(
            gpu, min_vram=min_vram, tier=tier, pricing=pricing, provider=provider,
            limit=None, include_unavailable=include_unavailable, in_stock=in_stock,
            region=where.regions, geo=where.geos, currency=money.code, warehouse=warehouse),
            day=datetime.now(UTC).date())
        height, shown = frame.height, frame.head(limit)
    money.show(shown, fmt, title=f"cheapest offers ({height} match"
               + (f", {where.describe()}" if not where.everywhere else "")
               + (", in stock" if in_stock else "") + ")", priority=CHEAPEST_PRIORITY)


# What a narrow terminal keeps of `cheapest` (the rest: --wide).
CHEAPEST_PRIORITY = ("gpu_model", "price_usd_per_gpu_hour", "provider", "offering", "pricing",
                     "stock", "region", "gpu_count")


def scenario(
    name: Annotated[str | None, typer.Argument(help="scenario from reports/market/scenarios.toml")]
    = None,
    gpu_hours: Annotated[float | None, typer.Option("--gpu-hours", help="ad hoc: GPU-hours",
                                                    callback=in_range(*GPU_HOURS))]
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
    from gpuprices import api
    from reports.market.scenarios import load_scenarios

    titles = {s.name: s.title for s in load_scenarios()}
    if name is None and not (gpu_hours is not None and gpu):
        raise fail("give a scenario name (" + ", ".join(titles) + ") or --gpu-hours H "
                   "--gpu NAME", 2)
    where, money = place(region, geo), Money.of(currency)
    rows = money.seen(api.scenario(name, gpu_hours=gpu_hours, gpu=gpu, pricing=pricing,
                                   region=where.regions, geo=where.geos, currency=money.code,
                                   warehouse=warehouse), day=datetime.now(UTC).date())
    title = titles[name] if name in titles else \
        f"{gpu_hours or 0:g} GPU-hours of {', '.join(gpu or [])}"
    money.show(rows, fmt, title=title)


def fit(
    params: Annotated[str | None, typer.Option(help="model size, e.g. 70B, 7B, 124M")] = None,
    method: Annotated[str | None, typer.Option(help="full, lora, qlora or inference")] = None,
    limit: Annotated[int, typer.Option(help="offers to show", callback=in_range(*LIMIT))] = 10,
    pricing: PricingOpt = None,
    region: RegionOpt = None,
    geo: GeoOpt = None,
    currency: CurrencyOpt = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Which GPU fits a model: VRAM needed, and the cheapest comparable offers with that much."""
    from gpuprices import api

    where, money = place(region, geo), Money.of(currency)
    frame = money.seen(api.fit(params, method, limit=limit, pricing=pricing,
                               region=where.regions, geo=where.geos, currency=money.code,
                               warehouse=warehouse), day=datetime.now(UTC).date())
    if params and method:
        needed = api.needed_vram_gb(params, method)
        title = f"{params} {method}: needs {needed:g} GB; cheapest comparable offers"
    else:
        title = "cheapest comparable offer that fits"
    money.show(frame, fmt, title=title)


def register(app: typer.Typer) -> None:
    for command in (report, cheapest, scenario, fit):
        app.command()(command)
