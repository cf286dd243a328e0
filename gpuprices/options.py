"""What every command shares, defined once: the options (warehouse, format, GPU, pricing, day,
region, geography, currency, Prefect), the error exit, the read-only and the writable
warehouse, Prefect's set-up.

A bottom module of the CLI: cli.py and every commands_*.py import it; it imports none of them.
GPU names resolve here (schemas.names, as alert rules do): `--gpu h100` means every H100, an
unknown name exits 2. `--pricing` is THE flag that changes the pricing set every question is
answered in (default contract.DEFAULT_PRICING). `--region` and `--geo` make the place every
ranking and aggregate is made of (warehouse.place.Place, via `place`); `--currency` the money
every amount is printed in (gpuprices.money).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from contract import DEFAULT_PRICING, PRICING
from contract.settings import Settings, load_settings
from gpuprices.output import Format

if TYPE_CHECKING:
    import duckdb

    from warehouse.place import Place
    from warehouse.sandbox import QueryLimits
    from warehouse.semantic import Prices

__all__ = [
    "CurrencyOpt", "DayOpt", "FormatOpt", "GeoOpt", "GpuOpt", "PrefectOpt", "PricingOpt",
    "ProviderOpt", "RegionOpt", "WarehouseOpt", "day_option", "fail", "in_range", "models",
    "place", "prepare_prefect", "prices", "read_warehouse", "the_day", "use_prefect",
    "warehouse_errors", "writable_warehouse",
]

N = TypeVar("N", int, float)

WarehouseOpt = Annotated[
    Path | None,
    typer.Option("--warehouse", "-w", help="DuckDB file (default: $GPUPRICES_WAREHOUSE or "
                 "data/gpu_prices.duckdb)", show_default=False),
]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="table, csv or json")]
PrefectOpt = Annotated[bool, typer.Option(
    "--prefect", help="run as a Prefect flow with a run record (default only when "
    "PREFECT_API_URL or GPUPRICES_PREFECT=1 is set)")]
ProviderOpt = Annotated[list[str] | None, typer.Option("--provider", help="only this provider "
                                                       "(repeatable)")]


def fail(message: str, code: int = 1) -> typer.Exit:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code)


def models(names: list[str] | tuple[str, ...] | None) -> list[str] | None:
    """Catalog models meant by GPU names (a family means every variant); exit 2 when the
    catalog cannot place one."""
    if not names:
        return None
    from schemas.names import UnknownGpuName, resolve_gpus

    try:
        return resolve_gpus(list(names))
    except UnknownGpuName as exc:
        raise fail(str(exc), 2) from None


def _pricing(value: list[str] | None) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(value or DEFAULT_PRICING))
    unknown = [p for p in chosen if p not in PRICING]
    if unknown:
        raise fail(f"unknown pricing {', '.join(unknown)}; one of {', '.join(PRICING)}", 2)
    return chosen


GpuOpt = Annotated[list[str] | None, typer.Option(
    "--gpu", help="GPU model or family, e.g. 'H100' or 'A100 80GB' (repeatable)")]
PricingOpt = Annotated[list[str] | None, typer.Option(
    "--pricing", callback=_pricing, help="pricing kind that counts (repeatable; default "
    f"{', '.join(DEFAULT_PRICING)}: the one default pricing set)")]


def _geos(value: list[str] | None) -> list[str] | None:
    from gpuprices.errors import InputError
    from gpuprices.inputs import place as checked_place

    try:
        checked_place(None, value)
    except InputError as exc:
        raise fail(str(exc), 2) from None
    return value


def _currency(value: str | None) -> str | None:
    from gpuprices.errors import InputError
    from gpuprices.inputs import currency

    try:
        return currency(value)
    except InputError as exc:
        raise fail(f"--{exc}", 2) from None


RegionOpt = Annotated[list[str] | None, typer.Option(
    "--region", help="only offers in this region, as its provider names it, e.g. us-east-1 "
    "(repeatable; case does not matter)")]
GeoOpt = Annotated[list[str] | None, typer.Option(
    "--geo", callback=_geos, help="only offers in this geography: US, Canada, EU, UK, APAC, "
    "LATAM, MEA, or global for prices that name no region (repeatable; schemas/regions.csv)")]
CurrencyOpt = Annotated[str | None, typer.Option(
    "--currency", callback=_currency, help="print money in this currency (ISO code, e.g. EUR, "
    "GBP), converted at the ECB reference rate of the day shown (`backfill ecb` stores "
    "them)", show_default=False)]


def place(region: list[str] | None, geo: list[str] | None) -> Place:
    """The place --region and --geo name (everywhere when neither is given)."""
    from gpuprices.errors import InputError
    from gpuprices.inputs import place as checked_place

    try:
        return checked_place(region, geo)
    except InputError as exc:
        raise fail(str(exc), 2) from None


def day_option(flag: str, text: str) -> typer.models.OptionInfo:
    """A UTC day option, YYYY-MM-DD (typer reads it as a datetime at 00:00)."""
    return typer.Option(flag, formats=["%Y-%m-%d"], help=text, show_default=False)


DayOpt = Annotated[datetime | None, day_option("--date", "UTC day, YYYY-MM-DD (default: "
                                                        "today)")]


def the_day(value: datetime | None) -> date:
    """The day a --date option names (today, UTC, when not given)."""
    return value.date() if value is not None else datetime.now(UTC).date()


def in_range(low: N, high: N) -> Callable[[typer.CallbackParam, N | None], N | None]:
    """A typer callback: the value must lie in [low, high], else exit 2 with one line that
    names the option and the allowed range (NaN is out of every range)."""
    def check(param: typer.CallbackParam, value: N | None) -> N | None:
        if value is not None and not (low <= value <= high):
            name = param.opts[0] if param.opts else param.name
            raise fail(f"{name} {value:g} is out of range: allowed {_number(low)} to "
                       f"{_number(high)}", 2)
        return value
    return check


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:g}"


@contextmanager
def read_warehouse(warehouse: Path | None, *, sandboxed: bool = False,
                   limits: QueryLimits | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """The warehouse's read path (its newest read snapshot) opened read-only for one command;
    a clear error (exit 1) when it cannot be. No other file can be read through it.

    `sandboxed`: also no settings changes, and `limits` (user-written SQL).
    """
    from warehouse.connection import WarehouseError, reading

    settings = load_settings(warehouse=warehouse)
    try:
        with reading(settings.warehouse, sandboxed=sandboxed, limits=limits) as con:
            yield con
    except WarehouseError as exc:
        raise fail(str(exc)) from None


@contextmanager
def warehouse_errors() -> Iterator[None]:
    """A warehouse that cannot be opened or used as asked (busy, missing, not DuckDB) exits 1
    with its one-line reason."""
    from warehouse.connection import WarehouseError

    try:
        yield
    except WarehouseError as exc:
        raise fail(str(exc)) from None


@contextmanager
def prices(warehouse: Path | None, pricing: tuple[str, ...] | None = None,
           as_of: datetime | None = None, where: Place | None = None) -> Iterator[Prices]:
    """The prices as they stand now (or at `as_of`), read-only, in the pricing set chosen by
    --pricing and the place --region / --geo name: what every question command asks its
    report functions about."""
    from warehouse.place import EVERYWHERE
    from warehouse.semantic import Prices

    with read_warehouse(warehouse) as con:
        yield Prices(con, as_of or datetime.now(UTC), pricing or DEFAULT_PRICING,
                     place=where or EVERYWHERE)


@contextmanager
def writable_warehouse(warehouse: Path | None, *, wait_s: float = 0.0
                       ) -> Iterator[tuple[duckdb.DuckDBPyConnection, Settings]]:
    """The warehouse opened for writing for one command (created and migrated if needed);
    a clear error (exit 1) when it cannot be, e.g. a refresh holds it."""
    from warehouse.connection import open_warehouse

    settings = load_settings(warehouse=warehouse)
    with warehouse_errors(), open_warehouse(settings.warehouse, wait_s=wait_s) as con:
        yield con, settings


def use_prefect(asked: bool) -> bool:
    """Run a flow (with a run record) only when asked or when a Prefect API is configured;
    otherwise the command runs the same work as a plain function and starts no server."""
    return asked or bool(os.environ.get("PREFECT_API_URL")) or \
        os.environ.get("GPUPRICES_PREFECT", "").lower() in ("1", "true", "yes")


def prepare_prefect(warehouse: Path) -> None:
    """Keep Prefect local and quiet unless the user configured otherwise."""
    if not str(warehouse).startswith(("ducklake:", "md:")):  # a lake: Prefect's own home
        os.environ.setdefault("PREFECT_HOME", str(warehouse.parent.resolve() / ".prefect"))
        Path(os.environ["PREFECT_HOME"]).mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    # A first start creates Prefect's database; on a busy 2-core machine that can pass 20 s.
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
