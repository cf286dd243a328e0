"""What every command shares: options, the error exit, the read-only warehouse, Prefect's set-up.

A bottom module of the CLI: cli.py and every commands_*.py import it; it imports none of them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from contract.settings import load_settings
from gpuprices.output import Format

if TYPE_CHECKING:
    import duckdb

    from warehouse.sandbox import QueryLimits

__all__ = [
    "FormatOpt", "PrefectOpt", "WarehouseOpt", "fail", "in_range", "prepare_prefect",
    "read_warehouse", "use_prefect",
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


def fail(message: str, code: int = 1) -> typer.Exit:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code)


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
    import duckdb

    from warehouse.connection import WarehouseError, connect_read_only

    settings = load_settings(warehouse=warehouse)
    try:
        con = connect_read_only(settings.warehouse, sandboxed=sandboxed, limits=limits)
    except WarehouseError as exc:
        raise fail(str(exc)) from None
    try:
        yield con
    except duckdb.Error as exc:  # e.g. a view of the file that reads another file: refused
        raise fail(f"cannot read the warehouse {settings.warehouse}: "
                   f"{str(exc).splitlines()[0]}") from None
    finally:
        con.close()


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
