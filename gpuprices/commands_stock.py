"""`gpuprices availability GPU`: whether a GPU could be rented, per provider and region, over
time (gpuprices.api.availability: warehouse.semantic_stock, shown by reports.market.stock).
Registered by gpuprices.cli."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from gpuprices.inputs import HISTORY_DAYS
from gpuprices.options import (
    FormatOpt,
    GeoOpt,
    PricingOpt,
    RegionOpt,
    WarehouseOpt,
    in_range,
    place,
)
from gpuprices.output import Format, print_frame

if TYPE_CHECKING:
    import polars as pl

    from warehouse.frames import Rows

__all__ = ["availability", "register"]


def availability(
    gpu: Annotated[str, typer.Argument(help="GPU model or family, e.g. H100 or 'RTX 4090'")],
    days: Annotated[int, typer.Option(callback=in_range(*HISTORY_DAYS),
                                      help="days of runs to count")] = 7,
    region: RegionOpt = None,
    geo: GeoOpt = None,
    pricing: PricingOpt = None,
    warehouse: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Could GPU be rented? Per provider and region whose source says so (Vast.ai, RunPod,
    Lambda, Voltage Park, Scaleway ...): the share of the last DAYS days' runs that found it in
    stock, the last time one did, and the stock state now (available, low, out of stock)."""
    from gpuprices import api

    where = place(region, geo)
    frame: pl.DataFrame | Rows
    if fmt is Format.table:  # reports.market.availability's table, as DuckDB's rows
        frame, silent = api.availability_table(gpu, days=days, region=where.regions,
                                               geo=where.geos, pricing=pricing,
                                               warehouse=warehouse)
    else:
        found = api.availability_detail(gpu, days=days, region=where.regions, geo=where.geos,
                                        pricing=pricing, warehouse=warehouse)
        frame, silent = found.stock, found.silent
    title = f"{gpu} availability, last {days} days" + (
        f" ({where.describe()})" if not where.everywhere else "")
    print_frame(frame, fmt, title=title)
    if silent:
        typer.echo(f"quoted now without stock information: {', '.join(silent)}", err=True)


def register(app: typer.Typer) -> None:
    app.command()(availability)
