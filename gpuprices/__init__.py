"""gpuprices: where GPU compute is cheapest today.

`import gpuprices` is cheap: the functions below load on first use (PEP 562).

    import gpuprices
    gpuprices.cheapest(gpu="H100", limit=5)      # a polars DataFrame
    gpuprices.market(gpu="A100 80GB")
    gpuprices.history("H100 SXM", days=30)

Every function is gpuprices.api's (the CLI and the MCP server call the same ones); docs/api.md
has runnable examples. Errors: gpuprices.InputError (bad input), gpuprices.NoAnswer (nothing
answers it), warehouse.errors.WarehouseError (the warehouse cannot be read).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuprices.api import (
        Availability,
        Moves,
        RentVsBuy,
        availability,
        changes,
        cheapest,
        cluster,
        explain,
        export,
        fit,
        history,
        market,
        market_moves,
        query,
        rent_vs_buy,
        scenario,
        sources,
        summary,
        value,
    )
    from gpuprices.errors import GpupricesError, InputError, NoAnswer

__all__ = [
    "Availability", "GpupricesError", "InputError", "Moves", "NoAnswer", "RentVsBuy",
    "__version__", "availability", "changes", "cheapest", "cluster", "explain", "export",
    "fit", "history", "market", "market_moves", "query", "rent_vs_buy", "scenario", "sources",
    "summary", "value",
]
_ERRORS = ("GpupricesError", "InputError", "NoAnswer")


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("gpuprices")
        except PackageNotFoundError:  # a source tree that was never installed
            return "0+unknown"
    if name in _ERRORS:
        from gpuprices import errors

        return getattr(errors, name)
    if name in __all__:
        from gpuprices import api

        return getattr(api, name)
    raise AttributeError(f"module 'gpuprices' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
