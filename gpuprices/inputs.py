"""Every input a question takes, checked once for the three doors (CLI, Python API, MCP).

The ranges are defined here and only here: the CLI's option callbacks, the API's checks and
the MCP tools' JSON schemas all read them. GPU names resolve through schemas.names (a family
means every variant; an unknown name is an InputError), pricing kinds through contract.PRICING.
A light module: no polars, no DuckDB.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, NamedTuple

from contract import DEFAULT_PRICING, PRICING
from gpuprices.errors import InputError

if TYPE_CHECKING:
    from warehouse.place import Place

__all__ = [
    "CLUSTER_DAYS", "CLUSTER_GPUS", "EXPLAIN_WHAT", "GPU_HOURS", "HISTORY_DAYS", "LIMIT",
    "MCP_PORT", "MIN_VRAM_GB", "PARAMS_B", "PERIODS", "Range", "as_day", "check", "currency",
    "gpu_models", "one_of", "place", "pricing_kinds",
]


class Range(NamedTuple):
    """An inclusive range: `in_range(*LIMIT)` in the CLI, `LIMIT.check(...)` elsewhere."""

    low: float
    high: float

    def check(self, name: str, value: float) -> float:
        return check(name, value, self)


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:g}"


def check(name: str, value: float, allowed: Range) -> float:
    """`value`, or InputError naming `name` and the range (NaN is out of every range)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"{name} must be a number, not {value!r}")
    if not allowed.low <= value <= allowed.high:
        raise InputError(f"{name} {value:g} is out of range: allowed {_number(allowed.low)} to "
                         f"{_number(allowed.high)}")
    return value


LIMIT = Range(1, 10_000)                  # rows a question returns
HISTORY_DAYS = Range(1, 3660)             # days of history (10 years)
CLUSTER_GPUS = Range(1, 1_000_000)        # GPUs in a cluster quote
CLUSTER_DAYS = Range(1, 3660)             # days a cluster is used
MIN_VRAM_GB = Range(1, 2048)              # per-GPU memory asked for
GPU_HOURS = Range(0.01, 10_000_000)       # an ad hoc scenario's GPU-hours
PARAMS_B = Range(0.001, 100_000)          # model sizes `fit` accepts, billions (1M .. 100T)
MCP_PORT = Range(1024, 65535)             # `gpuprices mcp --http --port`
PERIODS = ("week", "month")
EXPLAIN_WHAT = ("market", "cheapest", "scenario")


def gpu_models(names: str | Iterable[str] | None) -> list[str] | None:
    """Catalog models meant by GPU names (a family means every variant; None: every GPU);
    InputError when the catalog cannot place one."""
    if names is None:
        return None
    listed = [names] if isinstance(names, str) else list(names)
    if not listed:
        return None
    from schemas.names import UnknownGpuName, resolve_gpus

    try:
        return resolve_gpus(listed)
    except UnknownGpuName as exc:
        raise InputError(str(exc)) from None


def pricing_kinds(values: str | Iterable[str] | None) -> tuple[str, ...]:
    """The pricing set asked for (default contract.DEFAULT_PRICING); InputError for a kind
    that is not one of contract.PRICING."""
    listed = [values] if isinstance(values, str) else list(values or ())
    chosen = tuple(dict.fromkeys(listed or DEFAULT_PRICING))
    unknown = [p for p in chosen if p not in PRICING]
    if unknown:
        raise InputError(f"unknown pricing {', '.join(unknown)}; one of {', '.join(PRICING)}")
    return chosen


def as_day(value: date | datetime | str | None, name: str = "day") -> date:
    """A UTC day from a date, a datetime or 'YYYY-MM-DD' (today, UTC, when None)."""
    if value is None:
        return datetime.now(UTC).date()
    if isinstance(value, datetime):
        return value.astimezone(UTC).date() if value.tzinfo else value.date()
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value).strip())
    except ValueError:
        raise InputError(f"{name} {str(value)[:40]!r} is not a day: YYYY-MM-DD") from None


def one_of(name: str, value: str, allowed: Iterable[str]) -> str:
    """`value` when it is one of `allowed`, else InputError listing them."""
    known = list(allowed)
    if value not in known:
        raise InputError(f"{name} is one of {', '.join(known)}, not {value!r}")
    return value


def place(regions: str | Iterable[str] | None, geos: str | Iterable[str] | None) -> Place:
    """The place regions (as providers name them, any case) and geographies
    (schemas.regions.GEOGRAPHIES) make: everywhere when neither is given; InputError for a
    geography the map does not know."""
    from warehouse.place import Place, UnknownGeography

    try:
        return Place.of(_listed(regions), _listed(geos))
    except UnknownGeography as exc:
        raise InputError(str(exc)) from None


def currency(code: str | None) -> str | None:
    """An ISO currency code, upper case (None: USD, amounts as stored); InputError for
    anything else. Whether the warehouse has its rates is checked where they are read."""
    if code is None:
        return None
    cleaned = str(code).strip().upper()
    if len(cleaned) != 3 or not cleaned.isascii() or not cleaned.isalpha():
        raise InputError(f"currency {str(code)[:40]!r} is not an ISO currency code such as EUR "
                         "or GBP")
    return cleaned


def _listed(values: str | Iterable[str] | None) -> list[str]:
    return [values] if isinstance(values, str) else list(values or ())
