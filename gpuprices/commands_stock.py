"""`gpuprices availability GPU`: whether a GPU could be rented, per provider and region, over
time (gpuprices.api.availability: warehouse.semantic_stock, shown by reports.market.stock).
Registered by gpuprices.cli."""

from __future__ import annotations

from typing import Annotated

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
    import polars as pl

    from gpuprices import api

    where = place(region, geo)
    found = api.availability_detail(gpu, days=days, region=where.regions, geo=where.geos,
                                    pricing=pricing, warehouse=warehouse)
    frame, silent = found.stock, found.silent
    if fmt is Format.table:
        frame = frame.select(
            pl.col("gpu_model").alias("gpu"), "provider", "region", "geo",
            pl.format("{}/{}", "in_stock_observations", "observations").alias("runs in stock"),
            (pl.col("share_in_stock") * 100).round(0).alias("% in stock"),
            pl.col("last_in_stock").dt.strftime("%Y-%m-%d %H:%M").alias("last in stock"),
            pl.col("state").alias("now"), pl.col("gpus_free").alias("GPUs free"), "source")
    title = f"{gpu} availability, last {days} days" + (
        f" ({where.describe()})" if not where.everywhere else "")
    print_frame(frame, fmt, title=title)
    if silent:
        typer.echo(f"quoted now without stock information: {', '.join(silent)}", err=True)


def register(app: typer.Typer) -> None:
    app.command()(availability)
